# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Measured gains: what each tunable a certification recommends buys on
the drive, measured as the workload the tunable changes against the one
it replaces (issue 29).  The result is the record's "gains" object
(records/gains.py).

* physical-block-size N: the writes ZFS issues at ashift log2(N)
  against those it issues at the logical block's ashift (9 on a
  512-byte drive), paired and interleaved in one `sdio paired` run as
  the sector phase is: the same sizes (ZFS_MIX: records of 4 to
  128 KiB, compressed blocks of odd sizes, small log writes), rounded
  up to each allocation unit and packed one after another as the
  allocator places them.  Gain in IOPS, throughput and median
  latency; the space the rounding costs.
* cache-nonvolatile: a synchronous write (write, then SYNCHRONIZE CACHE:
  the ZIL's and an NFS commit's shape) against a write alone, which is
  what sd issues once the pair is in effect.  At QD1 from the cache
  phase's paired rounds (no new I/O), and at the throttle from
  alternating runs at that depth.
* throttle-max T: random 4 KiB writes at depth T against sd's default
  depth (sd_max_throttle, 256), in alternating runs: IOPS and the
  latency percentiles from the engine's histograms.
* disksort and throttle-min: nothing to measure; said so.

Every ratio comes with a 95 % interval and a confidence: paired per-round
(or per-pair) log ratios, Yuen's trimmed test (stats.log_interval), so
that load which slows both sides of a pair cancels.  An interval that
does not lie above 1.0 is "no measurable gain", and the record says why
the tunable is recommended all the same.  Runs sdio through the host.
"""

import math
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..host import Host
from ..records.gains import (GAIN, NO_GAIN, NOT_MEASURED, Gains, Metric,
                             TunableGain, lead_metric, ratio_text)
from .costs import PairedCosts
from .reports import StepResult
from .runner import Progress, ProgressEvent, run_paired_once, run_step
from .stats import log_interval, trimmed_mean
from .workload import Arm, CertifySettings, Step

# What ZFS writes, as sizes before rounding to the allocation unit:
# uncompressible records of 4 KiB to 128 KiB, compressed records and
# metadata of odd sizes (multiples of 512 after compression), and small
# ZIL log blocks.  Interleaved so that a small write follows a large
# one, as the allocator packs them.  The order and sizes are fixed: the
# same mix on every drive makes records comparable.
ZFS_MIX = (4096, 2560, 131072, 1536, 16384, 5632, 3072, 8192,
           11776, 32768, 1536, 23040, 4096, 45568, 2048, 3584)
# sd's default throttle (sd_max_throttle, SD_MAX_THROTTLE in sddef.h):
# the depth sd keeps without throttle-max (facts §3.5).
SD_DEFAULT_THROTTLE = 256
# The queue-depth comparisons' I/O: one page, random, as the qd phase.
GAIN_BS = 4096

WHY_PBS = ("still recommended: the drive's pages are %d bytes, and a "
           "vdev created at a smaller ashift keeps it for life "
           "(alignment, not speed)")
WHY_NV = ("still recommended: the cache is non-volatile, so a flush "
          "protects nothing; on SATA a flush is a non-queued command "
          "that drains the queue under load")
WHY_THROTTLE = ("still recommended: the drive saturates at that depth, "
                "so deeper queues only wait longer in the drive")
WHY_DISKSORT = ("disksort sorts sd's queue by offset, of no use to a "
                "solid-state drive: nothing to measure")
WHY_THROTTLE_MIN = ("throttle-min only bounds how far sd "
                    "lowers the throttle after a queue-full, which a "
                    "measurement cannot provoke safely")


def roundup(size: int, unit: int) -> int:
    return -(-size // unit) * unit


def ashift_of(unit: int) -> int:
    return unit.bit_length() - 1


def ashift_arms(logical: int, native: int) -> List[Arm]:
    """The two arms of the physical-block-size comparison: ZFS_MIX at
    the logical block's allocation unit and at the native page's."""
    bs = max(roundup(m, native) for m in ZFS_MIX)
    return [Arm("gain", "ashift-%d" % ashift_of(unit), bs, mix=ZFS_MIX,
                align=unit) for unit in (logical, native)]


def space_ratio(logical: int, native: int) -> float:
    """Bytes ZFS_MIX allocates at the native page over the bytes at the
    logical block: what the larger ashift costs in space."""
    return sum(roundup(m, native) for m in ZFS_MIX) / \
        sum(roundup(m, logical) for m in ZFS_MIX)


def _metric(name: str, unit: str, better: str, baseline: float,
            tuned: float, logs: Sequence[float]) -> Optional[Metric]:
    """A metric from paired log ratios, each log(baseline / tuned) for a
    lower-is-better quantity and log(tuned / baseline) for a higher one
    (so that above 0 is a gain); None when too few pairs are known."""
    interval = log_interval(logs)
    if interval is None:
        return None
    centre, lo, hi, conf = interval
    return Metric(name, unit, better, _round(baseline), _round(tuned),
                  round(math.exp(centre), 4),
                  (round(math.exp(lo), 4), round(math.exp(hi), 4)),
                  round(conf, 4))


def _round(value: float) -> float:
    return float("%.5g" % value)


def _status(metrics: Sequence[Metric]) -> str:
    if not metrics:
        return NOT_MEASURED
    return GAIN if any(m.significant for m in metrics) else NO_GAIN


def _summary(metrics: Sequence[Metric], what: str) -> str:
    """What was compared and its lead metric: "ZFS's writes at ashift
    12 against ashift 9: 1.47x iops (95% 1.43-1.52)"."""
    lead = lead_metric(metrics)
    if lead is None:
        return what
    return "%s: %s" % (what, ratio_text(lead))


