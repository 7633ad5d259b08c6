# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune verify`: does the kernel use what its driver.conf says, disk
by disk?

Each disk is verified by the driver whose .conf reaches it
(drivers.for_disk): sd against sd.conf (drivers/sd/verify.py: the sd.conf
evaluation against the values mdb shows in sd_lun), nvme against
nvme.conf (drivers/nvme/verify.py: against what blkdev reports).
States:

  applied         every value sd.conf sets is in use
  pending reboot  the kernel still has other values: sd reads sd.conf only
                  when a disk attaches, and busy disks attached before the
                  change (facts §1) — the normal case, not an error
  not matched     no sd-config-list pair matches the disk (SmartOS's ""
                  pair for every device, which caps retries, does not
                  count)
  not persistent  the kernel uses it now, but the next boot reads another
                  sd.conf (platform/: a SmartOS ramdisk edit without a
                  boot module, another boot environment) that gives the
                  disk other values, or one that cannot be read
  shadowed        a copy of sd.conf the kernel does not read (later on
                  the module path) asks for other values for the disk
  not an sd disk  the disk attaches through another driver (virtio's
                  blkdev): sd.conf has no effect on it.  An NVMe namespace
                  is verified against nvme.conf instead, with the same
                  states and "ignored by nvme"
  ignored by sd   sd.conf asks for something the kernel will not do: an
                  invalid value or name, the throttle reset, disksort on a
                  disk reporting rotation rate 1 (facts §6.3), a physical
                  block size dropped by a failed READ CAPACITY(16) or, on
                  upstream kernels, lower than the drive reports (§6.1)
  unknown         the kernel's values or the disk's vendor and product
                  could not be read; the details say which source failed

Exit status 1 when any disk is "ignored by sd", "not persistent" or
"shadowed"; 4 (and a stderr line
naming the disks) when any disk is "unknown", or when the kernel's values
or the disk names could not be read at all: unknown is unsafe, so verify
never reports success for what it could not see.  Runs the inventory's
commands through the host.
"""
from typing import Callable, Dict, List, Mapping, Optional, Union

from ..drivers import DRIVERS, for_disk
from ..drivers.base import Driver
from ..drivers.diskstate import NEEDED, DiskState, Elsewhere
from ..host import Host
from ..inventory.disks import Disk, Inventory, take_inventory
from ..platform import Platform
from ..driverconf.parser import parse_bytes

# A driver's platform adapter (what its .conf is and where the next boot
# reads it), or a function that makes it when a disk of the driver is
# found.
Source = Union[Platform, Callable[[], Platform]]
Check = Callable[[Disk], DiskState]


def checker(driver: Driver, platform: Platform, flavour: str,
            failed: Optional[Mapping[str, str]] = None) -> Check:
    """The verify of one of `driver`'s disks against the .conf that
    `platform` says the kernel reads, the next boot's and the shadowed
    copies."""
    conf = parse_bytes(platform.base_text())
    elsewhere = Elsewhere.of(platform)
    return lambda disk: driver.verify_disk(conf, disk, flavour, failed,
                                           elsewhere)


def not_tuned(disk: Disk) -> DiskState:
    """A disk no driver verified here reaches (virtio's blkdev)."""
    return DiskState(disk.name, disk.key, "not an sd disk",
                     ["attached by %s: sd.conf has no effect on it"
                      % disk.driver])


def verify_all(host: Host, flavour: str, sources: Mapping[str, Source],
               inv: Optional[Inventory] = None) -> List[DiskState]:
    """Every disk's state, each by its driver against the .conf its
    source (driver name -> platform adapter) says the kernel reads.  A
    source given as an adapter is read at once (its .conf must be
    readable whatever disks there are); one given as a function only
    when a disk of its driver is found.  A disk of a driver without a
    source is "not an sd disk"."""
    inv = inv if inv is not None else take_inventory(host)
    checks: Dict[str, Check] = {}
    for name, source in sources.items():
        if not callable(source):
            checks[name] = checker(DRIVERS[name], source, flavour,
                                   inv.failed)
    states = []
    for disk in inv.disks:
        driver = for_disk(disk)
        if driver is None or driver.name not in sources:
            states.append(not_tuned(disk))
            continue
        if driver.name not in checks:
            source = sources[driver.name]
            checks[driver.name] = checker(
                driver, source() if callable(source) else source, flavour,
                inv.failed)
        states.append(checks[driver.name](disk))
    return states


def unverified(inv: Inventory, states: List[DiskState]) -> List[str]:
    """One line per reason some or all disks could not be verified, naming
    the disks; empty when every disk was read."""
    by_reason: Dict[str, List[str]] = {}
    for s in states:
        if s.state == "unknown":
            by_reason.setdefault("; ".join(s.details), []).append(s.name)
    lines = ["cannot verify %s: %s" % (", ".join(names), reason)
             for reason, names in by_reason.items()]
    said = " ".join(by_reason)
    for name in NEEDED:
        if name in inv.failed and inv.failed[name] not in said:
            lines.append("cannot verify: %s failed: %s"
                         % (name, inv.failed[name]))
    return lines
