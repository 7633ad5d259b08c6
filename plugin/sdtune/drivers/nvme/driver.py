# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""nvme as a Driver: nvme.conf's `nvme-config-list` triplets keyed by
the controller's model (Identify Controller, at most 40 bytes), read and
edited by the rules in nvmeconf/, proposed by drivers/nvme/propose.py
(min-phys-block-size only: nvme.conf has nothing that skips flushes and
nothing for the queue) and verified against what blkdev reports by
drivers/nvme/verify.py.  It has no INQUIRY ids and no flavours: the
flavour asked for is ignored.
"""

from typing import Dict, List, Mapping, Optional, Tuple

from ...driverconf.edit import Edit
from ...driverconf.parser import ConfFile, Diagnostic
from ...errors import UsageError
from ...inventory.disks import Disk
from ...nvmeconf import actions
from ...nvmeconf.lint import lint
from ...nvmeconf.model import MODEL_LEN, TUNABLES
from ..base import Driver, NotSupported
from ..diskstate import DiskState, Elsewhere
from ..planning import Evidence, Overrides, Proposed
from . import propose, verify


class NvmeDriver(Driver):
    name = "nvme"
    list_property = "nvme-config-list"
    key_rule = "model of 1 to %d characters" % MODEL_LEN
    tunables = frozenset(TUNABLES)
    # blkdev's physical block, through DKIOCGMEDIAINFOEXT; the write
    # cache setting is not told apart by a flush's time here.
    proves = frozenset(("min-phys-block-size",))

    def attaches(self, disk: Disk) -> bool:
        # An NVMe namespace: nvmeadm knows it (virtio's blkdev disks are
        # not the nvme driver's).
        return disk.nvme is not None

    def key_of(self, disk: Disk) -> Optional[str]:
        return (propose.model_of(disk) or None) if self.attaches(disk) \
            else None

    def key_fits(self, key: str) -> bool:
        # At most the 40 bytes of Identify Controller's model field.
        return 0 < len(key) <= MODEL_LEN

    def key_label(self, key: str) -> str:
        return '"%s"' % key

    def lint(self, conf: ConfFile, flavour: str) -> List[Diagnostic]:
        return lint(conf)

    def show_report(self, conf: ConfFile, path: str, flavour: str
                    ) -> dict:
        return actions.show_report(conf, path)

    def render_show(self, report: dict) -> str:
        return actions.render_show(report)

    def split_key(self, action: str, path: str, words: List[str],
                  vid: Optional[str], pid: Optional[str]
                  ) -> Tuple[str, List[str]]:
        if vid is not None or pid is not None:
            raise NotSupported(action + " tunables in", path,
                               "--vid and --pid are sd's INQUIRY ids; "
                               "nvme.conf is keyed by the controller's "
                               "model")
        if not words or not words[0].strip():
            raise UsageError(action + " tunables in", path,
                             "no model given")
        return words[0], list(words[1:])

    def set_edit(self, old: str, path: str, key: str, settings: List[str],
                 flavour: str, any_length_key: bool = False) -> Edit:
        # A model is any length up to 40: --any-length-key changes
        # nothing here.
        return actions.set_edit(old, path, key, settings)

    def unset_edit(self, old: str, path: str, key: str, names: List[str],
                   flavour: str) -> Edit:
        return actions.unset_edit(old, path, key, names)

    def set_claim(self, text: str, key: str, settings: Mapping[str, str],
                  flavour: str) -> str:
        return propose.set_model_tunables(text, key, dict(settings))

    def propose(self, text: str, flavour: str, evidence: Evidence,
                options: Overrides) -> Proposed:
        # The known-drives table is sd's (VID/PID patterns): nothing in it
        # speaks of an NVMe model (reads_known_drives is False).
        return propose.propose(text, evidence.inventory, evidence.records,
                               options)

    def asked(self, conf: ConfFile, disk: Disk, flavour: str
              ) -> Dict[str, str]:
        return verify.asked(conf, disk)

    def verify_disk(self, conf: ConfFile, disk: Disk, flavour: str,
                    failed: Optional[Mapping[str, str]] = None,
                    elsewhere: Optional[Elsewhere] = None) -> DiskState:
        return verify.verify_nvme_disk(conf, disk, elsewhere)
