# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Decide native sector size, cache non-volatility and queue depth from
measurements, each with a confidence and the numbers it used.

Sector size.  A write that covers a native page only in part costs MORE
per I/O than a write of exactly that page (the drive reads, merges and
rewrites the page); without that, a write never costs more per I/O for
being smaller, or for starting at another whole-page offset.  So each
candidate size N predicts, for pairs of measured workloads of the same
pattern (sequential or random) and flushing:

* a penalty: A covers N-pages in part, B covers them whole, and B is
  exactly one page or A is the same size as B (a bigger B legitimately
  costs more: more pages to program);
* no penalty: both cover N-pages whole and A is N bytes or the same size
  as B.

N's confidence is the smallest confidence among its predictions (an
intersection-union test: each holds, so all hold), and the native size is
the candidate whose predictions hold best, if that is significant.  What
counts as a penalty is the measurement's margin (costs.py): 2.5 % for
paired rounds, 10 % for runs measured one after another.  Real
read-modify-write penalties are 1.05 to sixty times (spec/peers.md §3a).
MB/s is never compared: a 512-byte write moving less data per second
says nothing by itself.  Firmware that merges sequential sub-page writes
shows no sequential penalty but a random one: no candidate then holds,
and the verdict is inconclusive rather than wrong.

Cache.  Device evidence first (VPD 0x86 NV_SUP, the caching mode page's
WCE), timing second: the cost of a flush after each 4 KiB write.  A
volatile cache must write its dirty pages to flash on every flush, which
costs several times the write itself (milliseconds against tens of
microseconds on real drives, spec/peers.md §3b); a power-loss-protected
cache answers a flush at once.  So a flush that adds at least a whole
write's cost (FLUSH_COST) counts as costly, one that adds clearly less
counts as free.  CertifySettings alone never recommends cache-nonvolatile:true
unless the operator asks.

Queue depth.  4 KiB random writes and reads against QD 1..64.  For each
curve the knee is the smallest depth Q such that no deeper queue gains
more than KNEE_GAP over it, tested from the deepest depth down (a
fixed-sequence test: each claim at full confidence, stopping at the
first that fails, so picking the smallest passing depth does not
inflate the error).  throttle-max is the larger knee of the two curves
(a throttle fitted to writes alone would starve reads), never above what
the transport queues (SATA NCQ: 32).

Pure: takes measurements, returns verdicts.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..records.record import CONFIDENT
from .costs import Costs, Shape
from .reports import StepResult
from .stats import Sample, prob_greater

FLUSH_COST = 1.00       # a flush costing a whole write: volatile cache
KNEE_GAP = 0.10         # within 10 % of a deeper queue counts as saturated
# sd's default minimum throttle (sd_min_throttle) and the most commands a
# SATA drive queues (NCQ tags).
SD_MIN_THROTTLE = 8
TRANSPORT_QUEUE = {"sata": 32}


@dataclass
class SectorVerdict:
    native: Optional[int]
    confidence: float
    reason: str
    candidates: Dict[int, float] = field(default_factory=dict)
    evidence: Dict[str, dict] = field(default_factory=dict)


def _partial(shape: Shape, page: int) -> bool:
    """Whether a write of this shape covers ``page``-byte pages in part."""
    return bool(shape.offset % page or shape.bs % page)


def sector_tests(costs: Costs, n: int) -> List[Tuple[str, str, bool]]:
    """The predictions candidate ``n`` makes: (A, B, penalty) where
    penalty says A costs more than B by the margin, else A costs no more
    than B by the margin."""
    shapes = [s for s in costs.shapes.values() if costs.usable(s.name)]
    tests = []
    for a in shapes:
        for b in shapes:
            if a is b or (a.pattern, a.flush) != (b.pattern, b.flush) or \
                    a.bs > b.bs:
                continue
            pa, pb = _partial(a, n), _partial(b, n)
            if pa and not pb and (b.bs == n or a.bs == b.bs):
                tests.append((a.name, b.name, True))
            elif not pa and not pb and (
                    (a.bs == n and a.bs < b.bs) or
                    (a.bs == b.bs and a.offset > b.offset)):
                tests.append((a.name, b.name, False))
    return tests


