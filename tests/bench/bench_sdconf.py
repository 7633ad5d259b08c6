# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Benchmark: parse + lint + one edit + render of a 10,000-pair sd.conf.

Run by `make bench`.  Prints wall time per phase (best of N runs, so the
noise of a shared 2-core machine counts against us only once) and, as a
reference measured in the same run, the time Python's own `re` needs just
to find every quoted string in the same text: the floor any parser of
this file pays.  Target (issue 2): the whole sequence under 0.5 s.
"""

import gc
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "plugin"))

from sdtune.sdconf.edit import parse_settings, set_tunables  # noqa: E402
from sdtune.sdconf.lint import lint  # noqa: E402
from sdtune.driverconf.parser import parse  # noqa: E402

PAIRS = 10000
RUNS = 5
TARGET_S = 0.5

TUNABLE_SETS = (
    "physical-block-size:4096, cache-nonvolatile:true",
    "throttle-min:2, throttle-max:16, disksort:false",
    "physical-block-size:8192",
    "io-time:180,slow-io-threshold:0",
)


def build_file(pairs: int) -> str:
    lines = ["#\n# sd.conf with %d pairs for the benchmark\n#\n" % pairs]
    lines += ['name="sd" class="scsi" target=%d lun=0;\n' % t
              for t in range(16)]
    lines.append("sd-config-list =\n")
    for i in range(pairs):
        key = "ATA     " + ("BENCH%011d" % i)
        if i % 100 == 0:
            lines.append("\t# model family %d\n" % (i // 100))
        end = ";" if i == pairs - 1 else ","
        lines.append('\t"%s", "%s"%s\n' % (key, TUNABLE_SETS[i % 4], end))
    return "".join(lines)


def best(fn, runs=RUNS):
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> int:
    # Measured the way bin/sdtune runs: cli.main() disables the cyclic
    # collector for its short run.
    gc.disable()
    text = build_file(PAIRS)
    settings = parse_settings(["physical-block-size=16384",
                               "cache-nonvolatile=false"])
    key = "ATA     BENCH%011d" % (PAIRS // 2)
    t_floor, _ = best(lambda: re.findall(r'"[^"\n]*"', text))
    t_parse, conf = best(lambda: parse(text))
    t_lint, diags = best(lambda: lint(conf))
    t_edit, new = best(lambda: set_tunables(text, key, settings))
    t_render, _ = best(lambda: parse(new).render())

    def whole():
        c = parse(text)
        lint(c)
        return parse(set_tunables(c.render(), key, settings, conf=c)).render()
    t_all, out = best(whole)
    problems = [d for d in diags if d.severity != "note"]
    print("sdconf bench: %d pairs, %d bytes, best of %d runs" % (
        PAIRS, len(text), RUNS))
    print("  regex floor (find quoted strings) %8.1f ms" % (t_floor * 1e3))
    print("  parse                             %8.1f ms  (%.1fx floor)" % (
        t_parse * 1e3, t_parse / t_floor))
    print("  lint                              %8.1f ms" % (t_lint * 1e3))
    print("  one edit (parse, splice, verify)  %8.1f ms" % (t_edit * 1e3))
    print("  render (parse new text)           %8.1f ms" % (t_render * 1e3))
    print("  parse+lint+edit+render            %8.1f ms  target %d ms: %s"
          % (t_all * 1e3, TARGET_S * 1e3,
             "PASS" if t_all < TARGET_S else "FAIL"))
    if problems or out.count('"ATA     BENCH') != PAIRS:
        print("  unexpected result: %d problems" % len(problems))
        return 1
    return 0 if t_all < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
