"""The certification verdicts on synthetic measurements whose truth is
known: per-I/O cost shapes of 512-native, 4K-native (512e), 8K and 16K
drives; flush costs of volatile and non-volatile caches with and without
device evidence; queue-depth curves with and without a knee."""

import random

import pytest

from sdtune.certify.measure import Interval, StepResult
from sdtune.certify.verdict import (decide_cache, decide_queue_depth,
                                    decide_sector)

SIZES = (512, 1024, 2048, 4096, 8192, 16384)


def step(name, bs, lat_us, noise=0.03, n=12, offset=0, qd=1, flush="none",
         rng=random):
    ivs = [Interval(200, 1e6 / lat_us, lat_us * 1000 * rng.gauss(1, noise))
           for _ in range(n)]
    return StepResult(name, bs, qd=qd, offset=offset, flush=flush,
                      intervals=ivs, ios=200 * n, iops=1e6 / lat_us)


def drive_steps(native, rmw_us=900.0, noise=0.03, seed=1):
    """Per-I/O cost: command + transfer + page programs + RMW of partly
    written pages (the emulated drives' model, in miniature)."""
    rng = random.Random(seed)

    def cost(bs, offset=0):
        first = offset // native
        last = (offset + bs - 1) // native
        pages = last - first + 1
        partial = (offset % native != 0) + ((offset + bs) % native != 0)
        if pages == 1 and partial == 2:
            partial = 1
        rmw = rmw_us * min(partial, pages)
        return 100 + bs / 1024 * 10 + 150 * pages + rmw
    out = [step("size-%d" % bs, bs, cost(bs), noise, rng=rng)
           for bs in SIZES]
    out.append(step("size-4096-misaligned", 4096, cost(4096, 512), noise,
                    offset=512, rng=rng))
    return out


@pytest.mark.parametrize("native", [512, 4096, 8192, 16384])
@pytest.mark.parametrize("noise", [0.02, 0.06])
def test_native_sector_found_with_confidence(native, noise):
    v = decide_sector(drive_steps(native, noise=noise), warmup=1)
    assert v.native == native, v.reason
    assert v.confidence >= 0.95


def test_mbps_rule_would_misclassify_a_512_native_drive():
    """512-byte writes move far fewer MB/s than 4 KiB writes on a
    512-native drive, yet cost LESS per I/O: the verdict is 512."""
    rng = random.Random(3)
    steps = [step("size-%d" % bs, bs, 80 + bs / 1024 * 25, rng=rng)
             for bs in SIZES]
    mbps = {s.bs: s.iops * s.bs for s in steps}
    assert mbps[4096] > 4 * mbps[512]          # the rule of thumb's view
    v = decide_sector(steps)
    assert v.native == 512 and v.confidence >= 0.95


def test_noise_that_hides_the_answer_is_inconclusive():
    rng = random.Random(7)
    steps = [step("size-%d" % bs, bs, 1000, noise=0.5, n=4, rng=rng)
             for bs in SIZES]
    v = decide_sector(steps)
    assert v.native is None
    assert v.reason.startswith("inconclusive")


def test_too_few_sizes():
    v = decide_sector([step("size-4096", 4096, 100)])
    assert v.native is None and "too few" in v.reason


def _cache_steps(write_us, flush_us, seed=2):
    rng = random.Random(seed)
    return (step("write", 4096, write_us, rng=rng),
            step("write-flush", 4096, write_us + flush_us, flush="each",
                 rng=rng))


def test_volatile_cache_never_recommended():
    w, wf = _cache_steps(200, 2000)
    v = decide_cache(w, wf, nv_sup=False, wce=True)
    assert v.cache == "volatile" and not v.recommend_nonvolatile
    assert v.confidence >= 0.95


def test_cheap_flushes_alone_do_not_recommend_without_the_flag():
    w, wf = _cache_steps(200, 2)
    v = decide_cache(w, wf, nv_sup=None, wce=True)
    assert v.cache == "nonvolatile" and not v.recommend_nonvolatile
    assert "--trust-flush-timing" in v.reason
    v = decide_cache(w, wf, nv_sup=None, wce=True, trust_timing=True)
    assert v.recommend_nonvolatile


def test_nv_sup_with_cheap_flushes_is_recommended():
    w, wf = _cache_steps(200, 2)
    v = decide_cache(w, wf, nv_sup=True, wce=True)
    assert v.cache == "nonvolatile" and v.recommend_nonvolatile
    assert "NV_SUP" in v.reason


def test_nv_sup_contradicted_by_costly_flushes_is_not_recommended():
    w, wf = _cache_steps(200, 3000)
    v = decide_cache(w, wf, nv_sup=True, wce=True)
    assert v.cache == "inconclusive" and not v.recommend_nonvolatile


def test_suppressed_flushes_make_timing_meaningless():
    w, wf = _cache_steps(200, 2)
    v = decide_cache(w, wf, nv_sup=None, wce=True, flushes_suppressed=True)
    assert "meaningless" in v.reason and not v.recommend_nonvolatile
    v = decide_cache(w, wf, nv_sup=True, wce=True, flushes_suppressed=True)
    assert v.recommend_nonvolatile


def test_write_cache_disabled():
    w, wf = _cache_steps(200, 2000)
    v = decide_cache(w, wf, nv_sup=False, wce=False)
    assert v.cache == "write-cache-disabled"
    assert not v.recommend_nonvolatile


def _qd_steps(channels, per_io_us=500, seed=4):
    rng = random.Random(seed)
    out = []
    for qd in (1, 2, 4, 8, 16, 32, 64):
        iops = min(qd, channels) * 1e6 / per_io_us
        ivs = [Interval(100, iops * rng.gauss(1, 0.02), 1000)
               for _ in range(10)]
        out.append(StepResult("qd-%d" % qd, 4096, qd=qd, intervals=ivs,
                              ios=1000, iops=iops))
    return out


@pytest.mark.parametrize("channels, tmax, tmin", [(8, 8, None),
                                                  (16, 16, None),
                                                  (4, 4, 2), (1, 2, 2)])
def test_queue_depth_knee(channels, tmax, tmin):
    v = decide_queue_depth(_qd_steps(channels))
    assert v.knee == channels
    assert (v.throttle_max, v.throttle_min) == (tmax, tmin)
    assert v.confidence >= 0.95


def test_no_knee_keeps_the_default_throttle():
    v = decide_queue_depth(_qd_steps(128))
    assert v.throttle_max is None and "keep sd's default" in v.reason