def sector_confidence(costs: Costs, n: int) -> float:
    """How well candidate ``n``'s predictions hold: the weakest one.

    A penalty seen in sequential OR random writes of the same sizes is
    the same evidence (firmware may merge sequential sub-page writes and
    hide it there), so those alternatives count by their best, corrected
    for having several chances; an absence of penalty must hold in
    every pattern."""
    factor = 1 + costs.margin
    tests = sector_tests(costs, n)
    if not tests:
        return 0.0
    penalties: Dict[Tuple[int, int, int, int], List[float]] = {}
    conf = 1.0
    for a, b, penalty in tests:
        if penalty:
            sa, sb = costs.shapes[a], costs.shapes[b]
            key = (sa.bs, sa.offset, sb.bs, sb.offset)
            penalties.setdefault(key, []).append(
                costs.prob_costlier(a, b, factor))
        else:
            conf = min(conf, costs.prob_costlier(b, a, 1 / factor))
    for alternatives in penalties.values():
        best = max(alternatives)
        conf = min(conf, max(0.0, 1 - (1 - best) * len(alternatives)))
    return conf


def decide_sector(costs: Costs) -> SectorVerdict:
    evidence = costs.evidence()
    sizes = sorted({s.bs for s in costs.shapes.values()
                    if s.offset == 0 and s.flush == "none" and
                    costs.usable(s.name)})
    if len(sizes) < 2:
        return SectorVerdict(None, 0.0, "too few sizes measured (%d)"
                             % len(sizes), evidence=evidence)
    scores = {n: sector_confidence(costs, n) for n in sizes}
    best = max(sorted(scores), key=lambda n: scores[n])
    conf = scores[best]
    # The sizes' costs as shown: sequential where both were measured.
    ladder: Dict[int, str] = {}
    for s in sorted(costs.shapes.values(), key=lambda s: s.pattern != "seq"):
        if s.offset == 0 and s.flush == "none" and s.bs in sizes:
            ladder.setdefault(s.bs, s.name)
    costs_text = ", ".join("%d B %.0f us" % (
        bs, costs.cost_ns(ladder[bs]) / 1000) for bs in sizes)
    others = _other_arms_text(costs, set(ladder.values()))
    if others:
        costs_text += "; " + others
    if conf < CONFIDENT:
        return SectorVerdict(None, round(conf, 4), "inconclusive: the per-"
                             "I/O costs (%s) do not single out one size "
                             "(best %d B at confidence %.2f)"
                             % (costs_text, best, conf), scores, evidence)
    if best == max(sizes):
        why = "smaller writes cost more per I/O than %d B (%s); sizes " \
            "above %d B were not measured" % (best, costs_text, best)
    elif best == min(sizes):
        why = "no write costs more per I/O for being smaller or " \
            "misaligned to %d B (%s): no read-modify-write penalty" % (
                best, costs_text)
    else:
        why = "writes below %d B, or not aligned to it, cost more per I/O " \
            "(%s): read-modify-write" % (best, costs_text)
    return SectorVerdict(best, round(conf, 4), why, scores, evidence)


def _other_arms_text(costs: Costs, shown: set) -> str:
    """The misaligned and random arms' costs, for the reason text."""
    parts = []
    for s in costs.shapes.values():
        if s.name in shown or not costs.usable(s.name):
            continue
        what = "%d B %s" % (s.bs, "random" if s.pattern == "rand" else
                            "at +%d" % s.offset if s.offset else "")
        parts.append("%s %.0f us" % (what.strip(), costs.cost_ns(s.name)
                                     / 1000))
    return ", ".join(parts)


@dataclass
class CacheVerdict:
    cache: str            # nonvolatile, volatile, write-cache-disabled,
    #                       inconclusive
    confidence: float
    recommend_nonvolatile: bool
    reason: str
    evidence: Dict[str, object] = field(default_factory=dict)


