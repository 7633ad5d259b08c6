# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The driver interface: what plan, verify, audit, the transaction and
the `sdconf` verbs ask of a kernel driver whose driver.conf sdtune
tunes (sd with sd.conf, nvme with nvme.conf).

libstoragemgmt's plugin interface is the model: one explicit contract
(the abstract methods below), the capabilities a driver has (`tunables`:
the names its .conf can set for a key), and "not supported" as an
answer (NotSupported) where a driver has no such thing.  Each driver
wires its own rule book (sdconf/, nvmeconf/) and its own proposal and
verify modules (drivers/sd/, drivers/nvme/) behind this contract; what
is the same for every driver (the plan file, the screens, the verify
states, the transaction) is written once above it.  Whether a disk is
the driver's is answered here (attaches), so that no caller branches on
which driver a disk has.
"""

import abc
from typing import Dict, FrozenSet, List, Mapping, Optional, Tuple

from ..errors import UsageError
from ..inventory.disks import Disk
from ..driverconf.edit import Edit
from ..driverconf.parser import ConfFile, Diagnostic
from .diskstate import DiskState, Elsewhere
from .planning import Evidence, Overrides, Proposed


class NotSupported(UsageError):
    """What a driver answers for something it does not have (say
    INQUIRY vendor and product ids for nvme.conf): a usage error naming
    the driver, never a silent no-op."""


class Driver(abc.ABC):
    """One kernel driver whose driver.conf sdtune reads and changes."""

    # The module name: sd, nvme.
    name: str = ""
    # The property that lists per-device settings in its .conf.
    list_property: str = ""
    # What a key must be, for a plan file's error ("24-character key").
    key_rule: str = ""
    # The tunables an entry can set (its capabilities).
    tunables: FrozenSet[str] = frozenset()
    # Whether its proposals draw on the known-drives table (sdtune.conf
    # known_drives: VID/PID patterns).
    reads_known_drives: bool = False
    # The tunables `prove` can show in effect through the kernel's own
    # paths (DKIOCGMEDIAINFOEXT, DKIOCFLUSHWRITECACHE, the throttle mdb
    # reads); empty: the driver has nothing to prove, and asked()
    # answers NotSupported.
    proves: FrozenSet[str] = frozenset()

    @property
    def conf_name(self) -> str:
        """The file's name in /kernel/drv."""
        return "%s.conf" % self.name

    # -- disks ---------------------------------------------------------

    @abc.abstractmethod
    def attaches(self, disk: Disk) -> bool:
        """Whether the driver's .conf reaches the disk."""

    @abc.abstractmethod
    def key_of(self, disk: Disk) -> Optional[str]:
        """What the disk's entries in the .conf are keyed by (None:
        unknown, or not the driver's disk)."""

    # -- the .conf -----------------------------------------------------

    @abc.abstractmethod
    def key_fits(self, key: str) -> bool:
        """Whether `key` can key an entry of the .conf (key_rule)."""

    def key_label(self, key: str) -> str:
        """The key as a journal summary line shows it."""
        return key

    @abc.abstractmethod
    def lint(self, conf: ConfFile, flavour: str) -> List[Diagnostic]:
        """What the driver warns about or ignores in the file."""

    @abc.abstractmethod
    def show_report(self, conf: ConfFile, path: str, flavour: str
                    ) -> dict:
        """`sdconf show`: the entries and what the driver makes of
        them, as JSON."""

    @abc.abstractmethod
    def render_show(self, report: dict) -> str:
        """`sdconf show` as text."""

    @abc.abstractmethod
    def split_key(self, action: str, path: str, words: List[str],
                  vid: Optional[str], pid: Optional[str]
                  ) -> Tuple[str, List[str]]:
        """`sdconf set|unset FILE WORDS`: the key the words (or the
        INQUIRY ids) give, and the words left (settings or names)."""

    @abc.abstractmethod
    def set_edit(self, old: str, path: str, key: str, settings: List[str],
                 flavour: str, any_length_key: bool = False) -> Edit:
        """`sdconf set`: the file with KEY's entry setting `settings`
        (name=value words)."""

    @abc.abstractmethod
    def unset_edit(self, old: str, path: str, key: str, names: List[str],
                   flavour: str) -> Edit:
        """`sdconf unset`: the file without KEY's `names` (no names:
        without KEY's entries)."""

    @abc.abstractmethod
    def set_claim(self, text: str, key: str, settings: Mapping[str, str],
                  flavour: str) -> str:
        """The text with KEY's entry setting exactly `settings` (a saved
        plan's change, made again); EditError when it cannot be."""

    # -- plan and verify -----------------------------------------------

    @abc.abstractmethod
    def propose(self, text: str, flavour: str, evidence: Evidence,
                options: Overrides) -> Proposed:
        """What `plan` proposes for the .conf `text`, with every screen
        applied: the changes, and what was held back and why."""

    def asked(self, conf: ConfFile, disk: Disk, flavour: str
              ) -> Dict[str, str]:
        """What the .conf the kernel reads (`conf`) asks the kernel to
        do for the disk and the kernel accepts, tunable -> value as
        written, limited to `proves`; NotSupported when the driver has
        nothing prove can show."""
        raise NotSupported("prove", disk.name, "the %s driver has nothing "
                           "to prove through the kernel's paths"
                           % self.name)

    @abc.abstractmethod
    def verify_disk(self, conf: ConfFile, disk: Disk, flavour: str,
                    failed: Optional[Mapping[str, str]] = None,
                    elsewhere: Optional[Elsewhere] = None) -> DiskState:
        """One disk of the driver's against the .conf the kernel reads
        (`conf`), and with `elsewhere` against the next boot's and the
        shadowed copies; `failed` is Inventory.failed, to say why what
        is missing is missing."""
