# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdio powercut` (issue 30) on files: the writer's lines as the
witness logs them (certify/powercut.py's parse_log takes them; each
flush names the last write completed before it), its numbering, its
seed, its time bound, the block layout powercut.c documents, and the
read-back (parse_slots): the latest write of each slot, zeros, a block
torn, moved to another slot or of another run.  Usage errors exit 1
naming the option, a region past the target's end 2, I/O errors
(injected with strace) 3 with nothing more on stdout, and a witness
gone away (stdout's read end closed) 2, at once."""

import os
import re
import shutil
import struct
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if os.path.join(REPO, "plugin") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "plugin"))

from engine_run import EXIT_IO, EXIT_OK, EXIT_SETUP, EXIT_USAGE, \
    run  # noqa: E402
from sdtune.certify.powercut import parse_log, parse_slots  # noqa: E402

RUN_A = "0123456789abcdef"
RUN_B = "fedcba9876543210"
SLOTS, BLOCK = 256, 4096
STRACE = shutil.which("strace")
needs_strace = pytest.mark.skipif(STRACE is None, reason="no strace")


def region(path, slots=SLOTS, block=BLOCK):
    with open(path, "wb") as f:
        f.truncate(slots * block)
    return str(path)


def write_args(path, run_id=RUN_A, slots=SLOTS, *extra):
    # No wait after a flush's notice (test_a_flush_is_announced_first
    # has it) and a flush after every burst (--flush-every-ms 0): the
    # pattern then depends on the seed alone, not on the drive's speed.
    return ["powercut", "write", "--run", run_id, "--slots", slots,
            "--block", BLOCK, "--seconds", 1, "--notice-ms", 0,
            "--flush-every-ms", 0] + list(extra) + [path]


def read_slots(sdio, path, slots=SLOTS):
    proc = run(sdio, "powercut", "read", "--slots", slots, "--block", BLOCK,
               path)
    return parse_slots(proc.stdout.splitlines(), path, slots)


def writes(lines):
    """(seq, slot) of the log's w lines, in order."""
    return [tuple(int(x) for x in line.split()[1:]) for line in lines
            if line.startswith("w ")]


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