def flush_timing(costs: Costs, write: str, flushed: str,
                 ev: Dict[str, object]) -> Optional[Tuple[str, float]]:
    """("costly" | "free" | "unclear", confidence) from the cost of a
    flush after each write; the numbers go into ``ev``."""
    ratio = costs.ratio(flushed, write)
    if ratio is None:
        return None
    p_volatile = costs.prob_costlier(flushed, write, 1 + FLUSH_COST)
    p_nv = costs.prob_costlier(write, flushed, 1 / (1 + FLUSH_COST))
    ev.update({"write_lat_ns": round(costs.cost_ns(write), 1),
               "write_flush_lat_ns": round(costs.cost_ns(flushed), 1),
               "flush_cost_ratio": round(ratio, 3),
               "p_flush_costly": round(p_volatile, 4),
               "p_flush_free": round(p_nv, 4), "method": costs.method})
    if p_volatile >= CONFIDENT:
        return ("costly", p_volatile)
    if p_nv >= CONFIDENT:
        return ("free", p_nv)
    return ("unclear", max(p_volatile, p_nv))


def decide_cache(costs: Optional[Costs], nv_sup: Optional[bool],
                 wce: Optional[bool], flushes_suppressed: bool = False,
                 trust_timing: bool = False, write: str = "write",
                 flushed: str = "write-flush") -> CacheVerdict:
    """``costs`` holds the workloads ``write`` (no flush) and ``flushed``
    (a flush after each write), or is None when they were not measured."""
    ev: Dict[str, object] = {"nv_sup": nv_sup, "wce": wce,
                             "flushes_suppressed": flushes_suppressed}
    timing = None
    if costs is not None and costs.usable(write) and \
            costs.usable(flushed) and not flushes_suppressed:
        timing = flush_timing(costs, write, flushed, ev)
    if wce is False:
        return CacheVerdict("write-cache-disabled", 0.99, False,
                            "the write cache is disabled (WCE=0): flushes "
                            "do nothing and no tunable helps", ev)
    if flushes_suppressed:
        if nv_sup:
            return CacheVerdict("nonvolatile", 0.99, True,
                                "sd already suppresses flushes for this disk,"
                                " so flush timing is meaningless; the drive "
                                "reports a non-volatile cache (NV_SUP)", ev)
        return CacheVerdict("inconclusive", 0.0, False,
                            "sd already suppresses flushes for this disk, so"
                            " flush timing is meaningless, and the drive "
                            "does not report NV_SUP: cache-nonvolatile may be"
                            " unsafe here", ev)
    if nv_sup:
        if timing is None or timing[0] != "costly":
            conf = timing[1] if timing and timing[0] == "free" else 0.99
            return CacheVerdict("nonvolatile", round(max(conf, 0.99), 4),
                                True, "the drive reports a non-volatile "
                                "cache (NV_SUP)%s" % (
                                    ", and flushes cost nothing measurable"
                                    if timing and timing[0] == "free" else
                                    ""), ev)
        return CacheVerdict("inconclusive", 0.0, False,
                            "the drive reports NV_SUP but each flush costs "
                            "%.1fx a write: not recommending "
                            "cache-nonvolatile" % ev["flush_cost_ratio"], ev)
    if timing is None:
        return CacheVerdict("inconclusive", 0.0, False,
                            "no flush timing and no device evidence", ev)
    kind, conf = timing
    if kind == "costly":
        return CacheVerdict("volatile", round(conf, 4), False,
                            "each flush costs %.1fx a write: the cache is "
                            "volatile; keep cache flushes"
                            % ev["flush_cost_ratio"], ev)
    if kind == "free":
        why = "flushes cost nothing measurable (%.2fx a write) but the " \
            "drive does not report NV_SUP" % ev["flush_cost_ratio"]
        if trust_timing:
            return CacheVerdict("nonvolatile", round(conf, 4), True,
                                why + "; recommended because "
                                "--trust-flush-timing was given", ev)
        return CacheVerdict("nonvolatile", round(conf, 4), False,
                            why + "; not recommending cache-nonvolatile from "
                            "timing alone (--trust-flush-timing to accept)",
                            ev)
    return CacheVerdict("inconclusive", round(conf, 4), False,
                        "flush cost unclear (%.2fx a write)"
                        % ev["flush_cost_ratio"], ev)


@dataclass
class QueueVerdict:
    knee: Optional[int]
    throttle_max: Optional[int]
    throttle_min: Optional[int]
    confidence: float
    reason: str
    evidence: Dict[str, dict] = field(default_factory=dict)
    knees: Dict[str, Optional[int]] = field(default_factory=dict)


