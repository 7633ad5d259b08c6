# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The driver.conf the kernel reads: the first `drv/<driver>.conf` on the
module path (illumos hwc_parse_now() opens exactly one file; no merge).

The path is /system/boot/kernel (SmartOS boot modules), then
/platform/<platform>/kernel, /kernel and /usr/kernel.  A copy later on
the path is shadowed: editing it changes nothing.  /etc/driver/drv/ is
Oracle Solaris 11 only: illumos never reads it.  Looks at files through
the host; runs no command.
"""

from dataclasses import dataclass, field
from typing import List

from ..host import Host

BOOTFS_KERNEL = "/system/boot/kernel"
IGNORED_DIR = "/etc/driver/drv"


def module_path(machine: str) -> List[str]:
    """The kernel's module directories, in search order."""
    return [BOOTFS_KERNEL, "/platform/%s/kernel" % machine, "/kernel",
            "/usr/kernel"]


@dataclass
class ConfCopies:
    """Every copy of one driver's .conf, and which one the kernel reads."""

    driver: str
    effective: str                  # system path
    exists: bool                    # False: no copy, effective is new
    shadowed: List[str] = field(default_factory=list)
    ignored: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"driver": self.driver, "effective": self.effective,
                "exists": self.exists, "shadowed": list(self.shadowed),
                "ignored": list(self.ignored)}


def find_copies(host: Host, machine: str, configured: str,
                driver: str = "sd") -> ConfCopies:
    """The copies of `driver`.conf under the host's root.  With no copy
    on the module path, the configured path is where one is created."""
    found = [d + "/drv/%s.conf" % driver for d in module_path(machine)]
    present = [p for p in found if host.exists(host.sys_path(p))]
    if present:
        copies = ConfCopies(driver, present[0], True, present[1:])
    else:
        copies = ConfCopies(driver, configured,
                            host.exists(host.sys_path(configured)))
    ignored = "%s/%s.conf" % (IGNORED_DIR, driver)
    if host.exists(host.sys_path(ignored)):
        copies.ignored.append(ignored)
    return copies
