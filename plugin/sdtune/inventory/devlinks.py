# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Disk names to (driver, instance), from files (facts §8.4).

`/etc/path_to_inst` maps physical paths to instance numbers of a
driver; the `/dev/rdsk/*` links point at `/devices/<physical
path>:<minor>`.  Disks attach through sd (SCSI, SATA, SAS) or through
blkdev (NVMe namespaces, virtio disks: platforms.md §1.3, where sd.conf
has no effect); their instance numbers are counted per driver, so a name
maps to the pair.  Reads those files through the host (under -R ROOT);
runs no command.
"""

import re
from typing import Dict, Iterable, Set, Tuple

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
# The drivers whose instances are disks.
DISK_DRIVERS = ("sd", "blkdev")


def parse_path_to_inst(text: str, driver: str = "sd") -> Dict[str, int]:
    """physical path → instance for one driver.  The kernel writes one
    blank between the fields; any run of blanks or TABs is read alike.

    Sample:

        "/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"
    """
    return {path: instance for path, (_, instance) in
            parse_path_to_inst_drivers(text, (driver,)).items()}


def parse_path_to_inst_drivers(text: str, drivers: Iterable[str]
                               ) -> Dict[str, Tuple[str, int]]:
    """physical path → (driver, instance) for the lines of ``drivers``;
    every line is checked, whatever its driver.

    Sample (a virtio disk under blkdev, a SATA SSD under sd; an NVMe
    namespace's path ends in blkdev@w<EUI-64>,0):

        "/pci@0,0/pci1af4,2@4/blkdev@0,0" 0 "blkdev"
        "/pci@0,0/pci15d9,805@1f,2/disk@0,0" 0 "sd"
    """
    wanted = set(drivers)
    out: Dict[str, Tuple[str, int]] = {}
    seen: Set[Tuple[str, int]] = set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _INST.match(line)
        if not m:
            raise ParseError(PATH_TO_INST, "line %d" % n,
                             "not '\"path\" instance \"driver\"'")
        driver = m.group(3)
        if driver not in wanted:
            continue
        path = m.group(1)
        instance = parse_count(m.group(2), command=PATH_TO_INST,
                               field="line %d" % n,
                               what="an instance number")
        # The kernel keeps both unique (instances per driver); a repeat
        # would pair a disk name with the wrong instance.
        if path in out or (driver, instance) in seen:
            raise ParseError(PATH_TO_INST, "line %d" % n,
                             "%s %s listed twice" % (
                                 "path" if path in out else "instance",
                                 path if path in out else instance))
        out[path] = (driver, instance)
        seen.add((driver, instance))
    return out


def disk_units(host: Host) -> Dict[str, Tuple[str, int]]:
    """cXtYdZ → (driver, instance) of every disk under sd or blkdev,
    from path_to_inst and the /dev/rdsk links."""
    text = host.read_bytes(host.sys_path(PATH_TO_INST))
    by_path = parse_path_to_inst_drivers(text.decode("utf-8", "replace"),
                                         DISK_DRIVERS)
    rdsk = host.sys_path("/dev/rdsk")
    units: Dict[str, Tuple[str, int]] = {}
    taken: Set[Tuple[str, int]] = set()
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
        unit = by_path.get(phys)
        # The first name (sorted) of an instance wins, as it always has.
        if unit is not None and unit not in taken and \
                m.group(1) not in units:
            units[m.group(1)] = unit
            taken.add(unit)
    return units


def disk_names(host: Host) -> Dict[int, str]:
    """sd instance → cXtYdZ, from path_to_inst and the /dev/rdsk links."""
    return {instance: name for name, (driver, instance) in
            disk_units(host).items() if driver == "sd"}
