# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify/gains.py: what a recommended tunable buys, from paired rounds
and alternating runs; records/gains.py: the record's gains object and
its check; and where plan, certify and results show it."""

import math
import random

import pytest

from sdtune.certify.charts import gain_chart
from sdtune.certify.costs import PairedCosts, Shape
from sdtune.certify.gains import (SD_DEFAULT_THROTTLE, ZFS_MIX, alternate,
                                  ashift_arms, ashift_gain, roundup,
                                  space_ratio, sync_write_gain,
                                  throttle_gain)
from sdtune.certify.reports import Interval, StepResult
from sdtune.certify.stats import log_interval
from sdtune.records.gains import (GAIN, NO_GAIN, NOT_MEASURED, Gains,
                                  Metric, TunableGain, gain_lines,
                                  gains_problem, headline)
from sdtune.records.record import CertRecord, record_problem
from tests import builders


def paired(names, costs, n=40, sigma=0.02, seed=1):
    """Rounds of arms whose per-I/O cost is costs[name] (ns), each
    round's values scattered by sigma and moved together by a drift."""
    rng = random.Random(seed)
    rounds, means = [], []
    for _ in range(n):
        drift = math.exp(rng.gauss(0, 0.3))
        rounds.append({a: costs[a] * drift * math.exp(rng.gauss(0, sigma))
                       for a in names})
        means.append({a: costs[a] * 1.1 * drift *
                      math.exp(rng.gauss(0, sigma)) for a in names})
    return PairedCosts([Shape(a, 4096) for a in names], rounds, 1,
                       means=means)


# -- the workloads ----------------------------------------------------------

def test_the_ashift_arms_replay_one_mix_at_two_allocation_units():
    arms = ashift_arms(512, 4096)
    assert [a.name for a in arms] == ["ashift-9", "ashift-12"]
    assert [a.align for a in arms] == [512, 4096]
    assert all(a.mix == ZFS_MIX and a.bs == 131072 for a in arms)
    assert arms[1].spec().endswith(
        ",mix=" + ":".join(str(m) for m in ZFS_MIX) + ",align=4096")
    # Sizes of 4 KiB to 128 KiB, odd compressed ones, small log writes.
    assert min(ZFS_MIX) < 4096 and max(ZFS_MIX) == 131072
    assert any(m % 4096 for m in ZFS_MIX)


def test_the_space_the_rounding_costs():
    def expect(native):
        return sum(roundup(m, native) for m in ZFS_MIX) / \
            sum(roundup(m, 512) for m in ZFS_MIX)
    assert space_ratio(512, 4096) == pytest.approx(expect(4096))
    assert 1.0 < space_ratio(512, 4096) < space_ratio(512, 16384)
    assert space_ratio(4096, 4096) == 1.0


# -- physical-block-size ----------------------------------------------------

def test_a_read_modify_write_drive_shows_its_gain():
    costs = paired(["ashift-9", "ashift-12"],
                   {"ashift-9": 1.5e6, "ashift-12": 1.0e6})
    g = ashift_gain(costs, 512, 4096, 4096)
    assert g.status == GAIN and g.why is None
    iops = g.metric("iops")
    assert iops.ratio == pytest.approx(1.5, rel=0.03)
    assert iops.ci95[0] > 1.0 and iops.ci95[0] < iops.ratio < iops.ci95[1]
    assert iops.confidence > 0.99
    assert iops.tuned > iops.baseline and iops.better == "higher"
    # The same data in both arms: throughput gains what IOPS gains.
    assert g.metric("throughput").ratio == iops.ratio
    lat = g.metric("latency_p50_ns")
    assert lat.better == "lower" and lat.baseline > lat.tuned
    assert g.space_ratio == pytest.approx(space_ratio(512, 4096), abs=1e-4)
    assert g.rounds == 40
    assert headline(g).startswith(
        "gain: ZFS's writes at ashift 12 against ashift 9: 1.")


def test_no_difference_is_no_measurable_gain_and_says_why():
    costs = paired(["ashift-9", "ashift-12"],
                   {"ashift-9": 1.0e6, "ashift-12": 1.0e6})
    g = ashift_gain(costs, 512, 4096, 4096)
    assert g.status == NO_GAIN
    iops = g.metric("iops")
    # Kept, not hidden: the interval straddles 1.0.
    assert iops.ci95[0] <= 1.0 <= iops.ci95[1]
    assert "4096 bytes" in g.why and "alignment" in g.why
    assert headline(g).startswith("no measurable gain on this drive: ")


