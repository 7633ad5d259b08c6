# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Issue 29's acceptance for `sdtune prove` on the simulated appliance
with emulated drives: "not in effect" before apply, "pending reboot"
after it, "proven" after reboot, with the flush through sd timed on the
emulated drive's real I/O path (the simulated sd's shim calls fdatasync()
on the node when sd would send SYNCHRONIZE CACHE: tests/sim/dkioshim.c),
and "contradicted" for the disk whose kernel paths ignore sd.conf.  The
drive's own flush counter shows the flushes reached it, or did not:
the proof is the drive's, not the simulator saying so.

The certified flush cost is a stored record carrying what `make demo`'s
certify measured on this preset (512e, non-volatile cache: a 4 KiB
write 830 us, write + flush 1002 us): certifying here would cost a
minute.  The pool member and the free disk share one emulated drive (a
flush writes nothing), so that three drives, not four, are started."""

import os
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.e2e.proving import (FREE_DISK, HOME_DISK, IGNORING_DISK, KEY,  # noqa: E402,E501
                               PAIR, POOL_DISK, check, proofs, scenario)
from tests.sim.appliance import Appliance  # noqa: E402

pytestmark = pytest.mark.emu

CERTIFIED = {"write_lat_ns": 830_000.0, "write_flush_lat_ns": 1_002_000.0}
FLUSHES = 64


def prove(app, timings):
    t0 = time.monotonic()
    proc = app.sdtune("prove", "--flushes", str(FLUSHES), "-o", "json")
    timings.append(time.monotonic() - t0)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, proofs(proc)


def flushes_seen(drives):
    return {k: d.counters().flushes for k, d in drives.items()}


def test_prove_before_and_after_apply(emulated_drive, tmp_path):
    drives = {"dc4k": emulated_drive("512e", "nonvolatile"),
              "ignoring": emulated_drive("512e", "nonvolatile"),
              "home": emulated_drive("512e", "volatile")}
    devices = {POOL_DISK: drives["dc4k"].path,
               FREE_DISK: drives["dc4k"].path,
               IGNORING_DISK: drives["ignoring"].path,
               HOME_DISK: drives["home"].path}
    blocks = drives["dc4k"].model().size // 512
    app = Appliance.build(scenario(devices, blocks), str(tmp_path / "app"))
    inject_record(app, KEY, dict(PAIR, disksort=False),
                  evidence={"device": {"nv_sup": True}, "cache": CERTIFIED})
    timings = []

    # Before apply: every flush reaches its drive (sd sends each one).
    seen = flushes_seen(drives)
    rc, got = prove(app, timings)
    assert rc == 0
    assert {n: p["state"] for n, p in got.items()} == dict.fromkeys(
        devices, "not in effect")
    after = flushes_seen(drives)
    assert after["dc4k"] - seen["dc4k"] == 2 * FLUSHES
    assert after["ignoring"] - seen["ignoring"] == FLUSHES
    assert after["home"] - seen["home"] == FLUSHES
    before_ns = check(got[FREE_DISK], "cache-nonvolatile")["flush_median_ns"]
    home_ns = check(got[HOME_DISK], "cache-nonvolatile")["flush_median_ns"]
    # A volatile cache charges milliseconds for a flush.
    assert home_ns > 1_000_000, home_ns

    plan = str(tmp_path / "plan.json")
    assert app.sdtune("plan", "--save", plan).returncode == 0
    assert app.sdtune("apply", plan, "--yes").returncode == 0
    rc, got = prove(app, timings)
    assert rc == 0
    assert got[POOL_DISK]["state"] == "pending reboot"
    assert got[FREE_DISK]["state"] == "pending reboot"

    app.reboot()
    seen = flushes_seen(drives)
    rc, got = prove(app, timings)
    after = flushes_seen(drives)
    assert rc == 1                                  # one contradicted
    states = {n: p["state"] for n, p in got.items()}
    assert states == {POOL_DISK: "proven", FREE_DISK: "proven",
                      IGNORING_DISK: "contradicted",
                      HOME_DISK: "not in effect"}, got
    # sd answers the proven disks' flushes: their drive saw none; the
    # drive behind the contradicting kernel saw every one.
    assert after["dc4k"] == seen["dc4k"]
    assert after["ignoring"] - seen["ignoring"] == FLUSHES
    for name in (POOL_DISK, FREE_DISK):
        flush = check(got[name], "cache-nonvolatile")
        assert flush["certified_flush_ns"] == 172_000
        assert flush["flush_median_ns"] < flush["ceiling_ns"] == 43_000
        assert check(got[name], "physical-block-size")["measured"] == 4096
    bad = got[IGNORING_DISK]
    assert check(bad, "cache-nonvolatile")["agrees"] is False
    assert check(bad, "physical-block-size")["measured"] == 512
    after_ns = check(got[FREE_DISK], "cache-nonvolatile")["flush_median_ns"]
    print("\nprove: %s s per run of 4 disks; flush median before %.1f us, "
          "after %.2f us, contradicted %.1f us, volatile %.0f us; "
          "certified %.0f us" % (
              ", ".join("%.2f" % t for t in timings), before_ns / 1000,
              after_ns / 1000,
              check(bad, "cache-nonvolatile")["flush_median_ns"] / 1000,
              home_ns / 1000, 172.0))
