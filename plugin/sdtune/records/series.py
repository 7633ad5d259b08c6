# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The numbers a record's evidence holds, as series to draw: which
arms of the sector phase, which steps of the queue-depth phase, the
write and the flushed write of the cache phase, and one comparable
figure per unit of a model.  The one place that walks the evidence for
a picture: the text charts (certify/charts.py, `results DISK`) and the
SVG charts of the HTML report (report/) both draw from here, so that a
terminal and a page never show different numbers for one record.

A record without a phase's evidence (imported, or an older version),
or with a value that is not a non-negative number, gives no point for
it: never a zero drawn as if measured.

Pure: no I/O.
"""

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .crosscheck import DEFAULT_ARM_BYTES, FIGURES
from .record import CertRecord

# The kinds of sector-phase arm, in the order a chart shows them.
ALIGNED, MISALIGNED, RANDOM = "aligned", "misaligned", "random"
DIRECTIONS = ("write", "read")


def number(value: Any) -> Optional[float]:
    """A non-negative finite number as a float, else None (a bool, a
    string, NaN or a negative value is not a measurement)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float(value) if value >= 0 else None


@dataclass(frozen=True)
class Arm:
    """One arm of the sector phase: its cost per I/O."""

    name: str
    label: str
    kind: str                   # ALIGNED, MISALIGNED or RANDOM
    bs: int
    offset: int
    lat_ns: float               # median of the rounds
    rounds: Optional[int]
    # The 95 % interval of the cost, where the record keeps one
    # ("lat_ci95_ns": [low, high]); records of version 1 keep the median
    # only, and a chart then says that it has no interval to draw.
    ci95_ns: Optional[Tuple[float, float]] = None


def _arm_label(name: str, arm: Dict[str, Any]) -> str:
    label = "%s B" % arm.get("bs", "?")
    if arm.get("offset"):
        label += " at +%s" % arm["offset"]
    if arm.get("pattern") == "rand" or name.startswith("rand-"):
        label += " random"
    return label


def _interval(value: Any) -> Optional[Tuple[float, float]]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    low, high = number(value[0]), number(value[1])
    if low is None or high is None or low > high:
        return None
    return low, high


def sector_arms(rec: CertRecord) -> List[Arm]:
    """The sector phase's arms with a cost: aligned sequential sizes
    first, smallest first, then the misaligned, then the random ones."""
    arms = rec.evidence.get("sector")
    if not isinstance(arms, dict):
        return []
    found = []
    for name, arm in arms.items():
        if not isinstance(arm, dict):
            continue
        lat = number(arm.get("lat_median_ns"))
        bs = arm.get("bs")
        if lat is None or not isinstance(bs, int) or isinstance(bs, bool):
            continue
        rand = arm.get("pattern") == "rand" or name.startswith("rand-")
        offset = arm.get("offset") if isinstance(arm.get("offset"), int) \
            else 0
        kind = RANDOM if rand else MISALIGNED if offset else ALIGNED
        rounds = arm.get("rounds")
        found.append(((kind != ALIGNED, rand, bs),
                      Arm(name, _arm_label(name, arm), kind, bs, offset,
                          lat, rounds if isinstance(rounds, int) else None,
                          _interval(arm.get("lat_ci95_ns")))))
    found.sort(key=lambda f: f[0])
    return [arm for _, arm in found]


@dataclass(frozen=True)
class Flush:
    """The cache phase: a write alone against a write and a flush."""

    write_ns: float
    flushed_ns: float

    @property
    def ratio(self) -> Optional[float]:
        return self.flushed_ns / self.write_ns if self.write_ns else None


def flush(rec: CertRecord) -> Optional[Flush]:
    cache = rec.evidence.get("cache")
    if not isinstance(cache, dict):
        return None
    write = number(cache.get("write_lat_ns"))
    flushed = number(cache.get("write_flush_lat_ns"))
    if write is None or flushed is None:
        return None
    return Flush(write, flushed)


@dataclass(frozen=True)
class Step:
    """One step of the queue-depth phase."""

    rw: str
    qd: int
    bs: Optional[int]
    # The rate after the warm-up (what the verdict's reason quotes)
    # where the record has it, else the whole run's.
    iops: float
    p50_ns: Optional[float] = None
    p99_ns: Optional[float] = None
    p99_9_ns: Optional[float] = None


def _depth(name: str) -> int:
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else 0


def queue_steps(rec: CertRecord, rw: str) -> List[Step]:
    """The queue-depth phase's steps of one direction with a rate, by
    depth."""
    steps = rec.evidence.get("queue_depth")
    if not isinstance(steps, dict):
        return []
    out = []
    for name, step in sorted(steps.items(), key=lambda kv: _depth(kv[0])):
        if not isinstance(step, dict) or step.get("rw") != rw:
            continue
        iops = number(step.get("iops_steady"))
        if iops is None:
            iops = number(step.get("iops"))
        if iops is None:
            continue
        qd = step.get("qd")
        bs = step.get("bs")
        out.append(Step(rw, qd if isinstance(qd, int) and
                        not isinstance(qd, bool) else _depth(name),
                        bs if isinstance(bs, int) else None, iops,
                        number(step.get("lat_p50_ns")),
                        number(step.get("lat_p99_ns")),
                        number(step.get("lat_p99_9_ns"))))
    return out


def unit_figure(rec: CertRecord, native: Optional[int] = None
                ) -> Optional[Tuple[float, str]]:
    """The figure the cross-check compares the units of a model on
    (records/crosscheck.py: QD1 random-write IOPS, else the sector
    phase's from its latency) and what it is, or None."""
    for figure in FIGURES:
        found = figure(rec, native or DEFAULT_ARM_BYTES)
        if found is not None:
            return found
    return None
