# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for `sdio paired` (plugin/engine/paired.c), run as a program.

The null backend checks the JSON contract, the rounds, the slice rule
and the seeded orders without a device; the sync backend runs against a
sparse file, and strace shows every I/O the engine issues (offsets per
arm, slices in the reported order, flushes) and injects I/O errors.
"""

import json
import os
import random
import re
import shutil
import statistics
import subprocess

import pytest

import engine_run
from engine_run import EXIT_IO, EXIT_OK, EXIT_SETUP, EXIT_USAGE, MIB

needs_strace = pytest.mark.skipif(shutil.which("strace") is None,
                                  reason="strace is not installed")


def run(sdio, *args, **kwargs):
    return engine_run.run(sdio, "paired", *args, **kwargs)


def run_json(sdio, *args, **kwargs):
    return engine_run.run_json(sdio, "paired", *args, **kwargs)


def arms(*specs):
    out = []
    for spec in specs:
        out += ["--arm", spec]
    return out


NULL3 = ["--backend", "null"] + arms("name=size-512,bs=512",
                                     "name=size-4k,bs=4k",
                                     "name=mis-4k,bs=4k,offset=512")


@pytest.fixture
def target(shm_file):
    """A sparse file, on tmpfs when there is one (conftest.shm_file)."""
    return shm_file


# -- JSON contract ----------------------------------------------------------

INT, FLOAT, STR, BOOL = int, (int, float), str, bool

SCHEMA_TOP = {"version": INT, "mode": STR, "target": STR, "options": dict,
              "arms": list, "rounds": list, "errors": list,
              "elapsed_ns": INT, "stopped": STR}
SCHEMA_OPTIONS = {"rounds": INT, "warmup_rounds": INT, "slice_s": FLOAT,
                  "min_ios": INT, "region": INT, "seed": INT,
                  "direct": BOOL, "backend": STR, "time_s": FLOAT}
SCHEMA_ARM = {"index": INT, "name": STR, "bs": INT, "offset": INT,
              "pattern": STR, "flush": STR, "rw": STR, "region_start": INT,
              "region_bytes": INT, "blocks": INT, "ios": INT}
SCHEMA_ROUND = {"index": INT, "start_ns": INT, "order": list,
                "slices": list}
SCHEMA_SLICE = {"arm": INT, "ios": INT, "settle": INT, "mean_ns": FLOAT,
                "median_ns": INT, "min_ns": INT, "max_ns": INT,
                "elapsed_ns": INT}
SCHEMA_ERROR = {"op": STR, "offset": INT, "errno": INT, "error": STR}


def check_keys(obj, schema, where):
    missing = set(schema) - set(obj)
    assert not missing, "%s lacks %s" % (where, sorted(missing))
    for key, typ in schema.items():
        assert isinstance(obj[key], typ), (where, key, obj[key])
        if typ is INT:
            assert not isinstance(obj[key], bool), (where, key)


def check_doc(doc):
    """The shape, and the relations every paired run must satisfy."""
    check_keys(doc, SCHEMA_TOP, "document")
    assert doc["version"] == 1 and doc["mode"] == "paired"
    o = doc["options"]
    check_keys(o, SCHEMA_OPTIONS, "options")
    n = len(doc["arms"])
    assert 1 <= n <= 32
    sub = o["region"] // n // MIB * MIB
    for i, arm in enumerate(doc["arms"]):
        check_keys(arm, SCHEMA_ARM, "arm")
        assert arm["index"] == i
        assert arm["pattern"] in ("seq", "rand")
        assert arm["flush"] in ("none", "each")
        assert arm["rw"] in ("write", "read")
        assert arm["region_start"] == i * sub
        assert arm["region_bytes"] == sub
        assert arm["blocks"] == (sub - arm["offset"]) // arm["bs"] >= 1
        assert arm["ios"] == sum(r["slices"][i]["ios"]
                                 for r in doc["rounds"])
    assert len({a["name"] for a in doc["arms"]}) == n
    for r, rnd in enumerate(doc["rounds"]):
        check_keys(rnd, SCHEMA_ROUND, "round")
        assert rnd["index"] == r
        assert sorted(rnd["order"]) == list(range(n))
        assert [s["arm"] for s in rnd["slices"]] == list(range(n))
        for s in rnd["slices"]:
            check_keys(s, SCHEMA_SLICE, "slice")
            assert s["settle"] == 1
            assert s["ios"] >= o["min_ios"]
            assert s["min_ns"] <= s["median_ns"] <= s["max_ns"]
            assert s["min_ns"] <= s["mean_ns"] <= s["max_ns"]
            # The timed I/Os and the settle I/O fill the slice (the
            # mean is printed to 3 decimals).
            assert s["mean_ns"] * s["ios"] <= \
                s["elapsed_ns"] + 0.0005 * s["ios"] + 1
        if r > 0:
            assert rnd["start_ns"] >= doc["rounds"][r - 1]["start_ns"] + \
                sum(s["elapsed_ns"] for s in doc["rounds"][r - 1]["slices"])
    if doc["rounds"]:
        assert doc["rounds"][0]["start_ns"] == 0
        last = doc["rounds"][-1]
        assert doc["elapsed_ns"] >= last["start_ns"] + \
            sum(s["elapsed_ns"] for s in last["slices"])
    for err in doc["errors"]:
        check_keys(err, SCHEMA_ERROR, "error")
        assert err["op"] in ("write", "read", "flush")
    assert doc["stopped"] in ("rounds", "time", "error")
    assert (doc["stopped"] == "error") == bool(doc["errors"])
    if doc["stopped"] == "rounds":
        assert len(doc["rounds"]) == o["rounds"]


# -- null backend: rounds, slices, orders -----------------------------------

def test_null_shape_and_rounds(sdio):
    doc = run_json(sdio, *NULL3, "--rounds", 5, "--slice", 0.002, "x")
    check_doc(doc)
    assert doc["target"] == "x"
    assert len(doc["rounds"]) == 5
    assert doc["stopped"] == "rounds" and doc["errors"] == []
    assert [a["name"] for a in doc["arms"]] == ["size-512", "size-4k",
                                                "mis-4k"]
    assert doc["arms"][2]["offset"] == 512
    for rnd in doc["rounds"]:
        for s in rnd["slices"]:
            assert s["elapsed_ns"] >= 2_000_000


def test_null_defaults(sdio):
    doc = run_json(sdio, "--backend", "null", "--arm", "name=a,bs=4k", "x")
    check_doc(doc)
    assert doc["options"] == {
        "rounds": 8, "warmup_rounds": 1, "slice_s": 0.03, "min_ios": 8,
        "region": 1 << 40, "seed": 1, "direct": False, "backend": "null",
        "time_s": 0}
    assert doc["arms"] == [{
        "index": 0, "name": "a", "bs": 4096, "offset": 0, "pattern": "seq",
        "flush": "none", "rw": "write", "region_start": 0,
        "region_bytes": 1 << 40, "blocks": (1 << 40) // 4096,
        "ios": doc["arms"][0]["ios"]}]
    assert len(doc["rounds"]) == 8
    for rnd in doc["rounds"]:
        assert rnd["slices"][0]["elapsed_ns"] >= 30_000_000


def test_null_options_echoed(sdio):
    doc = run_json(sdio, "--backend", "null", "--direct", "--seed", 42,
                   "--region", "64m", "--rounds", 2, "--warmup-rounds", 0,
                   "--slice", 0.001, "--min-ios", 20, "--time", 5,
                   *arms("name=A.b_c-9,bs=1k,offset=4k,pattern=rand,"
                         "flush=each,rw=read", "name=w,bs=8k"), "x")
    check_doc(doc)
    assert doc["options"] == {
        "rounds": 2, "warmup_rounds": 0, "slice_s": 0.001, "min_ios": 20,
        "region": 64 * MIB, "seed": 42, "direct": True, "backend": "null",
        "time_s": 5}
    a, w = doc["arms"]
    assert (a["name"], a["bs"], a["offset"], a["pattern"], a["flush"],
            a["rw"]) == ("A.b_c-9", 1024, 4096, "rand", "each", "read")
    assert (w["name"], w["bs"], w["offset"], w["pattern"], w["flush"],
            w["rw"]) == ("w", 8192, 0, "seq", "none", "write")
    assert a["region_start"] == 0 and w["region_start"] == 32 * MIB
    assert a["region_bytes"] == w["region_bytes"] == 32 * MIB
    assert a["blocks"] == (32 * MIB - 4096) // 1024


def test_null_min_ios_bounds_short_slices(sdio):
    # A slice ends only when both rules are met: with a slice time that
    # has passed after the first I/O, min-ios decides alone.
    doc = run_json(sdio, *NULL3, "--slice", 1e-9, "--min-ios", 5, "x")
    check_doc(doc)
    assert {s["ios"] for r in doc["rounds"] for s in r["slices"]} == {5}
    assert [a["ios"] for a in doc["arms"]] == [40, 40, 40]


def orders(doc):
    return [tuple(r["order"]) for r in doc["rounds"]]


def test_null_order_is_shuffled_every_round(sdio):
    doc = run_json(sdio, *NULL3, "--slice", 1e-9, "x")
    check_doc(doc)
    assert len(set(orders(doc))) > 1
    # No arm always follows the same arm (None: it ran first).
    for arm in range(3):
        before = {o[o.index(arm) - 1] if o.index(arm) > 0 else None
                  for o in orders(doc)}
        assert len(before) > 1, (arm, orders(doc))


@pytest.mark.parametrize("narms", [4, 32])
def test_null_same_seed_same_orders(sdio, narms):
    specs = arms(*["name=arm%d,bs=512" % i for i in range(narms)])
    args = ["--backend", "null", "--slice", 1e-9, "--min-ios", 1] + specs
    one = run_json(sdio, *args, "--seed", 7, "x")
    two = run_json(sdio, *args, "--seed", 7, "x")
    other = run_json(sdio, *args, "--seed", 8, "x")
    check_doc(one)
    assert orders(one) == orders(two)
    assert orders(one) != orders(other)
    assert one["options"]["slice_s"] == 1e-9
    # 4 arms have 24 orders, 8 rounds may repeat one; 32 arms do not.
    assert len(set(orders(one))) == (8 if narms == 32 else
                                     len(set(orders(one))))
    assert len(set(orders(one))) > 1


def check_time_bound(doc, bound_ns):
    """The --time rule: a reported round starts only if its start_ns is
    within the bound; the first clock reading past it stops the run and
    is its elapsed_ns.  Both are one reading in the engine, so no
    preemption can break either."""
    check_doc(doc)
    assert doc["stopped"] == "time"
    assert len(doc["rounds"]) >= 1
    for rnd in doc["rounds"]:
        assert rnd["start_ns"] <= bound_ns, (rnd["start_ns"], bound_ns)
    assert doc["elapsed_ns"] > bound_ns


def test_null_time_bound_stops_early(sdio):
    doc = run_json(sdio, *NULL3, "--rounds", 10000, "--slice", 0.002,
                   "--time", 0.05, "x")
    check_time_bound(doc, 50_000_000)
    assert doc["options"]["time_s"] == 0.05
    # A round lasts at least its 3 slices of 2 ms, and every round
    # starts within the bound: at most 1 + 50 // 6 rounds, whatever
    # the load.
    assert len(doc["rounds"]) <= 1 + 50 // 6


def test_null_time_bound_below_one_round(sdio):
    # The first reported round always runs; warm-up rounds do not count
    # against the bound, which starts with the first reported round.
    doc = run_json(sdio, *NULL3, "--rounds", 5, "--warmup-rounds", 3,
                   "--slice", 0.001, "--time", 1e-9, "x")
    check_time_bound(doc, 1)
    assert len(doc["rounds"]) == 1
    assert [a["ios"] for a in doc["arms"]] == \
        [s["ios"] for s in doc["rounds"][0]["slices"]]


def test_null_time_bound_needs_a_round_left(sdio):
    # Past the bound with no round left to skip, the run ran all its
    # rounds: "rounds", not "time".
    doc = run_json(sdio, *NULL3, "--rounds", 1, "--slice", 0.001,
                   "--time", 1e-9, "x")
    check_doc(doc)
    assert doc["stopped"] == "rounds" and len(doc["rounds"]) == 1


@pytest.mark.parametrize("zero", ["0", "0.0"])
def test_null_time_zero_is_no_bound(sdio, zero):
    doc = run_json(sdio, *NULL3, "--rounds", 3, "--slice", 1e-9,
                   "--time", zero, "x")
    assert doc["stopped"] == "rounds" and len(doc["rounds"]) == 3
    assert doc["options"]["time_s"] == 0


def test_null_warmup_rounds_not_reported(sdio):
    doc = run_json(sdio, *NULL3, "--rounds", 2, "--warmup-rounds", 3,
                   "--slice", 1e-9, "--min-ios", 4, "x")
    check_doc(doc)
    assert len(doc["rounds"]) == 2
    assert [a["ios"] for a in doc["arms"]] == [8, 8, 8]


def test_human_summary(sdio):
    out = run(sdio, *NULL3, "--rounds", 2, "--slice", 1e-9, "x").stdout
    assert "2 of 2 rounds" in out and "stopped: rounds" in out
    for name in ("size-512", "size-4k", "mis-4k"):
        assert re.search(r"^  %s +16 I/Os, mean of slice medians "
                         r"[\d.]+ us$" % name, out, re.M), out


def test_median_is_exact_lower_median(sdio):
    rng = random.Random(3)
    cases = [[5], [2, 1], [4, 4, 1, 9], list(range(1000, 0, -1)),
             [7] * 99 + [1], [1] * 50 + [2] * 51]
    cases += [[rng.randrange(rng.choice([3, 1000, 10 ** 9]))
               for _ in range(rng.randint(1, 500))] for _ in range(40)]
    for values in cases:
        proc = subprocess.run([sdio, "--selftest-median"],
                              input=" ".join(map(str, values)),
                              capture_output=True, text=True, timeout=10)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["count"] == len(values)
        assert out["median"] == statistics.median_low(values)
        assert out["min"] == min(values) and out["max"] == max(values)
        assert out["mean"] == pytest.approx(statistics.fmean(values))


# -- usage and setup errors -------------------------------------------------

@pytest.mark.parametrize("args,says", [
    (["x"], "needs at least one --arm"),
    (arms("name=a,bs=4k", "name=a,bs=512") + ["x"],
     "--arm 1 'name=a,bs=512': name 'a' is already arm 0's"),
    (arms("name=a,bs=4k,size=1") + ["x"], "unknown key 'size'"),
    (arms("name=a,bs=0") + ["x"], "--arm 0 'name=a,bs=0': bad value '0'"),
    (arms("name=a,bs=4x") + ["x"], "bad value '4x' for bs"),
    (arms("name=a") + ["x"], "'name=a': bs=BYTES is missing"),
    (arms("bs=4k") + ["x"], "'bs=4k': name=NAME is missing"),
    (arms("name=a b,bs=4k") + ["x"], "bad name 'a b'"),
    (arms("name=%s,bs=4k" % ("n" * 33)) + ["x"], "bad name"),
    (arms("name=,bs=4k") + ["x"], "bad name ''"),
    (arms("name=a,bs=4k,bs=8k") + ["x"], "key 'bs' given twice"),
    (arms("name=a,bs=4k,") + ["x"], "is not key=value"),
    (arms("name=a,bs") + ["x"], "'bs' is not key=value"),
    (arms("name=a,bs=4k,pattern=zipf") + ["x"], "for pattern"),
    (arms("name=a,bs=4k,flush=some") + ["x"], "for flush"),
    (arms("name=a,bs=4k,rw=trim") + ["x"], "for rw"),
    (arms("name=a,bs=4k,offset=-1") + ["x"], "for offset"),
    (arms(*["name=a%d,bs=1" % i for i in range(33)]) + ["x"],
     "more than 32 arms"),
    (["--arm"], "option '--arm' needs a value"),
    (arms("name=a,bs=4k"), "no target given"),
    (arms("name=a,bs=4k") + ["x", "y"], "more than one target"),
    (arms("name=a,bs=4k") + ["--rounds", 0, "x"], "--rounds"),
    (arms("name=a,bs=4k") + ["--warmup-rounds", -1, "x"],
     "--warmup-rounds"),
    (arms("name=a,bs=4k") + ["--slice", 0, "x"], "--slice"),
    (arms("name=a,bs=4k") + ["--min-ios", 0, "x"], "--min-ios"),
    (arms("name=a,bs=4k") + ["--time", -1, "x"], "--time"),
    (arms("name=a,bs=4k") + ["--region", 0, "x"], "--region"),
    (arms("name=a,bs=4k") + ["--backend", "aio", "x"], "--backend"),
    (arms("name=a,bs=4k") + ["--qd", 2, "x"], "unknown option '--qd'"),
    (arms("name=a,bs=4k,mix=4k:x") + ["x"], "bad mix '4k:x'"),
    (arms("name=a,bs=4k,mix=4k::4k") + ["x"], "bad mix"),
    (arms("name=a,bs=4k,mix=" + ":".join(["512"] * 33)) + ["x"],
     "1 to 32 sizes"),
    (arms("name=a,bs=4k,mix=5000,align=4k") + ["x"],
     "mix size 8192 (rounded to align) exceeds bs 4096"),
    (arms("name=a,bs=4k,align=4k") + ["x"], "align needs mix"),
    (arms("name=a,bs=8k,mix=4k,align=3k") + ["x"],
     "align must be a power of two"),
    (arms("name=a,bs=8k,mix=4k,pattern=rand") + ["x"],
     "mix needs rw=write and pattern=seq"),
    (arms("name=a,bs=8k,mix=4k,rw=read") + ["x"], "mix needs rw=write"),
])
def test_usage_errors_exit_1(sdio, args, says):
    proc = run(sdio, "--backend", "null", *args, expect=EXIT_USAGE)
    assert says in proc.stderr
    assert "usage:" in proc.stderr and "sdio paired" in proc.stderr


def test_region_too_small_exit_1(sdio):
    proc = run(sdio, "--backend", "null", "--region", "3m",
               *arms("name=a,bs=4k", "name=b,bs=4k", "name=c,bs=4k",
                     "name=d,bs=4k"), "x", expect=EXIT_USAGE)
    assert "less than 1 MiB per arm" in proc.stderr
    proc = run(sdio, "--backend", "null", "--region", "5m",
               *arms("name=small,bs=4k", "name=big,bs=2m,offset=512k"),
               "x", expect=EXIT_USAGE)
    assert "arm 1 'big': offset 524288 + bs 2097152 exceed its " \
        "sub-region of 2097152 bytes" in proc.stderr


def test_help_documents_paired(sdio):
    out = run(sdio, "--help").stdout
    assert "sdio paired [paired options] --arm SPEC" in out
    assert "--warmup-rounds N" in out and "--min-ios N" in out
    assert "0 ok, 1 usage, 2 cannot open or set up the target" in out


def test_missing_target_exit_2(sdio, tmp_path):
    proc = run(sdio, "--arm", "name=a,bs=4k", str(tmp_path / "nope"),
               expect=EXIT_SETUP)
    assert "cannot open" in proc.stderr and "No such file" in proc.stderr


def test_unknown_size_without_region_exit_2(sdio, target):
    proc = run(sdio, "--arm", "name=a,bs=4k", target(0), expect=EXIT_SETUP)
    assert "give --region" in proc.stderr


def test_read_past_end_of_file_is_refused(sdio, target):
    proc = run(sdio, "--region", "64m", "--arm", "name=r,bs=4k,rw=read",
               target(4 * MIB), expect=EXIT_USAGE)
    assert "exceeds the size" in proc.stderr


# -- sync backend on a file --------------------------------------------------

IO_LINE = re.compile(r"^(pwrite64|pread64)\(\d+, .*, (\d+), (\d+)\) += "
                     r"(-?\d+)|^(fdatasync)\(\d+\) += (-?\d+)", re.M)


def traced(sdio, args, path):
    """Run under strace; the document and the I/Os on path in issue
    order, each [syscall, size, offset, followed by fdatasync]."""
    proc = run(sdio, *args, "--json", prefix=[
        "strace", "-qq", "-s", "0", "-P", path, "-e",
        "trace=pwrite64,pread64,fdatasync", "-o", "/dev/stderr"])
    ios = []
    for m in IO_LINE.finditer(proc.stderr):
        if m.group(5):
            assert ios and ios[-1][0] == "pwrite64" and not ios[-1][3]
            ios[-1][3] = True
        else:
            assert int(m.group(4)) == int(m.group(2))
            ios.append([m.group(1), int(m.group(2)), int(m.group(3)),
                        False])
    return json.loads(proc.stdout), ios


@needs_strace
def test_sync_offsets_slices_and_orders(sdio, target):
    path = target(64 * MIB)
    args = ["--slice", 1e-9, "--min-ios", 4, "--rounds", 3,
            "--seed", 5] + arms(
                "name=size-512,bs=512", "name=mis-4k,bs=4k,offset=512,"
                "pattern=rand", "name=flush-4k,bs=4k,flush=each",
                "name=read-8k,bs=8k,rw=read,flush=each") + [path]
    doc, ios = traced(sdio, args, path)
    check_doc(doc)
    assert os.path.getsize(path) == 64 * MIB
    sub = 16 * MIB
    assert [a["region_start"] for a in doc["arms"]] == \
        [0, sub, 2 * sub, 3 * sub]
    kinds = ["pwrite64", "pwrite64", "pwrite64", "pread64"]
    # Every I/O inside its arm's sub-region, on its arm's block grid.
    per_io_arm = []
    for call, size, off, flushed in ios:
        i = off // sub
        arm = doc["arms"][i]
        per_io_arm.append(i)
        assert call == kinds[i] and size == arm["bs"]
        assert (off - arm["region_start"] - arm["offset"]) % size == 0
        assert arm["region_start"] + arm["offset"] <= off
        assert off + size <= arm["region_start"] + sub
        assert flushed == (i == 2)
    # 1 warm-up + 3 rounds of 4 slices, each 1 settle + 4 timed I/Os.
    assert len(ios) == 4 * 4 * 5
    slices = [per_io_arm[k:k + 5] for k in range(0, len(ios), 5)]
    assert all(len(set(s)) == 1 for s in slices)
    ran = [s[0] for s in slices]
    for r in range(4):
        assert sorted(ran[4 * r:4 * r + 4]) == [0, 1, 2, 3]
    assert [tuple(ran[4 * r:4 * r + 4]) for r in (1, 2, 3)] == orders(doc)
    # seq walks on across slices and rounds.
    for i, bs in ((0, 512), (2, 4096), (3, 8192)):
        offs = [off for (_, _, off, _), a in zip(ios, per_io_arm) if a == i]
        assert offs == [i * sub + bs * k for k in range(20)]
    # rand: the same seed gives the same offsets.
    again, ios2 = traced(sdio, args, path)
    assert orders(again) == orders(doc)
    assert [io[2] for io in ios2] == [io[2] for io in ios]
    rand_offs = {io[2] for io in ios if io[2] // sub == 1}
    assert len(rand_offs) > 10


def test_sync_writes_the_seeded_pattern(sdio, target):
    path = target(4 * MIB)
    doc = run_json(sdio, "--rounds", 1, "--warmup-rounds", 0, "--slice",
                   1e-9, "--min-ios", 3, *arms("name=a,bs=4k",
                                               "name=b,bs=8k,rw=read"),
                   path)
    check_doc(doc)
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) == 4 * MIB
    # Arm a wrote 4 blocks of the pseudo-random buffer; arm b only read.
    written = data[:4 * 4096]
    assert written[:4096] * 4 == written
    assert len(set(written[:4096])) > 200
    assert data[4 * 4096:].count(0) == len(data) - 4 * 4096


def test_sync_direct_or_buffered(sdio, tmp_path):
    path = tmp_path / "direct.dat"
    with open(path, "wb") as f:
        f.truncate(8 * MIB)
    args = ["--slice", 0.001, "--rounds", 2,
            *arms("name=a,bs=4k", "name=b,bs=16k,pattern=rand"), path]
    proc = subprocess.run([sdio, "paired", "--direct", "--json"] +
                          [str(a) for a in args], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode == EXIT_SETUP:       # no O_DIRECT here: fall back
        proc = run(sdio, "--json", *args)
    assert proc.returncode == EXIT_OK, proc.stderr
    doc = json.loads(proc.stdout)
    check_doc(doc)
    assert doc["errors"] == [] and len(doc["rounds"]) == 2
    assert os.path.getsize(path) == 8 * MIB


@needs_strace
def test_sync_write_error_exit_3_lists_completed_rounds(sdio, target):
    # 9 writes a slice (1 settle + 8 timed); the 21st write fails: two
    # rounds are complete, the third is cut short and not listed.
    path = target(4 * MIB)
    doc = run_json(sdio, "--warmup-rounds", 0, "--slice", 1e-9,
                   "--arm", "name=a,bs=4k", path, expect=EXIT_IO, prefix=[
                       "strace", "-qq", "-o", "/dev/null", "-e",
                       "inject=pwrite64:error=EIO:when=21"])
    check_doc(doc)
    assert doc["stopped"] == "error"
    assert len(doc["rounds"]) == 2
    assert doc["arms"][0]["ios"] == 16
    assert doc["errors"] == [{"op": "write", "offset": 20 * 4096,
                              "errno": 5, "error": os.strerror(5)}]
    assert doc["elapsed_ns"] > 0


@needs_strace
def test_sync_error_in_warmup_lists_no_round(sdio, target):
    path = target(4 * MIB)
    doc = run_json(sdio, "--slice", 1e-9, "--arm", "name=a,bs=4k", path,
                   expect=EXIT_IO, prefix=[
                       "strace", "-qq", "-o", "/dev/null", "-e",
                       "inject=pwrite64:error=ENOSPC:when=3"])
    check_doc(doc)
    assert doc["rounds"] == [] and doc["elapsed_ns"] == 0
    assert doc["errors"] == [{"op": "write", "offset": 2 * 4096,
                              "errno": 28, "error": os.strerror(28)}]


@needs_strace
def test_sync_flush_error_exit_3(sdio, target):
    path = target(4 * MIB)
    proc = run(sdio, "--slice", 1e-9, "--arm",
               "name=f,bs=4k,flush=each", path, expect=EXIT_IO, prefix=[
                   "strace", "-qq", "-o", "/dev/null", "-e",
                   "inject=fdatasync:error=EIO:when=3"])
    assert "error: flush at offset 8192: " + os.strerror(5) in proc.stdout
    doc = run_json(sdio, "--slice", 1e-9, "--arm",
                   "name=f,bs=4k,flush=each", path, expect=EXIT_IO,
                   prefix=["strace", "-qq", "-o", "/dev/null", "-e",
                           "inject=fdatasync:error=EIO:when=3"])
    assert doc["errors"] == [{"op": "flush", "offset": 2 * 4096,
                              "errno": 5, "error": os.strerror(5)}]
    assert doc["stopped"] == "error"


def test_run_mode_unchanged_by_paired(sdio):
    proc = subprocess.run([sdio, "--backend", "null", "--max-ios", "10",
                           "--json", "x"], capture_output=True, text=True,
                          timeout=10)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["summary"]["ios"] == 10


MIX = [4096, 2560, 131072, 1536, 5632]


@needs_strace
@pytest.mark.parametrize("align", [512, 4096])
def test_sync_mix_packs_rounded_sizes_whole_cycles(sdio, target, align):
    """A mix arm writes its sizes in turn, each rounded up to align and
    packed after the last, and each slice times whole cycles of the
    mix (the replay of ZFS's writes at one ashift, certify/gains.py)."""
    path = target(64 * MIB)
    spec = "name=mix,bs=128k,mix=%s,align=%d" % (
        ":".join(str(m) for m in MIX), align)
    args = ["--slice", 1e-9, "--min-ios", 3, "--rounds", 4, "--warmup-rounds",
            0] + arms(spec) + [path]
    doc, ios = traced(sdio, args, path)
    check_doc(doc)
    rounded = [-(-m // align) * align for m in MIX]
    assert doc["arms"][0]["mix"] == rounded
    assert doc["arms"][0]["align"] == align
    sizes = [io[1] for io in ios]
    assert sizes == [rounded[k % len(MIX)] for k in range(len(ios))]
    offsets = [io[2] for io in ios]
    assert offsets == [sum(sizes[:k]) for k in range(len(ios))]
    assert all(off % align == 0 for off in offsets)
    # Each slice: 1 settle I/O, then whole cycles of the mix.
    assert all(s["ios"] % len(MIX) == 0 for r in doc["rounds"]
               for s in r["slices"])
    assert len(ios) == sum(s["ios"] + 1 for r in doc["rounds"]
                           for s in r["slices"])


@needs_strace
def test_sync_mix_wraps_in_its_sub_region(sdio, target):
    """Packed writes that would pass the end of the arm's sub-region
    start again at its beginning, never crossing into the next arm's."""
    path = target(4 * MIB)
    doc, ios = traced(sdio, ["--slice", 1e-9, "--min-ios", 6, "--rounds", 2,
                             "--warmup-rounds", 0, "--region", 4 * MIB] +
                      arms("name=a,bs=1m,mix=1m:512k:256k,align=4k",
                           "name=b,bs=4k") + [path], path)
    check_doc(doc)
    mine = [(size, off) for _, size, off, _ in ios if off < 2 * MIB]
    expect, cursor = [], 0
    for k in range(len(mine)):
        size = (1 << 20, 1 << 19, 1 << 18)[k % 3]
        if cursor + size > 2 * MIB:
            cursor = 0
        expect.append((size, cursor))
        cursor += size
    assert mine == expect
    assert any(off == 0 for _, off in mine[1:])
