# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The nvme.conf fuzz harness works (a short run, one process): it runs
its invariants over generated inputs and counts them."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuzz_nvmeconf  # noqa: E402


def test_short_nvmeconf_fuzz_run_finds_no_crash():
    counts = fuzz_nvmeconf.run(300, 12345)
    assert counts["inputs"] == 300
    # The generators must reach both outcomes, or they test too little.
    assert counts["located"] > 0
    assert counts["edits_done"] > 0 and counts["edits_refused"] > 0
