# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""OmniOS, OpenIndiana, NexentaStor and other illumos with a boot archive
and boot environments.

sd.conf lives on the root file system of the running boot environment and
in the boot archive, from which the kernel reads it at boot.  The archive
is rebuilt on a clean shutdown only: after a panic or a power loss the old
copy boots, so every change runs `bootadm update-archive` (before
update_drv: its failure then leaves nothing loaded to undo).  An edit
lives in the running BE only; `beadm list -H` tells which BE boots next.
pkg delivers sd.conf with preserve=true, so a local edit survives `pkg
update` and vendor changes to it never arrive silently.

Runs bootadm and beadm through the host.
"""

from dataclasses import dataclass
from typing import List, Optional

from ..errors import ParseError, SdtuneError
from ..inventory.runner import output_of
from .base import FileChange, NextBoot, Persistence, Platform


@dataclass
class BootEnvironment:
    name: str
    active_now: bool
    active_on_reboot: bool


def parse_beadm(text: str) -> List[BootEnvironment]:
    """`beadm list -H`: name;uuid;active;mountpoint;space;policy;created,
    active holding N (running) and R (boots next).

    Sample:

        omnios-r151046;1f6e0c9a-...;NR;/;9876543210;static;1700000000
    """
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(";")
        if len(fields) < 7 or not fields[0]:
            raise ParseError("beadm list -H", "line %d" % n,
                             "not 7 fields separated by ';'")
        flags = fields[2]
        out.append(BootEnvironment(fields[0], "N" in flags, "R" in flags))
    return out


class BootArchivePlatform(Platform):
    """The boot-archive platforms."""

    _bes: Optional[List[BootEnvironment]] = None
    _be_error: str = ""

    def persistence(self, base: bytes, new: bytes) -> Persistence:
        return Persistence(
            [FileChange(self.effective, self.conf_name,
                        self.read(self.effective), new)],
            self.activation([self.effective]))

    def activation(self, paths: List[str]) -> List[str]:
        """The boot archive first, whatever changed: it holds every copy
        on the module path."""
        return ["bootadm"] + super().activation(paths)

    def _environments(self) -> List[BootEnvironment]:
        if self._bes is None:
            self._bes = []
            if not self.host.can_run("beadm"):
                self._be_error = "beadm cannot be run"
                return self._bes
            try:
                self._bes = parse_beadm(output_of(self.host, "beadm",
                                                  ["list", "-H"],
                                                  "boot environments"))
            except SdtuneError as e:
                self._be_error = str(e)
        return self._bes

    def boot_environment(self) -> Optional[str]:
        running = [b.name for b in self._environments() if b.active_now]
        return running[0] if running else None

    def next_environment(self) -> Optional[str]:
        nxt = [b.name for b in self._environments() if b.active_on_reboot]
        return nxt[0] if nxt else None

    def warnings(self) -> List[str]:
        bes = self._environments()
        if not bes:
            return ["boot environments unknown (%s)" % (
                self._be_error or "beadm list -H listed none")]
        # Exactly one running and one next: anything else is a beadm
        # answer sdtune cannot trust to say which sd.conf boots next.
        odd = []
        for what, flagged in (("running", [b.name for b in bes
                                           if b.active_now]),
                              ("booting next", [b.name for b in bes
                                                if b.active_on_reboot])):
            if len(flagged) != 1:
                odd.append("beadm list -H marks %s as %s" % (
                    ", ".join(flagged) if flagged else "no boot "
                    "environment", what))
        if odd:
            return ["%s: which sd.conf the next boot reads is unknown"
                    % "; ".join(odd)]
        now, nxt = self.boot_environment(), self.next_environment()
        if nxt is not None and now is not None and nxt != now:
            return ["the boot environment that boots next (%s) is not the "
                    "running one (%s), which this changes: the next boot "
                    "reads %s's own %s ('beadm activate %s' to keep "
                    "this change)" % (nxt, now, nxt, self.conf_name, now)]
        return []

    def next_boot(self) -> NextBoot:
        now, nxt = self.boot_environment(), self.next_environment()
        if nxt is not None and now is not None and nxt != now:
            return NextBoot("boot environment %s" % nxt, None,
                            "the next boot is boot environment %s, not the "
                            "running %s" % (nxt, now))
        return NextBoot(self.effective, self.read(self.effective))

    def describe(self):
        doc = super().describe()
        doc["boot_environment"] = self.boot_environment()
        doc["next_boot_environment"] = self.next_environment()
        return doc
