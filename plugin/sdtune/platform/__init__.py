# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Per-platform adapters: which sd.conf the kernel reads, how a change
is activated and made to survive a reboot, and what the next boot will
read (for verify and rollback).

    detect       which platform this is, from what the system reports
    modpath      the effective driver.conf on the kernel module path
    base         the adapter interface, FileChange, Persistence, NextBoot
    smartos      SmartOS and Triton: ramdisk root, loader boot modules
    bootarchive  OmniOS, OpenIndiana, NexentaStor, other illumos: boot
                 archive and boot environments
"""

from typing import Optional

from ..host import Host
from .base import FileChange, NextBoot, Persistence, Platform
from .bootarchive import BootArchivePlatform
from .detect import PlatformInfo, detect
from .modpath import find_copies
from .smartos import SmartOSPlatform


def platform_for(host: Host, conf: str, boot_media: Optional[str] = None,
                 driver: str = "sd",
                 info: Optional[PlatformInfo] = None) -> Platform:
    """The adapter for the platform the host reports and `driver`'s .conf
    (sd or nvme); `conf` is the configured path, used when no copy exists
    on the module path; `info`, the platform detected already."""
    info = info if info is not None else detect(host)
    copies = find_copies(host, info.machine, conf, driver)
    if info.smartos:
        return SmartOSPlatform(host, info, copies, boot_media)
    return BootArchivePlatform(host, info, copies)


__all__ = ["BootArchivePlatform", "FileChange", "NextBoot", "Persistence",
           "Platform", "PlatformInfo", "SmartOSPlatform", "detect",
           "platform_for"]
