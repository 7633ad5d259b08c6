# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify/reports.py against the engine itself: a real `sdio` run's
report read into a StepResult, its latency percentiles (the engine's
histogram) kept in the step's evidence, as every queue-depth step of a
certification stores them."""

import os

import pytest

from engine_run import run
from sdtune.certify.reports import parse_sdio
from sdtune.errors import ParseError


def test_a_run_keeps_its_latency_percentiles(sdio, shm_file):
    path = shm_file(1 << 20)
    proc = run(sdio, "--bs", 4096, "--qd", 4, "--max-ios", 400, "--json",
               path)
    step = parse_sdio(proc.stdout, "qd-write-4")
    assert step.qd == 4 and step.ios == 400
    assert 0 < step.lat_p50_ns <= step.lat_p99_ns <= step.lat_p99_9_ns
    evidence = step.evidence()
    assert (evidence["lat_p50_ns"], evidence["lat_p99_ns"],
            evidence["lat_p99_9_ns"]) == (step.lat_p50_ns, step.lat_p99_ns,
                                          step.lat_p99_9_ns)


def test_a_report_without_percentiles_has_none(sdio, shm_file):
    path = shm_file(1 << 20)
    text = run(sdio, "--bs", 4096, "--max-ios", 8, "--json", path).stdout
    for name in ('"p50"', '"p99"', '"p99_9"'):
        text = text.replace(name, '"x%s' % name[1:])
    step = parse_sdio(text, "old")
    assert (step.lat_p50_ns, step.lat_p99_ns, step.lat_p99_9_ns) == \
        (None, None, None)


@pytest.mark.parametrize("bad", ['"x"', "-1", "true", "[]"])
def test_a_percentile_that_is_not_nanoseconds_is_refused(
        sdio, shm_file, bad):
    path = shm_file(1 << 20)
    text = run(sdio, "--bs", 4096, "--max-ios", 8, "--json", path).stdout
    head, sep, tail = text.partition('"p99": ')
    tail = tail[tail.index(","):]
    with pytest.raises(ParseError):
        parse_sdio(head + sep + bad + tail, "bad")
    assert os.path.exists(path)
