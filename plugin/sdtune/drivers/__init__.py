# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The kernel drivers whose driver.conf sdtune tunes, each behind the
one interface of drivers/base.py: sd (sd.conf) and nvme (nvme.conf).

DRIVERS maps a driver's name (as --driver, a plan file and a journal
entry say it) to its Driver; for_disk() is the driver whose .conf
reaches a disk, for_file() the rules a file is read by.  Which driver a
disk has is decided here and in inventory/, nowhere else.
"""

from typing import Dict, Optional

from ..inventory.disks import Disk
from .base import Driver
from .nvme.driver import NvmeDriver
from .sd.driver import SdDriver

DRIVERS: Dict[str, Driver] = {d.name: d for d in (SdDriver(), NvmeDriver())}
# The names, in the order --driver lists them; the default first.
NAMES = tuple(DRIVERS)
DEFAULT = DRIVERS["sd"]


def for_disk(disk: Disk) -> Optional[Driver]:
    """The driver whose .conf reaches the disk; None for a disk none of
    them tunes (virtio's blkdev)."""
    return next((d for d in DRIVERS.values() if d.attaches(disk)), None)


def for_file(path: str) -> Driver:
    """The rules a file is read by when none is asked for: the driver
    whose .conf has the file's name (nvme.conf), else sd's."""
    name = path.rsplit("/", 1)[-1]
    return next((d for d in DRIVERS.values() if d.conf_name == name),
                DEFAULT)