def test_too_few_rounds_measure_nothing():
    costs = paired(["ashift-9", "ashift-12"],
                   {"ashift-9": 1.0e6, "ashift-12": 1.0e6}, n=1)
    g = ashift_gain(costs, 512, 4096, 4096)
    assert g.status == NOT_MEASURED and g.metrics == ()


# -- cache-nonvolatile and throttle-max ------------------------------------

def step(name, qd, iops, p50=None, p99=None, p999=None):
    res = StepResult(name=name, bs=4096, qd=qd, offset=0, flush="none",
                     pattern="rand", iops=iops, lat_p50_ns=p50,
                     lat_p99_ns=p99, lat_p99_9_ns=p999)
    res.intervals = [Interval(100, iops * k, 1e9 / iops)
                     for k in (0.5, 1.0, 1.01, 0.99, 1.0)]
    return res


def test_alternating_runs_go_abba():
    ran = []

    def run(s):
        ran.append(s.name)
        return step(s.name, s.qd, 1000.0)
    from sdtune.certify.workload import Step
    a, b = Step("gain", "a", 4096), Step("gain", "b", 4096)
    pairs = alternate(run, a, b, 4)
    assert ran == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [(x.name, y.name) for x, y in pairs] == [("a", "b")] * 4


def test_sync_writes_at_qd1_and_at_the_throttle():
    cache = paired(["write", "write-flush"],
                   {"write": 1.0e6, "write-flush": 1.3e6})
    rng = random.Random(3)

    def run(s):
        base = 2000.0 if s.flush == "each" else 6000.0
        return step(s.name, s.qd, base * math.exp(rng.gauss(0, 0.02)))
    g = sync_write_gain(cache, run, 32, 3, 1, 4096)
    assert g.status == GAIN and g.value is True
    names = [m.name for m in g.metrics]
    assert names == ["sync_write_iops_qd1", "sync_write_latency_p50_ns_qd1",
                     "sync_write_iops_qd32"]
    assert g.metric("sync_write_iops_qd1").ratio == \
        pytest.approx(1.3, rel=0.03)
    assert g.metric("sync_write_iops_qd32").ratio == \
        pytest.approx(3.0, rel=0.05)


def test_suppressed_flushes_leave_nothing_to_measure():
    g = sync_write_gain(None, None, None, 3, 1, 4096)
    assert g.status == NOT_MEASURED and "suppresses" in g.why


def test_the_throttle_against_sds_default_depth():
    rng = random.Random(5)

    def run(s):
        # The same rate; latency grows with the depth (Little's law).
        lat = s.qd / 8000.0 * 1e9 * math.exp(rng.gauss(0, 0.03))
        return step(s.name, s.qd, 8000.0 * math.exp(rng.gauss(0, 0.01)),
                    p50=lat, p99=lat * 1.5, p999=lat * 2)
    g = throttle_gain(run, 32, 3, 1, 4096)
    assert g.status == GAIN
    assert [m.name for m in g.metrics] == [
        "latency_p99_ns", "latency_p99_9_ns", "latency_p50_ns", "iops"]
    p99 = g.metric("latency_p99_ns")
    assert p99.ratio == pytest.approx(SD_DEFAULT_THROTTLE / 32, rel=0.1)
    assert not g.metric("iops").significant
    assert "8." in headline(g) and "lower latency p99" in headline(g)


def test_a_throttle_as_deep_as_sds_is_not_measured():
    g = throttle_gain(lambda s: pytest.fail("ran"), 256, 3, 1, 4096)
    assert g.status == NOT_MEASURED


# -- the interval -----------------------------------------------------------

def test_the_95_interval_covers_the_true_ratio_19_times_in_20():
    # 1000 trials: the share has a standard error of 0.7 %, so the
    # bounds are more than 3 of them from 95 %.
    rng = random.Random(7)
    covered = 0
    for _ in range(1000):
        logs = [math.log(1.3) + rng.gauss(0, 0.05) for _ in range(30)]
        _, lo, hi, _ = log_interval(logs)
        covered += lo <= math.log(1.3) <= hi
    assert 0.925 <= covered / 1000 <= 0.975


# -- the record -------------------------------------------------------------

