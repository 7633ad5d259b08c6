# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune infer` against hostile and odd benchmark output (adversarial
report T1-T5, F1-F3).

Every input that is not a measurement ends in `sdtune: cannot parse
'<file>': <tool> <field>: <reason>` with exit 4 (as any output sdtune
cannot parse), naming the JSON path (jobs[2].write.lat_ns.mean) or the
vdbench line and column, with no Python exception text; every input that
is one gives a verdict whose `-o json` is strict JSON (no NaN, no
Infinity).  fio's write vs write+fsync pair decides the cache, with the
fsync's own latency counted, and fio JSON behind notes, a byte order mark
or with the normal report after it is read as fio.

The fio input is a real fio-3.33 run of the report's three jobs (w512,
w4k, w4k-fsync; tests/fixtures/fio/README.md), changed field by
field; the vdbench input is tests/fixtures/bench/vdbench-two-layouts.txt.
"""

import copy
import json
import os

import pytest

from support import REPO, build, no_traceback, run

REALWORLD = os.path.join(REPO, "tests", "fixtures", "realworld")
FIO_FIXTURES = os.path.join(REPO, "tests", "fixtures", "fio")
FIO_333 = os.path.join(FIO_FIXTURES,
                       "fio-3.33-sandbox-psync-direct-w512-w4k-w4k-fsync.json")
FIO_342_MIXED = os.path.join(
    REALWORLD, "fio-json", "cbt-rawfio-2026-fio-3.42-randwrite-4k-qd8-json-"
    "plus-normal-mixed.txt")
VDBENCH = os.path.join(REPO, "tests", "fixtures", "bench",
                       "vdbench-two-layouts.txt")
# What Python says when an exception's text reaches the operator.
PYTHON_TEXT = ("Traceback", "NoneType", "has no attribute", "not iterable",
               "not subscriptable", "could not convert", "invalid literal",
               "Error:", "Exception", "object is not", "cannot convert")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return build(tmp_path_factory.mktemp("infer"))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def fio333() -> dict:
    with open(FIO_333) as f:
        return json.load(f)


def infer(app, tmp_path, text, *args, name="input"):
    """Run `sdtune infer --from FILE ARGS` on text; (proc, FILE)."""
    path = str(tmp_path / name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    proc = run(app, "infer", "--from", path, *args)
    no_traceback(proc)
    return proc, path


def strict_json(text):
    """The document, refusing NaN and Infinity as json.dumps(...,
    allow_nan=False) would."""
    def refuse(word):
        raise AssertionError("%s in -o json output" % word)
    return json.loads(text, parse_constant=refuse)


def verdict(app, tmp_path, text, *args):
    proc, _ = infer(app, tmp_path, text, "-o", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return strict_json(proc.stdout)


def assert_refused(proc, path, field):
    """Exit 4, one `cannot parse '<file>'` line naming the field, nothing
    of Python's."""
    assert proc.returncode == 4, (proc.returncode, proc.stdout,
                                  proc.stderr)
    assert proc.stdout == ""
    err = proc.stderr
    assert err.startswith("sdtune: cannot parse '%s': " % path), err
    assert field in err, (field, err)
    assert err.count("\n") == 1, err
    for text in PYTHON_TEXT:
        assert text not in err, (text, err)


def fio_text(doc, raw=None) -> str:
    """doc as fio JSON; raw maps placeholder strings to literal JSON
    (1e400, which json.dumps cannot write)."""
    text = json.dumps(doc, indent=2)
    for placeholder, literal in (raw or {}).items():
        text = text.replace(json.dumps(placeholder), literal)
    return text


def changed(*edits):
    """The fio-3.33 document with (path, value) edits; a path is a list of
    keys, value DELETE removes the member."""
    doc = fio333()
    for path, value in edits:
        obj = doc
        for key in path[:-1]:
            obj = obj[key]
        if value is DELETE:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return doc


DELETE = object()


# -- T1: wrong JSON types -----------------------------------------------------

T1_INPUTS = {
    "jobs-null": ([(["jobs"], None)], "jobs"),
    "jobs-number": ([(["jobs"], 5)], "jobs"),
    "jobs-string": ([(["jobs"], "abc")], "jobs"),
    "jobs-of-numbers": ([(["jobs"], [1, 2])], "jobs[0]"),
    "write-null": ([(["jobs", 2, "write"], None)], "jobs[2].write"),
    "write-list": ([(["jobs", 2, "write"], [1])], "jobs[2].write"),
    "lat_ns-null": ([(["jobs", 2, "write", "lat_ns"], None)],
                    "jobs[2].write.lat_ns"),
    "job-options-null": ([(["jobs", 1, "job options"], None)],
                         'jobs[1]["job options"]'),
    "global-options-list": ([(["global options"], [1])],
                            '["global options"]'),
}


