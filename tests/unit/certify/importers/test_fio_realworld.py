# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The fio importer on the fio output real users have (issue 11 item 2):
fio 2.1.4 to 3.42 JSON, json+, JSON with text around it, terse output
versions 3 and 5, numjobs with and without group_reporting, sync and
async engines, jobs that read, and jobs that ran at the same time.

Two kinds of input: the real-world corpus (tests/fixtures/realworld/
fio-json/, INDEX.md section 2), one test per file asserting exactly what
is imported or refused, plus a test that any corpus file gives steps or a
clean error; and real fio-3.33 runs made for these tests
(tests/fixtures/fio/README.md gives their job files), some changed field
by field.  Every expected number is read from the file it comes from.
"""

import glob
import io
import json
import math
import os

import pytest

from sdtune.certify import importers
from sdtune.certify.importers import fio
from sdtune.commands.certify import cmd_infer
from sdtune.errors import ParseError, SdtuneError

HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures")
CORPUS = os.path.join(FIXTURES, "realworld", "fio-json")
OURS = os.path.join(FIXTURES, "fio")

PKB_214 = "pkb-2014-fio-2.1.4-seqwrite-randwrite-5jobs.json"
PLOT_QD1 = "fio-plot-2019-fio-3.1-crucial-mx200-randwrite-4k-qd1-nj1.json"
PLOT_QD8_NJ32 = "fio-plot-2019-fio-3.1-crucial-mx200-randwrite-4k-qd8-" \
    "nj32-group_reporting.json"
CBT_342 = "cbt-rawfio-2026-fio-3.42-randwrite-4k-qd8-json-plus-normal-" \
    "mixed.txt"
ZH_TERSE = "github-zh-blog-2022-fio-3.32-terse-plus-normal-seqwrite-4k-" \
    "psync.txt"

FIO_333 = "fio-3.33-sandbox-psync-direct-w512-w4k-w4k-fsync.json"
JSONPLUS = "fio-3.33-sandbox-jsonplus-libaio-clones-reader-randrw-psync-" \
    "qd8-together.json"
GROUPED = "fio-3.33-sandbox-json-group_reporting-clones-and-two-jobs.json"
TERSE = "fio-3.33-sandbox-terse-normal-psync-clones-grouped-fsync-w512.txt"
MINIMAL = "fio-3.33-sandbox-minimal-libaio-randwrite-qd4.txt"
TERSE_V5 = "fio-3.33-sandbox-terse-v5-normal-libaio-randwrite-qd4.txt"

# What Python says when an exception's text reaches the operator.
PYTHON_TEXT = ("Traceback", "NoneType", "has no attribute", "not iterable",
               "not subscriptable", "could not convert", "invalid literal",
               "list index", "Error:", "Exception", "object is not",
               "cannot convert", "division by zero")

TERSE_NOTE = "terse output does not say whether a job flushed (fsync=, " \
    "sync=), wrote direct= or at an offset=: its jobs are taken as plain " \
    "writes from offset 0 (run fio with --output-format=json to have " \
    "them checked)"


def corpus(name: str) -> str:
    with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
        return f.read()


def ours(name: str) -> str:
    with open(os.path.join(OURS, name), encoding="utf-8") as f:
        return f.read()


def doc_of(text: str) -> dict:
    """The JSON object of an fio output (text before it skipped)."""
    return json.loads(text[text.index("{"):])


def refusal(text: str) -> str:
    with pytest.raises(ParseError) as e:
        fio.read_fio(text)
    message = str(e.value)
    for word in PYTHON_TEXT:
        assert word not in message, (word, message)
    return message


def infer(text: str, fmt=None) -> dict:
    out = io.StringIO()
    assert cmd_infer("/in", fmt, text, out, True) == 0
    return json.loads(out.getvalue(), parse_constant=_no_constant)


def _no_constant(word):
    raise AssertionError("%s in -o json output" % word)


def terse_line(text: str, lineno: int) -> list:
    return text.splitlines()[lineno - 1].split(";")


def with_terse_fields(text: str, lineno: int, changes: dict) -> str:
    """text with fields (1-based) of one line replaced."""
    lines = text.splitlines()
    fields = lines[lineno - 1].split(";")
    for field, value in changes.items():
        fields[field - 1] = value
    lines[lineno - 1] = ";".join(fields)
    return "\n".join(lines) + "\n"


# -- the real-world corpus ----------------------------------------------------

def test_corpus_pkb_fio_2_1_4_is_refused_naming_each_job():
    # fio 2.1.4 prints no options at all: the block size of the two write
    # jobs is unknown (never taken as 4 KiB), the other three read.
    message = refusal(corpus(PKB_214))
    assert message == (
        "cannot parse 'fio' output: missing or bad field 'jobs': no job "
        "can be used for a write verdict: "
        "job sequential_write: block size not in the output (fio 2.1.4 "
        "prints no job options); "
        "job sequential_read: it read (jobs[1].read.io_bytes = 361984) and "
        "wrote nothing; "
        "job random_write_test: block size not in the output (fio 2.1.4 "
        "prints no job options); "
        "job random_read_test: it read (jobs[3].read.io_bytes = 36244) and "
        "wrote nothing; "
        "job random_read_test_parallel: it read (jobs[4].read.io_bytes = "
        "36244) and wrote nothing")


def test_corpus_pkb_refusal_names_the_file_and_exits_4():
    with pytest.raises(SdtuneError) as e:
        cmd_infer("/in/pkb.json", None, corpus(PKB_214), io.StringIO(),
                  True)
    assert e.value.exit_code == 4
    assert str(e.value).startswith(
        "cannot parse '/in/pkb.json': fio jobs: no job can be used for a "
        "write verdict: job sequential_write: block size not in the "
        "output (fio 2.1.4 prints no job options); ")


def test_corpus_fio_plot_qd1_trusts_rw_not_the_job_name():
    # jobname "random-read", rw=randwrite: a 4 KiB random write at QD 1.
    text = corpus(PLOT_QD1)
    write = doc_of(text)["jobs"][0]["write"]
    got = fio.read_fio(text)
    assert got.unused == [] and got.notes == []
    [step] = got.steps
    assert (step.name, step.bs, step.qd, step.pattern, step.flush,
            step.offset) == ("fio random-read", 4096, 1, "rand", "none", 0)
    # fio 3.1: lat_ns without N, no bw_bytes.
    assert step.lat_field == "write.lat_ns"
    assert step.lat_mean_ns == write["lat_ns"]["mean"] == 129800.112379
    assert step.iops == write["iops"] == 7428.909518
    assert step.ios == 60           # one degree of freedom per second


def test_corpus_fio_plot_numjobs_32_group_reporting_is_qd_256():
    text = corpus(PLOT_QD8_NJ32)
    write = doc_of(text)["jobs"][0]["write"]
    got = fio.read_fio(text)
    [step] = got.steps
    assert (step.name, step.bs, step.qd, step.pattern) == (
        "fio random-read", 4096, 8 * 32, "rand")
    assert step.lat_field == "write.lat_ns"
    assert step.lat_mean_ns == write["lat_ns"]["mean"] == 38533167.232514
    assert step.iops == 6639.787454
    assert got.unused == []
    assert got.notes == ["job random-read: one entry for its numjobs=32 "
                         "clones (group_reporting): queue depth 8 x 32 = "
                         "256"]


def test_corpus_cbt_fio_3_42_json_between_normal_text():
    # Options only in "global options" (the job options hold its name).
    got = fio.read_fio(corpus(CBT_342))
    [step] = got.steps
    assert (step.name, step.bs, step.qd, step.pattern, step.flush) == (
        "fio /dev/nvme8n6", 4096, 8, "rand", "none")
    assert step.lat_field == "write.lat_ns"
    assert step.lat_mean_ns == 2492474.939713
    assert step.iops == 3201.659668
    assert got.unused == [] and got.notes == []


def test_corpus_zh_terse_v3_line_with_fio_description():
    # The source's command wrote to a file, not /dev/sdc1: nothing is
    # asserted about the drive, only what fio printed.
    text = corpus(ZH_TERSE)
    fields = terse_line(text, 5)
    assert len(fields) == 130 and fields[2] == "name"
    got = fio.read_fio(text)
    [step] = got.steps
    assert (step.name, step.bs, step.qd, step.pattern, step.flush) == (
        "fio name", 4096, 1, "seq", "none")
    # Field 81 is the write lat mean in µs; field 47 the KiB written.
    assert step.lat_field == "write lat (terse field 81)"
    assert step.lat_mean_ns == pytest.approx(float(fields[80]) * 1000)
    assert step.lat_mean_ns == pytest.approx(297621.334)
    ios = int(fields[46]) * 1024 // 4096
    assert ios == 33509             # fio's "issued rwts: total=0,33509"
    assert step.iops == pytest.approx(ios * 1000 / int(fields[49]))
    assert got.unused == [] and got.notes == [TERSE_NOTE]


def test_corpus_zh_terse_gives_a_verdict_in_strict_json():
    doc = infer(corpus(ZH_TERSE), "fio")
    assert doc["evidence"]["sector"]["fio name"]["bs"] == 4096
    assert doc["native_sector_bytes"] is None


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(CORPUS,
                                                               "*"))))
def test_every_corpus_file_gives_steps_or_a_clean_error(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        got = fio.read_fio(text)
    except ParseError as e:
        message = str(e)
        assert message.startswith("cannot parse 'fio' output: ")
        for word in PYTHON_TEXT:
            assert word not in message, (word, message)
        return
    assert got.steps
    for step in got.steps:
        assert step.bs > 0 and step.qd >= 1
        for value in (step.iops, step.lat_mean_ns, step.lat_sd_ns):
            assert math.isfinite(value) and value > 0


# -- real fio-3.33 runs: json+, clones, readers, jobs run together -----------

def test_jsonplus_run_imports_what_wrote_alone():
    text = ours(JSONPLUS)
    assert text.startswith("note: both iodepth >= 1 and synchronous I/O")
    jobs = doc_of(text)["jobs"]
    assert "bins" in jobs[0]["write"]["clat_ns"]          # json+
    got = fio.read_fio(text)
    assert [s.name for s in got.steps] == ["fio clones", "fio psync-qd8"]
    assert got.unused == [
        "job reader: rw=randread: it reads, a write verdict needs writes "
        "only",
        "job mixed: rw=randrw: it mixes reads with the writes, a write "
        "verdict needs writes only",
        "job together-4k: it ran at the same time as job together-8k (all "
        "in group 4: no stonewall between them)",
        "job together-8k: it ran at the same time as job together-4k (all "
        "in group 4: no stonewall between them)"]
    assert got.notes == [
        "job clones: 2 entries of its clones (numjobs=2, no "
        "group_reporting) added up",
        "job psync-qd8: iodepth=8 with ioengine=psync, which runs one "
        "write at a time: queue depth 1 per job"]


def test_numjobs_without_group_reporting_adds_the_clones_up():
    text = ours(JSONPLUS)
    a, b = (job["write"] for job in doc_of(text)["jobs"][:2])
    step = fio.read_fio(text).steps[0]
    # Two clones of iodepth 4 ran together: queue depth 8, their rates
    # add up and their latencies pool over all I/Os.
    assert (step.bs, step.qd, step.pattern) == (4096, 8, "rand")
    assert step.iops == pytest.approx(a["iops"] + b["iops"])
    n_a, n_b = a["total_ios"], b["total_ios"]
    mean = (n_a * a["lat_ns"]["mean"] + n_b * b["lat_ns"]["mean"]) / \
        (n_a + n_b)
    assert step.lat_mean_ns == pytest.approx(mean)
    var = sum(n * (x["lat_ns"]["stddev"] ** 2 +
                   (x["lat_ns"]["mean"] - mean) ** 2)
              for n, x in ((n_a, a), (n_b, b))) / (n_a + n_b)
    per = (n_a + n_b) / step.ios
    assert step.lat_sd_ns == pytest.approx(math.sqrt(var) / per ** 0.5)


def test_psync_with_iodepth_8_is_queue_depth_1():
    step = fio.read_fio(ours(JSONPLUS)).steps[1]
    assert (step.name, step.qd, step.pattern) == ("fio psync-qd8", 1, "seq")


def test_group_reporting_over_two_jobs_is_refused_by_its_numbers():
    # gr-two-a holds gr-two-a and gr-two-b: its options say queue depth
    # 1, but iops x latency says 2 I/Os were in flight.
    got = fio.read_fio(ours(GROUPED))
    [step] = got.steps
    assert (step.name, step.qd) == ("fio gr-clones", 6)
    assert got.unused == [
        "job gr-two-a: iops x mean latency = 2.0 writes in flight, more "
        "than its queue depth of 1 (iodepth x numjobs): the entry holds "
        "more than the job its options describe (group_reporting over "
        "several jobs?)"]
    assert got.notes == ["job gr-clones: one entry for its numjobs=3 "
                         "clones (group_reporting): queue depth 2 x 3 = 6"]


def test_fsync_jobs_of_the_sandbox_run_are_still_a_cache_pair():
    sector, pair, qd = importers.classify(importers.parse_fio(
        ours(FIO_333)))
    assert [s.name for s in pair] == ["fio w4k", "fio w4k-fsync"]


# -- fio 2.x and missing options ----------------------------------------------

def fio2(doc: dict, version: str) -> dict:
    """A fio-3.33 document as fio 2.x shapes it: µs under lat/clat/slat,
    no sync section."""
    doc["fio version"] = version
    for job in doc["jobs"]:
        job.pop("sync", None)
        for section in ("read", "write", "trim"):
            part = job[section]
            for kind in ("slat", "clat", "lat"):
                lat = part.pop(kind + "_ns")
                part[kind] = {k: v / 1000.0 for k, v in lat.items()
                              if k in ("min", "max", "mean", "stddev")}
    return doc


def test_fio_2_17_numjobs_2_in_microseconds():
    doc = fio2(doc_of(ours(JSONPLUS)), "fio-2.17")
    doc["jobs"] = doc["jobs"][:2]           # the two clones
    got = fio.read_fio(json.dumps(doc))
    [step] = got.steps
    a, b = (job["write"] for job in doc["jobs"])
    assert (step.name, step.qd, step.lat_field) == ("fio clones", 8,
                                                    "write.lat")
    mean = (a["total_ios"] * a["lat"]["mean"] +
            b["total_ios"] * b["lat"]["mean"]) * 1000 / \
        (a["total_ios"] + b["total_ios"])
    assert step.lat_mean_ns == pytest.approx(mean)


def test_fio_2_2_prints_no_options_so_no_block_size():
    # fio 2.1.14 to 2.2: total_ios, but no options yet.
    doc = fio2(doc_of(ours(FIO_333)), "fio-2.2.10")
    del doc["global options"]
    for job in doc["jobs"]:
        del job["job options"]
    assert refusal(json.dumps(doc)).endswith(
        "no job can be used for a write verdict: job w512: block size not "
        "in the output (fio 2.2.10 prints no job options); job w4k: block "
        "size not in the output (fio 2.2.10 prints no job options); job "
        "w4k-fsync: block size not in the output (fio 2.2.10 prints no job"
        " options)")


def test_no_version_and_no_options():
    doc = doc_of(ours(FIO_333))
    del doc["fio version"], doc["global options"]
    for job in doc["jobs"]:
        del job["job options"]
    assert "job w512: block size not in the output (this fio prints no " \
        "job options)" in refusal(json.dumps(doc))


@pytest.mark.parametrize("edit,why", [
    (lambda d: d["jobs"][0]["job options"].update(rw="trimwrite"),
     "job w512: rw=trimwrite: it trims before each write, a write verdict "
     "needs writes only"),
    (lambda d: d["jobs"][0]["job options"].update(rw="read"),
     "job w512: rw=read: it reads, a write verdict needs writes only"),
    (lambda d: d["jobs"][0]["job options"].update(rw="sideways"),
     'job w512: rw="sideways" is no fio I/O pattern'),
    (lambda d: d["jobs"][0]["read"].update(total_ios=12),
     "job w512: it read as well (jobs[0].read.total_ios = 12), a write "
     "verdict needs writes only"),
    (lambda d: d["jobs"][0]["write"].update(total_ios=0),
     "job w512: it wrote nothing (jobs[0].write.total_ios = 0)"),
    (lambda d: d["jobs"][0]["job options"].update(bssplit="4k/50:8k/50"),
     "job w512: bssplit=4k/50:8k/50 varies the block size"),
    (lambda d: d["jobs"][0]["job options"].update(ioengine="null"),
     "job w512: ioengine=null writes to no drive"),
    (lambda d: d["jobs"][0].update(mixed=d["jobs"][0].pop("write")),
     'job w512: unified_rw_reporting merges its writes with the reads '
     'into "mixed": run fio without it'),
    (lambda d: d["jobs"][0].update(groupid=1),
     "job w512: it ran at the same time as job w4k (all in group 1: no "
     "stonewall between them)"),
    (lambda d: d["jobs"][0]["job options"].update(numjobs="2"),
     "job w512: one entry for its numjobs=2 clones"),
])
def test_a_job_that_is_no_write_measurement_is_named(edit, why):
    doc = doc_of(ours(FIO_333))
    edit(doc)
    got = fio.read_fio(json.dumps(doc))
    assert "fio w4k-fsync" in [s.name for s in got.steps]
    assert "fio w512" not in [s.name for s in got.steps] or \
        "numjobs" in why
    assert any(line.startswith(why) for line in got.unused + got.notes), \
        (got.unused, got.notes)


def test_no_usable_job_is_one_clean_error():
    doc = doc_of(ours(FIO_333))
    for job in doc["jobs"]:
        job["job options"]["rw"] = "randread"
    assert refusal(json.dumps(doc)) == (
        "cannot parse 'fio' output: missing or bad field 'jobs': no job "
        "can be used for a write verdict: job w512: rw=randread: it reads,"
        " a write verdict needs writes only; job w4k: rw=randread: it "
        "reads, a write verdict needs writes only; job w4k-fsync: "
        "rw=randread: it reads, a write verdict needs writes only")


# -- terse output -------------------------------------------------------------

def test_terse_run_clones_group_reporting_fsync_and_512():
    text = ours(TERSE)
    got = fio.read_fio(text)
    by = {s.name: s for s in got.steps}
    assert sorted(by) == ["fio t-512", "fio t-clones", "fio t-grouped"]
    # psync: one write in flight per clone, two clones.
    assert (by["fio t-clones"].qd, by["fio t-clones"].bs) == (2, 4096)
    # One terse line for two clones: the normal report says "jobs=2".
    assert (by["fio t-grouped"].qd, by["fio t-grouped"].bs) == (2, 4096)
    assert (by["fio t-512"].qd, by["fio t-512"].bs) == (1, 512)
    t512 = terse_line(text, 13)
    assert by["fio t-512"].iops == pytest.approx(
        int(t512[46]) * 1024 // 512 * 1000 / int(t512[49]))
    assert by["fio t-512"].lat_mean_ns == pytest.approx(
        float(t512[80]) * 1000)
    # fsync=1 is nowhere in terse output, but the queue stood empty.
    assert got.unused == [
        "job t-fsync: iops x mean latency = 0.07 writes in flight at "
        "queue depth 1: the time between its writes is not the drive's (a "
        "flush, think time or a rate limit, which terse output does not "
        "show)"]
    assert got.notes == [
        TERSE_NOTE,
        "job t-clones: 2 entries of its clones (numjobs=2, no "
        "group_reporting) added up",
        "job t-grouped: one entry for its numjobs=2 clones "
        "(group_reporting): queue depth 1 x 2 = 2"]


def test_terse_without_fios_description_has_no_block_size():
    assert refusal(ours(MINIMAL)) == (
        "cannot parse 'fio' output: missing or bad field 'terse output': "
        "no job can be used for a write verdict: job v5-qd4: block size "
        "not in the output (terse output prints no job options, and fio's "
        "description \"v5-qd4: (g=0): rw=..., bs=...\" is not in the "
        "text)")


def test_terse_version_5():
    text = ours(TERSE_V5)
    fields = terse_line(text, 4)
    assert fields[0] == "5" and len(fields) == 189
    [step] = fio.read_fio(text).steps
    assert (step.name, step.bs, step.qd, step.pattern) == (
        "fio v5-qd4", 4096, 4, "rand")
    assert step.lat_field == "write lat (terse field 87)"
    assert step.lat_mean_ns == pytest.approx(float(fields[86]) * 1000)


def test_group_reported_clones_without_the_normal_report():
    text = ours(TERSE)
    text = text[:text.index("\nt-clones: (groupid=0")]
    got = fio.read_fio(text)
    assert "job t-grouped: fio ran it as several clones (numjobs, the " \
        "'...' after its description) and the terse output does not say " \
        "how many" in got.unused


def test_terse_jobs_of_one_group_ran_together():
    text = ours(TERSE).replace("t-fsync: (g=2)", "t-fsync: (g=3)") \
        .replace(";t-fsync;2;", ";t-fsync;3;")
    got = fio.read_fio(text)
    assert "job t-512: it ran at the same time as job t-fsync (all in " \
        "group 3: no stonewall between them)" in got.unused


def test_terse_output_pasted_twice_is_read_once():
    text = corpus(ZH_TERSE)
    twice = text + text
    [(first, _), (again, _)] = fio.find_fio_terse(twice)
    got = fio.read_fio(twice)
    assert [s.name for s in got.steps] == ["fio name"]
    assert got.notes == ["line %d repeats line %d (the same output twice):"
                         " read once" % (again, first), TERSE_NOTE]


def test_terse_line_is_found_for_format_detection():
    assert [n for n, _ in fio.find_fio_terse(corpus(ZH_TERSE))] == [5]
    assert fio.find_fio_terse(corpus(CBT_342)) == []
    assert fio.find_fio_terse("3;4;5\n") == []


@pytest.mark.parametrize("field,value,where,reason", [
    (81, "fast", "write lat mean", 'not a number: "fast"'),
    (81, "nan", "write lat mean", 'not a finite number: "nan"'),
    (82, "inf", "write lat stddev", 'not a finite number: "inf"'),
    (82, "0.000000", "write lat stddev", "0 over 33509 I/Os"),
    (47, "-5", "write io KiB", 'cannot be negative: "-5"'),
    (50, "0", "write runtime ms", 'must be above 0, not "0"'),
    (4, "x", "groupid", 'not a number: "x"'),
    (5, "5", "error", "fio reports error 5 for job name"),
    (88, "0.7", "cpu user", 'not a percentage: "0.7": the line is not '
     "laid out as fio's terse version 3"),
])
def test_terse_refusals_name_line_and_field(field, value, where, reason):
    text = with_terse_fields(corpus(ZH_TERSE), 5, {field: value})
    refusal(text)
    with pytest.raises(ParseError) as e:
        fio.read_fio(text)
    assert e.value.field == "line 5 field %d (%s)" % (field, where)
    assert e.value.reason.startswith(reason), e.value.reason


def test_terse_job_name_with_a_semicolon_is_refused():
    text = corpus(ZH_TERSE).replace(";name;", ";na;me;", 1)
    assert "not laid out as fio's terse version 3 (a ';' in the job name, " \
        "or unified_rw_reporting?)" in refusal(text)


def test_terse_line_cut_short():
    text = corpus(ZH_TERSE)
    line = text.splitlines()[4]
    short = ";".join(line.split(";")[:100])
    assert "'line 5': a terse version 3 line has at least 121 fields, " \
        "this one 100" in refusal(text.replace(line, short))


def test_terse_hostile_values_end_in_steps_or_a_clean_error():
    text = corpus(ZH_TERSE)
    for field in range(1, 131):
        for value in ("", "x", "-1", "nan", "1e400", "0", "99999999999"):
            changed = with_terse_fields(text, 5, {field: value})
            try:
                got = fio.read_fio(changed)
            except ParseError as e:
                for word in PYTHON_TEXT:
                    assert word not in str(e), (field, value, str(e))
                continue
            for step in got.steps:
                for number in (step.iops, step.lat_mean_ns, step.lat_sd_ns):
                    assert math.isfinite(number) and number > 0, (
                        field, value)


def test_parse_fio_keeps_returning_the_steps():
    assert importers.parse_fio(corpus(CBT_342)) == \
        fio.read_fio(corpus(CBT_342)).steps
