# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify/powercut.py: the witness's log and the verdict of a cut.

A model drive in this file takes a seeded run of bursts (sequential and
random slots, rewrites, some bursts flushed), is cut at a random point,
and keeps what its kind keeps: an honest non-volatile cache every
completed write, an honest volatile one the flushed writes and any of
the others, a drive that lies about flushes or about its cache none
that it was not made to.  The verdict must say so for every kind, 200
cuts each."""

import random

import pytest

from sdtune.certify.powercut import (FAILED, NOTHING, PASSED, RESUME_STEP,
                                     parse_log, parse_slots, resume_seq,
                                     split_lines, verdict)
from sdtune.errors import ParseError

RUN = "0123456789abcdef"
SLOTS = 64


def run_to_cut(rng):
    """(log lines, {slot: [(seq, flushed)] in write order}) of a run cut
    at a random point; the write in flight at the cut has no line."""
    lines = ["run %s %d 4096" % (RUN, SLOTS)]
    writes = {}
    seq = 0
    flushed_upto = 0
    for _ in range(rng.randint(0, 12)):
        start = rng.randrange(SLOTS)
        burst = [(start + i) % SLOTS for i in range(rng.randint(1, 6))] \
            if rng.random() < 0.5 else \
            [rng.randrange(SLOTS) for _ in range(rng.randint(1, 6))]
        for slot in burst:
            seq += 1
            lines.append("w %d %d" % (seq, slot))
            writes.setdefault(slot, []).append(seq)
        if rng.random() < 0.6:
            lines.append("f %d" % seq)
            flushed_upto = seq
    return lines, writes, flushed_upto, seq


def survivors(rng, kind, writes, flushed_upto, last):
    """What each slot holds after the cut, for a drive of ``kind``."""
    held = {slot: "zero" for slot in range(SLOTS)}
    for slot, seqs in writes.items():
        if kind == "nonvolatile":
            keep = seqs[-1]
        elif kind == "volatile":
            # The latest flushed write, or any later one the cache
            # happened to write back.
            flushed = [s for s in seqs if s <= flushed_upto]
            later = [s for s in seqs if s > flushed_upto]
            keep = max(([flushed[-1]] if flushed else []) +
                       [s for s in later if rng.random() < 0.5] or [0])
        else:                   # lie_flush, lie_nv: nothing kept
            keep = 0
        if keep:
            held[slot] = (RUN, keep)
    # A write in flight at the cut may land whole or torn.
    if writes and rng.random() < 0.3:
        slot = rng.randrange(SLOTS)
        held[slot] = rng.choice([(RUN, last + 1), "torn"])
    return held


def slot_lines(held):
    return ["%d %s" % (slot, v if isinstance(v, str) else "%s %d" % v)
            for slot, v in sorted(held.items())]


@pytest.mark.parametrize("kind", ["nonvolatile", "volatile", "lie_flush"])
def test_every_kind_gets_its_verdict(kind):
    rng = random.Random("powercut-" + kind)
    seen = set()
    for _ in range(200):
        lines, writes, flushed_upto, last = run_to_cut(rng)
        held = survivors(rng, kind, writes, flushed_upto, last)
        # A torn in-flight block may hit an acknowledged write's slot;
        # the model then lost that write, as a real drive would have.
        log = parse_log(lines, "log")
        found = parse_slots(slot_lines(held), "read", SLOTS)
        out = verdict(log, found)
        torn_hit = any(v == "torn" or (isinstance(v, tuple) and
                                       v[1] > last)
                       for v in held.values())
        if kind == "nonvolatile":
            if not torn_hit:
                assert out.nonvolatile.lost == 0
                assert out.flush.lost == 0
        elif kind == "volatile":
            if not torn_hit:
                assert out.flush.lost == 0
        else:
            if flushed_upto:
                assert out.flush.status == FAILED
            assert out.nonvolatile.status in (FAILED, NOTHING)
        if not log.completed:
            assert out.nonvolatile.status == NOTHING
        if not flushed_upto:
            assert out.flush.status == NOTHING
        seen.add((out.flush.status, out.nonvolatile.status))
    # Each kind showed its verdict, not only "nothing to check".
    expected = {"nonvolatile": (PASSED, PASSED),
                "volatile": (PASSED, FAILED),
                "lie_flush": (FAILED, FAILED)}[kind]
    assert expected in seen, seen


def test_lost_writes_are_counted_and_named():
    lines = ["run %s 8 4096" % RUN, "w 1 0", "w 2 1", "f 2", "w 3 2",
             "w 4 0", "w 5 3"]
    held = {0: (RUN, 1), 1: (RUN, 2), 2: "zero", 3: ("fedcba9876543210", 5),
            4: "zero", 5: "zero", 6: "zero", 7: "torn"}
    out = verdict(parse_log(lines, "log"),
                  parse_slots(slot_lines(held), "read", 8))
    assert out.flush.status == PASSED and out.flush.acknowledged == 2
    assert out.nonvolatile.status == FAILED
    assert out.nonvolatile.acknowledged == 5
    # Slot 0 holds write 1 where 4 completed; slot 2 lost write 3; slot 3
    # holds another run's block.
    assert out.nonvolatile.examples == ((0, 4), (2, 3), (3, 5))
    assert out.torn == 1


def test_a_later_write_in_flight_stands_for_the_one_it_replaced():
    lines = ["run %s 2 4096" % RUN, "w 1 0", "f 1", "w 2 1"]
    held = {0: (RUN, 3), 1: (RUN, 2)}
    out = verdict(parse_log(lines, "log"),
                  parse_slots(slot_lines(held), "read", 2))
    assert out.flush.status == PASSED and out.nonvolatile.status == PASSED


def test_a_cut_after_everything_was_flushed_does_not_test_the_nv_claim():
    """Every completed write flushed: a volatile cache loses nothing
    either, so the non-volatile claim is not passed, only failed when a
    flushed write is gone."""
    lines = ["run %s 2 4096" % RUN, "w 1 0", "w 2 1", "f 2"]
    log = parse_log(lines, "log")
    out = verdict(log, {0: (RUN, 1), 1: (RUN, 2)})
    assert out.flush.status == PASSED
    assert out.nonvolatile.status == NOTHING
    assert out.nonvolatile.acknowledged == 2
    out = verdict(log, {0: (RUN, 1), 1: "zero"})
    assert out.flush.status == FAILED and out.nonvolatile.status == FAILED


def test_a_cut_before_any_write_has_nothing_to_check():
    assert parse_log([], "log") is None
    assert verdict(None, {}) is None
    out = verdict(parse_log(["run %s 2 4096" % RUN], "log"),
                  parse_slots(["0 zero", "1 zero"], "read", 2))
    assert out.flush.status == NOTHING and out.nonvolatile.status == NOTHING


def test_a_line_the_cut_left_unfinished_is_not_logged():
    lines, rest = split_lines(b"", b"run " + RUN.encode() + b" 2 4096\nw 1")
    assert lines == ["run %s 2 4096" % RUN] and rest == b"w 1"
    lines, rest = split_lines(rest, b" 0\nf ")
    assert lines == ["w 1 0"] and rest == b"f "


@pytest.mark.parametrize("lines, field, words", [
    (["w 1 0"], "run", "line 1"),
    (["run %s 2 4096" % RUN, "w 1 2"], "slot", "log line 2: slot 2"),
    (["run %s 2 4096" % RUN, "w 1 0", "w 1 1"], "seq", "write 1 after "
     "write 1"),
    (["run %s 2 4096" % RUN, "w 2 0", "w 1 1"], "seq", "write 1 after "
     "write 2"),
    (["run %s 2 4096" % RUN, "run %s 2 4096" % RUN.replace("0", "1")],
     "run", "another run's line"),
    (["run %s 2 4096" % RUN, "run %s 4 4096" % RUN], "run",
     "another run's line"),
    (["run %s 2 4096" % RUN, "w 5 0", "run %s 2 4096" % RUN, "w 5 1"],
     "seq", "write 5 after write 5"),
    (["run %s 2 4096" % RUN, "w 5 0", "run %s 2 4096" % RUN, "w 7 1",
      "f 8"], "seq", "before write 8 completed"),
    (["run %s 2 4096" % RUN, "w 2 0", "f 2"], "seq",
     "before write 1 completed"),
    (["run %s 2 4096" % RUN, "w 1 0", "f 1", "f 0"], "seq", "after one"),
    (["run %s 2 4096" % RUN, "f 99999999999999999"], "seq", "write 1"),
    (["run %s 2 4096" % RUN, "x"], "line", "no line the engine writes"),
    (["run %s 2 4096" % RUN, "w 1 0", "F 2"], "seq", "notice of a flush "
     "of writes up to 2 after write 1"),
    (["run %s 2 4096" % RUN, "w 1 0", "w 2 1", "F 2", "F 1"], "seq",
     "notice up to 2"),
])
def test_a_bad_log_names_its_line_and_field(lines, field, words):
    with pytest.raises(ParseError) as e:
        parse_log(lines, "log")
    assert e.value.field == field and words in str(e.value)


@pytest.mark.parametrize("lines, words", [
    (["0 zero"], "slot 1 not reported"),
    (["0 zero", "0 zero"], "reported twice"),
    (["0 zero", "2 zero"], "outside the region"),
    (["0 zero", "1 maybe"], "line 2"),
])
def test_a_bad_read_back_names_its_line(lines, words):
    with pytest.raises(ParseError) as e:
        parse_slots(lines, "read", 2)
    assert words in str(e.value)


def test_a_resumed_run_flushes_the_earlier_engines_writes_too():
    """The controller resumed the run: the new engine says the run line
    again and numbers from resume_seq; its flush covers every write
    completed before it, the stopped engine's included."""
    first = ["run %s 4 4096" % RUN, "w 1 0", "w 2 1", "f 1", "w 3 2"]
    log = parse_log(first, "log")
    start = resume_seq(log)
    assert start == RESUME_STEP + 1
    lines = first + ["run %s 4 4096" % RUN, "w %d 3" % start,
                     "f %d" % start]
    log = parse_log(lines, "log")
    assert log.flushed == start
    assert sorted(log.completed) == [1, 2, 3, start]
    # Write 3 (the first engine's, not flushed by it) is now flushed:
    # a drive that lost it fails the flush check.
    found = {0: (RUN, 1), 1: (RUN, 2), 2: "zero", 3: (RUN, start)}
    outcome = verdict(log, found)
    assert outcome.flush.acknowledged == 4 and outcome.flush.lost == 1
    assert outcome.flush.examples == ((2, 3),)


