# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: certification's verdicts and time to verdict (issue 12).

Part 1, emulated drives: every preset (512n, 512e, 4kn, 8k; volatile and
non-volatile cache) and a 4K drive whose 512-byte write costs only 5 %
more than its 4 KiB write (4k-rmw5), each certified with sdtune's
default settings (all three phases) through the simulated appliance,
idle and with two CPU hogs, the two conditions interleaved drive by
drive.  Printed per drive: the sector and cache verdicts with their
confidence, the seconds each phase measured and the whole command's
wall time.  Goal: every verdict right, confidence >= 0.95, <= 60 s.

Part 2, the smallest penalty found: no machine has drives with every
penalty and every noise level, so the sector decision runs on synthetic
paired rounds (a 4K drive whose sub-page and misaligned writes cost 1+p
times a page write, each arm's slice median scattered by sigma, a drift
moving all arms of a round alike, 5 % of slices stalled) through the same
sequential procedure as certify (default looks, default margin).
Printed per sigma: the smallest p found right with confidence 0.95 in
at least 19 of 20 trials, and the rounds that took.  Also: how often a
512-native drive (p = 0) was called anything but 512 or inconclusive.

Usage: python3 tests/bench/bench_certify.py [--synthetic-only]
"""

import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from emu.drive import EmulatedDrive, cpu_hogs  # noqa: E402
from sdtune.certify.costs import PairedCosts, Shape  # noqa: E402
from sdtune.certify.workload import CertifySettings, build_plan  # noqa: E402
from sdtune.certify.verdict import CONFIDENT, decide_sector  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

DRIVES = [("512n", 512, 512, "volatile"), ("512n", 512, 512, "nonvolatile"),
          ("512e", 512, 4096, "volatile"),
          ("512e", 512, 4096, "nonvolatile"),
          ("4kn", 4096, 4096, "volatile"), ("4kn", 4096, 4096, "nonvolatile"),
          ("8k", 512, 8192, "volatile"), ("8k", 512, 8192, "nonvolatile"),
          ("4k-rmw5", 512, 4096, "volatile"),
          ("4k-rmw5", 512, 4096, "nonvolatile")]
GOAL_S = 60.0
ENV = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
       "SDTUNE_ZONENAME_CMD": "/nonexistent"}


def certify(preset, logical, cache):
    with EmulatedDrive.preset(preset, cache) as d, \
            tempfile.TemporaryDirectory() as tmp:
        path = d.start() if d.path is None else d.path
        app = Appliance.build({
            "name": "bench", "flavour": "nexenta", "sd_conf": "nexenta",
            "pools": [],
            "disks": [{"name": "c5t0d0", "instance": 0,
                       "phys_path": "/pci@0,0/disk@0,0", "ctype": "sata",
                       "ata_model": "EMU BENCH", "serial": "B1",
                       "rev": "1.00", "blocks": (1 << 30) // logical,
                       "logical_block": logical, "rotation_rate": 1,
                       "nv_sup": cache == "nonvolatile",
                       "device_file": path}]}, tmp + "/app")
        t0 = time.monotonic()
        proc = subprocess.run(
            [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
             "--config", app.config, "certify", "c5t0d0", "--confirm",
             "c5t0d0", "-o", "json"], env=ENV, capture_output=True,
            text=True, check=False)
        took = time.monotonic() - t0
        late = d.counters().late
    if proc.returncode != 0:
        return None, took, late, proc.stderr.strip()
    return json.loads(proc.stdout)["results"][0], took, late, ""


def emulated() -> bool:
    ok = True
    print("certify bench: emulated drives, default settings (all phases)")
    print("  %-8s %-11s %-5s %6s %5s %-12s %5s %7s %7s %5s %6s %5s" % (
        "drive", "cache", "load", "native", "conf", "cache", "conf",
        "sector", "cache", "qd", "total", "late"))
    for preset, logical, native, cache in DRIVES:
        for load in ("idle", "hogs"):
            if load == "hogs":
                with cpu_hogs(2):
                    res, took, late, err = certify(preset, logical, cache)
            else:
                res, took, late, err = certify(preset, logical, cache)
            if res is None:
                print("  %-8s %-11s %-5s FAILED: %s" % (
                    preset, cache, load, err))
                ok = False
                continue
            phases = res["evidence"]["phases"]
            right = (res["native_sector_bytes"] == native and
                     res["sector_confidence"] >= CONFIDENT and
                     res["cache"] == cache and
                     res["cache_confidence"] >= CONFIDENT and
                     took <= GOAL_S)
            ok &= right
            print("  %-8s %-11s %-5s %6s %5.2f %-12s %5.2f %6.1fs %6.1fs "
                  "%4.0fs %5.1fs %5d%s" % (
                      preset, cache, load, res["native_sector_bytes"],
                      res["sector_confidence"], res["cache"],
                      res["cache_confidence"],
                      phases["sector"]["seconds"],
                      phases["cache"]["seconds"], phases["qd"]["seconds"],
                      took, late, "" if right else "  MISSED GOAL"))
    return ok


def synthetic_rounds(penalty, sigma, seed, n):
    """Rounds of a 4K drive whose sub-page and misaligned writes cost
    (1 + penalty) times a page write; p = 0 is a drive without any."""
    rng = random.Random(seed)
    shapes = [Shape(a.name, a.bs, a.offset, a.pattern)
              for a in build_plan(512, ("sector",)).sector]

    def cost(s):
        base = 100.0 + s.bs / 1024 * 10 * (s.bs > 4096)
        sub = s.bs < 4096 or s.offset % 4096
        return base * (1 + penalty if sub else 1)
    level, rounds = 0.0, []
    for _ in range(n):
        level = max(-1.1, min(1.1, level + rng.gauss(0, 0.5)))
        rnd = {}
        for s in shapes:
            v = cost(s) * math.exp(level + rng.gauss(0, sigma))
            if rng.random() < 0.05:
                v *= rng.uniform(1.5, 4.0)
            rnd[s.name] = v
        rounds.append(rnd)
    return shapes, rounds


def sequential(penalty, sigma, seed):
    """(verdict, rounds used) through certify's looks."""
    looks = CertifySettings().looks()
    shapes, rounds = synthetic_rounds(penalty, sigma, seed, looks[-1])
    for n in looks:
        v = decide_sector(PairedCosts(shapes, rounds[:n], len(looks)))
        if v.confidence >= CONFIDENT:
            break
    return v, n


def synthetic() -> bool:
    print("\nsmallest penalty found (synthetic rounds, default looks %s, "
          "margin 2.5 %%)" % CertifySettings().looks())
    print("  %-7s %-10s %-14s %s" % ("sigma", "penalty", "median rounds",
                                     "512n called wrong"))
    ok = True
    for sigma in (0.005, 0.01, 0.02, 0.04, 0.08):
        found = None
        for pct in range(3, 41):
            runs = [sequential(pct / 100, sigma, seed) for seed in range(20)]
            good = [n for v, n in runs if v.native == 4096]
            if len(good) >= 19:
                found = (pct, sorted(good)[len(good) // 2])
                break
        wrong = sum(sequential(0.0, sigma, seed)[0].native not in
                    (None, 512) for seed in range(100))
        ok &= wrong == 0
        print("  %-7s %-10s %-14s %d of 100" % (
            "%.1f %%" % (sigma * 100),
            "%d %%" % found[0] if found else "> 40 %",
            found[1] if found else "-", wrong))
    return ok


def main() -> int:
    ok = synthetic()
    if "--synthetic-only" not in sys.argv[1:]:
        ok &= emulated()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
