# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: the simulated 240-disk JBOD head answers every command
sdtune runs well under a second, through its DIR/bin wrappers.

Run by `make bench`.  Prints the wall time of each command (best of
several runs, as the machine is shared) and, as a reference measured in
the same run, the time of a Python process that does nothing: every fake
command is one, so that is the floor.  Target: under 1 s each (the
answers themselves are checked by tests/sim/test_jbod.py).
"""

import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import JBOD_COMMANDS  # noqa: E402

LIMIT_S = 1.0
RUNS = 5


def best(fn, runs=RUNS):
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> int:
    floor, _ = best(lambda: subprocess.run([sys.executable, "-c", "pass"],
                                           check=True))
    ok = True
    with tempfile.TemporaryDirectory() as d:
        app = Appliance.build("jbod-240", d)
        print("simulator bench: jbod-240 (%d disks), best of %d runs"
              % (len(app.expected_disks()), RUNS))
        print("  python -c pass (the floor)   %7.0f ms" % (floor * 1e3))
        for cmd, args, stdin, lines in JBOD_COMMANDS:
            t, p = best(lambda: app.run(cmd, *args, stdin=stdin))
            answered = (p.returncode == 0 and p.stderr == b"" and
                        p.stdout.count(b"\n") >= lines)
            fast = t < LIMIT_S
            ok = ok and answered and fast
            what = " ".join([cmd] + args)
            if stdin:       # mdb: the dcmd of each line of its input
                what += " < " + " + ".join(line.split()[0] for line in
                                           stdin.splitlines())
            print("  %-28s %7.0f ms  (%.1fx the floor)%s"
                  % (what, t * 1e3, t / floor,
                     "" if answered else "  WRONG ANSWER"))
    print("  target %.0f ms each: %s" % (LIMIT_S * 1e3,
                                         "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
