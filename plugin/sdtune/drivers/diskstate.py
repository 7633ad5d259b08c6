# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What verify says of one disk, whichever driver's .conf it is checked
against (drivers/sd/verify.py, drivers/nvme/verify.py): its state (STATES;
PROBLEMS are those verify exits 1 for, described in tune/verify.py), the
other copies of the .conf that matter for it (Elsewhere), and the
inventory sources without which no disk can be verified (NEEDED).
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ..driverconf.parser import ConfFile, parse_bytes


@dataclass
class Elsewhere:
    """The other copies of sd.conf that matter for a disk: what the next
    boot reads (text None: cannot be known, and why), and the copies the
    kernel does not read."""

    next_where: str = ""
    next_conf: Optional[ConfFile] = None
    next_unknown: str = ""
    next_newer: bool = False
    effective: str = ""
    shadowed: List[Tuple[str, ConfFile]] = field(default_factory=list)

    @classmethod
    def of(cls, platform) -> "Elsewhere":
        if platform is None:
            return cls()
        nb = platform.next_boot()
        out = cls(nb.where, None, nb.reason, nb.newer, platform.effective)
        if nb.text is not None:
            out.next_conf = parse_bytes(nb.text)
        elif not nb.reason:
            out.next_unknown = "unknown"
        for path in platform.shadowed_edits():
            text = platform.read(path)
            if text is not None:
                out.shadowed.append((path, parse_bytes(text)))
        return out

    @property
    def checks_reboot(self) -> bool:
        return self.next_conf is not None or bool(self.next_unknown)


STATES = ("applied", "pending reboot", "not matched", "ignored by sd",
          "ignored by nvme", "not persistent", "shadowed", "not an sd disk",
          "unknown")
# The states verify exits 1 for: the operator must act.
PROBLEMS = ("ignored by sd", "ignored by nvme", "not persistent",
            "shadowed")

# Inventory sources (Inventory.failed) without which no disk can be
# verified: the kernel's values, and which disks there are.
NEEDED = ("mdb ::sd_state", "device links")


@dataclass
class DiskState:
    name: str
    key: Optional[str]
    state: str
    details: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "key": self.key, "state": self.state,
                "details": "; ".join(self.details)}
