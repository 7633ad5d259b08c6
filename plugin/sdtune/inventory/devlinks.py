"""sd instance number to cXtYdZ name, from files (facts §8.4).

`/etc/path_to_inst` maps physical paths to instance numbers; the
`/dev/rdsk/*` links point at `/devices/<physical path>:<minor>`.  Reads
those through the host (under -R ROOT); runs no command.
"""

import re
from typing import Dict, Set

from ..errors import ParseError
from ..host import Host
from ..parsing import parse_count

PATH_TO_INST = "/etc/path_to_inst"
_INST = re.compile(r'^"([^"]+)"\s+([0-9]+)\s+"([^"]+)"$')
# The one spelling of a disk's cXtYdZ name (the target part is absent on
# IDE and some controllers, hexadecimal for WWNs), and of a slice or
# fdisk partition after it: every module that recognises disk names
# builds its pattern from these.
DISK_NAME = r"c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+"
SLICE = r"[sp][0-9]+"
_NAME = re.compile(r"^(%s)%s$" % (DISK_NAME, SLICE))


def parse_path_to_inst(text: str, driver: str = "sd") -> Dict[str, int]:
    """physical path → instance for one driver.  The kernel writes one
    blank between the fields; any run of blanks or TABs is read alike.

    Sample:

        "/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"
    """
    out: Dict[str, int] = {}
    seen: Set[int] = set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _INST.match(line)
        if not m:
            raise ParseError(PATH_TO_INST, "line %d" % n,
                             "not '\"path\" instance \"driver\"'")
        if m.group(3) != driver:
            continue
        path = m.group(1)
        instance = parse_count(m.group(2), command=PATH_TO_INST,
                               field="line %d" % n,
                               what="an instance number")
        # The kernel keeps both unique; a repeat would pair a disk name
        # with the wrong instance.
        if path in out or instance in seen:
            raise ParseError(PATH_TO_INST, "line %d" % n,
                             "%s %s listed twice" % (
                                 "path" if path in out else "instance",
                                 path if path in out else instance))
        out[path] = instance
        seen.add(instance)
    return out


def disk_names(host: Host) -> Dict[int, str]:
    """sd instance → cXtYdZ, from path_to_inst and the /dev/rdsk links."""
    text = host.read_bytes(host.sys_path("/etc/path_to_inst"))
    by_path = parse_path_to_inst(text.decode("utf-8", "replace"))
    rdsk = host.sys_path("/dev/rdsk")
    names: Dict[int, str] = {}
    # All the links in one request: over SSH, one round trip for the
    # thousands of slices of a shelf.
    links = host.read_links(rdsk)
    for link in sorted(links):
        m = _NAME.match(link)
        if not m:
            continue
        target = links[link]
        at = target.find("/devices/")
        if at < 0:
            continue
        phys = target[at + len("/devices"):].rsplit(":", 1)[0]
        instance = by_path.get(phys)
        if instance is not None:
            names.setdefault(instance, m.group(1))
    return names
