# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What a driver's proposal for its .conf is made of, whichever driver:
the reason for a tunable (Reason), the tunables set for one key or model
(Change), a tunable held back and why (Held), a disk the driver does not
plan for (NotSd), the operator's overrides (Overrides), what a plan rests on
(Evidence), and everything
one driver proposes for one .conf (Proposed), which tune/plan.py turns
into the Plan that is shown, saved and applied.  Pure data.
"""

from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple, Optional, Tuple

from ..inventory.disks import Inventory
from ..knowndrives import KnownDrive
from ..records.gains import TunableGain
from ..records.record import CertRecord


@dataclass
class Reason:
    """Why a change sets one tunable: the proposal it came from."""

    tunable: str
    value: str
    source: str
    confidence: Optional[float]
    evidence: Optional[str]
    # What the tunable bought on the certified drive (records/gains.py);
    # None where nothing measured it (a known-drives row, an older record).
    gain: Optional[TunableGain] = None

    def to_json(self) -> dict:
        return {"tunable": self.tunable, "value": self.value,
                "source": self.source, "confidence": self.confidence,
                "evidence": self.evidence,
                "gain": self.gain.to_json() if self.gain else None}


@dataclass
class Change:
    """The tunables set in one key's pair (an NVMe model's triplet), the
    disks it matches now and the reason for each tunable.  A change read
    from a saved plan has only its key and tunables (disks and why are
    not trusted, so not read)."""

    key: str
    disks: List[str] = field(default_factory=list)
    set: Dict[str, str] = field(default_factory=dict)
    why: List[Reason] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"key": self.key, "disks": self.disks, "set": self.set,
                "why": [w.to_json() for w in self.why]}


@dataclass
class Held:
    """A tunable held back for a key, and why."""

    key: str
    tunable: str
    value: str
    reason: str

    def to_json(self) -> dict:
        return {"key": self.key, "tunable": self.tunable,
                "value": self.value, "reason": self.reason}


@dataclass
class NotSd:
    """A disk the plan's driver does not tune (for sd: NVMe and virtio
    under blkdev; for nvme: anything but an NVMe namespace), and why.
    The name stays that of the plan file's field, "not_sd"."""

    disk: str
    driver: str
    reason: str

    def to_json(self) -> dict:
        return {"disk": self.disk, "driver": self.driver,
                "reason": self.reason}


@dataclass
class Overrides:
    allow_ashift_mismatch: bool = False
    allow_no_nv_evidence: bool = False
    # Keys (exactly as in sd.conf, 24 characters) whose models or
    # certified serials disagree and may still get one value each
    # (largest physical-block-size, smallest throttles).  Never
    # cache-nonvolatile: that has no override.
    allow_key_collision: Tuple[str, ...] = ()
    # Use certifications made with a firmware no installed disk of
    # their key runs.
    allow_firmware_mismatch: bool = False

    @classmethod
    def from_args(cls, args) -> "Overrides":
        """The overrides of `plan` and `apply` (commands/tune.py
        _allow_flags)."""
        return cls(args.allow_ashift_mismatch, args.allow_no_nv_evidence,
                   tuple(args.allow_key_collision),
                   args.allow_firmware_mismatch)


class Evidence(NamedTuple):
    """What a plan rests on besides the .conf: the disks (and their
    pools), the certification records, and the known-drives table."""

    inventory: Inventory
    records: List[CertRecord]
    table: List[KnownDrive]


@dataclass
class Proposed:
    """What one driver proposes for its .conf: the new text, the changes
    in it, and what was held back, left alone, warned about or left to
    the operator (`options`: what sdtune never does itself, such as an
    NVMe namespace's `nvmeadm format`).  `flavour` is the rule set the
    text was edited by."""

    flavour: str
    new_text: str
    changes: List[Change] = field(default_factory=list)
    held: List[Held] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    not_sd: List[NotSd] = field(default_factory=list)
    options: List[str] = field(default_factory=list)
