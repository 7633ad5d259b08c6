# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The witness of the power-cut check (issue 30): what the controller
keeps on its own disk while an appliance's drive is written, its power
cut and the drive read back.  Through the Host of the machine sdtune runs
on, never the appliance's: a witness that loses power with the drive
proves nothing.

Each cycle is two files in the witness directory ([powercut] witness_dir),
named DEST--DISK--RUN:

    .log    the engine's lines as they arrived (certify/powercut.py has
            their format), appended and made durable before more is read
            (Host.append_durable): killed at any moment, the controller
            leaves a log that holds what the drive acknowledged up to
            then, and nothing it did not
    .json   the cycle: where, which drive (its identity for the record),
            the region, the run's id, the appliance's boot time when the
            writing last started, and its state (STATES below)

A cycle "writing" or "cut" is pending: the next check of that disk from
this controller resumes it (the appliance has not restarted since the
writing started) or reads it back (it has, and the link dropped while
the engine wrote).
"""

import json
import re
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError, UsageError
from ..host import Host
from .powercut import VERB, WitnessLog, parse_log, split_lines

VERSION = 1
# A cycle's states: the engine writes (or the controller stopped while it
# did); the link dropped while it wrote (a cut, if the appliance comes
# back from a boot); the engine ended by itself (no cut was seen: the
# cycle proves nothing); read back, its outcome in the record.
WRITING, CUT, STOPPED, VERIFIED = "writing", "cut", "stopped", "verified"
STATES = (WRITING, CUT, STOPPED, VERIFIED)
PENDING = (WRITING, CUT)
_RUN = re.compile(r"^[0-9a-f]{16}$")


@dataclass
class Cycle:
    """One power-cut cycle of one disk, as the controller keeps it."""

    dest: str
    disk: str               # the DISK argument, as the operator gave it
    device: str             # the path the engine opens, on the appliance
    run: str
    slots: int
    block: int
    offset: int
    boot_time: int          # the appliance's, when writing last started
    started: float          # this machine's clock, seconds since 1970
    state: str = WRITING
    # This machine's clock when the engine's stream ended (the link
    # dropped, or the engine ended); None while writing.
    ended: Optional[float] = None
    # The drive, for its record: sd-config-list key, model, driver,
    # serial and firmware (None where unknown: a file target).
    key: Optional[str] = None
    model: Optional[str] = None
    driver: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None

    @property
    def name(self) -> str:
        return "%s--%s--%s" % (_safe(self.dest), _safe(self.disk), self.run)

    def to_json(self) -> dict:
        doc = {"version": VERSION}
        doc.update(asdict(self))
        return doc


# What each field of the .json must be: (name, types, may be null).
_FIELDS: Tuple[Tuple[str, tuple, bool], ...] = (
    ("dest", (str,), False), ("disk", (str,), False),
    ("device", (str,), False), ("run", (str,), False),
    ("slots", (int,), False), ("block", (int,), False),
    ("offset", (int,), False), ("boot_time", (int,), False),
    ("started", (int, float), False), ("state", (str,), False),
    ("ended", (int, float), True),
    ("key", (str,), True), ("model", (str,), True),
    ("driver", (str,), True), ("serial", (str,), True),
    ("firmware", (str,), True))


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.@-]+", "_", text).strip("_") or "-"


def cycle_from_json(data: bytes, where: str) -> Cycle:
    """A cycle's .json read back; ParseError naming the file and the
    field for anything else than this module writes."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ParseError(where, "json", "not a JSON document") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ParseError(where, "version", "not a cycle of version %d"
                         % VERSION)
    values = {}
    for name, types, nullable in _FIELDS:
        value = doc.get(name)
        ok = (value is None and nullable) or (
            isinstance(value, types) and not isinstance(value, bool))
        if not ok or (isinstance(value, str) and any(
                ord(c) < 32 or ord(c) == 127 for c in value)):
            raise ParseError(where, name, "missing or not a valid value")
        values[name] = value
    if not _RUN.match(values["run"]) or values["state"] not in STATES \
            or values["slots"] < 1 or values["block"] < 512:
        raise ParseError(where, "run", "the run, state or region is not "
                         "one sdtune writes")
    return Cycle(**values)


class Witness:
    """The witness directory on this machine (``machine``: its Host)."""

    def __init__(self, machine: Host, directory: str) -> None:
        self.machine = machine
        self.directory = directory.rstrip("/") or "/"

    def path(self, cycle: Cycle, ext: str) -> str:
        return "%s/%s.%s" % (self.directory, cycle.name, ext)

    def begin(self, cycle: Cycle) -> None:
        """A new cycle: its .json, and an empty log beside it."""
        self.machine.mkdirs(self.directory, 0o700)
        self.save(cycle)
        self.machine.append_durable(self.path(cycle, "log"), b"")

    def save(self, cycle: Cycle) -> None:
        self.machine.write_atomic(self.path(cycle, "json"), (json.dumps(
            cycle.to_json(), indent=2) + "\n").encode("utf-8"), 0o600)

    def append(self, cycle: Cycle, lines: List[str]) -> None:
        """Whole lines, durable when this returns."""
        if lines:
            self.machine.append_durable(self.path(cycle, "log"), "".join(
                line + "\n" for line in lines).encode("ascii"))

    def log(self, cycle: Cycle) -> Optional[WitnessLog]:
        """What the log holds (None: nothing yet); a line that a crash
        of this machine left unfinished is not part of it."""
        where = self.path(cycle, "log")
        lines, _ = split_lines(b"", self.machine.read_bytes(where))
        return parse_log(lines, where)

    def pending(self, dest: str, disk: str) -> Optional[Cycle]:
        """The cycle of ``disk`` at ``dest`` still to be finished, if
        any.  A .json that is not a cycle is an error naming it: it may
        be the pending one, and guessing could lose a witnessed cut."""
        if not self.machine.exists(self.directory):
            return None
        found: Dict[str, Cycle] = {}
        prefix = "%s--%s--" % (_safe(dest), _safe(disk))
        for name in sorted(self.machine.listdir(self.directory)):
            if not (name.startswith(prefix) and name.endswith(".json")):
                continue
            where = "%s/%s" % (self.directory, name)
            cycle = cycle_from_json(self.machine.read_bytes(where), where)
            if cycle.state in PENDING and cycle.dest == dest and \
                    cycle.disk == disk:
                found[where] = cycle
        if len(found) > 1:
            raise UsageError(VERB, disk, "%d cycles pending in %s "
                             "(%s); keep one and remove the others' .json "
                             "and .log" % (len(found), self.directory,
                                           ", ".join(sorted(found))))
        return next(iter(found.values()), None)
