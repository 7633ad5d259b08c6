# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The power-cut check (issue 30): the witness's log of what a drive
acknowledged before its power was cut, and the verdict once what the
drive kept is read back.  Pure: the lines come in, an Outcome goes out.

The engine writes numbered, checksummed blocks to the slots of a region
of the disk (small sequential and random bursts, some followed by a
flush) and reports, one line each, as it happens:

    run RUNID SLOTS BLOCK   first and once: the run's id (16 hex
                            digits), the region's size in slots and the
                            size of a slot in bytes
    w SEQ SLOT              write SEQ (1, 2, ...) to SLOT completed: the
                            drive said it was done
    F SEQ                   notice: a flush of writes 1 to SEQ (all
                            completed) is about to be issued; the engine
                            waits (--notice-ms) before it issues it, so
                            that the witness has the notice before the
                            flush can make anything durable
    f SEQ                   that flush completed: the drive said writes
                            1 to SEQ are on stable media

The witness (the controller, on another machine) appends each whole line
to its log as it arrives and makes it durable before it takes more, so
the log holds what the drive acknowledged up to the cut, and no more: a
line the cut left without its newline is not part of it (split_lines).

A run the controller resumes (it was stopped, or the link dropped
without a power cut) goes on in a new engine process that says the same
run line again and numbers its writes from a higher count, above any
write the stopped engine may have completed after its last logged line
(resume_seq).  A flush covers every write completed before it, the
earlier engine's too.

After the power comes back, the region is read and each slot reported:

    SLOT RUNID SEQ          a whole block of write SEQ of run RUNID,
                            written for this slot (its checksum and its
                            slot number right)
    SLOT zero               zeros: never written, or lost
    SLOT torn               anything else: a write cut half way, or
                            another slot's block

For each slot the latest acknowledged write must be there, or a later
write to it (one in flight at the cut may or may not have landed):

* the flush check: every write acknowledged by a completed flush.  A
  drive that loses one lies about its flushes, and no setting makes it
  safe for ZFS;
* the non-volatile claim: every completed write, flushed or not, as a
  cache that keeps its contents through a power cut (cache-nonvolatile)
  must keep them.  A cut that came when every completed write had been
  flushed, or a flush of them announced (it may have been carried out,
  its "f" lost with the power), does not test it (a volatile cache
  loses nothing then either): it can fail, if a write is gone, but not
  pass.

A check with no acknowledged write in the log (the cut came first) has
nothing to check: it neither passes nor fails.
"""

import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Optional, Tuple, Union

from ..errors import ParseError
from ..records.powercuts import FAILED, NOTHING, PASSED, Claim, PowerCut

# The check's errors read "cannot check the cache of 'DISK': why".
VERB = "check the cache of"
# What a slot holds after the cut: (run, seq) of a whole block, or "zero"
# or "torn".
Held = Union[Tuple[str, int], str]

_RUN = re.compile(r"run ([0-9a-f]{16}) ([1-9][0-9]{0,11}) ([1-9][0-9]{0,9})$")
_WRITE = re.compile(r"w ([1-9][0-9]{0,17}) (0|[1-9][0-9]{0,11})$")
_FLUSH = re.compile(r"f (0|[1-9][0-9]{0,17})$")
_NOTICE = re.compile(r"F (0|[1-9][0-9]{0,17})$")
_SLOT = re.compile(r"(0|[1-9][0-9]{0,11}) (?:([0-9a-f]{16}) ([1-9][0-9]{0,17})"
                   r"|(zero|torn))$")


@dataclass
class WitnessLog:
    """What the drive acknowledged, from the witness's log."""

    run: str
    slots: int
    block: int
    # SEQ -> SLOT of every completed write.
    completed: Dict[int, int] = field(default_factory=dict)
    # Writes 1..flushed are on stable media by the drive's word.
    flushed: int = 0
    # A flush of writes 1..noticed was announced: it may have made them
    # durable, completed or not.
    noticed: int = 0


