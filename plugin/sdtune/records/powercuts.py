# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A record's witnessed power cuts (issue 30): the outcome of each cut
of the power-cut check (certify/powercut.py), kept with the drive's
certification, and what they say about its cache.

    "power_cuts": [
      {"time": 1795820000.0, "time_iso": "2026-11-27T23:33:20Z",
       "firmware": "G2010140", "run": "0123456789abcdef",
       "flush": {"acknowledged": 412, "lost": 0, "status": "passed"},
       "nonvolatile": {"acknowledged": 530, "lost": 37,
                       "status": "failed"},
       "torn": 1},
      ...
    ]

One entry per cut, oldest first; cycles accumulate.  Status is
"passed", "failed" or "nothing to check" (the cut came before the
drive acknowledged anything the claim covers).

What they say, for a model and firmware (cache_evidence):

* any failed check: the cache is not to be trusted with
  cache-nonvolatile:true, whatever else says (NV_SUP, the known-drives
  table, flush timing): a drive whose flushes lie, or whose "non-volatile"
  cache lost completed writes;
* else a passed non-volatile claim: the strongest evidence of a
  non-volatile cache there is (it stands in for NV_SUP);
* else nothing.
"""

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

# A claim's answer in one cut (certify/powercut.py decides it).
PASSED = "passed"
FAILED = "failed"
NOTHING = "nothing to check"
STATUSES = (PASSED, FAILED, NOTHING)
TRUSTED, UNTRUSTED = "trusted", "untrusted"
# A record the power-cut check made for a drive that had none: its
# "source", and the reason its verdicts give (nothing was measured).
POWERCUT_SOURCE = "powercut"
NOT_MEASURED = "not measured: a record of witnessed power cuts only"


@dataclass(frozen=True)
class Claim:
    """One claim's result in one cut."""

    acknowledged: int
    lost: int
    status: str

    def to_json(self) -> dict:
        return {"acknowledged": self.acknowledged, "lost": self.lost,
                "status": self.status}


@dataclass(frozen=True)
class PowerCut:
    """One witnessed cut."""

    time: float
    time_iso: str
    firmware: Optional[str]
    run: str
    flush: Claim
    nonvolatile: Claim
    torn: int

    def to_json(self) -> dict:
        return {"time": self.time, "time_iso": self.time_iso,
                "firmware": self.firmware, "run": self.run,
                "flush": self.flush.to_json(),
                "nonvolatile": self.nonvolatile.to_json(),
                "torn": self.torn}

    @classmethod
    def from_json(cls, doc: dict) -> "PowerCut":
        """From a document powercuts_problem passed."""
        return cls(float(doc["time"]), doc["time_iso"], doc["firmware"],
                   doc["run"], Claim(**doc["flush"]),
                   Claim(**doc["nonvolatile"]), doc["torn"])


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _claim_problem(doc: Any, where: str) -> Optional[str]:
    if not isinstance(doc, dict):
        return "field '%s' must be an object" % where
    for name in ("acknowledged", "lost"):
        if not _count(doc.get(name)):
            return "field '%s.%s' must be a non-negative integer" % (
                where, name)
    if doc.get("status") not in STATUSES:
        return "field '%s.status' must be one of %s" % (
            where, ", ".join(STATUSES))
    if set(doc) != {"acknowledged", "lost", "status"}:
        return "field '%s.%s' is not known" % (
            where, sorted(set(doc) - {"acknowledged", "lost",
                                      "status"})[0])
    return None


def powercuts_problem(doc: Any) -> Optional[str]:
    """Why a record's "power_cuts" value does not have the shape of the
    module doc, in record_problem's words, or None.  Pure."""
    if not isinstance(doc, list):
        return "field 'power_cuts' must be a list"
    for i, cut in enumerate(doc):
        where = "power_cuts[%d]" % i
        if not isinstance(cut, dict):
            return "field '%s' must be an object" % where
        t = cut.get("time")
        if not (isinstance(t, (int, float)) and not isinstance(t, bool)
                and 0 <= t < 1e11):
            return "field '%s.time' must be a time in seconds" % where
        for name in ("time_iso", "run"):
            if not isinstance(cut.get(name), str):
                return "field '%s.%s' must be a string" % (where, name)
        if not (cut.get("firmware") is None or
                isinstance(cut["firmware"], str)):
            return "field '%s.firmware' must be a string or null" % where
        for name in ("flush", "nonvolatile"):
            why = _claim_problem(cut.get(name), "%s.%s" % (where, name))
            if why:
                return why
        if not _count(cut.get("torn")):
            return "field '%s.torn' must be a non-negative integer" % where
    return None


def _of_firmware(cuts: Sequence[PowerCut], firmware: Optional[str]
                 ) -> List[PowerCut]:
    """The cuts of this firmware (every cut when it is unknown)."""
    return [c for c in cuts if firmware is None or c.firmware == firmware]


def _failure(c: PowerCut) -> str:
    """A failed cut, in words that name the lost writes."""
    if c.flush.status == FAILED:
        what = "%d of %d writes a completed flush acknowledged lost: its " \
            "flushes lie" % (c.flush.lost, c.flush.acknowledged)
    else:
        what = "%d of %d completed writes lost: its cache is volatile" % (
            c.nonvolatile.lost, c.nonvolatile.acknowledged)
    return "power-cut check failed %s (firmware %s): %s" % (
        c.time_iso, c.firmware or "unknown", what)


def flush_lies(cuts: Sequence[PowerCut], firmware: Optional[str]
               ) -> Optional[str]:
    """Why this firmware's flushes cannot be trusted (a cut lost writes
    a completed flush acknowledged), or None."""
    failed = [c for c in _of_firmware(cuts, firmware)
              if c.flush.status == FAILED]
    return _failure(failed[-1]) if failed else None


def cache_evidence(cuts: Sequence[PowerCut], firmware: Optional[str]
                   ) -> Optional[Tuple[str, str]]:
    """(TRUSTED or UNTRUSTED, why) from the cuts of this firmware (every
    cut when it is unknown), or None when none decided anything."""
    mine = _of_firmware(cuts, firmware)
    failed = [c for c in mine if FAILED in (c.flush.status,
                                            c.nonvolatile.status)]
    if failed:
        return UNTRUSTED, _failure(failed[-1])
    passed = [c for c in mine if c.nonvolatile.status == PASSED]
    if passed:
        return TRUSTED, "power-cut check passed %d time%s (last %s): %d " \
            "completed writes, none lost" % (
                len(passed), "" if len(passed) == 1 else "s",
                passed[-1].time_iso,
                sum(c.nonvolatile.acknowledged for c in passed))
    return None


def power_cut_lines(cuts: Sequence[PowerCut]) -> List[str]:
    """A record's cuts as `results DISK` and certify show them, one line
    each, oldest first."""
    lines = []
    for c in cuts:
        lines.append("  power cut %s (firmware %s): flush check %s (%d "
                     "flushed, %d lost), non-volatile claim %s (%d "
                     "completed, %d lost)" % (
                         c.time_iso, c.firmware or "unknown",
                         c.flush.status, c.flush.acknowledged,
                         c.flush.lost, c.nonvolatile.status,
                         c.nonvolatile.acknowledged, c.nonvolatile.lost))
    return lines


def from_json(doc: Optional[list]) -> List[PowerCut]:
    return [PowerCut.from_json(c) for c in doc or []]
