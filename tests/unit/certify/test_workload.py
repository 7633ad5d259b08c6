# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The certification plan as data (issue 12): which arms each logical
block size gets, the look schedule of the paired phases, the [certify]
settings and their errors, the region clamped to the device, the
`sdio paired` arguments, and reading `sdio paired` reports (including
an I/O error and damaged reports, which never become a verdict)."""

import json

import pytest

from sdtune.certify.reports import IOFailure, parse_paired
from sdtune.certify.workload import (MIN_REGION_BYTES, CertifySettings,
                                     build_plan, paired_args, region_for)
from sdtune.errors import ParseError


def test_512_logical_drive_gets_the_whole_ladder_and_random_arms():
    plan = build_plan(512)
    assert [(a.name, a.bs, a.offset, a.pattern) for a in plan.sector] == [
        ("size-512", 512, 0, "seq"), ("size-1024", 1024, 0, "seq"),
        ("size-2048", 2048, 0, "seq"), ("size-4096", 4096, 0, "seq"),
        ("size-8192", 8192, 0, "seq"), ("size-16384", 16384, 0, "seq"),
        ("size-4096-misaligned", 4096, 512, "seq"),
        ("rand-512", 512, 0, "rand"), ("rand-4096", 4096, 0, "rand")]
    assert [(a.name, a.flush) for a in plan.cache] == [
        ("write", "none"), ("write-flush", "each")]
    assert [(s.rw, s.qd) for s in plan.qd] == [
        (rw, qd) for rw in ("write", "read")
        for qd in (1, 2, 4, 8, 16, 32, 64)]
    assert {s.pattern for s in plan.qd} == {"rand"}


def test_4k_logical_drive_has_no_sub_block_arms():
    plan = build_plan(4096, ("sector",))
    assert [a.bs for a in plan.sector] == [4096, 8192, 16384]
    assert plan.cache == [] and plan.qd == []


def test_looks_grow_by_half_and_end_at_max_rounds():
    assert CertifySettings().looks() == [8, 12, 18, 27, 41, 62, 93, 128]
    assert CertifySettings(min_rounds=4, max_rounds=4).looks() == [4]
    assert CertifySettings(min_rounds=2, max_rounds=3).looks() == [2, 3]


@pytest.mark.parametrize("section, message", [
    ({"slice_s": "fast"}, "[certify] slice_s = 'fast': not a float"),
    ({"min_ios": "0"}, "[certify] min_ios must be positive"),
    ({"min_rounds": "1"}, "[certify] min_rounds must be at least 2"),
    ({"min_rounds": "9", "max_rounds": "8"},
     "[certify] min_rounds must be at least 2"),
    ({"min_intervals": "1"}, "[certify] min_intervals must be at least 2"),
    ({"warmup_intervals": "-1"},
     "[certify] warmup_intervals must not be negative"),
    ({"paired_max_s": "nan"}, "[certify] paired_max_s must be positive"),
])
def test_bad_settings_are_named(section, message):
    with pytest.raises(ValueError) as e:
        CertifySettings.from_config(section)
    assert str(e.value).startswith(message)


def test_settings_override_the_defaults():
    t = CertifySettings.from_config({"slice_s": "0.05",
                                     "max_rounds": "32",
                                     "phases": "sector"})
    assert (t.slice_s, t.max_rounds, t.phases) == (0.05, 32, ("sector",))


def test_region_is_clamped_to_the_device_in_whole_mib():
    t = CertifySettings()
    assert region_for(4 << 40, t) == 1 << 30
    assert region_for((256 << 20) + 4095, t) == 256 << 20
    assert region_for(MIN_REGION_BYTES, t) == MIN_REGION_BYTES
    assert region_for(MIN_REGION_BYTES - 1, t) == 0


def test_paired_arguments():
    arms = build_plan(512, ("cache",)).cache
    args = paired_args(arms, "/dev/rdsk/c1t0d0p0", CertifySettings(), 1 << 30,
                       rounds=8, warmup=1, seed=3)
    assert args == [
        "paired", "--json", "--backend", "sync", "--direct",
        "--rounds", "8", "--warmup-rounds", "1", "--slice", "0.03",
        "--min-ios", "8", "--region", "1073741824", "--seed", "3",
        "--arm", "name=write,bs=4096,offset=0,pattern=seq,flush=none,"
        "rw=write",
        "--arm", "name=write-flush,bs=4096,offset=0,pattern=seq,"
        "flush=each,rw=write", "/dev/rdsk/c1t0d0p0"]


def report(**extra):
    doc = {"version": 1, "mode": "paired",
           "arms": [{"index": 0, "name": "a"}, {"index": 1, "name": "b"}],
           "rounds": [{"index": r, "order": [1, 0], "slices": [
               {"arm": 0, "ios": 9, "median_ns": 1000 + r,
                "mean_ns": 1100.5},
               {"arm": 1, "ios": 8, "median_ns": 2000, "mean_ns": 2100}]}
               for r in range(3)],
           "errors": [], "elapsed_ns": 900, "stopped": "rounds"}
    doc.update(extra)
    return json.dumps(doc)


def test_paired_report_is_read_by_round():
    res = parse_paired(report())
    assert res.rounds == [{"a": 1000.0, "b": 2000.0},
                          {"a": 1001.0, "b": 2000.0},
                          {"a": 1002.0, "b": 2000.0}]
    assert res.means == [{"a": 1100.5, "b": 2100.0}] * 3
    assert res.ios == {"a": 27, "b": 24} and res.elapsed_ns == 900
    more = parse_paired(report())
    res.extend(more)
    assert len(res.rounds) == 6 and len(res.means) == 6 and \
        res.ios["a"] == 54


def test_paired_io_error_is_no_verdict():
    with pytest.raises(IOFailure) as e:
        parse_paired(report(errors=[{"op": "write", "offset": 4096,
                                     "errno": 5, "error": "I/O error"}]))
    assert str(e.value) == "write error at offset 4096: I/O error (errno 5)"


@pytest.mark.parametrize("text", [
    "", "{", "[]", report(arms=None), report(rounds=[{"slices": [
        {"arm": 7, "ios": 1, "median_ns": 1}]}]),
    report(rounds=[{"slices": [{"arm": 0, "ios": "x",
                                "median_ns": 1}]}])])
def test_damaged_paired_reports_are_refused_plainly(text):
    with pytest.raises(ParseError) as e:
        parse_paired(text)
    assert str(e.value).startswith("cannot ")
    assert "Error" not in str(e.value) and "'" not in e.value.reason
