# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The certification verdicts on synthetic measurements whose truth is
known.

Paired rounds (what `sdio paired` gives) carry what a loaded machine
does to real measurements: a drift that moves every arm of a round alike
(load coming and going, by up to 3x), per-slice scatter, and heavy tails
(now and then one arm's slice is stalled, its median up to 4x).  The
per-I/O cost shapes are those of 512-native, 4K-native (512e), 8K and
16K drives, 4K drives with only a 5 % read-modify-write penalty, and
firmware that merges sequential sub-page writes.  Independent runs (what
vdbench and fio give) keep the older shape: interval means.  Flush costs
of volatile and non-volatile caches; read and write queue-depth curves
with and without a knee."""

import math
import random

import pytest

from sdtune.certify.costs import IndependentCosts, PairedCosts, Shape
from sdtune.certify.reports import Interval, StepResult
from sdtune.certify.workload import CertifySettings, build_plan
from sdtune.certify.verdict import (CONFIDENT, decide_cache,
                                    decide_queue_depth, decide_sector)

SIZES = (512, 1024, 2048, 4096, 8192, 16384)
LOOKS = len(CertifySettings().looks())


def model_cost(native, bs, offset=0, pattern="seq", rmw_us=900.0,
               merge_seq=False):
    """Per-I/O cost (us): command + transfer + page programs + RMW of
    partly written pages (the emulated drives' model, in miniature)."""
    first = offset // native
    last = (offset + bs - 1) // native
    pages = last - first + 1
    head, tail = offset % native != 0, (offset + bs) % native != 0
    partial = (head or tail) if pages == 1 else head + tail
    if merge_seq and pattern == "seq":
        partial = 0         # the firmware gathers sub-page writes
    return 100 + bs / 1024 * 10 + 150 * pages + rmw_us * partial


def sector_shapes(logical=512):
    return [Shape(a.name, a.bs, a.offset, a.pattern, a.flush)
            for a in build_plan(logical, ("sector",)).sector]


def paired(shapes, cost, rounds=64, noise=0.03, seed=1, drift=0.5,
           stall=0.05, looks=LOOKS):
    """PairedCosts of ``rounds`` rounds: cost(shape) in us per arm."""
    rng = random.Random(seed)
    level, out = 0.0, []
    for _ in range(rounds):
        # A random walk in log space, clamped to about a factor of three.
        level = max(-1.1, min(1.1, level + rng.gauss(0, drift)))
        rnd = {}
        for s in shapes:
            v = cost(s) * 1000 * math.exp(level) * rng.gauss(1, noise)
            if rng.random() < stall:
                v *= rng.uniform(1.5, 4.0)
            rnd[s.name] = v
        out.append(rnd)
    return PairedCosts(shapes, out, looks)


def drive(native, **kw):
    model = {k: kw.pop(k) for k in ("rmw_us", "merge_seq") if k in kw}
    return paired(sector_shapes(kw.pop("logical", 512)),
                  lambda s: model_cost(native, s.bs, s.offset, s.pattern,
                                       **model), **kw)


@pytest.mark.parametrize("native", [512, 4096, 8192, 16384])
@pytest.mark.parametrize("noise", [0.01, 0.03])
def test_native_sector_found_through_drift_and_stalls(native, noise):
    v = decide_sector(drive(native, noise=noise))
    assert v.native == native, v.reason
    assert v.confidence >= CONFIDENT


def test_4k_native_drive_with_a_5_percent_penalty_is_4096():
    # 512 B costs 5 % more than 4 KiB: rmw is 5 % of a 4 KiB write plus
    # the transfer the smaller write saves.
    c4k = model_cost(4096, 4096, rmw_us=0)
    rmw = 0.05 * c4k + (4096 - 512) / 1024 * 10
    assert abs(model_cost(4096, 512, rmw_us=rmw) / c4k - 1.05) < 1e-9
    for seed in range(20):
        v = decide_sector(drive(4096, rmw_us=rmw, noise=0.03, seed=seed))
        assert v.native == 4096, (seed, v.reason)
        assert v.confidence >= CONFIDENT


def test_a_512_native_drive_is_never_called_anything_else():
    wrong = []
    for seed in range(200):
        v = decide_sector(drive(512, noise=0.08, seed=seed, rounds=16,
                                stall=0.15))
        if v.native not in (512, None):
            wrong.append((seed, v.native, v.confidence))
    assert wrong == []


def test_no_penalty_and_noise_cannot_make_a_4k_verdict_at_any_look():
    """Every look of the sequential procedure on a 512-native drive with
    no transfer cost at all (all sizes cost the same: the hardest case):
    no look ever says 4096 or more."""
    shapes = sector_shapes()
    for seed in range(100):
        full = paired(shapes, lambda s: 300.0, noise=0.05, seed=seed)
        for n in CertifySettings().looks():
            part = PairedCosts(shapes, full.rounds[:n], LOOKS)
            v = decide_sector(part)
            assert v.native in (None, 512), (seed, n, v.reason)


def test_firmware_merging_sequential_writes_is_not_called_512():
    v = decide_sector(drive(4096, merge_seq=True, rounds=64))
    assert v.native != 512
    assert v.confidence < CONFIDENT or v.native == 4096, v.reason


def test_4k_logical_drive_compares_4k_and_up():
    v = decide_sector(drive(4096, logical=4096, rounds=16))
    assert v.native == 4096 and v.confidence >= CONFIDENT
    assert set(v.candidates) == {4096, 8192, 16384}


def test_too_few_rounds_is_inconclusive():
    v = decide_sector(drive(4096, rounds=1))
    assert v.native is None and v.confidence < CONFIDENT


def test_mbps_rule_would_misclassify_a_512_native_drive():
    """512-byte writes move far fewer MB/s than 4 KiB writes on a
    512-native drive, yet cost LESS per I/O: the verdict is 512."""
    costs = paired(sector_shapes(), lambda s: 80 + s.bs / 1024 * 25)
    mbps = {bs: bs / (80 + bs / 1024 * 25) for bs in SIZES}
    assert mbps[4096] > 4 * mbps[512]          # the rule of thumb's view
    v = decide_sector(costs)
    assert v.native == 512 and v.confidence >= CONFIDENT


def test_bonferroni_counts_every_look():
    shapes = sector_shapes()[:2]
    rounds = paired(shapes, lambda s: 100.0 + (s.bs == 512) * 3,
                    noise=0.02, rounds=12, looks=1).rounds
    once = PairedCosts(shapes, rounds, 1).prob_costlier(
        "size-512", "size-1024", 1.0)
    seven = PairedCosts(shapes, rounds, 7).prob_costlier(
        "size-512", "size-1024", 1.0)
    assert seven == pytest.approx(max(0.0, 1 - (1 - once) * 7))
    assert seven < once


# -- independent runs (imported results) --------------------------------------

def step(name, bs, lat_us, noise=0.03, n=12, offset=0, qd=1, flush="none",
         rng=random, rw="write"):
    ivs = [Interval(200, 1e6 / lat_us, lat_us * 1000 * rng.gauss(1, noise))
           for _ in range(n)]
    return StepResult(name, bs, qd=qd, offset=offset, flush=flush, rw=rw,
                      intervals=ivs, ios=200 * n, iops=1e6 / lat_us)


@pytest.mark.parametrize("native", [512, 4096, 8192, 16384])
def test_imported_runs_still_decide_with_a_10_percent_margin(native):
    rng = random.Random(native)
    steps = [step("size-%d" % bs, bs, model_cost(native, bs), rng=rng)
             for bs in SIZES]
    steps.append(step("size-4096-misaligned", 4096,
                      model_cost(native, 4096, 512), offset=512, rng=rng))
    v = decide_sector(IndependentCosts(steps, warmup=1))
    assert v.native == native, v.reason
    assert v.confidence >= CONFIDENT


def test_imported_noise_that_hides_the_answer_is_inconclusive():
    rng = random.Random(7)
    steps = [step("size-%d" % bs, bs, 1000, noise=0.5, n=4, rng=rng)
             for bs in SIZES]
    v = decide_sector(IndependentCosts(steps))
    assert v.native is None
    assert v.reason.startswith("inconclusive")


def test_too_few_sizes():
    v = decide_sector(IndependentCosts([step("size-4096", 4096, 100)]))
    assert v.native is None and "too few" in v.reason


# -- cache --------------------------------------------------------------------

CACHE = [Shape("write", 4096), Shape("write-flush", 4096, flush="each")]


def _cache(write_us, flush_us, seed=2):
    return paired(CACHE, lambda s: write_us + (flush_us if s.flush ==
                                               "each" else 0),
                  rounds=16, seed=seed)


def test_volatile_cache_never_recommended():
    v = decide_cache(_cache(200, 2000), nv_sup=False, wce=True)
    assert v.cache == "volatile" and not v.recommend_nonvolatile
    assert v.confidence >= CONFIDENT


def test_cheap_flushes_alone_do_not_recommend_without_the_flag():
    costs = _cache(200, 2)
    v = decide_cache(costs, nv_sup=None, wce=True)
    assert v.cache == "nonvolatile" and not v.recommend_nonvolatile
    assert "--trust-flush-timing" in v.reason
    v = decide_cache(costs, nv_sup=None, wce=True, trust_timing=True)
    assert v.recommend_nonvolatile


def test_nv_sup_with_cheap_flushes_is_recommended():
    v = decide_cache(_cache(200, 2), nv_sup=True, wce=True)
    assert v.cache == "nonvolatile" and v.recommend_nonvolatile
    assert "NV_SUP" in v.reason


def test_nv_sup_contradicted_by_costly_flushes_is_not_recommended():
    v = decide_cache(_cache(200, 3000), nv_sup=True, wce=True)
    assert v.cache == "inconclusive" and not v.recommend_nonvolatile


def test_suppressed_flushes_make_timing_meaningless():
    costs = _cache(200, 2)
    v = decide_cache(costs, nv_sup=None, wce=True, flushes_suppressed=True)
    assert "meaningless" in v.reason and not v.recommend_nonvolatile
    v = decide_cache(None, nv_sup=True, wce=True, flushes_suppressed=True)
    assert v.recommend_nonvolatile


def test_write_cache_disabled():
    v = decide_cache(_cache(200, 2000), nv_sup=False, wce=False)
    assert v.cache == "write-cache-disabled"
    assert not v.recommend_nonvolatile


def test_flush_cost_near_the_threshold_is_unclear_not_a_guess():
    v = decide_cache(_cache(200, 200), nv_sup=None, wce=True)
    assert v.cache == "inconclusive" and not v.recommend_nonvolatile


# -- queue depth --------------------------------------------------------------

def _curve(rw, channels, per_io_us=500, seed=4, noise=0.02):
    rng = random.Random(seed)
    out = []
    for qd in (1, 2, 4, 8, 16, 32, 64):
        iops = min(qd, channels) * 1e6 / per_io_us
        ivs = [Interval(100, iops * rng.gauss(1, noise), 1000)
               for _ in range(10)]
        out.append(StepResult("qd-%s-%d" % (rw, qd), 4096, qd=qd, rw=rw,
                              intervals=ivs, ios=1000, iops=iops))
    return out


@pytest.mark.parametrize("writes, reads, tmax, tmin", [
    (8, 8, 8, None), (16, 16, 16, None), (4, 16, 16, None),
    (16, 4, 16, None), (4, 4, 4, 2), (1, 2, 2, 2)])
def test_throttle_is_the_larger_knee(writes, reads, tmax, tmin):
    v = decide_queue_depth(_curve("write", writes) + _curve("read", reads))
    assert v.knees == {"write": writes, "read": reads}
    assert (v.throttle_max, v.throttle_min) == (tmax, tmin)
    assert v.confidence >= CONFIDENT
    if tmin is not None:
        assert "below sd's default minimum of 8" in v.reason


def test_writes_alone_never_go_below_sds_minimum():
    v = decide_queue_depth(_curve("write", 2))
    assert v.knee == 2 and v.throttle_max is None
    assert "could starve reads" in v.reason


def test_sata_queues_at_most_32():
    v = decide_queue_depth(_curve("write", 128) + _curve("read", 128),
                           transport="sata")
    assert v.knees == {"write": None, "read": None}
    assert v.throttle_max == 32 and "SATA queues at most 32" in v.reason
    v = decide_queue_depth(_curve("write", 128) + _curve("read", 128))
    assert v.throttle_max is None


def test_no_knee_keeps_the_default_throttle():
    v = decide_queue_depth(_curve("write", 128) + _curve("read", 8))
    assert v.throttle_max is None and "keep sd's default" in v.reason


def test_a_knee_between_depths_is_the_deeper_one_not_a_flake():
    """IOPS at QD4 at 88-92 % of the peak (the emulated drive's FUSE
    hand-offs): the knee is 4 or 8, never unclear."""
    for seed in range(30):
        rng = random.Random(seed)
        steps = []
        for qd in (1, 2, 4, 8, 16, 32, 64):
            iops = {1: 0.27, 2: 0.52, 4: rng.uniform(0.88, 0.92)}.get(
                qd, 1.0) * 2000
            ivs = [Interval(100, iops * rng.gauss(1, 0.04), 1000)
                   for _ in range(10)]
            steps.append(StepResult("qd-write-%d" % qd, 4096, qd=qd,
                                    intervals=ivs, ios=1000, iops=iops))
        v = decide_queue_depth(steps)
        assert v.knee in (4, 8) and v.confidence >= CONFIDENT, v.reason
