# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The vdbench and fio importers against hostile input, as pure functions
(the end-to-end tests are tests/adversarial/test_adv_infer.py): number
checks, size parsing, finding fio JSON inside other text, the fsync cost
of a flushed fio job, the cache pair, and a fuzz of the real fio-3.33
document whose every outcome is a verdict in strict JSON or an SdtuneError.
"""

import copy
import io
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtune.certify import importers
from sdtune.certify.certifier import _require_finite
from sdtune.certify.costs import IndependentCosts
from sdtune.certify.reports import StepResult
from sdtune.certify.verdict import decide_cache
from sdtune.commands.certify import cmd_infer
from sdtune.errors import ParseError, SdtuneError

HERE = os.path.dirname(__file__)
FIO_333 = os.path.join(HERE, "..", "..", "fixtures", "fio",
                       "fio-3.33-sandbox-psync-direct-w512-w4k-w4k-fsync.json")
VDBENCH = os.path.join(HERE, "..", "..", "fixtures", "bench",
                       "vdbench-two-layouts.txt")


def fio333() -> dict:
    with open(FIO_333) as f:
        return json.load(f)


def vdbench() -> str:
    with open(VDBENCH) as f:
        return f.read()


def refused(text, fmt=None) -> str:
    """The error message of `infer` on text."""
    with pytest.raises(SdtuneError) as e:
        cmd_infer("/in", fmt, text, io.StringIO(), True)
    assert e.value.exit_code == 4
    return str(e.value)


def infer_json(text, *, trust=False) -> dict:
    out = io.StringIO()
    assert cmd_infer("/in", None, text, out, True, trust) == 0
    return json.loads(out.getvalue(), parse_constant=_no_constant)


def _no_constant(word):
    raise AssertionError("%s in -o json output" % word)


# -- numbers and sizes --------------------------------------------------------

@pytest.mark.parametrize("value,kw,expected", [
    (5, {}, 5.0), ("1.5", {}, 1.5), (" 12 ", {}, 12.0), ("1e3", {}, 1000.0),
    (0, {"zero_ok": True}, 0.0), ("4", {"whole": True}, 4.0),
    (4.0, {"whole": True}, 4.0)])
def test_number_accepts(value, kw, expected):
    assert importers.number(value, "fio", "f", 1e6, **kw) == expected


@pytest.mark.parametrize("value,kw,reason", [
    (None, {}, "not a number: null"), (True, {}, "not a number: true"),
    ([1], {}, "not a number: a list"), ({}, {}, "not a number: an object"),
    ("lots", {}, 'not a number: "lots"'), ("1_000", {}, "not a number"),
    ("inf", {}, 'not a finite number: "inf"'),
    ("-Infinity", {}, "not a finite number"),
    ("NaN", {}, "not a finite number"),
    (float("nan"), {}, "not a finite number: NaN"),
    (float("inf"), {}, "not a finite number: Infinity"),
    (10 ** 400, {}, "out of range"), ("1e400", {}, "not a finite number"),
    (-1, {"zero_ok": True}, "cannot be negative: -1"),
    (0, {}, "must be above 0, not 0"), (2e6, {}, "out of range"),
    ("1.5", {"whole": True}, 'not a whole number: "1.5"'),
    ("x" * 100, {}, '"' + "x" * 40 + '"...')])
def test_number_refuses_naming_the_field(value, kw, reason):
    with pytest.raises(ParseError) as e:
        importers.number(value, "fio", "jobs[0].write.iops", 1e6, **kw)
    assert e.value.field == "jobs[0].write.iops"
    assert reason in e.value.reason


@pytest.mark.parametrize("text,size", [
    ("512", 512), ("512.0", 512), ("4k", 4096), ("4K", 4096),
    ("4096B", 4096), ("4KiB", 4096), ("1.5k", 1536), ("1m", 1 << 20),
    ("0", 0), ("0.3", None), ("4k,8k", None), ("abc", None), ("", None),
    ("9" * 400, None), ("-4k", None)])
def test_parse_size(text, size):
    assert importers.parse_size(text) == size


# -- finding the fio JSON -----------------------------------------------------

def test_fio_json_found_between_text():
    doc = {"fio version": "fio-3.33", "jobs": []}
    text = "note: x\nfio: terminating on signal 2\n" + json.dumps(doc) + \
        "\n\nRun status group 0 (all jobs):\n  {not json}\n"
    assert importers.find_fio_json(text) == (doc, "")
    assert importers.find_fio_json("\ufeff" + json.dumps(doc))[0] == doc
    assert importers.find_fio_json("  " + json.dumps(doc))[0] == doc
    # Another JSON object first: the fio one (with "jobs") is taken.
    assert importers.find_fio_json('{"a": 1}\n' + json.dumps(doc))[0] == doc


def test_fio_json_not_found_says_where():
    doc, why = importers.find_fio_json("note\n{\"jobs\": [1,\n")
    assert doc is None and why == "not valid JSON at line 3 column 1"
    assert "no line starting with '{'" in importers.find_fio_json("x")[1]
    assert 'no "jobs"' in importers.find_fio_json('{"a": 1}')[1]
    # Braces without end are tried a bounded number of times.
    doc, why = importers.find_fio_json("{\n" * 100000)
    assert doc is None and why == "not valid JSON at line 2 column 1"


def test_format_detection():
    fio = json.dumps(fio333())
    assert importers.detect_format("note: x\n" + fio) == "fio"
    assert importers.detect_format(vdbench()) == "vdbench"
    assert importers.detect_format("{\n" + vdbench()) == "vdbench"
    # Broken JSON and no vdbench run: the fio error is the useful one.
    assert importers.detect_format("note\n" + fio[:200]) == "fio"
    assert "fio: not valid JSON" in refused("note\n" + fio[:200])


def test_deep_or_huge_json_is_a_clean_error():
    assert "nested too deeply" in refused('{"jobs":' + "[" * 100000)
    assert "too long to read" in refused('{"jobs": [' + "1" * 5000 + "]}")


# -- fio jobs -----------------------------------------------------------------

def test_fsync_job_costs_its_write_and_its_fsync():
    steps = {s.name: s for s in importers.parse_fio(json.dumps(fio333()))}
    flushed = steps["fio w4k-fsync"]
    assert flushed.flush == "each" and flushed.flush_timed
    # 6907 writes, 6907 fsyncs: one fsync per write.
    assert flushed.lat_mean_ns == pytest.approx(159544.594469 +
                                                1286909.843926)
    assert flushed.lat_field == "write.lat_ns + sync.lat_ns"
    assert steps["fio w4k"].lat_field == "write.lat_ns"


def test_fsync_job_without_sync_section_is_not_timed():
    doc = fio333()
    del doc["jobs"][2]["sync"]
    steps = {s.name: s for s in importers.parse_fio(json.dumps(doc))}
    flushed = steps["fio w4k-fsync"]
    assert flushed.flush == "each" and not flushed.flush_timed
    assert importers.classify(list(steps.values()))[1] is None
    assert flushed.evidence(0)["flush_timed"] is False


def test_fsync_with_zero_fsyncs_timed_is_refused():
    doc = fio333()
    doc["jobs"][2]["sync"]["total_ios"] = 0
    assert "fio jobs[2].sync.total_ios: no fsync timed" in \
        refused(json.dumps(doc))


def test_fsync_per_write_with_few_fsyncs_is_refused():
    # One fsync spread over 6907 writes would make the flush look free.
    doc = fio333()
    doc["jobs"][2]["sync"]["total_ios"] = 1
    assert "fio jobs[2].sync.total_ios: 1 fsyncs for 6907 writes" in \
        refused(json.dumps(doc))


@pytest.mark.parametrize("opts,flush", [
    ({"fsync": "4"}, "periodic"), ({"fdatasync": "1"}, "each"),
    ({"sync": "dsync"}, "each"), ({"sync": "none"}, "none"),
    ({"fsync": "0"}, "none")])
def test_flush_options(opts, flush):
    doc = fio333()
    doc["jobs"][2]["job options"] = dict({"bs": "4k"}, **opts)
    step = importers.parse_fio(json.dumps(doc))[2]
    assert step.flush == flush


def test_periodic_fsync_is_in_no_phase():
    doc = fio333()
    doc["jobs"][2]["job options"]["fsync"] = "32"
    sector, pair, qd = importers.classify(
        importers.parse_fio(json.dumps(doc)))
    assert [s.name for s in sector] == ["fio w512", "fio w4k"]
    assert pair is None and qd == []


@pytest.mark.parametrize("bs,size", [("8k,512", 512), (",1k", 1024),
                                     ("2k", 2048), ("512,", 4096),
                                     ("4096B", 4096)])
def test_fio_write_block_size(bs, size):
    doc = fio333()
    doc["jobs"][0]["job options"]["bs"] = bs
    assert importers.parse_fio(json.dumps(doc))[0].bs == size


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["jobs"][0]["job options"].update(bs="4q"),
     'fio jobs[0]["job options"].bs: not a block size: "4q"'),
    (lambda d: d["jobs"][0]["job options"].update(bs="2g"),
     "out of range"),
    (lambda d: d["jobs"][0]["job options"].update(bs=None),
     'fio jobs[0]["job options"].bs: not an option value: null'),
    (lambda d: d["jobs"][0]["job options"].update(offset="x"),
     'jobs[0]["job options"].offset: not an offset'),
    (lambda d: d["jobs"][0]["job options"].update(sync="maybe"),
     'jobs[0]["job options"].sync: not a sync mode'),
    (lambda d: d["jobs"][0].update(error=5),
     "fio jobs[0].error: fio reports error 5 for job w512"),
    (lambda d: d["jobs"][1]["write"]["lat_ns"].update(stddev=0),
     "fio jobs[1].write.lat_ns.stddev: 0 over 100676 I/Os"),
    (lambda d: d["jobs"][1]["write"]["lat_ns"].pop("mean"),
     "fio jobs[1].write.lat_ns.mean: missing"),
    (lambda d: d["jobs"][1]["write"].pop("total_ios"),
     "fio jobs[1].write.total_ios: missing: fio before 2.1.14"),
    (lambda d: (d.pop("global options"), d["jobs"][0].pop("job options")),
     "fio jobs[0][\"job options\"]: missing, and there are no global "
     "options"),
    (lambda d: d["global options"].update(iodepth="0"),
     '["global options"].iodepth: must be above 0')])
def test_fio_refusals(edit, message):
    doc = fio333()
    edit(doc)
    assert message in refused(json.dumps(doc))


def test_percent_offset_is_aligned_and_names_are_unique():
    doc = fio333()
    doc["jobs"][0]["job options"]["offset"] = "10%"
    doc["jobs"][1]["job options"]["offset"] = "512"
    doc["jobs"][2]["jobname"] = "w4k"
    steps = importers.parse_fio(json.dumps(doc))
    assert [s.offset for s in steps] == [0, 512, 0]
    assert [s.name for s in steps] == ["fio w512", "fio w4k",
                                       "fio w4k (jobs[2])"]


def test_clat_only_where_lat_is_zero():
    # disable_lat=1: fio prints lat_ns as zeros.  Every job then compares
    # on clat, never 0 us.
    doc = fio333()
    doc["jobs"][0]["write"]["lat_ns"].update(mean=0.0, stddev=0.0, N=0)
    steps = importers.parse_fio(json.dumps(doc))
    assert [s.lat_field for s in steps] == [
        "write.clat_ns", "write.clat_ns", "write.clat_ns + sync.lat_ns"]
    assert steps[0].lat_mean_ns == pytest.approx(77419.636492)


def test_unified_mixed_reporting_says_why_nothing_wrote():
    doc = fio333()
    for job in doc["jobs"]:
        job["mixed"] = job.pop("write")
    assert "unified_rw_reporting" in refused(json.dumps(doc))


def test_cache_pair_prefers_4k_and_the_same_pattern():
    def step(name, bs, flush="none", pattern="seq", qd=1):
        return StepResult(name, bs, qd=qd, flush=flush, pattern=pattern)
    steps = [step("w8k", 8192), step("w8kf", 8192, "each"),
             step("rand4k", 4096, pattern="rand"), step("w4k", 4096),
             step("w4kf", 4096, "each"), step("qd4", 4096, "each", qd=4)]
    _, pair, _ = importers.classify(steps)
    assert [s.name for s in pair] == ["w4k", "w4kf"]
    _, pair, _ = importers.classify(steps[:2])
    assert [s.name for s in pair] == ["w8k", "w8kf"]


# -- vdbench ------------------------------------------------------------------

def test_vdbench_stall_interval_is_no_zero_latency_sample():
    text = vdbench().replace(
        "  505.00     0.24     512   0.00    1.980",
        "    0.00     0.00       0   0.00    0.000", 1)
    step = importers.parse_vdbench(text)[0]
    # Intervals 2-4, the ones avg_2-4 averages (1 is vdbench's warm-up).
    assert [iv.ios for iv in step.intervals] == [0, 498, 502]
    assert step.latency(0).n == 2 and step.latency(0).mean > 1.9e6


@pytest.mark.parametrize("old,new,message", [
    ("    1.980", "    0.000", "vdbench line 6 column 'resp time': 0 ms "
     "for 505 I/Os per second (RD=rd512)"),
    ("  502.00     0.24     512   0.00    1.990    0.000    1.990    12.34"
     "    0.123   1.0   2.1   1.0", "    0.00", "vdbench line 8: 2 values "
     "under a header of 13 columns (RD=rd512)"),
    ("  avg_2-4     502.00", "  avg_2-4       0.00", "vdbench line 9 column"
     " 'i/o rate': the average of RD=rd512 is 0"),
    ("xfersize=512 ", "xfersize=4q ", None),
    ("xfersize=512 ", "xfersize=2g ", "vdbench line 1 'For loops: xfersize'"
     ": 2147483648 is out of range (at most 1073741824)"),
    ("Dec 02, 2020  interval", "Dec 02, 2020  intervals", None),
    ("   read     resp     read    write     resp     resp queue",
     "   read     resp     read    write     resp queue", "vdbench lines "
     "3-4: a column header of 11 words after 'interval' over 12 words: "
     "they do not pair up")])
def test_vdbench_lines(old, new, message):
    text = vdbench().replace(old, new, 1)
    assert text != vdbench()
    if message is None:
        # Read: a size vdbench cannot have meant falls back to the bytes
        # column, a header word variation is still the interval column.
        assert importers.parse_vdbench(text)[0].bs == 512
    else:
        assert message in refused(text)


def test_vdbench_message_lines_are_not_interval_lines():
    text = vdbench() + "17:48:00.000 Vdbench execution completed " \
        "successfully. Output directory: /tmp/output\n"
    assert len(importers.parse_vdbench(text)) == 2


# -- the record ---------------------------------------------------------------

def test_cache_verdict_compares_the_runs_it_is_given_by_name():
    def flat(name, ns):
        return StepResult(name, 4096, ios=10, lat_mean_ns=ns,
                          lat_sd_ns=ns / 100)
    for names in (("write", "write-flush"), ("fio w4k", "fio w4k-sync")):
        costs = IndependentCosts([flat(names[0], 20000.0),
                                  flat(names[1], 900000.0)])
        verdict = decide_cache(costs, None, None, write=names[0],
                               flushed=names[1])
        assert verdict.cache == "volatile", names


def test_non_finite_verdict_is_refused_naming_the_value():
    with pytest.raises(SdtuneError) as e:
        _require_finite("/in", {"evidence": {"cache": {
            "ratio": float("inf")}}, "list": [1.0]})
    assert str(e.value) == "cannot infer '/in': evidence.cache.ratio is " \
        "infinite, not a finite number: no verdict from this input"
    with pytest.raises(SdtuneError) as e:
        _require_finite("/in", {"a": [0.5, float("nan")]})
    assert "a[1] is NaN" in str(e.value)
    _require_finite("/in", {"a": [0.5, None, "x", {"b": 1}]})


# -- fuzz ---------------------------------------------------------------------

def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _leaves(value, path + (i,))
    yield path


LEAVES = [p for p in _leaves(fio333()) if p and "percentile" not in p]
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 10 ** 6),
    st.integers(10 ** 300, 10 ** 310),
    st.sampled_from([0.0, -0.0, -1.5, 1e-300, 1e300, 1e400, -1e400,
                     float("nan"), float("inf")]),
    st.sampled_from(["", "0", "1", "1.5", "4k", "lots", "inf", "NaN",
                     "1e400", "-1", "4k,8k", "10%", "sync"]),
    st.just([]), st.just([1]), st.just({}), st.just({"mean": 1}))


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(LEAVES), HOSTILE), min_size=1,
                max_size=3))
def test_fuzz_fio_verdict_is_finite_or_a_clean_error(edits):
    doc = fio333()
    for path, value in edits:
        obj = doc
        try:
            for key in path[:-1]:
                obj = obj[key]
            obj[path[-1]] = copy.deepcopy(value)
        except (KeyError, IndexError, TypeError):
            continue            # an earlier edit replaced the parent
    out = io.StringIO()
    try:
        cmd_infer("/in", None, json.dumps(doc), out, True, True)
    except SdtuneError as e:
        assert e.exit_code == 4
        text = str(e)
        assert text.startswith("cannot parse '/in': fio ")
        for word in ("NoneType", "object", "convert", "literal"):
            assert word not in text.replace("an object", ""), text
        return
    rec = json.loads(out.getvalue(), parse_constant=_no_constant)
    for conf in (rec["sector_confidence"], rec["cache_confidence"]):
        assert math.isfinite(conf) and 0 <= conf <= 1


# -- numbers and names that run on ------------------------------------------

BIG = "9" * 5000        # past the 4300 digits Python's int() reads
TERSE = "3;fio-3.33;w;0;0;" + "0;" * 150 + "\n"
HEADER = ("w: (g=%s): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, "
          "(T) 4096B-4096B, ioengine=psync, iodepth=%s\n")


def _fio_with(**members) -> str:
    doc = fio333()
    doc.update(members)
    return json.dumps(doc)


@pytest.mark.parametrize("parse, text, field", [
    (importers.parse_fio, lambda: _fio_with(**{
        "fio version": "fio-3." + BIG}), '"fio version"'),
    # fio's description and report of a job are read up to 1024
    # characters: a number of 25 digits there is no group or depth.
    (importers.parse_fio, lambda: HEADER % ("9" * 25, 1) + TERSE,
     "line 1 (g=)"),
    (importers.parse_fio, lambda: HEADER % (0, "9" * 25) + TERSE,
     "line 1 (iodepth=)"),
    (importers.parse_fio, lambda: HEADER % (0, 1) + "w: (groupid=0, jobs=%s)"
     ": err= 0\n" % ("9" * 25) + TERSE, "line 2 (jobs=)"),
    # Refused, not skipped as a line that is no interval row.
    (importers.parse_vdbench, lambda: vdbench().replace(
        "17:46:27.060         3", "17:46:27.060         " + BIG), "line 7"),
])
def test_number_of_5000_digits_is_refused_naming_the_field(parse, text,
                                                           field):
    with pytest.raises(ParseError) as e:
        parse(text())
    assert e.value.field == field
    assert "more than" in e.value.reason
    assert len(str(e.value)) < 300


def test_fio_job_name_longer_than_fio_keeps_is_refused():
    doc = fio333()
    doc["jobs"][0]["jobname"] = "w" * 128
    with pytest.raises(ParseError) as e:
        importers.parse_fio(json.dumps(doc))
    assert e.value.field == "jobs[0].jobname"
    assert "longer than the 127 bytes fio keeps" in e.value.reason
    doc["jobs"][0]["jobname"] = "w" * 127
    assert importers.parse_fio(json.dumps(doc))


def test_refusal_names_a_dozen_runs_and_counts_the_others():
    doc = fio333()
    doc["jobs"] = [dict(doc["jobs"][0], jobname="j%d" % n,
                        **{"job options": {"rw": "read"}})
                   for n in range(40)]
    with pytest.raises(ParseError) as e:
        importers.parse_fio(json.dumps(doc))
    assert "job j11: rw=read" in e.value.reason
    assert "j12" not in e.value.reason
    assert e.value.reason.endswith("; and 28 more jobs")
    # An RD name that runs on is cut in what a message quotes.
    text = vdbench().replace("RD=rd512", "RD=rd512" + "x" * 5000) \
        .replace("xfersize=", "rdpct=50 xfersize=")
    with pytest.raises(ParseError) as e:
        importers.parse_vdbench(text)
    assert "RD=rd512xxx" in e.value.reason and "50 % reads" in \
        e.value.reason
    assert len(str(e.value)) < 1000
