# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the driver.conf edit fuzzers share (fuzz_sdconf.py,
fuzz_nvmeconf.py): the inputs they generate (random text, a seed file
mutated, token soup) and the command line and worker pool: COUNT inputs
split over --jobs processes, each with its own seed from --seed, and one
summary line of what they counted."""

import argparse
import multiprocessing
import os
import time
from typing import Callable, Tuple

from hypothesis import strategies as st


def inputs(seed_file: str, alphabet, tokens):
    """Random text of `alphabet`, `seed_file` with up to six small
    insertions, deletions or replacements, and runs of `tokens`."""
    @st.composite
    def mutated(draw):
        text = seed_file
        for _ in range(draw(st.integers(1, 6))):
            i = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(["insert", "delete", "replace"]))
            chunk = draw(st.text(alphabet, min_size=1, max_size=4))
            if op == "insert":
                text = text[:i] + chunk + text[i:]
            elif op == "delete":
                text = text[:i] + text[i + len(chunk):]
            else:
                text = text[:i] + chunk + text[i + len(chunk):]
        return text

    return st.one_of(st.text(alphabet, max_size=300), mutated(),
                     st.lists(tokens, max_size=40).map("".join))


def main(label: str, worker: Callable[[Tuple[int, int]], dict]) -> int:
    """Run `worker((count, seed))` (a module-level function, so that the
    pool can send it) in each process and print the totals; exit 1 when
    fewer inputs ran than asked."""
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int, nargs="?", default=100000)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    jobs = max(1, min(a.jobs, a.count))
    share = [a.count // jobs + (1 if i < a.count % jobs else 0)
             for i in range(jobs)]
    t0 = time.monotonic()
    with multiprocessing.Pool(jobs) as pool:
        results = pool.map(worker, [(n, a.seed + i)
                                    for i, n in enumerate(share)])
    total = {k: sum(r[k] for r in results) for k in results[0]}
    print("fuzz %s: %d inputs (seed %d, %d jobs) in %.0f s: 0 crashes; "
          "%d with located errors; edits %d done, %d refused"
          % (label, total["inputs"], a.seed, jobs, time.monotonic() - t0,
             total["located"], total["edits_done"], total["edits_refused"]))
    return 0 if total["inputs"] >= a.count else 1