def split_lines(pending: bytes, chunk: bytes) -> Tuple[List[str], bytes]:
    """The whole lines of ``pending + chunk`` and what is left of a line
    not ended yet: what the witness may log as it reads the stream."""
    data = pending + chunk
    cut = data.rfind(b"\n") + 1
    return [line.decode("ascii", "replace")
            for line in data[:cut].split(b"\n")[:-1]], data[cut:]


def parse_log(lines: Iterable[str], where: str) -> Optional[WitnessLog]:
    """The log's lines read: None for an empty log (the cut came before
    the engine said anything); ParseError naming ``where``, the line and
    the field for anything else than the engine writes."""
    log: Optional[WitnessLog] = None
    # The highest write logged, and the first number of the engine that
    # wrote last (a resumed run's).
    latest: int = 0
    resumed: Optional[int] = 1
    for number, line in enumerate(lines, 1):
        at = "%s line %d" % (where, number)
        m = _RUN.match(line)
        if log is None:
            if m is None:
                raise ParseError(where, "run", "line %d: %r is not the "
                                 "run's first line" % (number, line[:60]))
            log = WitnessLog(m.group(1), int(m.group(2)), int(m.group(3)))
            continue
        if m is not None:
            if (m.group(1), int(m.group(2)), int(m.group(3))) != (
                    log.run, log.slots, log.block):
                raise ParseError(where, "run", "%s: another run's line "
                                 "in the log of run %s" % (at, log.run))
            # Resumed: the new engine numbers its writes above all
            # (resume_seq), from its first.
            resumed = None
            continue
        m = _WRITE.match(line)
        if m is not None:
            seq, slot = int(m.group(1)), int(m.group(2))
            if slot >= log.slots:
                raise ParseError(where, "slot", "%s: slot %d outside the "
                                 "region's %d" % (at, slot, log.slots))
            if seq <= latest:
                raise ParseError(where, "seq", "%s: write %d after write "
                                 "%d" % (at, seq, latest))
            log.completed[seq] = slot
            latest = seq
            if resumed is None:
                resumed = seq
            continue
        m = _NOTICE.match(line)
        if m is not None:
            seq = int(m.group(1))
            if not log.noticed <= seq <= latest:
                raise ParseError(where, "seq", "%s: notice of a flush of "
                                 "writes up to %d after write %d and a "
                                 "notice up to %d" % (at, seq, latest,
                                                      log.noticed))
            log.noticed = seq
            continue
        m = _FLUSH.match(line)
        if m is not None:
            seq = int(m.group(1))
            if seq < log.flushed:
                raise ParseError(where, "seq", "%s: flush of writes up to "
                                 "%d after one up to %d" % (at, seq,
                                                            log.flushed))
            # This engine's writes up to SEQ must all have completed;
            # bounded by the writes logged, whatever SEQ says.
            start = max(log.flushed + 1, resumed or seq + 1)
            missing = next((s for s in range(start, min(
                seq, start + len(log.completed)) + 1)
                if s not in log.completed), None)
            if missing is not None:
                raise ParseError(where, "seq", "%s: flush of writes up to "
                                 "%d before write %d completed"
                                 % (at, seq, missing))
            log.flushed = seq
            continue
        raise ParseError(where, "line", "%s: %r is no line the engine "
                         "writes" % (at, line[:60]))
    return log


# A resumed run's writes are numbered from the next multiple of this,
# plus one: far above anything a stopped engine can have written between
# its last logged line and its end (the link gone, sdio serve kills it).
RESUME_STEP = 10 ** 9


