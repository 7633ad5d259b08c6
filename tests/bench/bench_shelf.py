# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: a shelf of emulated drives certified at once (issue 16).

One run certifies 1, then 8, then 24 emulated drives (tests/emu/shelf.py:
512n, 4kn and 512e, volatile and non-volatile caches in turn, each kind
its own model) behind one simulated appliance, each shelf with ONE
command, sdtune's default phases (sector, cache, qd):

    sdtune certify T1..Tn --confirm T1..Tn --jobs n -o json

Until sdtune has --jobs (`sdtune certify --help` does not mention it),
each shelf is certified by n such commands, one per drive, started at
once; the bench says so.  Printed per shelf: the wall time, its ratio
to the single drive, how many verdicts were right (native sector and
cache, each with confidence >= 0.95), the machine's idle CPU during the
run (mean and lowest one-second sample, every process on the machine
counted) and the CPU the run itself used (sdtune, the engine and the
drives) as a share of all CPUs, and the longest any drive's gain phase
took (its record's gains.seconds, issue 29); then every wrong verdict.

The drives are slow enough that the machine is not the bottleneck
(shelf.SCALE, shelf.CHANNELS; the modelled peak, printed, is what all
the drives would serve together at their deepest queue).  Goal (issue
16): 24 drives in at most 2x the wall time of one, every verdict right;
(issue 29) no drive's gains measured in more than 2x what one drive's
took alone.

Usage: python3 tests/bench/bench_shelf.py [N ...]   (default: 1 8 24)
"""

import json
import os
import resource
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from emu.shelf import Shelf, Unit, standard_mix  # noqa: E402
from sdtune.certify.verdict import CONFIDENT  # noqa: E402

SIZES = (1, 8, 24)
GOAL_RATIO = 2.0
SAMPLE_S = 1.0


def cpu_times() -> Tuple[int, int]:
    """(all, idle + iowait) jiffies of the machine, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    return sum(vals), vals[3] + vals[4]


class IdleWatch:
    """The machine's idle share over a run and its lowest one-second
    sample, read from /proc/stat by a thread (cheap: one read a second)."""

    def __init__(self) -> None:
        self.samples: List[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._first = cpu_times()

    @staticmethod
    def _idle(a: Tuple[int, int], b: Tuple[int, int]) -> float:
        return 100.0 * (b[1] - a[1]) / max(1, b[0] - a[0])

    def _run(self) -> None:
        last = self._first
        while not self._stop.wait(SAMPLE_S):
            now = cpu_times()
            self.samples.append(self._idle(last, now))
            last = now

    def __enter__(self) -> "IdleWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mean = self._idle(self._first, cpu_times())
        self.low = min(self.samples) if self.samples else self.mean


def drive_cpu_s(shelf: Shelf) -> float:
    """CPU seconds the shelf's nbdkit and nbdfuse processes have used."""
    total = 0
    for pid in shelf.pids:
        try:
            with open("/proc/%d/stat" % pid, encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def has_jobs(shelf: Shelf) -> bool:
    """Whether this tree's sdtune certify takes --jobs."""
    assert shelf.app is not None
    return "--jobs" in shelf.app.sdtune("certify", "--help").stdout


def certify(shelf: Shelf, jobs: bool) -> Tuple[Dict[str, Dict],
                                               Dict[str, str]]:
    """Certify every unit at once: one command with --jobs, or one
    command per unit started together.  Returns the results by target
    and the errors by target (or by command, "all")."""
    assert shelf.app is not None
    app = shelf.app
    names = shelf.names
    if jobs:
        argvs = [["certify", *names, "--confirm", *names, "--jobs",
                  str(len(names)), "-o", "json"]]
    else:
        argvs = [["certify", n, "--confirm", n, "-o", "json"]
                 for n in names]
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    launcher = os.path.join(REPO, "bin", "sdtune")
    procs = [subprocess.Popen(
        [launcher, "-R", app.root, "--config", app.config, *argv],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for argv in argvs]
    results: Dict[str, Dict] = {}
    errors: Dict[str, str] = {}
    for argv, proc in zip(argvs, procs):
        out, err = proc.communicate()
        try:
            for res in json.loads(out)["results"]:
                results[res["target"]] = res
        except (ValueError, KeyError, TypeError):
            pass
        if proc.returncode != 0:
            errors[argv[1] if not jobs else "all"] = \
                "exit %d: %s" % (proc.returncode, err.strip())
    return results, errors


def judge(unit: Unit, res: Optional[Dict]) -> str:
    """'' when the verdicts are right, else what was found."""
    if res is None:
        return "no result"
    right = (res["native_sector_bytes"] == unit.native and
             (res["sector_confidence"] or 0) >= CONFIDENT and
             res["cache"] == unit.cache and
             (res["cache_confidence"] or 0) >= CONFIDENT)
    if right:
        return ""
    return "sector %s (%.2f), cache %s (%.2f)" % (
        res["native_sector_bytes"], res["sector_confidence"] or 0,
        res["cache"], res["cache_confidence"] or 0)


def modelled_peak(shelf: Shelf) -> float:
    """I/O per second all the drives would serve together at their
    deepest queue: 4 KiB random writes or reads, whichever is faster."""
    total = 0.0
    for unit in shelf.units:
        m = unit.drive.model()
        fastest_ns = min(m.write_ns(4096), m.read_ns_for(4096))
        total += m.channels * 1e9 / fastest_ns
    return total


def run(n: int, jobs: Optional[bool]) -> Tuple[bool, Dict]:
    with Shelf(standard_mix(n)) as shelf:
        if jobs is None:
            jobs = has_jobs(shelf)
        peak = modelled_peak(shelf)
        cpu0 = children_cpu_s() + drive_cpu_s(shelf)
        with IdleWatch() as idle:
            t0 = time.monotonic()
            results, errors = certify(shelf, jobs)
            took = time.monotonic() - t0
        used = children_cpu_s() + drive_cpu_s(shelf) - cpu0
        wrong = {}
        for unit in shelf.units:
            found = judge(unit, results.get(unit.name))
            if found:
                c = unit.drive.counters()
                wrong[unit.name] = "%s %s: %s; %d of %d requests late" % (
                    unit.preset, unit.cache, found, c.late,
                    c.writes + c.reads + c.flushes)
        beside = [r.get("evidence", {}).get("crowd", {}).get(
            "drives_beside") for r in results.values()]
        gains = [(r.get("gains") or {}).get("seconds") or 0.0
                 for r in results.values()]
    if shelf.left:
        errors["shelf"] = "left behind: %s" % ", ".join(shelf.left)
    return jobs, {"n": n, "took": took, "wrong": wrong, "errors": errors,
                  "idle": idle, "peak": peak, "beside": beside,
                  "gains": max(gains) if gains else 0.0,
                  "used": 100.0 * used / took / (os.cpu_count() or 1)}


def main(argv: List[str]) -> int:
    try:
        sizes = [int(a) for a in argv] or list(SIZES)
    except ValueError:
        sys.stderr.write(__doc__.rsplit("Usage: ", 1)[1])
        return 2
    print("shelf bench: n emulated drives certified at once, one command "
          "each (default phases)")
    jobs: Optional[bool] = None
    rows = []
    for n in sizes:
        jobs, row = run(n, jobs)
        if not rows:
            print("  " + ("sdtune certify T1..Tn --jobs n" if jobs else
                          "no --jobs in `sdtune certify --help`: n "
                          "separate `sdtune certify T` processes at once "
                          "instead"))
            print("  %6s %8s %6s %7s %14s %6s %12s %7s %7s" % (
                "drives", "wall", "ratio", "right", "idle mean/low",
                "used", "peak IOPS", "beside", "gains"))
        rows.append(row)
        beside = [b for b in row["beside"] if b is not None]
        print("  %6d %7.1fs %6.2f %7s %7.0f%%/%3.0f%% %5.0f%% %12.0f %7s "
              "%6.1fs" % (
                  n, row["took"], row["took"] / rows[0]["took"],
                  "%d/%d" % (n - len(row["wrong"]), n), row["idle"].mean,
                  row["idle"].low, row["used"], row["peak"],
                  max(beside) if beside else "-", row["gains"]))
        sys.stdout.flush()
    ok = True
    for row in rows:
        for name, what in sorted(row["wrong"].items()):
            print("  WRONG (%d drives) %s: %s" % (row["n"], name, what))
            ok = False
        for name, what in sorted(row["errors"].items()):
            print("  FAILED (%d drives) %s: %s" % (row["n"], name, what))
            ok = False
    last = rows[-1]
    if len(rows) > 1 and last["took"] > GOAL_RATIO * rows[0]["took"]:
        print("  MISSED GOAL: %d drives took %.2fx one drive (goal <= "
              "%.1fx)" % (last["n"], last["took"] / rows[0]["took"],
                          GOAL_RATIO))
        ok = False
    if len(rows) > 1 and last["gains"] > GOAL_RATIO * rows[0]["gains"]:
        print("  MISSED GOAL: with %d drives a gain phase took %.2fx one "
              "drive's (goal <= %.1fx)" % (
                  last["n"], last["gains"] / max(rows[0]["gains"], 1e-9),
                  GOAL_RATIO))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