@pytest.mark.parametrize("case", sorted(T1_INPUTS))
def test_T1_fio_fields_of_the_wrong_type(app, tmp_path, case):
    edits, field = T1_INPUTS[case]
    proc, path = infer(app, tmp_path, fio_text(changed(*edits)))
    assert_refused(proc, path, "fio " + field + ": ")


# -- T2: numbers that are not numbers -----------------------------------------

T2_INPUTS = {
    "total_ios-lots": ((["jobs", 0, "write", "total_ios"], "lots"),
                       "jobs[0].write.total_ios: not a number"),
    "iodepth-deep": ((["global options", "iodepth"], "deep"),
                     '["global options"].iodepth: not a number'),
    "iodepth-1.5": ((["global options", "iodepth"], "1.5"),
                    '["global options"].iodepth: not a whole number'),
    "numjobs-x": ((["jobs", 1, "job options", "numjobs"], "x"),
                  'jobs[1]["job options"].numjobs: not a number'),
    "runtime-long": ((["jobs", 2, "write", "runtime"], "long"),
                     "jobs[2].write.runtime: not a number"),
    "lat_ns.mean-fast": ((["jobs", 2, "write", "lat_ns", "mean"], "fast"),
                         "jobs[2].write.lat_ns.mean: not a number"),
}


@pytest.mark.parametrize("case", sorted(T2_INPUTS))
def test_T2_fio_numeric_fields_that_are_not_numbers(app, tmp_path, case):
    edit, message = T2_INPUTS[case]
    proc, path = infer(app, tmp_path, fio_text(changed(edit)))
    assert_refused(proc, path, message)


# -- T3: infinities -----------------------------------------------------------

def test_T3_fio_total_ios_1e400(app, tmp_path):
    doc = changed((["jobs", 0, "write", "total_ios"], "@BIG@"))
    proc, path = infer(app, tmp_path, fio_text(doc, {"@BIG@": "1e400"}))
    assert_refused(proc, path, "fio jobs[0].write.total_ios: not a finite "
                   "number")


def test_T3_fio_runtime_Infinity(app, tmp_path):
    doc = changed((["jobs", 1, "write", "runtime"], float("inf")))
    proc, path = infer(app, tmp_path, fio_text(doc))
    assert_refused(proc, path, "fio jobs[1].write.runtime: not a finite "
                   "number: Infinity")


@pytest.mark.parametrize("column,old,new", [
    ("i/o rate", "  500.00", "     inf"),
    ("bytes i/o", "     512   0.00", "     inf   0.00")])
def test_T3_vdbench_rate_or_bytes_inf(app, tmp_path, column, old, new):
    text = read(VDBENCH).replace(old, new, 1)
    proc, path = infer(app, tmp_path, text)
    # The first interval line of RD=rd512 is line 5.
    assert_refused(proc, path, "vdbench line 5 column '%s': not a finite "
                   "number: \"inf\" (RD=rd512)" % column)


# -- T4, T5: vdbench as vdbench prints it -------------------------------------

def test_T4_vdbench_for_loops_with_decimals(app, tmp_path):
    base = verdict(app, tmp_path, read(VDBENCH))
    text = read(VDBENCH).replace("xfersize=512 threads=1",
                                 "xfersize=512.0 threads=1.0")
    assert text != read(VDBENCH)
    doc = verdict(app, tmp_path, text)
    run512 = doc["evidence"]["sector"]["vdbench rd512"]
    assert (run512["bs"], run512["qd"]) == (512, 1)
    assert doc["native_sector_bytes"] == base["native_sector_bytes"] == 4096
    assert doc["sector_confidence"] == base["sector_confidence"]


def test_T4_vdbench_threads_not_a_number(app, tmp_path):
    text = read(VDBENCH).replace("threads=1", "threads=abc", 1)
    proc, path = infer(app, tmp_path, text)
    assert_refused(proc, path, "vdbench line 1 'For loops: threads': not a "
                   "number: \"abc\"")


def test_T5_vdbench_header_word_intervals(app, tmp_path):
    text = read(VDBENCH).replace("2020  interval ", "2020  intervals", 1)
    assert "intervals" in text
    doc = verdict(app, tmp_path, text)
    assert sorted(doc["evidence"]["sector"]) == ["vdbench rd4k",
                                                 "vdbench rd512"]
    assert doc["native_sector_bytes"] == 4096