@pytest.fixture(scope="module")
def written(sdio, tmp_path_factory):
    """Run A written for a second on a region of SLOTS, and, at the same
    time, run B on a small one: (path A, A's lines, path B, B's)."""
    base = tmp_path_factory.mktemp("powercut")
    a, b = region(base / "a"), region(base / "b", 4)
    procs = [subprocess.Popen([sdio] + [str(x) for x in args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for args in (write_args(a), write_args(b, RUN_B, 4))]
    outs = [p.communicate(timeout=30) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == EXIT_OK, err
    return a, outs[0][0].splitlines(), b, outs[1][0].splitlines()


def test_write_lines_parse_as_the_witness_logs_them(written):
    path, lines, _, _ = written
    assert lines[0] == "run %s %d %d" % (RUN_A, SLOTS, BLOCK)
    log = parse_log(lines, "log")
    assert (log.run, log.slots, log.block) == (RUN_A, SLOTS, BLOCK)
    done = writes(lines)
    assert [seq for seq, _ in done] == list(range(1, len(done) + 1))
    assert len(done) > 100 and log.completed == dict(done)
    assert log.flushed > 0
    # Both kinds of bursts: consecutive slots and random ones.
    steps = [(b[1] - a[1]) % SLOTS for a, b in zip(done, done[1:])]
    assert steps.count(1) > len(steps) // 4
    assert len(steps) - steps.count(1) > len(steps) // 10


def test_each_flush_names_the_last_write_before_it(written):
    _, lines, _, _ = written
    last, flushes, notice = 0, 0, None
    for line in lines[1:]:
        if line.startswith("w "):
            assert notice is None, line
            last = int(line.split()[1])
        elif line.startswith("F "):
            assert line == "F %d" % last and notice is None
            notice = last
        else:
            assert line == "f %d" % last and notice == last
            notice = None
            flushes += last <= 1000
    # Every burst (16.5 writes on average) is flushed: some 60 flushes
    # in the first 1000 writes (the same whatever the speed: the seed is
    # the run's).
    assert last >= 1000 and 40 <= flushes <= 90


def test_write_stops_when_its_time_is_up(sdio, tmp_path):
    path = region(tmp_path / "t")
    t0 = time.monotonic()
    proc = run(sdio, *write_args(path))
    took = time.monotonic() - t0
    assert 1.0 <= took < 5.0
    assert proc.stderr == "" and proc.stdout.endswith("\n")


def test_block_layout(written):
    path, lines, _, _ = written
    seq, slot = writes(lines)[-1]
    with open(path, "rb") as f:
        f.seek(slot * BLOCK)
        block = f.read(BLOCK)
    assert block[:8] == b"SDTPCUT\x01"
    assert struct.unpack("<QQQ", block[8:32]) == (int(RUN_A, 16), seq, slot)
    assert struct.unpack("<Q", block[-8:])[0] == fnv1a64(block[:-8])
    # The filler is not constant, nor another write's.
    assert len(set(block[32:-8])) > 200
    other = writes(lines)[-2][1]
    with open(path, "rb") as f:
        f.seek(other * BLOCK)
        block2 = f.read(BLOCK)
    assert all(x != y for x, y in zip(struct.iter_unpack("<Q", block[32:-8]),
                                      struct.iter_unpack("<Q",
                                                         block2[32:-8])))


def test_first_seq_continues_the_numbering(sdio, tmp_path):
    path = region(tmp_path / "r")
    proc = run(sdio, *write_args(path, RUN_A, SLOTS, "--first-seq", 100))
    lines = proc.stdout.splitlines()
    done = writes(lines)
    assert [seq for seq, _ in done] == list(range(100, 100 + len(done)))
    # A log holding the first 99 writes too reads whole.
    earlier = ["w %d 0" % seq for seq in range(1, 100)]
    log = parse_log(lines[:1] + earlier + lines[1:], "log")
    assert log.flushed >= 100 and len(log.completed) == 99 + len(done)
    read = read_slots(sdio, path)
    assert read[done[-1][1]] == (RUN_A, done[-1][0])


def test_a_seed_reproduces_the_pattern(sdio, tmp_path):
    paths = [region(tmp_path / n) for n in "abc"]
    procs = [subprocess.Popen([sdio] + [str(x) for x in write_args(
        path, run_id, SLOTS, "--seed", seed)], stdout=subprocess.PIPE,
        text=True) for path, run_id, seed in zip(
            paths, (RUN_A, RUN_B, RUN_A), (7, 7, 8))]
    outs = [p.communicate(timeout=30)[0].splitlines()[1:] for p in procs]
    assert [p.returncode for p in procs] == [EXIT_OK] * 3
    n = min(len(out) for out in outs)
    assert n > 100
    assert outs[0][:n] == outs[1][:n]
    assert outs[0][:n] != outs[2][:n]


def test_read_back_finds_each_slots_latest_write(sdio, written):
    path, lines, _, _ = written
    latest = {}
    for seq, slot in writes(lines):
        latest[slot] = seq
    found = read_slots(sdio, path)
    assert found == {slot: (RUN_A, latest[slot]) if slot in latest
                     else "zero" for slot in range(SLOTS)}


def test_read_back_of_a_fresh_region_is_zeros(sdio, tmp_path):
    path = region(tmp_path / "z", 8)
    assert read_slots(sdio, path, 8) == {s: "zero" for s in range(8)}


def copy_of(written, tmp_path):
    path, lines, _, _ = written
    copy = str(tmp_path / "copy")
    shutil.copyfile(path, copy)
    latest = {}
    for seq, slot in writes(lines):
        latest[slot] = seq
    return copy, latest


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_a_zeroed_slot_reads_zero(sdio, written, tmp_path):
    path, latest = copy_of(written, tmp_path)
    slot = sorted(latest)[3]
    patch(path, slot * BLOCK, bytes(BLOCK))
    found = read_slots(sdio, path)
    assert found[slot] == "zero"
    assert found[sorted(latest)[4]] == (RUN_A, latest[sorted(latest)[4]])


@pytest.mark.parametrize("at", [0, 7, 9, 17, 25, 100, BLOCK // 2 + 1,
                                BLOCK - 9, BLOCK - 1])
def test_one_flipped_byte_reads_torn(sdio, written, tmp_path, at):
    path, latest = copy_of(written, tmp_path)
    slot = sorted(latest)[5]
    with open(path, "rb") as f:
        f.seek(slot * BLOCK + at)
        byte = f.read(1)[0]
    patch(path, slot * BLOCK + at, bytes([byte ^ 0x10]))
    found = read_slots(sdio, path)
    assert found[slot] == "torn"
    assert sum(1 for v in found.values() if v == "torn") == 1


@pytest.mark.parametrize("at", [0, 512, BLOCK // 2, BLOCK - 512])
def test_a_half_written_block_reads_torn(sdio, written, tmp_path, at):
    # One half of the block zeros (the sectors a cut write left as they
    # were), the other the write's.
    path, latest = copy_of(written, tmp_path)
    slot = sorted(latest)[6]
    half = 0 if at < BLOCK // 2 else BLOCK // 2
    patch(path, slot * BLOCK + half, bytes(BLOCK // 2))
    assert read_slots(sdio, path)[slot] == "torn"


def test_a_block_moved_to_another_slot_reads_torn(sdio, written, tmp_path):
    path, latest = copy_of(written, tmp_path)
    src, dst = sorted(latest)[1], sorted(latest)[2]
    with open(path, "rb") as f:
        f.seek(src * BLOCK)
        block = f.read(BLOCK)
    patch(path, dst * BLOCK, block)
    found = read_slots(sdio, path)
    assert found[dst] == "torn"
    assert found[src] == (RUN_A, latest[src])


def test_a_block_of_another_run_reads_with_its_run(sdio, written, tmp_path):
    path, latest = copy_of(written, tmp_path)
    _, _, other, other_lines = written
    seq, slot = writes(other_lines)[-1]
    with open(other, "rb") as f:
        f.seek(slot * BLOCK)
        block = f.read(BLOCK)
    patch(path, slot * BLOCK, block)
    found = read_slots(sdio, path)
    assert found[slot] == (RUN_B, seq)


def test_read_with_an_offset(sdio, written, tmp_path):
    path, latest = copy_of(written, tmp_path)
    with open(path, "rb") as f:
        data = f.read()
    shifted = str(tmp_path / "shifted")
    with open(shifted, "wb") as f:
        f.write(bytes(8192) + data)
    found = read_slots(sdio, path)
    proc = run(sdio, "powercut", "read", "--slots", SLOTS, "--block", BLOCK,
               "--offset", 8192, shifted)
    assert parse_slots(proc.stdout.splitlines(), shifted, SLOTS) == found
    proc = run(sdio, "powercut", "read", "--slots", SLOTS - 1, "--block",
               BLOCK, "--offset", 4096, shifted)
    moved = parse_slots(proc.stdout.splitlines(), shifted, SLOTS - 1)
    assert any(v == "torn" for v in moved.values())


@pytest.mark.parametrize("mode,slots,extra", [
    ("write", SLOTS + 1, []), ("read", SLOTS + 1, []),
    ("write", SLOTS, ["--offset", 512]), ("read", 1, ["--offset", "1m"])])
def test_a_region_past_the_end_exits_2(sdio, tmp_path, mode, slots, extra):
    path = region(tmp_path / "small")
    args = ["powercut", mode, "--slots", slots, "--block", BLOCK] + extra
    if mode == "write":
        args += ["--run", RUN_A, "--seconds", 1]
    proc = run(sdio, *args, path, expect=EXIT_SETUP)
    assert proc.stdout == ""
    assert path in proc.stderr and "size %d" % (SLOTS * BLOCK) in proc.stderr
    with open(path, "rb") as f:
        assert f.read() == bytes(SLOTS * BLOCK)


def test_a_missing_target_exits_2(sdio, tmp_path):
    proc = run(sdio, "powercut", "read", "--slots", 1, "--block", BLOCK,
               tmp_path / "nothing", expect=EXIT_SETUP)
    assert "cannot open" in proc.stderr


GOOD = {"--run": RUN_A, "--slots": "4", "--block": "4096"}


@pytest.mark.parametrize("mode,option,value", [
    ("write", "--run", "0123456789ABCDEF"), ("write", "--run", "0123"),
    ("write", "--run", "0123456789abcdef0"), ("write", "--run", "g" * 16),
    ("write", "--slots", "0"), ("write", "--slots", "16777217"),
    ("read", "--slots", "-1"), ("read", "--slots", "4k"),
    ("write", "--block", "256"), ("write", "--block", "4000"),
    ("read", "--block", "2097152"), ("read", "--block", "x"),
    ("write", "--offset", "100"), ("read", "--offset", "-512"),
    ("write", "--first-seq", "0"), ("write", "--first-seq", "1.5"),
    ("write", "--seconds", "0"), ("write", "--seconds", "86401"),
    ("write", "--seed", "0x10"), ("write", "--seed", "18446744073709551616"),
    ("write", "--seed", ""),
])
def test_a_bad_value_exits_1_naming_the_option(sdio, tmp_path, mode, option,
                                               value):
    path = region(tmp_path / "u", 4)
    opts = dict(GOOD, **{option: value})
    if mode == "read":
        del opts["--run"]
    args = [x for kv in opts.items() for x in kv]
    proc = run(sdio, "powercut", mode, *args, path, expect=EXIT_USAGE)
    assert "bad value '%s' for %s" % (value, option) in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("mode,drop", [
    ("write", "--run"), ("write", "--slots"), ("write", "--block"),
    ("read", "--slots"), ("read", "--block")])
def test_a_missing_option_exits_1_naming_it(sdio, tmp_path, mode, drop):
    path = region(tmp_path / "u", 4)
    opts = dict(GOOD)
    if mode == "read":
        del opts["--run"]
    del opts[drop]
    args = [x for kv in opts.items() for x in kv]
    proc = run(sdio, "powercut", mode, *args, path, expect=EXIT_USAGE)
    assert "needs %s" % drop in proc.stderr


@pytest.mark.parametrize("mode,args,says", [
    ("write", ["--slots", "4"], "option '--slots' given twice"),
    ("write", ["--seed", "1", "--seed", "1"], "option '--seed' given twice"),
    ("read", ["--run", RUN_A], "unknown option '--run'"),
    ("read", ["--seconds", "1"], "unknown option '--seconds'"),
    ("write", ["--bogus", "1"], "unknown option '--bogus'"),
    ("write", ["--seconds"], "option '--seconds' needs a value"),
])
def test_a_duplicate_or_unknown_option_exits_1(sdio, tmp_path, mode, args,
                                               says):
    path = region(tmp_path / "u", 4)
    opts = dict(GOOD)
    if mode == "read":
        del opts["--run"]
    base = [x for kv in opts.items() for x in kv]
    proc = run(sdio, "powercut", mode, *base, path, *args, expect=EXIT_USAGE)
    assert says in proc.stderr


@pytest.mark.parametrize("args", [[], ["frob"], ["write"]])
def test_no_mode_or_target_exits_1(sdio, args):
    proc = run(sdio, "powercut", *args, expect=EXIT_USAGE)
    assert "sdio powercut write --run HEX16" in proc.stderr
    if args == ["write"]:
        assert "needs --run" in proc.stderr
    else:
        assert "needs 'write' or 'read'" in proc.stderr


def test_no_target_exits_1(sdio):
    proc = run(sdio, "powercut", "read", "--slots", 4, "--block", BLOCK,
               expect=EXIT_USAGE)
    assert "no target given" in proc.stderr


def reader_gone(proc):
    """Close the engine's standard output as a reader that went away
    would; its exit status (within 10 s) and what it said."""
    proc.stdout.close()
    try:
        rc = proc.wait(timeout=10)
    finally:
        proc.kill()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return rc, err


def test_a_witness_gone_away_stops_the_writer(sdio, tmp_path):
    path = region(tmp_path / "p")
    args = ["powercut", "write", "--run", RUN_A, "--slots", SLOTS,
            "--block", BLOCK, "--seconds", 30, path]
    proc = subprocess.Popen([sdio] + [str(x) for x in args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"run ")
    rc, err = reader_gone(proc)
    assert rc == EXIT_SETUP
    assert "cannot write to stdout: Broken pipe" in err


@needs_strace
def test_a_reader_gone_away_stops_the_read_back(sdio, tmp_path):
    # 64 chunks of 1 MiB; the pipe holds the lines of a few: the engine
    # stops reading soon after the reader is gone.
    slots = 131072
    path, trace = region(tmp_path / "p", slots, 512), str(tmp_path / "tr")
    proc = subprocess.Popen(strace(path, "trace=pread64", trace) + [
        sdio, "powercut", "read", "--slots", str(slots), "--block", "512",
        path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"0 zero\n"
    rc, err = reader_gone(proc)
    assert rc == EXIT_SETUP and "Broken pipe" in err
    with open(trace) as f:
        assert 1 <= sum(1 for line in f if line.startswith("pread64(")) \
            < 16


def strace(path, spec, out="/dev/null"):
    """strace tracing or injecting (spec) the syscalls on path only (not
    the dynamic loader's), its trace to out."""
    return [STRACE, "-qq", "-o", out, "-P", path, "-e", spec]


@needs_strace
def test_each_line_leaves_at_once_in_one_write(sdio, tmp_path):
    # Between two I/O calls on the target, the engine writes the line of
    # the first one, whole, in one write(2), and nothing else.
    path, trace = region(tmp_path / "s"), str(tmp_path / "trace")
    proc = run(sdio, *write_args(path), prefix=[
        STRACE, "-qq", "-s", "64", "-o", trace, "-e",
        "trace=pwrite64,fdatasync,write"])
    with open(trace) as f:
        calls = [re.sub(r"\)\s+= ", ") = ", line) for line in f
                 if line.startswith(("pwrite64(", "fdatasync(",
                                     "write(1,"))]
    lines = proc.stdout.splitlines()
    assert len(calls) == 2 * len(lines) - 1 - sum(
        line.startswith("F ") for line in lines)
    assert calls[0] == 'write(1, "%s\\n", %d) = %d\n' % (
        lines[0], len(lines[0]) + 1, len(lines[0]) + 1)
    # A flush's notice comes before the flush, on its own.
    lines = [line for line in lines if not line.startswith("F ")]
    calls = [c for c in calls if not c.startswith('write(1, "F ')]
    for io, said, line in zip(calls[1::2], calls[2::2], lines[1:]):
        assert io.startswith("fdatasync(" if line[0] == "f" else
                             "pwrite64("), (io, line)
        assert said == 'write(1, "%s\\n", %d) = %d\n' % (
            line, len(line) + 1, len(line) + 1)


@needs_strace
def test_a_write_error_exits_3_naming_its_offset(sdio, written, tmp_path):
    # Run A's default seed (from its id and first seq) again: the fifth
    # write goes where the fixture's fifth went.
    path = region(tmp_path / "e")
    proc = run(sdio, *write_args(path), expect=EXIT_IO,
               prefix=strace(path, "inject=pwrite64:error=EIO:when=5"))
    lines = proc.stdout.splitlines()
    expected = writes(written[1])
    assert writes(lines) == expected[:4] and lines[-1].startswith("w ")
    assert "write at offset %d of '%s' failed: %s" % (
        expected[4][1] * BLOCK, path, os.strerror(5)) in proc.stderr


@needs_strace
def test_a_flush_error_exits_3(sdio, tmp_path):
    path = region(tmp_path / "e")
    proc = run(sdio, *write_args(path), expect=EXIT_IO,
               prefix=strace(path, "inject=fdatasync:error=EIO:when=2"))
    lines = proc.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("f ")) == 1
    assert lines[-1].startswith("F ")
    lines = lines[:-1]
    seq, slot = writes(lines)[-1]
    assert "flush after the write at offset %d of '%s' failed: %s" % (
        slot * BLOCK, path, os.strerror(5)) in proc.stderr


@needs_strace
def test_a_read_error_exits_3_naming_its_offset(sdio, tmp_path):
    path = region(tmp_path / "e", 1024)
    proc = run(sdio, "powercut", "read", "--slots", 1024, "--block", BLOCK,
               path, expect=EXIT_IO,
               prefix=strace(path, "inject=pread64:error=EIO:when=3"))
    # The slots of the chunks read before it, at most.
    assert "".join("%d zero\n" % s for s in range(512)).startswith(
        proc.stdout)
    assert "read at offset %d of '%s' failed: %s" % (
        2 << 20, path, os.strerror(5)) in proc.stderr


@needs_strace
def test_a_file_system_without_direct_io_is_written_buffered(sdio, tmp_path):
    path = region(tmp_path / "d")
    proc = run(sdio, *write_args(path), prefix=strace(
        path, "inject=openat:error=EINVAL:when=1"))
    done = writes(proc.stdout.splitlines())
    assert len(done) > 100
    assert read_slots(sdio, path)[done[-1][1]] == (RUN_A, done[-1][0])


@needs_strace
def test_a_flush_is_announced_first_and_waits(sdio, tmp_path):
    """"F SEQ" leaves before the flush, which waits --notice-ms: the
    witness has heard of every flush the drive may have carried out."""
    path, trace = region(tmp_path / "n"), str(tmp_path / "trace")
    run(sdio, "powercut", "write", "--run", RUN_A, "--slots", SLOTS,
        "--block", BLOCK, "--seconds", 2, "--notice-ms", 200,
        "--flush-every-ms", 0, path,
        prefix=[STRACE, "-qq", "-ttt", "-s", "64", "-o", trace, "-e",
                "trace=fdatasync,write"])
    with open(trace) as f:
        calls = [line.split(" ", 1) for line in f
                 if "fdatasync(" in line or 'write(1, "F ' in line]
    pairs = list(zip(calls[::2], calls[1::2]))
    assert pairs
    for (t_notice, notice), (t_flush, flush) in pairs:
        assert notice.startswith('write(1, "F ')
        assert flush.startswith("fdatasync(")
        assert float(t_flush) - float(t_notice) >= 0.2


def test_flushes_come_a_time_apart_not_a_count_of_writes(sdio, tmp_path):
    """--flush-every-ms 300 for 2 s: flushes 150 to 450 ms apart (and the
    notice's wait), most of the time spent writing."""
    path = region(tmp_path / "i")
    t0 = time.monotonic()
    proc = run(sdio, "powercut", "write", "--run", RUN_A, "--slots", SLOTS,
               "--block", BLOCK, "--seconds", 2, "--notice-ms", 0,
               "--flush-every-ms", 300, path)
    took = time.monotonic() - t0
    flushes = sum(line.startswith("f ") for line in proc.stdout.splitlines())
    writes_done = sum(line.startswith("w ")
                      for line in proc.stdout.splitlines())
    assert 2 <= flushes <= int(took / 0.15) + 1
    assert writes_done > 20 * flushes