# ------------------------------------------------------ physical-block-size

def ashift_gain(costs: PairedCosts, logical: int, native: int,
                value: object) -> TunableGain:
    """physical-block-size's gain from the paired rounds of ashift_arms:
    IOPS from each round's mean per-write time, throughput of the data
    ZFS asked to write (the same in both arms, so its ratio is the
    IOPS ratio), median latency from each round's median."""
    base, tuned = ("ashift-%d" % ashift_of(logical),
                   "ashift-%d" % ashift_of(native))
    metrics: List[Metric] = []
    if len(costs.means) >= 2:
        mean_b, mean_t = costs.mean_ns(base), costs.mean_ns(tuned)
        logs = costs.log_ratios(base, tuned, of="mean")
        data = sum(ZFS_MIX) / len(ZFS_MIX)
        for m in (_metric("iops", "IO/s", "higher", 1e9 / mean_b,
                          1e9 / mean_t, logs),
                  _metric("throughput", "B/s", "higher",
                          data * 1e9 / mean_b, data * 1e9 / mean_t, logs),
                  _metric("latency_p50_ns", "ns", "lower",
                          costs.cost_ns(base), costs.cost_ns(tuned),
                          costs.log_ratios(base, tuned))):
            if m is not None:
                metrics.append(m)
    status = _status(metrics)
    what = "ZFS's writes at ashift %d against ashift %d" % (
        ashift_of(native), ashift_of(logical))
    return TunableGain(
        "physical-block-size", value, status, _summary(metrics, what),
        why=WHY_PBS % native if status != GAIN else None,
        baseline="ashift %d: %d writes of 1.5 to 128 KiB rounded to %d B "
        "and packed" % (ashift_of(logical), len(ZFS_MIX), logical),
        tuned="ashift %d: the same writes rounded to %d B" % (
            ashift_of(native), native),
        rounds=len(costs.rounds),
        space_ratio=round(space_ratio(logical, native), 4),
        metrics=tuple(metrics))


# ------------------------------------------------------ alternating runs

StepRunner = Callable[[Step], StepResult]


def alternate(run: StepRunner, base: Step, tuned: Step, pairs: int
              ) -> List[Tuple[StepResult, StepResult]]:
    """``pairs`` pairs of runs, (baseline, tuned), in the order ABBA...
    so that drift over the pairs hits both sides alike."""
    out = []
    for k in range(pairs):
        if k % 2 == 0:
            b = run(base)
            t = run(tuned)
        else:
            t = run(tuned)
            b = run(base)
        out.append((b, t))
    return out