def resume_seq(log: Optional[WitnessLog]) -> int:
    """The first write number of an engine that resumes the run of
    ``log``; also above 1 for a run that logged nothing, whose engine
    may have written what never reached the log."""
    latest = max(log.completed) if log is not None and log.completed else 0
    return (latest // RESUME_STEP + 1) * RESUME_STEP + 1


def parse_slots(lines: Iterable[str], where: str,
                slots: int) -> Dict[int, Held]:
    """The read-back report: slot -> (run, seq), "zero" or "torn", every
    slot of the region once."""
    found: Dict[int, Held] = {}
    for number, line in enumerate(lines, 1):
        m = _SLOT.match(line)
        if m is None:
            raise ParseError(where, "slot", "line %d: %r is no slot's "
                             "report" % (number, line[:60]))
        slot = int(m.group(1))
        if slot >= slots or slot in found:
            raise ParseError(where, "slot", "line %d: slot %d %s" % (
                number, slot, "outside the region" if slot >= slots
                else "reported twice"))
        found[slot] = m.group(4) or (m.group(2), int(m.group(3)))
    if len(found) != slots:
        missing = min(set(range(slots)) - set(found))
        raise ParseError(where, "slot", "slot %d not reported" % missing)
    return found


@dataclass(frozen=True)
class Check:
    """One claim put to the test: how many writes it covers, how many of
    them are gone, and the answer."""

    acknowledged: int
    lost: int
    # The first few lost: (slot, seq) of the write that should be there.
    examples: Tuple[Tuple[int, int], ...]
    # Whether the cut put the claim to the test at all: the
    # non-volatile claim is not tested by a cut that came when every
    # completed write had been flushed (a volatile cache then loses
    # nothing either).
    tested: bool = True

    @property
    def status(self) -> str:
        if self.lost:
            return FAILED
        return PASSED if self.acknowledged and self.tested else NOTHING


@dataclass(frozen=True)
class Outcome:
    """A cut's verdict: the flush check, the non-volatile claim's, and
    the torn slots seen (a cut mid-write may leave one; they count as
    lost only where an acknowledged write should be)."""

    run: str
    flush: Check
    nonvolatile: Check
    torn: int


def _check(log: WitnessLog, found: Dict[int, Held],
           acknowledged: Dict[int, int]) -> Check:
    """Each slot's latest acknowledged write (or a later one) must be
    there; ``acknowledged`` maps SEQ -> SLOT of the writes the claim
    covers."""
    latest: Dict[int, int] = {}
    for seq, slot in acknowledged.items():
        if seq > latest.get(slot, 0):
            latest[slot] = seq
    lost = []
    for slot, seq in sorted(latest.items()):
        held = found[slot]
        if not (isinstance(held, tuple) and held[0] == log.run and
                held[1] >= seq):
            lost.append((slot, seq))
    return Check(len(acknowledged), len(lost), tuple(lost[:8]))


def verdict(log: Optional[WitnessLog], found: Dict[int, Held]
            ) -> Optional[Outcome]:
    """The outcome of a cut, or None when the log is empty."""
    if log is None:
        return None
    flushed = {seq: slot for seq, slot in log.completed.items()
               if seq <= log.flushed}
    # Only a write no flush may have covered tests the claim: one after
    # the last flush announced, whether it completed or not.
    covered = max(log.flushed, log.noticed)
    nonvolatile = replace(_check(log, found, log.completed),
                          tested=any(seq > covered for seq in log.completed))
    return Outcome(log.run, _check(log, found, flushed), nonvolatile,
                   sum(1 for v in found.values() if v == "torn"))


def record_entry(outcome: Outcome, time: float, time_iso: str,
                 firmware: Optional[str]) -> PowerCut:
    """The record's entry of a cut's verdict (records/powercuts.py)."""
    return PowerCut(time, time_iso, firmware, outcome.run,
                    Claim(outcome.flush.acknowledged, outcome.flush.lost,
                          outcome.flush.status),
                    Claim(outcome.nonvolatile.acknowledged,
                          outcome.nonvolatile.lost,
                          outcome.nonvolatile.status),
                    outcome.torn)
