# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune certify` measures what each tunable it recommends buys
(issue 29), on emulated drives behind the simulated appliance: a 512e
drive with a non-volatile cache gains from physical-block-size about
what its timing model implies, and from cache-nonvolatile; a 512-native
drive with a volatile cache is recommended neither, and no gain is
claimed for either.  The wide check (every preset, idle and under CPU
hogs, and a 24-drive shelf) is tests/bench/bench_gains.py.

All I/O is real: the engine's mix arms write the sizes ZFS issues into
the emulated drives, whose models time them."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.bench.bench_gains import model_ratio  # noqa: E402
from tests.emu.test_certify import appliance, disk  # noqa: E402

pytestmark = pytest.mark.emu

# How far the measured ratio may be from the model's: the FUSE path adds
# a per-write cost the model does not have (tests/bench/bench_gains.py).
TOLERANCE = 0.25


def gains_of(res):
    return {g["tunable"]: g for g in res["gains"]["tunables"]}


def metric(gain, name):
    return next(m for m in gain["metrics"] if m["name"] == name)


def test_gains_follow_the_drive(tmp_path, emulated_drive):
    rmw = emulated_drive("512e", "nonvolatile")
    plain = emulated_drive("512n", "volatile")
    app = appliance(tmp_path, [disk("c5t0d0", 0, rmw.path, 512, True, "G1"),
                               disk("c5t1d0", 1, plain.path, 512, False,
                                    "G2")],
                    phases="sector,cache,gain")
    with open(app.config, "a") as f:
        f.write("gain_paired_s = 3\n")
    proc = app.sdtune("certify", "c5t0d0", "c5t1d0", "--confirm", "c5t0d0",
                      "c5t1d0", "--jobs", "1", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    res = {r["target"]: r for r in json.loads(proc.stdout)["results"]}

    first = res["c5t0d0"]
    gains = gains_of(first)
    assert list(gains) == list(first["recommended"])
    pbs = gains["physical-block-size"]
    iops = metric(pbs, "iops")
    expect = model_ratio(rmw.model(), 512, 4096)
    assert pbs["status"] == "gain" and iops["ci95"][0] > 1.0, pbs
    assert abs(iops["ratio"] / expect - 1) <= TOLERANCE, (iops, expect)
    assert pbs["space_ratio"] > 1.0
    nv = gains["cache-nonvolatile"]
    assert nv["status"] in ("gain", "no measurable gain")
    assert metric(nv, "sync_write_iops_qd1")["ratio"] > 0
    if nv["status"] != "gain":
        assert "non-volatile" in nv["why"]
    assert gains["disksort"]["status"] == "not measured"
    assert 0 < first["gains"]["seconds"] <= 15

    second = res["c5t1d0"]
    assert "physical-block-size" not in second["recommended"]
    assert "cache-nonvolatile" not in second["recommended"]
    assert set(gains_of(second)) == set(second["recommended"])

    # Shown where the operator looks: results in full, and plan.
    shown = app.sdtune("results", "c5t0d0")
    assert "expected gain per tunable" in shown.stdout
    plan = app.sdtune("plan")
    assert "expected: gain: ZFS's writes at ashift 12 against ashift 9" \
        in plan.stdout
