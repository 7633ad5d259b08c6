"""Disks as libdiskmgt sees them, from `diskinfo -cHp` (facts §9).

diskinfo shows the controller type, the devinfo vendor/product properties
(the ATA model split at its first blank for SATA disks: never use them for
sd-config-list keys), the full serial (from libtopo), the size in bytes
and the F/L/R/S flags (faulty, locate, removable, solid state).  It is the
fallback enumeration when libdiskmgt cannot be loaded.  Runs `diskinfo
-cHp` through the host; the parser is pure.
"""

from dataclasses import dataclass
from typing import Dict, Optional

from ..errors import ParseError
from ..host import Host
from .command import output_of


@dataclass
class DiskinfoDisk:
    name: str
    ctype: str
    vendor_id: Optional[str]
    product_id: Optional[str]
    serial: Optional[str]
    size_bytes: Optional[int]
    removable: Optional[bool]
    ssd: Optional[bool]
    location: Optional[str]


def _opt(value: str) -> Optional[str]:
    return None if value == "-" else value


def _flag(flags: str, index: int, letter: str) -> Optional[bool]:
    ch = flags[index]
    if ch == letter:
        return True
    return False if ch == "-" else None      # "?" is unknown


def parse_diskinfo_chp(text: str) -> Dict[str, DiskinfoDisk]:
    """Parse `diskinfo -cHp`: eight TAB-separated fields per disk.

    Sample (facts §9.2, -cH with -p; fields separated by TABs, shown here
    as " | "):

        SCSI | c0t55CD2E404C0D8D0Ed0 | INTEL | SSDSC2BA400G3 |
        BTTV5095012Z400HGN | 400088457216 | ??-S | 0,1
    """
    disks: Dict[str, DiskinfoDisk] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 8:
            raise ParseError("diskinfo -cHp", "line %d" % n,
                             "%d fields, expected 8" % len(fields))
        ctype, name, vid, pid, serial, size, flags, location = fields
        if len(flags) != 4:
            raise ParseError("diskinfo -cHp", "FLRS",
                             "bad flags %r for %s" % (flags, name))
        try:
            size_bytes = None if size == "-" else int(size)
        except ValueError:
            raise ParseError("diskinfo -cHp", "SIZE",
                             "not a byte count for %s: %r" % (name, size))
        disks[name] = DiskinfoDisk(name, ctype, _opt(vid), _opt(pid),
                                   _opt(serial), size_bytes,
                                   _flag(flags, 2, "R"), _flag(flags, 3, "S"),
                                   _opt(location))
    return disks


def query_diskinfo(host: Host) -> Dict[str, DiskinfoDisk]:
    return parse_diskinfo_chp(output_of(host, "diskinfo", ["-cHp"], "TYPE"))
