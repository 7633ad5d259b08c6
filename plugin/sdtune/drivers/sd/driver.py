# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sd as a Driver: sd.conf's `sd-config-list` pairs keyed by the 24
characters of INQUIRY vendor and product id, read and edited by the
rules in sdconf/ (flavours, v1 data, key matching), proposed by
drivers/sd/propose.py and verified against mdb's sd_lun by
drivers/sd/verify.py.
"""

from typing import Dict, List, Mapping, Optional, Tuple

from ...inventory.disks import Disk
from ...driverconf.edit import Edit
from ...driverconf.parser import ConfFile, Diagnostic
from ...sdconf import actions
from ...sdconf.edit import Setting, set_tunables
from ...sdconf.lint import lint
from ...sdconf.match import KEY_LEN
from ...sdconf.tunables import TUNABLE_BY_NAME
from ..base import Driver
from ..diskstate import DiskState, Elsewhere
from ..planning import Evidence, Overrides, Proposed
from . import propose, verify


class SdDriver(Driver):
    name = "sd"
    list_property = "sd-config-list"
    key_rule = "%d-character key" % KEY_LEN
    tunables = frozenset(TUNABLE_BY_NAME)
    reads_known_drives = True
    proves = frozenset(("physical-block-size", "cache-nonvolatile",
                        "throttle-max"))

    def attaches(self, disk: Disk) -> bool:
        return disk.driver == "sd"

    def key_of(self, disk: Disk) -> Optional[str]:
        return disk.key if self.attaches(disk) else None

    def key_fits(self, key: str) -> bool:
        # The 8 characters of VID and the 16 of PID.
        return len(key) == KEY_LEN

    def lint(self, conf: ConfFile, flavour: str) -> List[Diagnostic]:
        return lint(conf, flavour)

    def show_report(self, conf: ConfFile, path: str, flavour: str
                    ) -> dict:
        return actions.show_report(conf, path, flavour)

    def render_show(self, report: dict) -> str:
        return actions.render_show(report)

    def split_key(self, action: str, path: str, words: List[str],
                  vid: Optional[str], pid: Optional[str]
                  ) -> Tuple[str, List[str]]:
        words = list(words)
        if vid is None and pid is None:
            key = words.pop(0) if words else None
        elif words and _looks_like_key(action, words[0]):
            # KEY given as well: let resolve_key() say it is one or the
            # other.
            key = words.pop(0)
        else:
            key = None
        return actions.resolve_key(action, path, key, vid, pid), words

    def set_edit(self, old: str, path: str, key: str, settings: List[str],
                 flavour: str, any_length_key: bool = False
                 ) -> Edit:
        return actions.set_edit(old, path, key, settings, flavour,
                                any_length_key)

    def unset_edit(self, old: str, path: str, key: str, names: List[str],
                   flavour: str) -> Edit:
        return actions.unset_edit(old, path, key, names, flavour)

    def set_claim(self, text: str, key: str, settings: Mapping[str, str],
                  flavour: str) -> str:
        return set_tunables(text, key, [Setting(t, v) for t, v in
                                        settings.items()], flavour)

    def propose(self, text: str, flavour: str, evidence: Evidence,
                options: Overrides) -> Proposed:
        return propose.propose(text, flavour, evidence.inventory,
                               evidence.records, evidence.table, options)

    def asked(self, conf: ConfFile, disk: Disk, flavour: str
              ) -> Dict[str, str]:
        if disk.vid is None or disk.pid is None:
            return {}
        return {t: v for t, v in verify.asked(conf, disk, flavour).items()
                if t in self.proves}

    def verify_disk(self, conf: ConfFile, disk: Disk, flavour: str,
                    failed: Optional[Mapping[str, str]] = None,
                    elsewhere: Optional[Elsewhere] = None) -> DiskState:
        return verify.verify_disk(conf, disk, flavour, failed, elsewhere)


def _looks_like_key(action: str, word: str) -> bool:
    """Whether a word after FILE is a KEY rather than a setting/name."""
    if action == "set":
        return "=" not in word and ":" not in word
    return word.lower() not in TUNABLE_BY_NAME