def test_resume_seq_starts_above_anything_the_stopped_engine_wrote():
    assert resume_seq(None) == RESUME_STEP + 1
    assert resume_seq(parse_log(["run %s 2 4096" % RUN], "log")) == \
        RESUME_STEP + 1
    log = parse_log(["run %s 2 4096" % RUN, "w %d 0" % (RESUME_STEP + 7)],
                    "log")
    assert resume_seq(log) == 2 * RESUME_STEP + 1


def test_a_flush_announced_but_not_seen_complete_covers_its_writes():
    """"F 2" and the cut: the flush may have made writes 1 and 2 durable
    (its "f" lost with the power), so they do not test the non-volatile
    claim; a write after the notice does."""
    lines = ["run %s 3 4096" % RUN, "w 1 0", "w 2 1", "F 2"]
    log = parse_log(lines, "log")
    assert log.noticed == 2 and log.flushed == 0
    out = verdict(log, {0: (RUN, 1), 1: (RUN, 2), 2: "zero"})
    assert out.flush.status == NOTHING
    assert out.nonvolatile.status == NOTHING
    # Lost, they still fail it.
    out = verdict(log, {0: (RUN, 1), 1: "zero", 2: "zero"})
    assert out.nonvolatile.status == FAILED
    log = parse_log(lines + ["f 2", "w 3 2"], "log")
    out = verdict(log, {0: (RUN, 1), 1: (RUN, 2), 2: (RUN, 3)})
    assert out.flush.status == PASSED and out.nonvolatile.status == PASSED
