# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What every platform adapter answers, and the pieces they share.

An adapter owns, for its platform: the effective sd.conf (modpath.py),
which files a change writes besides it and which commands activate it
(Persistence), the sd.conf the next boot will read (NextBoot, for verify)
and the warnings an operator must see before changing anything.  The
transaction (tune/transaction.py) writes the files and runs the steps;
the adapters only decide them, through the host.
"""

import abc
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..host import Host
from .detect import PlatformInfo
from .modpath import ConfCopies

# Steps a transaction can run after writing its files, in this order: the
# boot archive first (a failure then leaves nothing loaded to undo), the
# driver's reload last.
STEP_ORDER = ("bootadm", "update_drv")


@dataclass
class FileChange:
    """One file a change writes: its bytes before and after (None: the
    file does not exist / is removed)."""

    path: str                       # system path
    role: str                       # what it is, for the operator
    old: Optional[bytes]
    new: Optional[bytes]
    volatile: bool = False          # lost at reboot (SmartOS ramdisk)


@dataclass
class Persistence:
    """How a change of sd.conf from `base` to `new` is made on this
    platform: the files, the steps and what the operator is told."""

    files: List[FileChange]
    steps: List[str]
    notes: List[str] = field(default_factory=list)
    # Triton compute node: the boot module to hand to CNAPI.
    handoff: Optional[Dict[str, str]] = None


@dataclass
class NextBoot:
    """The sd.conf the kernel will read after the next reboot: its text,
    or None with the reason it cannot be known (unknown is unsafe: the
    change is then reported as not persistent)."""

    where: str
    text: Optional[bytes]
    reason: str = ""
    # The next boot's file is the newer intent (a SmartOS boot module
    # written after this boot): where it differs from what the kernel
    # reads now, the difference is pending, not lost.
    newer: bool = False


@dataclass(frozen=True)
class ModuleConflict:
    """A loader line that makes a module of another name deliver the
    same driver.conf as sdtune's boot module."""

    loader: str         # the loader file (system path)
    module: str         # the other module's name
    line: str           # its X_flags line, stripped
    conf: str           # the file both deliver (/kernel/drv/sd.conf)


class Platform(abc.ABC):
    """One platform's rules for sd.conf."""

    def __init__(self, host: Host, info: PlatformInfo,
                 copies: ConfCopies) -> None:
        self.host = host
        self.info = info
        self.copies = copies

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def driver(self) -> str:
        """The driver whose .conf this adapter changes: sd or nvme."""
        return self.copies.driver

    @property
    def conf_name(self) -> str:
        """The file's name as messages say it: sd.conf, nvme.conf."""
        return "%s.conf" % self.copies.driver

    @property
    def effective(self) -> str:
        """The driver.conf the kernel reads (system path)."""
        return self.copies.effective

    def read(self, path: str) -> Optional[bytes]:
        """A system file's bytes, or None when it does not exist."""
        real = self.host.sys_path(path)
        if not self.host.exists(real):
            return None
        return self.host.read_bytes(real)

    def base_text(self) -> bytes:
        """The effective sd.conf now (empty when there is none yet)."""
        return self.read(self.effective) or b""

    @abc.abstractmethod
    def persistence(self, base: bytes, new: bytes) -> Persistence:
        """The files and steps that change sd.conf from `base` to `new`
        now and for every later boot."""

    @abc.abstractmethod
    def next_boot(self) -> NextBoot:
        """The sd.conf the next boot reads."""

    def warnings(self) -> List[str]:
        """What the operator must hear before a change."""
        return []

    def shadowed_edits(self) -> List[str]:
        """The shadowed copies whose contents matter: an operator may
        have edited them expecting an effect."""
        return list(self.copies.shadowed)

    def boot_environment(self) -> Optional[str]:
        """The running boot environment, where the platform has them."""
        return None

    def boot_module_conflicts(self) -> List["ModuleConflict"]:
        """Boot modules of another name that deliver a driver.conf that
        sdtune's own boot module delivers, where the platform has boot
        modules."""
        return []

    def activation(self, paths: List[str]) -> List[str]:
        """The steps after writing `paths` (system paths): update_drv
        when the file the kernel reads is among them."""
        return ["update_drv"] if self.effective in paths else []

    def step_argv(self, step: str, driver: Optional[str] = None
                  ) -> Tuple[str, List[str]]:
        """The allow-listed command and arguments of a step; update_drv
        reloads `driver` (a journal entry's), by default this adapter's."""
        if step == "update_drv":
            return "update_drv", ["-vf", driver or self.driver]
        if step == "bootadm":
            args = ["update-archive"]
            if self.host.root != "/":
                args += ["-R", self.host.root]
            return "bootadm", args
        raise ValueError(step)

    def describe(self) -> Dict[str, object]:
        """For `disks -o json` and the journal."""
        doc = self.info.to_json()
        doc["%s_conf" % self.driver] = self.copies.to_json()
        return doc
