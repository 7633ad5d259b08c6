# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The pure parts of certifying a shelf (issue 16): when a crowd probe
says the host set the pace (certify/shelf.py slowdown, noise_limit), and
what a terminal or a log shows (commands/shelfview.py)."""

import io

from sdtune.certify.certifier import Target
from sdtune.records.record import CertRecord, QueueDepth
from sdtune.certify.shelf import DriveState, noise_limit, slowdown
from sdtune.certify.stats import Sample
from sdtune.commands.shelfview import ShelfView, verdict_summary


def test_slowdown_is_the_ratio_of_mean_costs():
    assert slowdown(Sample(10, 1000.0, 10.0), Sample(10, 2500.0, 10.0)) \
        == 2.5
    nan = slowdown(Sample(0, float("nan"), float("nan")),
                   Sample(10, 1.0, 0.1))
    assert nan != nan


def test_noise_limit_has_a_floor_and_grows_with_spread():
    quiet = Sample(10, 1000.0, 10.0)
    assert noise_limit(quiet, quiet) == 1.30
    noisy = Sample(4, 1000.0, 400.0)       # rel se 0.2 each
    assert round(noise_limit(noisy, noisy), 3) == round(
        1 + 3 * (2 * 0.2 ** 2) ** 0.5, 3)
    # A single interval has no spread to judge: the floor.
    assert noise_limit(Sample(1, 1000.0, float("nan")), quiet) == 1.30


def record(native, cache, knee):
    return CertRecord(key="K", native_sector_bytes=native, cache=cache,
                      queue_depth=QueueDepth(knee=knee))


def test_verdict_summary():
    assert verdict_summary(record(4096, "nonvolatile", 8)) == \
        "native 4096 B, cache nonvolatile, knee QD 8"
    assert verdict_summary(record(None, None, None)) == \
        "native inconclusive, cache inconclusive"


def drives(n):
    return [DriveState(Target("c5t%dd0" % i, "/dev/rdsk/c5t%dd0p0" % i,
                              None), i) for i in range(n)]


def test_log_lines_one_per_phase_and_none_for_a_lone_drive():
    err = io.StringIO()
    shelf = drives(2)
    view = ShelfView(err, False, lambda: 0, shelf)
    d = shelf[0]
    d.state, d.phase = "measuring", "sector"
    view.update(d)
    view.update(d)                  # the same phase: no second line
    d.phase = "probe"
    view.update(d)                  # a crowd probe: no line
    d.state, d.phase, d.record = "done", "", record(512, "volatile", 4)
    d.started_ns, d.ended_ns = 0, 12_500_000_000
    view.update(d)
    assert err.getvalue() == (
        "sdtune: certify: c5t0d0: sector phase\n"
        "sdtune: certify: c5t0d0: done in 12.5 s: native 512 B, cache "
        "volatile, knee QD 4\n")
    alone = io.StringIO()
    one = drives(1)
    view = ShelfView(alone, False, lambda: 0, one)
    one[0].state, one[0].phase = "measuring", "sector"
    view.update(one[0])
    assert alone.getvalue() == ""


def test_terminal_redraws_the_block_in_place():
    err = io.StringIO()
    shelf = drives(2)
    clock = [0]
    view = ShelfView(err, True, lambda: clock[0], shelf)
    shelf[0].state, shelf[0].phase = "measuring", "sector"
    shelf[0].started_ns, shelf[0].iops = 0, 1234.0
    shelf[0].what, shelf[0].confidence = "8 rounds", 0.5
    clock[0] = 2_000_000_000
    view.update(shelf[0])
    first = err.getvalue()
    assert first.count("\n") == 3 and "\x1b[" in first
    assert "1234 IOPS" in first and "2.0 s" in first
    assert "8 rounds, confidence 0.50" in first
    clock[0] += 10                  # too soon: no redraw
    view.update(shelf[0])
    assert err.getvalue() == first
    shelf[1].state = "failed"       # an end is drawn at once
    view.update(shelf[1])
    assert err.getvalue()[len(first):].startswith("\x1b[3A")