def gains():
    m = Metric("iops", "IO/s", "higher", 1000.0, 1500.0, 1.5, (1.4, 1.6),
               0.999)
    return Gains((TunableGain("physical-block-size", 4096, GAIN,
                              "ZFS's writes: 1.50x iops (95% 1.40-1.60)",
                              rounds=30, space_ratio=1.06, metrics=(m,)),
                  TunableGain("disksort", False, NOT_MEASURED, "",
                              why="nothing to measure")), 9.5)


def test_a_record_keeps_its_gains_through_json():
    rec = builders.cert_record(recommended={"physical-block-size": 4096,
                                            "disksort": False})
    rec.gains = gains()
    doc = rec.to_json()
    assert doc["gains"]["version"] == 1 and doc["gains"]["seconds"] == 9.5
    assert record_problem(doc) is None
    back = CertRecord.from_json(doc)
    assert back.gains == rec.gains
    assert "gains" not in builders.cert_record().to_json()


@pytest.mark.parametrize("mutate,says", [
    (lambda g: g.update(version=2), "field 'gains.version' must be 1"),
    (lambda g: g.update(tunables={}), "field 'gains.tunables' must be"),
    (lambda g: g["tunables"][0].update(status="great"),
     "field 'gains.tunables[0].status' must be one of"),
    (lambda g: g["tunables"][0]["metrics"][0].update(ci95=[1.6, 1.4]),
     "gains.tunables[0].metrics[0].ci95' must be two positive numbers"),
    (lambda g: g["tunables"][0]["metrics"][0].update(ratio=float("nan")),
     "gains.tunables[0].metrics[0].ratio' must be a positive number"),
    (lambda g: g["tunables"][0]["metrics"][0].pop("confidence"),
     "gains.tunables[0].metrics[0].confidence' is missing"),
    (lambda g: g["tunables"][1].pop("tunable"),
     "field 'gains.tunables[1].tunable' is missing"),
    (lambda g: g.update(seconds=-1), "field 'gains.seconds' must be"),
    (lambda g: g["tunables"][0].update(summary="fast\x1b[2J"),
     "field 'gains.tunables[0].summary' holds a control character"),
    (lambda g: g["tunables"][0]["metrics"][0].update(unit="\x9b"),
     "field 'gains.tunables[0].metrics[0].unit' holds a control character"),
])
def test_a_damaged_gains_object_is_named(mutate, says):
    doc = gains().to_json()
    mutate(doc)
    if "control" not in says:
        assert says in gains_problem(doc)
    rec = builders.cert_record().to_json()
    rec["gains"] = doc
    assert says in record_problem(rec)


# -- where it is shown ------------------------------------------------------

def test_certify_results_and_plan_lines():
    rec = builders.cert_record(recommended={"physical-block-size": 4096,
                                            "disksort": False})
    rec.gains = gains()
    g = rec.gains.tunables[0]
    assert gain_lines(g) == [
        "gain: ZFS's writes: 1.50x iops (95% 1.40-1.60); space 1.06x",
        "iops 1000 -> 1500 IO/s: 1.50x (95% 1.40-1.60, confidence 1.00)"]
    assert gain_chart(rec, verdict=True) == [
        "  expected gain (measured in 9.5 s):",
        "    physical-block-size:4096  gain: ZFS's writes: 1.50x iops "
        "(95% 1.40-1.60); space 1.06x",
        "    disksort:false            not measured",
        "                              nothing to measure"]
    chart = gain_chart(rec)
    assert chart[0] == "expected gain per tunable (times better, log " \
        "scale, 95 % interval) (measured in 9.5 s):"
    assert chart[1].startswith("  physical-block-size:4096 " + "#" * 30)
    assert chart[1].endswith("1.50x iops [1.40-1.60], space 1.06x")
    assert chart[2] == "  disksort:false: not measured: nothing to measure"
    assert gain_chart(builders.cert_record()) == []


def test_the_gain_bars_are_on_a_log_scale():
    def tg(name, ratio):
        m = Metric("iops", "IO/s", "higher", 1.0, ratio, ratio,
                   (ratio * 0.9, ratio * 1.1), 0.99)
        return TunableGain(name, 1, GAIN, "x", metrics=(m,))
    rec = builders.cert_record()
    rec.gains = Gains((tg("a", 2.0), tg("b", 16.0)))
    chart = gain_chart(rec)
    # log2: 1 against 4, so a quarter of the bar.
    assert chart[1].startswith("  a:1 " + "#" * 8 + " ")
    assert chart[2].startswith("  b:1 " + "#" * 30 + " 16.00x iops")