def _steady(res: StepResult, warmup: int) -> float:
    sample = res.iops_sample(warmup)
    return sample.mean if sample.n else res.iops


def _pair_metrics(pairs: List[Tuple[StepResult, StepResult]], warmup: int,
                  latency: bool) -> List[Metric]:
    """The latency percentiles (with ``latency``; the tail first: what a
    throttle is for) and the IOPS of alternating runs, one log ratio per
    pair."""
    usable = [(b, t) for b, t in pairs
              if _steady(b, warmup) > 0 and _steady(t, warmup) > 0]
    if not usable:
        return []
    metrics: List[Metric] = []
    for field in ("lat_p99_ns", "lat_p99_9_ns", "lat_p50_ns") \
            if latency else ():
        known = [(getattr(b, field), getattr(t, field)) for b, t in usable
                 if getattr(b, field) and getattr(t, field)]
        m = _metric(field.replace("lat_", "latency_"), "ns", "lower",
                    trimmed_mean([b for b, _ in known]),
                    trimmed_mean([t for _, t in known]),
                    [math.log(b / t) for b, t in known]) if known else None
        if m is not None:
            metrics.append(m)
    m = _metric("iops", "IO/s", "higher",
                trimmed_mean([_steady(b, warmup) for b, _ in usable]),
                trimmed_mean([_steady(t, warmup) for _, t in usable]),
                [math.log(_steady(t, warmup) / _steady(b, warmup))
                 for b, t in usable])
    if m is not None:
        metrics.append(m)
    return metrics


# ------------------------------------------------------ cache-nonvolatile

def sync_write_gain(cache: Optional[PairedCosts], run: Optional[StepRunner],
                    depth: Optional[int], pairs: int, warmup: int,
                    bs: int) -> TunableGain:
    """cache-nonvolatile's gain: synchronous writes (write + flush)
    against writes alone, at QD1 from the cache phase's rounds, and at
    ``depth`` (the throttle) from alternating runs when ``run`` is
    given."""
    metrics: List[Metric] = []
    if cache is not None and len(cache.means) >= 2:
        m = _metric("sync_write_iops_qd1", "IO/s", "higher",
                    1e9 / cache.mean_ns("write-flush"),
                    1e9 / cache.mean_ns("write"),
                    cache.log_ratios("write-flush", "write", of="mean"))
        if m is not None:
            metrics.append(m)
        m = _metric("sync_write_latency_p50_ns_qd1", "ns", "lower",
                    cache.cost_ns("write-flush"), cache.cost_ns("write"),
                    cache.log_ratios("write-flush", "write"))
        if m is not None:
            metrics.append(m)
    if run is not None and depth is not None and depth > 1:
        base = Step("gain", "sync-qd%d" % depth, bs, pattern="rand",
                    qd=depth, flush="each")
        tuned = Step("gain", "write-qd%d" % depth, bs, pattern="rand",
                     qd=depth)
        for m in _pair_metrics(alternate(run, base, tuned, pairs), warmup,
                               latency=False):
            metrics.append(replace(m, name="sync_write_iops_qd%d" % depth))
    status = _status(metrics)
    if not metrics:
        why = "sd already suppresses this drive's flushes, " \
            "so the cache phase did not run"
    else:
        why = WHY_NV if status != GAIN else None
    return TunableGain(
        "cache-nonvolatile", True, status,
        _summary(metrics, "synchronous writes without the flush") if
        metrics else "",
        why=why,
        baseline="a %d B write, then SYNCHRONIZE CACHE (the ZIL's and an "
        "NFS commit's shape)" % bs,
        tuned="the write alone: sd sends no flush with the pair in effect",
        rounds=len(cache.rounds) if cache is not None else 0,
        metrics=tuple(metrics))


# ------------------------------------------------------ throttle-max