# -- F1: the cache verdict from fio's write vs write+flush --------------------

def test_F1_fio_three_jobs_cache_verdict_from_write_and_fsync(
        app, tmp_path):
    doc = verdict(app, tmp_path, read(FIO_333))
    assert doc["cache"] == "volatile", doc["evidence"]["cache"]
    assert doc["cache_confidence"] >= 0.95
    assert "cache-nonvolatile" not in doc["recommended"]
    cache = doc["evidence"]["cache"]
    # A write+fsync costs the write (lat_ns) and the fsync (sync.lat_ns):
    # 159.5 us + 1286.9 us against 98.8 us for the write alone.
    assert cache["write_flush_lat_ns"] == pytest.approx(
        159544.594469 + 1286909.843926, abs=0.1)
    assert cache["write_lat_ns"] == pytest.approx(98825.056021, abs=0.1)
    assert cache["steps"]["write"]["name"] == "fio w4k"
    assert cache["steps"]["write-flush"]["name"] == "fio w4k-fsync"


def free_flush(option) -> dict:
    """The three-job document of a drive whose flushes cost nothing: the
    flushed job writes as fast as w4k and each flush takes 2 us.  option
    is how the job asks for the flush, as fio's job options print it."""
    doc = fio333()
    w4k, flushed = doc["jobs"][1], doc["jobs"][2]
    flushed["write"] = copy.deepcopy(w4k["write"])
    ios = flushed["write"]["total_ios"]
    flushed["job options"] = {"bs": "4k", option: "1"}
    if option == "sync":
        # O_SYNC: the flush is inside each write; fio times no fsync.
        flushed["sync"] = copy.deepcopy(w4k["sync"])
        flushed["write"]["lat_ns"]["mean"] += 2000.0
    else:
        flushed["sync"]["total_ios"] = ios
        flushed["sync"]["lat_ns"].update(mean=2000.0, stddev=900.0, N=ios)
    return doc


@pytest.mark.parametrize("option", ["fsync", "fdatasync", "sync"])
def test_F1_fio_free_flush_recommends_only_with_trust(app, tmp_path,
                                                      option):
    text = fio_text(free_flush(option))
    doc = verdict(app, tmp_path, text)
    assert doc["cache"] == "nonvolatile", doc["evidence"]["cache"]
    assert doc["cache_confidence"] >= 0.95
    assert "cache-nonvolatile" not in doc["recommended"]
    assert doc["evidence"]["cache"]["steps"]["write-flush"]["name"] == \
        "fio w4k-fsync"
    trusted = verdict(app, tmp_path, text, "--trust-flush-timing")
    assert trusted["cache"] == "nonvolatile"
    assert trusted["recommended"].get("cache-nonvolatile") is True


def test_F1_fio_fsync_untimed_by_old_fio_is_no_free_flush(app, tmp_path):
    # fio before 3.4 has no sync section: the write latency alone would
    # make the flushed job look as cheap as the plain one.
    doc = verdict(app, tmp_path, fio_text(changed(
        (["jobs", 0, "sync"], DELETE), (["jobs", 1, "sync"], DELETE),
        (["jobs", 2, "sync"], DELETE))), "--trust-flush-timing")
    assert doc["cache"] == "inconclusive"
    assert "cache-nonvolatile" not in doc["recommended"]
    proc, _ = infer(app, tmp_path, fio_text(changed(
        (["jobs", 2, "sync"], DELETE))))
    assert proc.returncode == 0
    assert "w4k-fsync flushes after each write, but this fio output does " \
        "not time the fsyncs" in proc.stdout


# -- F2: garbage is no measurement --------------------------------------------

def without_lat(doc: dict) -> dict:
    for job in doc["jobs"]:
        del job["write"]["lat_ns"]
    return doc


def fio2_clat_only() -> dict:
    """The document as fio 2.x shapes it (µs, no _ns, no sync section),
    with only clat: the report's fio-old-clat-only."""
    doc = fio333()
    for job in doc["jobs"]:
        del job["sync"]
        for section in ("read", "write", "trim"):
            part = job[section]
            del part["lat_ns"]
            for kind in ("slat", "clat"):
                lat = part.pop(kind + "_ns")
                part[kind] = {k: v / 1000.0 for k, v in lat.items()
                              if k in ("min", "max", "mean", "stddev")}
    return doc


