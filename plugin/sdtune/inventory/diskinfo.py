# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Disks as libdiskmgt sees them, from `diskinfo -cHp` (facts §9).

diskinfo shows the controller type, the devinfo vendor/product properties
(the ATA model split at its first blank for SATA disks: never use them for
sd-config-list keys), the full serial (from libtopo), the size in bytes
and the F/L/R/S flags (faulty, locate, removable, solid state).  It is the
fallback enumeration when libdiskmgt cannot be loaded.

sdtune runs `diskinfo -cHp`: TAB-separated fields, no header.  The
parser also reads every other form diskinfo.c prints, so a pasted
`diskinfo` table reads the same: `-H` (7 fields), `-PH` (7, no TYPE),
and the tables with a header, whose columns are `%-7s %-22s  %-8s
%-16s` (TYPE, DISK, VID, PID) followed by SIZE RMV SSD, by SERIAL and a
second line of SIZE FLRS LOCATION (`-c`), or without TYPE by SERIAL FLT
LOC LOCATION (`-P`).  TYPE is the controller type upper-cased (SCSI,
SATA, USB, NVME, UNKNOWN) or `-` when unknown; a DISK name longer than
22 columns pushes the rest of its row right: every width is a minimum.
VID and PID may hold blanks (a SATA or NVMe PID is the rest of a model
of up to 40 characters: `SSD 860 EVO 500GB`), so in a table they are
read from their columns, counted from where the row's DISK starts; a
row whose columns do not line up there (a copy with collapsed blanks)
is refused rather than split by guess.
Runs `diskinfo -cHp` through the host; the parser is pure.
"""

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import MAX_NAME, excerpt, parse_count
from .runner import output_of

COMMAND = "diskinfo -cHp"
_TRISTATE = {"yes": True, "no": False, "-": None}
_GIB = re.compile(r"^([0-9]+)\.([0-9]{2}) GiB$")
# What follows the PID in the default table: SIZE RMV SSD.
_TABLE_TAIL = re.compile(r"^(?P<pid>.*\S)\s+(?P<size>(?P<number>[0-9]+"
                         r"(?:\.[0-9]{2})?)(?: GiB)?)\s+(?P<rmv>\S+)"
                         r"\s+(?P<ssd>\S+)$")
_FLAGS = re.compile(r"^[F?-][L?-][R?-][S?-]$")
# The longest PID: an ATA or NVMe model (40 bytes) kept whole.
MAX_PID = 40
# The headers diskinfo.c prints (words only; spacing is checked per row).
_HEADERS = {
    ("TYPE", "DISK", "VID", "PID", "SIZE", "RMV", "SSD"): "table",
    ("TYPE", "DISK", "VID", "PID", "SERIAL"): "condensed",
    ("DISK", "VID", "PID", "SERIAL", "FLT", "LOC", "LOCATION"): "physical",
}


@dataclass
class DiskinfoDisk:
    name: str
    ctype: Optional[str]            # SCSI, SATA, USB, NVME, UNKNOWN; None: -
    vendor_id: Optional[str]
    product_id: Optional[str]
    serial: Optional[str]
    size_bytes: Optional[int]
    removable: Optional[bool]
    ssd: Optional[bool]
    location: Optional[str]
    size_gib: Optional[float] = None    # when only "N.NN GiB" was printed
    faulty: Optional[bool] = None
    locate: Optional[bool] = None


def _opt(value: str) -> Optional[str]:
    return None if value == "-" else value


def _serial(value: str) -> Optional[str]:
    """A SERIAL field without the blanks around it.  A SAS serial (VPD
    page 0x80) keeps the blanks that pad it on the right in the
    inquiry-serial-no property diskinfo prints (sd drops only the leading
    ones); iostat.py strips its Serial No, so the two compare equal."""
    return _opt(value.strip(" ")) if value.strip(" ") else None


def _flag(flags: str, index: int, letter: str) -> Optional[bool]:
    ch = flags[index]
    if ch == letter:
        return True
    return False if ch == "-" else None      # "?" is unknown


class _Reader:
    """Reads one output; `command` names it in errors."""

    def __init__(self, command: str) -> None:
        self.command = command

    def fail(self, field_name: str, reason: str) -> ParseError:
        return ParseError(self.command, field_name, reason)

    def size(self, text: str, name: str
             ) -> Tuple[Optional[int], Optional[float]]:
        """A SIZE field: bytes (-p), `N.NN GiB`, or `-`."""
        text = text.strip()
        if text == "-":
            return None, None
        m = _GIB.match(text)
        if m:
            # Bounded like a byte count: a double would take any number
            # of digits and turn them into inf.
            parse_count(m.group(1), command=self.command, field="SIZE",
                        what="a size in GiB", where=name)
            return None, float("%s.%s" % m.groups())
        return parse_count(text, command=self.command, field="SIZE",
                           what="a size", where=name), None

    def disk_name(self, n: int, name: str) -> str:
        """The DISK field, checked before any message quotes it."""
        if not name or " " in name or len(name) > MAX_NAME:
            raise self.fail("DISK", "line %d: %s is not a disk name"
                            % (n, excerpt(name, 40)))
        return name

    def tristate(self, text: str, field_name: str, name: str
                 ) -> Optional[bool]:
        if text not in _TRISTATE:
            raise self.fail(field_name, "not yes, no or - for %s: %r"
                            % (name, text[:40]))
        return _TRISTATE[text]

    def flags(self, text: str, name: str) -> str:
        if not _FLAGS.match(text):
            raise self.fail("FLRS", "bad flags %r for %s" % (text[:40], name))
        return text

    # -- scripted (-H): TAB-separated fields --------------------------------

    def scripted(self, lines: List[Tuple[int, str]]
                 ) -> Dict[str, DiskinfoDisk]:
        disks: Dict[str, DiskinfoDisk] = {}
        form = None
        for n, line in lines:
            fields = line.split("\t")
            if len(fields) == 8:
                kind = "condensed"
            elif len(fields) == 7:
                kind = "physical" if fields[4] in _TRISTATE and \
                    fields[5] in _TRISTATE else "table"
            else:
                raise self.fail("line %d" % n, "%d TAB-separated fields, "
                                "expected 8 (-cHp) or 7 (-H, -PH), and no "
                                "diskinfo table header above"
                                % len(fields))
            if form is not None and kind != form:
                raise self.fail("line %d" % n, "a %s row among %s rows"
                                % (kind, form))
            form = kind
            self.add(disks, n, self.record(n, kind, fields))
        return disks

    def record(self, n: int, kind: str, fields: List[str]) -> DiskinfoDisk:
        if kind == "condensed":
            ctype, name, vid, pid, serial, size, flags, where = fields
            name = self.disk_name(n, name)
            size_bytes, gib = self.size(size, name)
            flags = self.flags(flags, name)
            return DiskinfoDisk(name, _opt(ctype), _opt(vid), _opt(pid),
                                _serial(serial), size_bytes,
                                _flag(flags, 2, "R"), _flag(flags, 3, "S"),
                                _opt(where), gib, _flag(flags, 0, "F"),
                                _flag(flags, 1, "L"))
        if kind == "physical":
            name, vid, pid, serial, flt, loc, where = fields
            name = self.disk_name(n, name)
            return DiskinfoDisk(name, None, _opt(vid), _opt(pid),
                                _serial(serial), None, None, None,
                                _opt(where),
                                None, self.tristate(flt, "FLT", name),
                                self.tristate(loc, "LOC", name))
        ctype, name, vid, pid, size, rmv, ssd = fields
        name = self.disk_name(n, name)
        size_bytes, gib = self.size(size, name)
        return DiskinfoDisk(name, _opt(ctype), _opt(vid), _opt(pid), None,
                            size_bytes, self.tristate(rmv, "RMV", name),
                            self.tristate(ssd, "SSD", name), None, gib)

    def add(self, disks: Dict[str, DiskinfoDisk], n: int,
            disk: DiskinfoDisk) -> None:
        if disk.name in disks:
            raise self.fail("DISK", "line %d: %s listed twice"
                            % (n, disk.name))
        disks[disk.name] = disk

    # -- tables (no -H) -----------------------------------------------------

    def columns(self, n: int, row: str, has_type: bool
                ) -> Tuple[List[str], str, str]:
        """[TYPE,] DISK, VID and the row from PID on: the VID field starts
        24 columns after DISK does (2 after a DISK longer than 22), the
        PID field 9 after that (or one blank after a longer VID)."""
        words = row.split()
        need = 2 if has_type else 1
        if len(words) < need + 2:
            raise self.fail("line %d" % n, "too few columns: %r"
                            % row.strip()[:60])
        name = self.disk_name(n, words[need - 1])
        start = row.index(name, row.index(words[0]) + len(words[0])
                          if has_type else 0)
        end = start + len(name)
        vid_col = start + 24 if len(name) <= 22 else end + 2
        gap = row[end:vid_col]
        if len(gap) < 2 or gap.strip() or row[vid_col:vid_col + 1] in \
                ("", " "):
            raise self.fail("VID", "line %d: the VID of %s does not start "
                            "2 columns after the 22-column DISK field "
                            "(columns not aligned: blanks collapsed?)"
                            % (n, name))
        if row[vid_col + 8:vid_col + 9] == " ":
            vid = row[vid_col:vid_col + 8].rstrip()
            pid_col = vid_col + 9
        else:
            # Longer than its field: a model split at its first blank,
            # so it holds no blank itself.
            vid = row[vid_col:].split(" ", 1)[0]
            pid_col = vid_col + len(vid) + 1
        if row[pid_col:pid_col + 1] in ("", " "):
            raise self.fail("PID", "line %d: no PID where it belongs for %s "
                            "(columns not aligned)" % (n, name))
        return words[:need], vid, row[pid_col:]

    def table(self, n: int, row: str) -> DiskinfoDisk:
        """`%-16s %-13s %-3s %-3s`: PID, SIZE (a GiB value right-aligned
        in 7 columns, or bytes), RMV, SSD; checked column by column."""
        (ctype, name), vid, rest = self.columns(n, row, True)
        m = _TABLE_TAIL.match(rest)
        if m is None:
            raise self.fail("SIZE", "line %d: no SIZE RMV SSD after the PID "
                            "of %s" % (n, name))
        pid, number = m.group("pid"), m.group("number")
        field_at = max(17, len(pid) + 1)
        size_text = m.group("size")
        number_at = field_at + (max(0, 7 - len(number))
                                if size_text.endswith("GiB") else 0)
        rmv_at = field_at + max(13, len(size_text)) + 1
        if (len(pid) > 16 and "  " in pid) or m.start("number") != \
                number_at or m.start("rmv") != rmv_at or \
                m.start("ssd") != rmv_at + 4:
            raise self.fail("SIZE", "line %d: the columns of %s do not line "
                            "up as diskinfo prints them (blanks collapsed "
                            "or edited?)" % (n, name))
        size_bytes, gib = self.size(size_text, name)
        return DiskinfoDisk(name, _opt(ctype), _opt(vid), _opt(pid), None,
                            size_bytes,
                            self.tristate(m.group("rmv"), "RMV", name),
                            self.tristate(m.group("ssd"), "SSD", name),
                            None, gib)

    def serial_after(self, n: int, name: str, rest: str, last: bool
                     ) -> Tuple[str, str, str]:
        """PID, SERIAL and what follows the SERIAL field, from `rest`,
        the row from the PID field on.

        diskinfo.c prints `%-16s %-20s`, then the end of the row (-c,
        `last`) or `%-3s %-3s %s` (FLT LOC LOCATION, -P).  Every width is
        a minimum: a PID longer than 16 pushes the SERIAL right, and a
        PID may hold blanks (sata_split_model() and nvme give the rest
        of the model after its first word, up to 39 characters, or the
        whole model, up to 40, when that word is longer than 8: `SSD 860
        EVO 500GB`).  So the SERIAL starts one blank after the PID field
        (column 17, or one after a longer PID) and is read to its first
        blank; each place it could start is tried against what must
        follow it, and the row is read only when exactly one fits."""
        fits = []
        for at in range(17, min(len(rest), MAX_PID + 2)):
            if rest[at - 1] != " " or rest[at] == " ":
                continue
            pid = rest[:at - 1].rstrip(" ")
            if not pid or at != max(17, len(pid) + 1):
                continue
            serial = rest[at:].split(" ", 1)[0]
            more = rest[at + len(serial):]
            if last:
                fit = not more.strip()
            else:
                # FLT and LOC are yes, no or - in 3 columns each.
                flt_at = max(20, len(serial)) + 1 - len(serial)
                fields = more[flt_at:flt_at + 8]
                fit = not more[:flt_at].strip() and \
                    fields[:3].rstrip() in _TRISTATE and \
                    fields[4:7].rstrip() in _TRISTATE and \
                    fields[3::4] == "  " and \
                    more[flt_at + 8:flt_at + 9] not in ("", " ")
            if fit:
                fits.append((pid, serial, more))
        if len(fits) != 1:
            raise self.fail("SERIAL", "line %d: %s for %s (columns not "
                            "aligned as diskinfo prints them)"
                            % (n, "no PID and SERIAL where they belong"
                               if not fits else "PID and SERIAL can be "
                               "split %d ways" % len(fits), name))
        return fits[0]

    def condensed(self, n: int, row: str, second: str) -> DiskinfoDisk:
        (ctype, name), vid, rest = self.columns(n, row, True)
        pid, serial, _ = self.serial_after(n, name, rest, True)
        words = second.split()
        if len(words) < 3 or not second[:1].isspace():
            raise self.fail("line %d" % (n + 1), "no SIZE FLRS LOCATION "
                            "line for %s" % name)
        if words[1] == "GiB":
            size_text, flags, where = " ".join(words[:2]), words[2], \
                words[3:]
        else:
            size_text, flags, where = words[0], words[1], words[2:]
        size_bytes, gib = self.size(size_text, name)
        flags = self.flags(flags, name)
        return DiskinfoDisk(name, _opt(ctype), _opt(vid), _opt(pid),
                            _opt(serial), size_bytes, _flag(flags, 2, "R"),
                            _flag(flags, 3, "S"),
                            _opt(" ".join(where)) if where else None, gib,
                            _flag(flags, 0, "F"), _flag(flags, 1, "L"))

    def physical(self, n: int, row: str) -> DiskinfoDisk:
        (name,), vid, rest = self.columns(n, row, False)
        pid, serial, more = self.serial_after(n, name, rest, False)
        words = more.split(None, 2)
        if len(words) < 3:
            raise self.fail("line %d" % n, "no FLT LOC LOCATION for %s"
                            % name)
        return DiskinfoDisk(name, None, _opt(vid), _opt(pid), _opt(serial),
                            None, None, None, _opt(words[2].strip()), None,
                            self.tristate(words[0], "FLT", name),
                            self.tristate(words[1], "LOC", name))

    def tables(self, lines: List[Tuple[int, str]], at: int, kind: str
               ) -> Dict[str, DiskinfoDisk]:
        disks: Dict[str, DiskinfoDisk] = {}
        rows = lines[at + 1:]
        if kind == "condensed":
            if not rows or \
                    rows[0][1].split() != ["SIZE", "FLRS", "LOCATION"]:
                raise self.fail("SIZE", "the second header line 'SIZE "
                                "FLRS LOCATION' is missing")
            rows = rows[1:]
            if len(rows) % 2:
                raise self.fail("line %d" % rows[-1][0], "a disk without "
                                "its SIZE FLRS LOCATION line")
            for k in range(0, len(rows), 2):
                (n, row), (_, second) = rows[k], rows[k + 1]
                self.add(disks, n, self.condensed(n, row, second))
            return disks
        for n, row in rows:
            disk = self.table(n, row) if kind == "table" else \
                self.physical(n, row)
            self.add(disks, n, disk)
        return disks


def parse_diskinfo_chp(text: str, command: str = COMMAND
                       ) -> Dict[str, DiskinfoDisk]:
    """Parse diskinfo output, `-cHp` or any other form (see above).

    Sample (facts §9.2, -cH with -p; fields separated by TABs, shown here
    as " | "):

        SCSI | c0t55CD2E404C0D8D0Ed0 | INTEL | SSDSC2BA400G3 |
        BTTV5095012Z400HGN | 400088457216 | ??-S | 0,1
    """
    reader = _Reader(command)
    # A copy from a web page may carry no-break spaces for blanks.
    lines = [(n, line.rstrip("\r")) for n, line in enumerate(
        text.replace("\u00a0", " ").split("\n"), 1) if line.strip()]
    for k, (_, line) in enumerate(lines):
        kind = _HEADERS.get(tuple(line.split()))
        if kind is not None:
            # Text above the header (a prompt) is not diskinfo's.
            return reader.tables([(n, row.expandtabs(8).rstrip())
                                  for n, row in lines], k, kind)
    return reader.scripted(lines)


def query_diskinfo(host: Host) -> Dict[str, DiskinfoDisk]:
    return parse_diskinfo_chp(output_of(host, "diskinfo", ["-cHp"], "TYPE"))
