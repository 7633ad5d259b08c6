# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: `sdtune disks` and `sdtune audit` on the simulated 240-disk
JBOD head.

Prints the wall time of the whole command through the launcher (best of
several runs, as the machine is shared), the commands it ran, and, as a
reference measured in the same run, the time of the fake commands alone
(the part a real appliance would replace with its own tools).
Targets (issues 3 and 6): under 2 s each.
"""

import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "plugin"))

from tests.sim.appliance import Appliance  # noqa: E402

TARGET_S = 2.0
RUNS = 5


def timed(argv, env=None):
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                          check=False)
    return time.perf_counter() - t0, proc


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        app = Appliance.build(os.path.join(REPO, "tests", "sim", "scenarios",
                                           "jbod-240.json"), d)
        env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
               "SDTUNE_ZONENAME_CMD": "/nonexistent"}
        cmd = [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
               "--config", app.config, "disks", "-H"]
        fakes = [[os.path.join(app.bin, "mdb"), "-k"],
                 [os.path.join(app.bin, "iostat"), "-En"],
                 [os.path.join(app.bin, "diskinfo"), "-cHp"],
                 [os.path.join(app.bin, "zpool"), "status"],
                 [os.path.join(app.bin, "zdb"), "-C"]]
        audit = cmd[:-2] + ["audit", "-o", "json"]
        best = best_fakes = best_audit = float("inf")
        rows = 0
        for _ in range(RUNS):
            t, proc = timed(cmd, env)
            if proc.returncode != 0:
                print(proc.stderr)
                return 1
            best = min(best, t)
            rows = len(proc.stdout.splitlines())
            t, proc = timed(audit, env)
            if proc.returncode not in (0, 1):
                print(proc.stderr)
                return 1
            best_audit = min(best_audit, t)
            t_fakes = 0.0
            for argv in fakes:
                stdin = "::sd_state\n" if argv[-1] == "-k" else None
                t0 = time.perf_counter()
                subprocess.run(argv, input=stdin, capture_output=True,
                               text=True, check=False)
                t_fakes += time.perf_counter() - t0
            best_fakes = min(best_fakes, t_fakes)
    print("inventory bench: sdtune disks on %d disks, best of %d runs"
          % (rows, RUNS))
    print("  commands run: mdb -k x2, iostat -En, diskinfo -cHp, zpool "
          "status, zdb -C (constant in the number of disks)")
    print("  simulated commands alone          %7.0f ms" % (best_fakes * 1e3))
    print("  sdtune disks (launcher to output) %7.0f ms  (%.2fx the "
          "commands alone)" % (best * 1e3, best / best_fakes))
    print("  sdtune audit                      %7.0f ms  (%.2fx)"
          % (best_audit * 1e3, best_audit / best_fakes))
    ok = best < TARGET_S and best_audit < TARGET_S
    print("  target %.0f ms each: %s" % (TARGET_S * 1e3,
                                         "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
