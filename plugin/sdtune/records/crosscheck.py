# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Per-model cross-check of certification records (issue 16): drives
that share an sd-config-list key are the same model and should give the
same verdicts, so a unit whose numbers stand out among its siblings is a
suspect unit (a bad drive, a degraded slot, a counterfeit, another
firmware).  `results` flags it and `plan` uses the model's consensus,
not the outlier.

Only records sdio measured (source "sdio") with a key and a serial are
compared, the latest one of each serial: an imported record has no
drive behind it, and one without a serial might be a unit already
counted.  A key's units are compared only when there are at least
MIN_UNITS of them and a strict majority of the conclusive verdicts
agree; with two units, or no majority, nobody is an outlier
(drivers/sd/keys.py holds back what two units disagree on).  An
inconclusive verdict never makes a unit suspect and never counts toward
a majority.

Pure: no I/O, no printing.
"""

import statistics
from dataclasses import dataclass
from typing import (Callable, Dict, List, Optional, Sequence, Set, Tuple,
                    TypeVar)

from .group import latest_by_serial
from .record import CONFIDENT, CertRecord

# Fewer units than this cannot single one out: two that differ are a
# dispute, not an outlier and a consensus.
MIN_UNITS = 3
# A unit below this fraction of its siblings' median figure is slow
# beyond what unit-to-unit variation and a loaded host explain.
SLOW_FRACTION = 0.5
# The cache verdicts that describe the drive.  write-cache-disabled is a
# setting of the unit (WCE in a mode page), not how its cache behaves.
CACHE_KINDS = ("volatile", "nonvolatile")
MEASURED_BY = "sdio"


@dataclass(frozen=True)
class Suspect:
    """A unit whose numbers stand out among the units of its key; each
    reason is a complete phrase."""

    key: str
    serial: str
    target: Optional[str]
    reasons: Tuple[str, ...]


def _compared(records: Sequence[CertRecord]) -> Dict[str, List[CertRecord]]:
    """Key -> the latest record of each unit sdio measured."""
    return latest_by_serial([r for r in records if r.key and r.unit_serial
                             and r.source == MEASURED_BY])


T = TypeVar("T")


def _majority(values: List[T]) -> Optional[Tuple[T, int]]:
    """(value, how many) that more than half of ``values`` have."""
    counts: Dict[T, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    for v, n in counts.items():
        if 2 * n > len(values):
            return v, n
    return None


def _native(rec: CertRecord) -> Optional[int]:
    """The native sector size, when the verdict is conclusive."""
    if rec.native_sector_bytes and \
            (rec.sector_confidence or 0) >= CONFIDENT:
        return rec.native_sector_bytes
    return None


def _cache(rec: CertRecord) -> Optional[str]:
    return rec.cache if rec.cache in CACHE_KINDS else None


def _odd_verdicts(units: List[CertRecord],
                  verdict: Callable[[CertRecord], Optional[T]],
                  text: Callable[[T], str], what: str
                  ) -> Tuple[Optional[T], Dict[str, str]]:
    """(majority value, serial -> reason) for the units whose conclusive
    verdict differs from that of a strict majority of the conclusive
    ones."""
    values = {r.unit_serial: verdict(r) for r in units}
    conclusive = [v for v in values.values() if v is not None]
    found = _majority(conclusive)
    if found is None:
        return None, {}
    value, agree = found
    return value, {
        serial: "%s %s where %d siblings measured %s" % (
            what, text(v), agree, text(value))
        for serial, v in values.items() if v is not None and v != value}


def _size_text(size: int) -> str:
    return "%d KiB" % (size >> 10) if size >= 1024 and not size % 1024 \
        else "%d B" % size


# ------------------------------------------------------------ performance
#
# One figure per unit, the same for every unit compared: QD1 write IOPS.
# Preferred, the queue-depth phase's QD1 random-write step: one sdio run
# stopped once its IOPS are stable, warm-up excluded, and random 4 KiB
# writes work every unit's flash translation the same way, so a worn or
# counterfeit drive or a slot that renegotiated a slower link shows
# directly.  Not the deeper steps: those depend on where each unit's
# knee is.  A certification run without the queue-depth phase ([certify]
# phases) has the sector phase's paired median latency of a sequential
# aligned write of the consensus native size instead (the drive's plain
# cost per write, no read-modify-write in it), as I/Os per second
# (1e9 / latency: one I/O in flight), so that "below half" means the
# same.  A key's units are compared on the figure most of them have.

Figure = Callable[[CertRecord, int], Optional[Tuple[float, str]]]


def _qd1_iops(rec: CertRecord, native: int) -> Optional[Tuple[float, str]]:
    steps = rec.evidence.get("queue_depth")
    if not isinstance(steps, dict):
        return None
    for step in steps.values():
        if isinstance(step, dict) and step.get("qd") == 1 and \
                step.get("rw") == "write" and _positive(step.get("iops")) \
                and _positive(step.get("bs")):
            return float(step["iops"]), "QD1 %s random write IOPS" % \
                _size_text(step["bs"])
    return None


def _sector_iops(rec: CertRecord, native: int
                 ) -> Optional[Tuple[float, str]]:
    arms = rec.evidence.get("sector")
    if not isinstance(arms, dict):
        return None
    for arm in arms.values():
        if isinstance(arm, dict) and arm.get("bs") == native and \
                arm.get("offset") == 0 and arm.get("pattern") == "seq" and \
                arm.get("flush") == "none" and \
                _positive(arm.get("lat_median_ns")):
            return 1e9 / arm["lat_median_ns"], \
                "QD1 %s sequential write IOPS (from its latency)" % \
                _size_text(native)
    return None


FIGURES: Tuple[Figure, ...] = (_qd1_iops, _sector_iops)
# The sector phase's aligned arms run from the logical block size to
# 16 KiB: 4 KiB is there for every logical block size up to 4 KiB.
DEFAULT_ARM_BYTES = 4096


def _positive(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and \
        v > 0


def _slow_units(units: List[CertRecord], native: Optional[int]
                ) -> Dict[str, str]:
    """Serial -> reason for each unit whose figure is below
    SLOW_FRACTION of the median of its siblings' (the other units)."""
    best: Dict[str, Tuple[float, str]] = {}
    for figure in FIGURES:
        found = {}
        for r in units:
            value = figure(r, native or DEFAULT_ARM_BYTES)
            if value is not None:
                found[r.unit_serial] = value
        # Earlier figures win ties: they are the better measurement.
        if len(found) > len(best):
            best = found
    if len(best) < MIN_UNITS:
        return {}
    out = {}
    for serial, (value, what) in best.items():
        siblings = statistics.median(v for s, (v, _) in best.items()
                                     if s != serial)
        if value < SLOW_FRACTION * siblings:
            out[serial] = "%s %s, %d %% of its siblings' median %s" % (
                what, "{:,.0f}".format(value),
                round(100 * value / siblings), "{:,.0f}".format(siblings))
    return out


