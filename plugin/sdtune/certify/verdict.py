"""Decide native sector size, cache non-volatility and queue depth from
measurements, each with a confidence and the numbers it used.

Sector size.  A write smaller than the native page costs MORE per I/O
than a native-size write (the drive reads, merges and rewrites the page);
a drive without that penalty never gets slower per I/O as writes get
smaller.  So the native size N is the size whose per-I/O cost is clearly
below that of every smaller size, and not clearly above that of any
larger one.  "Clearly" is a one-sided Welch test on interval means with
a minimum effect of PENALTY (10 %): real read-modify-write penalties are
two to sixty times (spec/peers.md §3a), noise is a few percent.  MB/s is
never compared: a 512-byte write moving less data per second says
nothing by itself.

Cache.  Device evidence first (VPD 0x86 NV_SUP, the caching mode page's
WCE), timing second: the cost of a flush after each 4 KiB write.  A
volatile cache must write its dirty pages to flash on every flush, which
costs several times the write itself (milliseconds against tens of
microseconds on real drives, spec/peers.md §3b); a power-loss-protected
cache answers a flush at once.  So a flush that adds at least a whole
write's cost (FLUSH_COST) counts as costly, one that adds clearly less
counts as free.  Timing
alone never recommends cache-nonvolatile:true unless the operator asks.

Queue depth.  4 KiB random-write IOPS against QD 1..64: the knee is the
smallest QD reaching within KNEE_GAP of the peak; more outstanding I/O
only adds latency.

Pure: takes StepResults, returns verdicts.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .measure import StepResult
from .stats import Sample, prob_greater

PENALTY = 0.10          # smallest per-I/O penalty counted as RMW
FLUSH_COST = 1.00       # a flush costing a whole write: volatile cache
KNEE_GAP = 0.10         # within 10 % of peak IOPS counts as saturated
CONFIDENT = 0.95


@dataclass
class SectorVerdict:
    native: Optional[int]
    confidence: float
    reason: str
    candidates: Dict[int, float] = field(default_factory=dict)
    evidence: Dict[str, dict] = field(default_factory=dict)


def _sector_confidence(n: int, lat: Dict[int, Sample],
                       misaligned: Optional[Sample]) -> float:
    smaller = [s for s in lat if s < n]
    larger = [s for s in lat if s > n]
    # Every smaller size pays a penalty against N ...
    below = min((prob_greater(lat[s], lat[n], 1 + PENALTY)
                 for s in smaller), default=1.0)
    # ... and N pays none against any larger size.
    at = min((prob_greater(lat[s], lat[n], 1 / (1 + PENALTY))
              for s in larger), default=1.0)
    conf = min(below, at)
    if misaligned is not None and 4096 in lat:
        if n == 512:
            # 4 KiB at offset 512 covers whole 512-byte sectors: no penalty.
            conf = min(conf, prob_greater(lat[4096], misaligned,
                                          1 / (1 + PENALTY)))
        elif n <= 4096:
            # It straddles native pages: read-modify-write of two pages.
            conf = min(conf, prob_greater(misaligned, lat[4096],
                                          1 + PENALTY))
    return conf


def decide_sector(steps: List[StepResult], warmup: int = 1) -> SectorVerdict:
    lat: Dict[int, Sample] = {}
    misaligned = None
    evidence = {}
    for st in steps:
        evidence[st.name] = st.evidence(warmup)
        if st.offset:
            misaligned = st.latency(warmup)
        else:
            lat[st.bs] = st.latency(warmup)
    usable = {bs: s for bs, s in lat.items() if s.n >= 2}
    if len(usable) < 2:
        return SectorVerdict(None, 0.0, "too few sizes measured (%d)"
                             % len(usable), evidence=evidence)
    scores = {n: _sector_confidence(n, usable, misaligned) for n in usable}
    best = max(sorted(scores), key=lambda n: scores[n])
    conf = scores[best]
    costs = ", ".join("%d B %.0f us" % (bs, usable[bs].mean / 1000)
                      for bs in sorted(usable))
    if conf < CONFIDENT:
        return SectorVerdict(None, round(conf, 4), "inconclusive: the per-"
                             "I/O costs (%s) do not single out one size "
                             "(best %d B at confidence %.2f)"
                             % (costs, best, conf), scores, evidence)
    if best == max(usable):
        why = "smaller writes cost more per I/O than %d B (%s); sizes " \
            "above %d B were not measured" % (best, costs, best)
    elif best == min(usable):
        why = "no write size is cheaper per I/O than %d B (%s): no " \
            "read-modify-write penalty" % (best, costs)
    else:
        why = "writes below %d B cost more per I/O (%s): read-modify-" \
            "write" % (best, costs)
    return SectorVerdict(best, round(conf, 4), why, scores, evidence)


@dataclass
class CacheVerdict:
    cache: str            # nonvolatile, volatile, write-cache-disabled,
    #                       inconclusive
    confidence: float
    recommend_nonvolatile: bool
    reason: str
    evidence: Dict[str, object] = field(default_factory=dict)


def decide_cache(write: Optional[StepResult],
                 write_flush: Optional[StepResult],
                 nv_sup: Optional[bool], wce: Optional[bool],
                 flushes_suppressed: bool = False,
                 trust_timing: bool = False,
                 warmup: int = 1) -> CacheVerdict:
    ev: Dict[str, object] = {"nv_sup": nv_sup, "wce": wce,
                             "flushes_suppressed": flushes_suppressed}
    timing = None
    if write is not None and write_flush is not None and \
            not flushes_suppressed:
        w, wf = write.latency(warmup), write_flush.latency(warmup)
        p_volatile = prob_greater(wf, w, 1 + FLUSH_COST)
        p_nv = prob_greater(w, wf, 1 / (1 + FLUSH_COST))
        ev.update({"write_lat_ns": round(w.mean, 1),
                   "write_flush_lat_ns": round(wf.mean, 1),
                   "flush_cost_ratio": round(wf.mean / w.mean, 3)
                   if w.mean else None,
                   "p_flush_costly": round(p_volatile, 4),
                   "p_flush_free": round(p_nv, 4)})
        if p_volatile >= CONFIDENT:
            timing = ("costly", p_volatile)
        elif p_nv >= CONFIDENT:
            timing = ("free", p_nv)
        else:
            timing = ("unclear", max(p_volatile, p_nv))
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


def decide_queue_depth(steps: List[StepResult],
                       warmup: int = 1) -> QueueVerdict:
    iops: Dict[int, Sample] = {}
    evidence = {}
    for st in steps:
        evidence[st.name] = st.evidence(warmup)
        iops[st.qd] = st.iops_sample(warmup)
    depths = sorted(q for q in iops if iops[q].n >= 1)
    if len(depths) < 3:
        return QueueVerdict(None, None, None, 0.0,
                            "too few queue depths measured", evidence)
    peak = max(iops[q].mean for q in depths)
    knee = next(q for q in depths if iops[q].mean >= (1 - KNEE_GAP) * peak)
    i = depths.index(knee)
    # Confidence: the next depth gains less than KNEE_GAP, and the previous
    # one is clearly below the knee.
    conf = 1.0
    if i + 1 < len(depths):
        conf = min(conf, prob_greater(iops[knee], iops[depths[i + 1]],
                                      1 / (1 + KNEE_GAP)))
    if i > 0:
        conf = min(conf, prob_greater(iops[knee], iops[depths[i - 1]],
                                      1 + KNEE_GAP / 2))
    table = ", ".join("QD%d %.0f" % (q, iops[q].mean) for q in depths)
    if knee == depths[-1]:
        return QueueVerdict(None, None, None, round(conf, 4),
                            "IOPS still grow at QD%d (%s): keep sd's default "
                            "throttle" % (knee, table), evidence)
    if conf < CONFIDENT:
        return QueueVerdict(knee, None, None, round(conf, 4),
                            "knee near QD%d but not clear (%s)"
                            % (knee, table), evidence)
    # sd accepts no throttle below 2, and below its default minimum of 8
    # the minimum must be written too (facts §3.5).
    tmax = max(knee, 2)
    tmin = 2 if tmax < 8 else None
    return QueueVerdict(knee, tmax, tmin, round(conf, 4),
                        "IOPS saturate at QD%d (%s): deeper queues only add "
                        "latency" % (knee, table), evidence)