@pytest.mark.parametrize("shape", ["fio3-clat_ns", "fio2-clat"])
def test_F2_clat_only_is_used_and_said(app, tmp_path, shape):
    doc = without_lat(fio333()) if shape == "fio3-clat_ns" else \
        fio2_clat_only()
    field, scale = ("clat_ns", 1.0) if shape == "fio3-clat_ns" else \
        ("clat", 1000.0)
    clat = doc["jobs"][0]["write"][field]["mean"] * scale
    out = verdict(app, tmp_path, fio_text(doc))
    w512 = out["evidence"]["sector"]["fio w512"]
    assert w512["lat_field"] == "write." + field
    assert w512["lat_mean_ns"] == pytest.approx(clat, abs=0.1)
    assert w512["lat_mean_ns"] > 50000
    proc, _ = infer(app, tmp_path, fio_text(doc))
    assert " 0 us" not in proc.stdout


F2_INPUTS = {
    "lat-NaN": ([(["jobs", 0, "write", "lat_ns", "mean"], float("nan"))],
                "jobs[0].write.lat_ns.mean: not a finite number: NaN"),
    "lat-negative": ([(["jobs", 1, "write", "lat_ns", "mean"], -98825.0)],
                     "jobs[1].write.lat_ns.mean: cannot be negative"),
    "lat-infinite": ([(["jobs", 0, "write", "lat_ns", "mean"],
                       float("inf"))],
                     "jobs[0].write.lat_ns.mean: not a finite number"),
    "lat-zero-no-clat": ([(["jobs", 0, "write", "lat_ns", "mean"], 0.0),
                          (["jobs", 0, "write", "clat_ns"], DELETE)],
                         "jobs[0].write.lat_ns: missing or 0"),
    "stddev-NaN": ([(["jobs", 0, "write", "lat_ns", "stddev"],
                     float("nan"))],
                   "jobs[0].write.lat_ns.stddev: not a finite number"),
    "iops-zero": ([(["jobs", 1, "write", "iops"], 0)],
                  "jobs[1].write.iops: must be above 0"),
    "iops-NaN": ([(["jobs", 1, "write", "iops"], float("nan"))],
                 "jobs[1].write.iops: not a finite number"),
    "bs-zero": ([(["jobs", 0, "job options", "bs"], "0")],
                'jobs[0]["job options"].bs: must be above 0'),
    "job-options-list": ([(["jobs", 0, "job options"], ["bs"])],
                         'jobs[0]["job options"]: not an object: a list'),
}


@pytest.mark.parametrize("case", sorted(F2_INPUTS))
def test_F2_garbage_measurements_are_refused(app, tmp_path, case):
    edits, message = F2_INPUTS[case]
    proc, path = infer(app, tmp_path, fio_text(changed(*edits)), "-o",
                       "json")
    assert_refused(proc, path, "fio " + message)


# -- F3: fio JSON with text around it -----------------------------------------

PREAMBLES = {
    "note": "note: both iodepth >= 1 and synchronous I/O engine are "
            "selected, queue depth will be capped at 1\n",
    "signal": "fio: terminating on signal 2\n",
    "text": "$ fio --output-format=json fio.job\nw512: (g=0): rw=write, "
            "bs=(R) 512B-512B, (W) 512B-512B, (T) 512B-512B, "
            "ioengine=psync, iodepth=1\nStarting 3 processes\n",
    "bom": "\ufeff",
}


@pytest.mark.parametrize("case,fmt", [(case, ()) for case in
                                      sorted(PREAMBLES)] +
                         [("note", ("--format", "fio"))])
def test_F3_fio_json_after_text_is_read_as_fio(app, tmp_path, case, fmt):
    text = PREAMBLES[case] + read(FIO_333)
    doc = verdict(app, tmp_path, text, *fmt)
    assert doc["cache"] == "volatile"
    assert sorted(doc["evidence"]["sector"]) == ["fio w4k", "fio w512"]


def test_F3_real_fio_json_with_normal_report_around_it(app, tmp_path):
    doc = verdict(app, tmp_path, read(FIO_342_MIXED))
    # One 4 KiB random-write job at QD 8: nothing to decide, but read.
    assert doc["native_sector_bytes"] is None
    assert doc["evidence"]["queue_depth"] == {}
    proc, _ = infer(app, tmp_path, read(FIO_342_MIXED))
    assert proc.returncode == 0 and "vdbench" not in proc.stdout + \
        proc.stderr