# ------------------------------------------------------------ the check

def _check_key(key: str, units: List[CertRecord]) -> List[Suspect]:
    if len(units) < MIN_UNITS:
        return []
    native, odd_sector = _odd_verdicts(units, _native, lambda n: "%d B" % n,
                                       "native sector")
    _, odd_cache = _odd_verdicts(units, _cache, str, "cache")
    slow = _slow_units(units, native)
    out = []
    for r in units:
        serial = r.unit_serial
        reasons = tuple(found[serial] for found in (odd_sector, odd_cache,
                                                    slow)
                        if serial in found)
        if reasons:
            out.append(Suspect(key, serial, r.target, reasons))
    return out


def cross_check(records: Sequence[CertRecord]) -> List[Suspect]:
    """The suspect units among ``records``, by key, then in the order
    their latest records were made.  Records of different keys are never
    compared."""
    out: List[Suspect] = []
    for key, units in sorted(_compared(records).items()):
        out += _check_key(key, units)
    return out


def consensus(records: Sequence[CertRecord]
              ) -> Tuple[List[CertRecord], List[Suspect]]:
    """(the records to use, the suspect units left out): every record of
    a suspect unit (its older ones too) is left out, except where every
    unit of a key is a suspect: there is no consensus to prefer, so that
    key's records are all used and none of its units is left out."""
    compared = _compared(records)
    left_out: List[Suspect] = []
    for suspect_list in _by_key(cross_check(records)).values():
        key = suspect_list[0].key
        if len(suspect_list) < len(compared[key]):
            left_out += suspect_list
    gone: Set[Tuple[str, str]] = {(s.key, s.serial) for s in left_out}
    used = [r for r in records if (r.key, r.unit_serial) not in gone]
    return used, left_out


def _by_key(suspects: List[Suspect]) -> Dict[str, List[Suspect]]:
    out: Dict[str, List[Suspect]] = {}
    for s in suspects:
        out.setdefault(s.key, []).append(s)
    return out
