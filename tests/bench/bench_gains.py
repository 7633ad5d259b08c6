# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: the gains certify measures (issue 29), against what the
emulated drives' timing models imply.

Part 1, one drive at a time: every preset with both caches, certified
with sdtune's default settings (every phase) through the simulated
appliance, idle and with two CPU hogs, the two interleaved drive by
drive.  Per drive, printed and checked:

* physical-block-size: its gain is claimed (the IOPS interval lies above
  1.0) exactly when the drive has a read-modify-write cost (a native page
  larger than the logical block), and its ratio is within +-25 % of the
  ratio the drive's own model gives for the same writes (sdemu.c's
  service times, DriveParams.write_ns, replayed over ZFS_MIX packed at
  each allocation unit; the FUSE path's per-I/O cost is not in the
  model, which is what the 25 % allow for);
* a 512-native drive gets no physical-block-size and no gain claimed;
* a volatile-cache drive gets no cache-nonvolatile and no gain for it;
* measuring the gains costs <= 15 s (the record's gains.seconds).

A shelf's gains (24 drives at once, each drive's gain phase at most
twice one drive's alone) are measured by tests/bench/bench_shelf.py,
whose drives are slow enough that the machine is not the bottleneck
(issue 16): 24 drives of this bench's speed on two CPUs would measure
the machine.

Usage: python3 tests/bench/bench_gains.py [--quick]
"""

import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from emu.drive import EmulatedDrive, cpu_hogs  # noqa: E402
from sdtune.certify.gains import ZFS_MIX, roundup  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

DRIVES = [("512n", 512, 512, "volatile"), ("512n", 512, 512, "nonvolatile"),
          ("512e", 512, 4096, "volatile"),
          ("512e", 512, 4096, "nonvolatile"),
          ("4kn", 4096, 4096, "nonvolatile"),
          ("8k", 512, 8192, "nonvolatile"), ("16k", 512, 16384, "volatile"),
          ("4k-rmw5", 512, 4096, "nonvolatile")]
QUICK = [("512e", 512, 4096, "nonvolatile")]
TOLERANCE = 0.25
GAIN_BUDGET_S = 15.0
ENV = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
       "SDTUNE_ZONENAME_CMD": "/nonexistent"}


def model_ratio(model, logical: int, native: int, writes: int = 4096
                ) -> float:
    """Mean modelled write time of ZFS_MIX packed at the logical block
    over the same at the native page: the IOPS gain the model implies."""
    def mean_ns(unit):
        off = total = 0
        for k in range(writes):
            size = roundup(ZFS_MIX[k % len(ZFS_MIX)], unit)
            total += model.write_ns(size, off)
            off += size
        return total / writes
    return mean_ns(logical) / mean_ns(native)


def disk(name, instance, path, logical, cache, serial):
    return {"name": name, "instance": instance,
            "phys_path": "/pci@0,0/disk@%d,0" % instance, "ctype": "sata",
            "ata_model": "EMU BENCH", "serial": serial, "rev": "1.00",
            "blocks": (1 << 30) // logical, "logical_block": logical,
            "rotation_rate": 1, "nv_sup": cache == "nonvolatile",
            "device_file": path}


def certify(paths, logical, cache, tmp):
    names = ["c5t%dd0" % i for i in range(len(paths))]
    app = Appliance.build({
        "name": "bench", "flavour": "nexenta", "sd_conf": "nexenta",
        "pools": [], "disks": [disk(n, i, p, logical, cache, "B%d" % i)
                               for i, (n, p) in enumerate(zip(names,
                                                              paths))]},
        tmp + "/app")
    argv = [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
            "--config", app.config, "certify"] + names
    for n in names:
        argv += ["--confirm", n]
    t0 = time.monotonic()
    proc = subprocess.run(argv + ["-o", "json"], env=ENV,
                          capture_output=True, text=True, check=False)
    took = time.monotonic() - t0
    if proc.returncode != 0:
        return None, took, proc.stderr.strip()[-400:]
    return json.loads(proc.stdout)["results"], took, ""


def gains_of(res):
    doc = res.get("gains") or {}
    return {g["tunable"]: g for g in doc.get("tunables", [])}, \
        doc.get("seconds")


def metric(g, name):
    for m in g.get("metrics", []):
        if m["name"] == name:
            return m
    return None


def check_one(preset, logical, native, cache, res, model):
    """(ok, printed line's fields) for one drive's record."""
    gains, seconds = gains_of(res)
    problems = []
    pbs = gains.get("physical-block-size")
    rmw = native > logical
    expect = model_ratio(model, logical, native) if rmw else None
    iops = metric(pbs, "iops") if pbs else None
    claimed = iops is not None and iops["ci95"][0] > 1.0
    if claimed != rmw:
        problems.append("pbs gain claimed=%s, rmw=%s" % (claimed, rmw))
    if rmw and iops is not None and \
            abs(iops["ratio"] / expect - 1) > TOLERANCE:
        problems.append("pbs ratio %.3f vs model %.3f" % (iops["ratio"],
                                                          expect))
    if not rmw and "physical-block-size" in res["recommended"]:
        problems.append("pbs recommended without rmw")
    nv = gains.get("cache-nonvolatile")
    if cache == "volatile" and (nv is not None or
                                "cache-nonvolatile" in res["recommended"]):
        problems.append("volatile drive got cache-nonvolatile")
    if seconds is None or seconds > GAIN_BUDGET_S:
        problems.append("gains took %s s" % seconds)
    sync = metric(nv, "sync_write_iops_qd1") if nv else None
    thr = gains.get("throttle-max")
    p99 = metric(thr, "latency_p99_ns") if thr else None
    return not problems, {
        "pbs": "%.2f [%.2f-%.2f]" % (iops["ratio"], *iops["ci95"])
        if iops else "-",
        "model": "%.2f" % expect if expect else "-",
        "space": "%.2f" % pbs["space_ratio"] if pbs else "-",
        "sync": "%.2f [%.2f-%.2f]" % (sync["ratio"], *sync["ci95"])
        if sync else "-",
        "p99": "%.1f [%.1f-%.1f]" % (p99["ratio"], *p99["ci95"])
        if p99 else "-",
        "seconds": seconds, "problems": "; ".join(problems)}


def one_drive(preset, logical, native, cache):
    with EmulatedDrive.preset(preset, cache) as d, \
            tempfile.TemporaryDirectory() as tmp:
        path = d.start() if d.path is None else d.path
        results, took, err = certify([path], logical, cache, tmp)
        model = d.model()
    if results is None:
        return False, None, err
    ok, fields = check_one(preset, logical, native, cache, results[0],
                           model)
    return ok, fields, ""


def part1(drives):
    print("gains bench: one drive at a time, default settings")
    print("  %-8s %-11s %-5s %-20s %-6s %-6s %-20s %-18s %6s" % (
        "drive", "cache", "load", "pbs iops x [95%]", "model", "space",
        "sync qd1 x [95%]", "p99 qd x [95%]", "secs"))
    ok, secs = True, {}
    for preset, logical, native, cache in drives:
        for load in ("idle", "hogs"):
            if load == "hogs":
                with cpu_hogs(2):
                    good, f, err = one_drive(preset, logical, native, cache)
            else:
                good, f, err = one_drive(preset, logical, native, cache)
            ok &= good
            if f is None:
                print("  %-8s %-11s %-5s FAILED: %s" % (
                    preset, cache, load, err))
                continue
            secs.setdefault(preset, []).append(f["seconds"] or 0.0)
            print("  %-8s %-11s %-5s %-20s %-6s %-6s %-20s %-18s %6s%s" % (
                preset, cache, load, f["pbs"], f["model"], f["space"],
                f["sync"], f["p99"], f["seconds"],
                "  MISSED: " + f["problems"] if f["problems"] else ""))
    return ok, secs


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    ok, _ = part1(QUICK if quick else DRIVES)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
