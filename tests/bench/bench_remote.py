# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: `sdtune --host` against running on the appliance itself.

`disks` and `audit` on the simulated 242-disk JBOD head, locally and
over SSH (a real OpenSSH server on 127.0.0.1, tests/ssh/sshd.py),
interleaved local/remote so that the machine's load hits both alike,
ROUNDS times each.  Prints the median of each and the ratio remote /
local measured in this run.  Target: 1.5x or less; the session makes a
constant number of round trips whatever the number of disks (one
request for all of /dev/rdsk's links, one per command run), so the
ratio must not grow with the shelf.

Run by `make bench`; needs sshd (tests/deps.sh installs it).
"""

import os
import statistics
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests", "ssh"))

from sshd import Sshd  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

ROUNDS = 7
TARGET = 1.5
COMMANDS = (("disks",), ("audit",))


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as d:
        app = Appliance.build("jbod-240", os.path.join(d, "app"))
        with Sshd(os.path.join(d, "sshd")) as sshd:
            config = sshd.sdtune_config(app.config,
                                        os.path.join(d, "remote.conf"))
            print("remote bench: jbod-240 (%d disks), median of %d "
                  "interleaved runs each"
                  % (len(app.expected_disks()), ROUNDS))
            for args in COMMANDS:
                times = {"local": [], "ssh": []}
                outputs = {}
                for _ in range(ROUNDS):
                    for how, extra in (("local", ()),
                                       ("ssh", ("--host", sshd.alias))):
                        t0 = time.perf_counter()
                        proc = app.sdtune(*extra, *args, config=config)
                        times[how].append(time.perf_counter() - t0)
                        outputs[how] = (proc.returncode, proc.stdout)
                local = statistics.median(times["local"])
                remote = statistics.median(times["ssh"])
                ratio = remote / local
                same = outputs["local"] == outputs["ssh"]
                ok = ok and ratio <= TARGET and same
                print("  %-8s local %6.0f ms   ssh %6.0f ms   ratio "
                      "%.2fx%s" % (" ".join(args), local * 1e3,
                                   remote * 1e3, ratio,
                                   "" if same else "  OUTPUT DIFFERS"))
    print("  target %.1fx or less, the same output: %s"
          % (TARGET, "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