@dataclass
class Curve:
    """One IOPS-against-queue-depth curve and its knee."""

    rw: str
    iops: Dict[int, Sample]
    knee: Optional[int] = None      # None: still growing at the deepest
    confidence: float = 0.0

    def table(self) -> str:
        return ", ".join("QD%d %.0f" % (q, self.iops[q].mean)
                         for q in sorted(self.iops))


def transport_name(transport: Optional[str]) -> str:
    return (transport or "the transport").upper()


def find_knee(iops: Dict[int, Sample]) -> Tuple[Optional[int], float]:
    """(knee, confidence): the smallest depth no deeper one beats by
    KNEE_GAP, by a fixed-sequence test from the deepest depth down."""
    depths = sorted(iops)
    knee, conf = None, 0.0
    # The deepest depth has nothing deeper to lose to: start one above.
    for i in range(len(depths) - 2, -1, -1):
        q = depths[i]
        c = min(prob_greater(iops[q], iops[d], 1 / (1 + KNEE_GAP))
                for d in depths[i + 1:])
        if c < CONFIDENT:
            break
        knee, conf = q, c
    if knee is None:
        # Not even the second deepest is saturated: IOPS still grow.
        i = len(depths) - 2
        conf = min(prob_greater(iops[depths[-1]], iops[depths[i]],
                                1 + KNEE_GAP), 1.0) if i >= 0 else 0.0
    return knee, conf


def decide_queue_depth(steps: List[StepResult], warmup: int = 1,
                       transport: Optional[str] = None) -> QueueVerdict:
    evidence = {st.name: st.evidence(warmup) for st in steps}
    curves: List[Curve] = []
    for rw in ("write", "read"):
        iops = {st.qd: st.iops_sample(warmup) for st in steps
                if st.rw == rw and st.iops_sample(warmup).n >= 2}
        if len(iops) >= 3:
            curves.append(Curve(rw, iops, *find_knee(iops)))
    if not curves:
        return QueueVerdict(None, None, None, 0.0,
                            "too few queue depths measured", evidence)
    knees = {c.rw: c.knee for c in curves}
    tables = "; ".join("%ss %s" % (c.rw, c.table()) for c in curves)
    limit = TRANSPORT_QUEUE.get(transport or "")
    growing = [c for c in curves if c.knee is None]
    if growing:
        why = "%s IOPS still grow at QD%d (%s)" % (
            " and ".join(c.rw for c in growing), max(growing[0].iops),
            tables)
        conf = round(min(c.confidence for c in growing), 4)
        if limit is not None:
            return QueueVerdict(None, limit, None, conf, why + "; %s "
                                "queues at most %d commands: throttle-max "
                                "%d" % (transport_name(transport), limit,
                                        limit), evidence, knees)
        return QueueVerdict(None, None, None, conf, why + ": keep sd's "
                            "default throttle", evidence, knees)
    top = max(curves, key=lambda c: c.knee or 0)
    knee = top.knee or 0
    conf = round(min(c.confidence for c in curves), 4)
    why = "%s saturate at QD%d (%s)" % (
        "reads and writes" if len(curves) == 2 else top.rw + "s", knee,
        tables)
    tmax = knee
    if limit is not None and tmax > limit:
        tmax = limit
        why += "; %s queues at most %d commands" % (
            transport_name(transport), limit)
    # sd accepts no throttle below 2, and below its default minimum the
    # minimum must be written too (facts §3.5): say so in the reason.
    tmax = max(tmax, 2)
    tmin = None
    if tmax < SD_MIN_THROTTLE and len(curves) < 2:
        return QueueVerdict(knee, None, None, conf, why + "; only %ss were "
                            "measured, and a throttle below sd's default "
                            "minimum of %d fitted to them alone could starve"
                            " reads: keep sd's default throttle"
                            % (top.rw, SD_MIN_THROTTLE), evidence, knees)
    if tmax < SD_MIN_THROTTLE:
        tmin = 2
        why += ("; neither reads nor writes gain from a deeper queue, so "
                "throttle-max:%d goes below sd's default minimum of %d and "
                "throttle-min:2 is set with it" % (tmax, SD_MIN_THROTTLE))
    else:
        why += ": deeper queues only add latency"
    return QueueVerdict(knee, tmax, tmin, conf, why, evidence, knees)