def throttle_gain(run: StepRunner, value: int, pairs: int, warmup: int,
                  bs: int) -> TunableGain:
    """throttle-max's gain: random writes at the recommended depth
    against sd's default depth, in alternating runs: IOPS and latency
    percentiles."""
    if value >= SD_DEFAULT_THROTTLE:
        return TunableGain("throttle-max", value, NOT_MEASURED, "",
                           why="no shallower than sd's "
                           "default depth (%d)" % SD_DEFAULT_THROTTLE)
    base = Step("gain", "qd%d" % SD_DEFAULT_THROTTLE, bs, pattern="rand",
                qd=SD_DEFAULT_THROTTLE)
    tuned = Step("gain", "qd%d" % value, bs, pattern="rand", qd=value)
    metrics = _pair_metrics(alternate(run, base, tuned, pairs), warmup,
                            latency=True)
    status = _status(metrics)
    return TunableGain(
        "throttle-max", value, status,
        _summary(metrics, "QD%d against sd's default QD%d" % (
            value, SD_DEFAULT_THROTTLE)),
        why=WHY_THROTTLE if status != GAIN else None,
        baseline="random %d B writes at QD%d (sd's default throttle)" % (
            bs, SD_DEFAULT_THROTTLE),
        tuned="the same at QD%d" % value, rounds=pairs,
        metrics=tuple(metrics))


# ------------------------------------------------------ the whole phase

def gain_timing(timing: CertifySettings) -> CertifySettings:
    """The settings of the alternating runs: short steps (gain_step_s)
    of short intervals, one discarded as warm-up."""
    interval = timing.gain_step_s / 8
    return replace(timing, step_max_s=timing.gain_step_s,
                   interval_s=interval, min_intervals=5,
                   warmup_intervals=1)


def measure_gains(host: Host, target: str, label: str,
                  recommended: Dict[str, object], logical: int,
                  cache: Optional[PairedCosts], timing: CertifySettings,
                  region: int, progress: Optional[Progress] = None
                  ) -> Gains:
    """Measure what each of ``recommended`` buys on the target (its
    data is destroyed, as by every phase).  ``cache`` is the cache
    phase's costs, None when it did not run."""
    t0 = host.monotonic_ns()
    steps = gain_timing(timing)
    bs = max(GAIN_BS, logical)

    def run(step: Step) -> StepResult:
        res = run_step(host, target, label, step, steps, region)
        if progress is not None:
            progress(ProgressEvent("gain", step.name, res.iops, None))
        return res

    out: List[TunableGain] = []
    for tunable, value in recommended.items():
        if tunable in ("physical-block-size", "min-phys-block-size") and \
                isinstance(value, int) and value > logical:
            costs = run_paired_once(host, target, label,
                                    ashift_arms(logical, value), timing,
                                    region, timing.gain_paired_s)
            if progress is not None:
                progress(ProgressEvent("gain", "%d rounds" %
                                       len(costs.rounds), None, None))
            out.append(replace(ashift_gain(costs, logical, value, value),
                               tunable=tunable))
        elif tunable == "cache-nonvolatile" and value is True:
            depth = recommended.get("throttle-max")
            out.append(sync_write_gain(
                cache, run, depth if isinstance(depth, int) else None,
                timing.gain_pairs, steps.warmup_intervals, bs))
        elif tunable == "throttle-max" and isinstance(value, int):
            out.append(throttle_gain(run, value, timing.gain_pairs,
                                     steps.warmup_intervals, bs))
        elif tunable == "disksort":
            out.append(TunableGain(tunable, value, NOT_MEASURED, "",
                                   why=WHY_DISKSORT))
        elif tunable == "throttle-min":
            out.append(TunableGain(tunable, value, NOT_MEASURED, "",
                                   why=WHY_THROTTLE_MIN))
        else:
            out.append(TunableGain(tunable, value, NOT_MEASURED, "",
                                   why="no workload of "
                                   "sdtune's changes with it"))
    return Gains(tuple(out), round((host.monotonic_ns() - t0) / 1e9, 2))
