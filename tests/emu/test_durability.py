# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The emulated drive's durability model (sdemu.c, durable_image=): what
survives a power cut, for each kind of drive, through the real kernel
path (O_DIRECT pwrite and fdatasync on the nbdfuse file).

Each kind takes 10 cuts.  In every cycle a writer thread writes numbered,
checksummed 4 KiB blocks (sequential and random slots of a region of its
own, rewrites included) in bursts of 1-6, most bursts followed by
fdatasync; the main thread cuts the power; the drive is powered on and
the region read back.  A write is "completed" when its pwrite returned,
"flushed" when an fdatasync issued after it completed returned.  Even
cycles cut at a random instant after the first flush (a write or a flush
may be in flight); odd cycles cut at a random instant when the drive
certainly holds completed, unflushed writes: the writer holds a gate
while it flushes, and the cutter cuts holding it, only when a completed
write is not yet covered by a flush.  The instants come from a seeded
generator (SEED + the kind's index), so a failure replays.

Every block read back must be zeros or a block written to that slot in
that cycle with a good checksum (never torn, never misplaced).  Then:

    nonvolatile honest: no completed write lost, no page lost
    volatile honest:    no flushed write lost; in a cut with unflushed
                        writes, exactly the writes completed after the
                        last completed flush are lost, and there are
                        some (no write-back can have saved one: the
                        cache holds 64 pages and the writer never leaves
                        more than 24 dirty)
    volatile lie_flush: everything lost, flushed writes included
    lie_nv:             everything lost, though flushes cost what a
                        non-volatile cache's do and it reports one
"""

import errno
import hashlib
import mmap
import os
import random
import signal
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import pytest

from .drive import EmulatedDrive

pytestmark = pytest.mark.emu

SEED = 30
CUTS = 10
BLOCK = 4096
SLOTS = 256                 # per cycle: 1 MiB, a region of its own
SEQ_SLOTS = 128             # slots 0-127 written in turn, 128-255 at random
REGION = SLOTS * BLOCK
SIZE = 16 * 1024 * 1024     # 16 cycles' regions
MAX_DIRTY = 24              # the writer flushes before more are unflushed
MAX_DELAY_S = 0.06          # latest cut after the first flush
MAGIC = b"SDTDUR01"
HEADER = struct.Struct("<8sQQQ")        # magic, seq, slot, cycle
PAYLOAD = BLOCK - HEADER.size - 32      # then sha256 of all before it

KINDS = {
    "nonvolatile-honest": ("nonvolatile", {}),
    "volatile-honest": ("volatile", {}),
    # The liars' caches hold every page a cycle writes, so nothing is
    # ever written back and everything is certainly lost.
    "volatile-lie_flush": ("volatile", {"durability": "lie_flush",
                                        "cache_pages": 4096}),
    "lie_nv": ("nonvolatile", {"durability": "lie_nv",
                               "cache_pages": 4096}),
}


def block(seq: int, slot: int, cycle: int) -> bytes:
    head = HEADER.pack(MAGIC, seq, slot, cycle)
    fill = hashlib.sha256(head).digest()
    body = head + (fill * (PAYLOAD // len(fill) + 1))[:PAYLOAD]
    return body + hashlib.sha256(body).digest()


def parse_block(raw: bytes) -> Optional[Tuple[int, int, int]]:
    """(seq, slot, cycle) of a good block, None for zeros; raises
    AssertionError for anything else (torn, foreign)."""
    if raw == bytes(BLOCK):
        return None
    body, digest = raw[:-32], raw[-32:]
    assert hashlib.sha256(body).digest() == digest, "torn or corrupt block"
    magic, seq, slot, cycle = HEADER.unpack_from(raw)
    assert magic == MAGIC, "foreign block"
    return seq, slot, cycle


@dataclass
class Op:
    kind: str           # "w" or "f"
    seq: int = 0
    slot: int = 0


def plan_ops(rng: random.Random, n: int = 600) -> List[Op]:
    """The writer's operations, decided before it runs (so seeded):
    bursts of 1-6 writes, three in four followed by a flush, and a flush
    whenever MAX_DIRTY writes would otherwise be unflushed."""
    ops: List[Op] = []
    seq, nxt, unflushed = 0, 0, 0
    while len(ops) < n:
        for _ in range(rng.randint(1, 6)):
            seq += 1
            if rng.random() < 0.5:
                slot, nxt = nxt, (nxt + 1) % SEQ_SLOTS
            else:
                slot = rng.randrange(SEQ_SLOTS, SLOTS)
            ops.append(Op("w", seq, slot))
            unflushed += 1
        if rng.random() < 0.75 or unflushed + 6 > MAX_DIRTY:
            ops.append(Op("f"))
            unflushed = 0
    return ops


@dataclass
class Run:
    """What the writer saw; lists under `gate`."""

    completed: List[Op] = field(default_factory=list)
    flushed: int = 0            # completed[:flushed] are flushed
    flush_issued: int = 0       # completed[:flush_issued] under a flush
    failed: Optional[Op] = None
    flush_ns: List[int] = field(default_factory=list)
    first_flush: threading.Event = field(default_factory=threading.Event)
    gate: threading.Lock = field(default_factory=threading.Lock)
    error: Optional[BaseException] = None


def writer(path: str, cycle: int, ops: List[Op], run: Run) -> None:
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    buf = mmap.mmap(-1, BLOCK)
    view = memoryview(buf)
    base = cycle * REGION
    try:
        for op in ops:
            try:
                if op.kind == "w":
                    buf[:] = block(op.seq, op.slot, cycle)
                    os.pwrite(fd, view, base + op.slot * BLOCK)
                    with run.gate:
                        run.completed.append(op)
                    continue
                with run.gate:
                    run.flush_issued = mark = len(run.completed)
                    t0 = time.perf_counter_ns()
                    os.fdatasync(fd)
                    run.flush_ns.append(time.perf_counter_ns() - t0)
                    run.flushed = mark
                run.first_flush.set()
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                run.failed = op
                return
        raise AssertionError("the writer ran out of operations")
    except BaseException as e:  # reported by the test
        run.error = e
        run.first_flush.set()
    finally:
        view.release()
        buf.close()
        os.close(fd)


def cut_when(drive: EmulatedDrive, run: Run, rng: random.Random,
             pending: bool) -> Tuple[int, List[Op]]:
    """Cut at a random instant (pending: one when a completed write is
    not under any flush, and no flush runs); return the pages lost and
    the completed writes no flush covered at the cut (pending only: the
    writer goes on after the cut until a request fails, and may even add
    a write the drive completed just before it)."""
    assert run.first_flush.wait(10), "no flush completed"
    time.sleep(rng.uniform(0, MAX_DELAY_S))
    deadline = time.monotonic() + 10
    while pending:
        with run.gate:
            if len(run.completed) > run.flush_issued:
                unflushed = run.completed[run.flush_issued:]
                return drive.cut_power().lost_pages, unflushed
        assert time.monotonic() < deadline and run.error is None
        time.sleep(0.0003)
    return drive.cut_power().lost_pages, []


def read_region(path: str, cycle: int) -> List[Optional[Tuple[int, int]]]:
    """(seq, slot) or None per slot of the cycle's region."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, REGION)
    try:
        got = os.preadv(fd, [buf], cycle * REGION)
        assert got == REGION
        out: List[Optional[Tuple[int, int]]] = []
        for slot in range(SLOTS):
            found = parse_block(buf[slot * BLOCK:(slot + 1) * BLOCK])
            if found is not None:
                assert found[1:] == (slot, cycle), "misplaced block"
                out.append(found[:2])
            else:
                out.append(None)
        return out
    finally:
        buf.close()
        os.close(fd)


def cycle_once(drive: EmulatedDrive, path: str, cycle: int,
               rng: random.Random, pending: bool) -> Dict[str, object]:
    ops = plan_ops(rng)
    run = Run()
    t = threading.Thread(target=writer, args=(path, cycle, ops, run))
    t.start()
    try:
        lost_pages, unflushed = cut_when(drive, run, rng, pending)
    finally:
        if t.is_alive() and not drive.counters().power:
            drive.cut_power()
        t.join(10)
    assert not t.is_alive()
    if run.error is not None:
        raise run.error
    unpowered = drive.counters().unpowered
    new_path = drive.power_on()
    found = read_region(new_path, cycle)

    issued = {}
    for op in ops:
        if op.kind == "w":
            issued.setdefault(op.slot, set()).add(op.seq)
    durable = {slot: (f[0] if f else 0) for slot, f in enumerate(found)}
    for slot, f in enumerate(found):
        if f is not None:
            assert f[0] in issued.get(slot, ()), \
                "slot %d holds seq %d, never written there" % (slot, f[0])
    lost = [op for op in run.completed if durable[op.slot] < op.seq]
    return {
        "path": new_path, "run": run, "lost": lost,
        "lost_flushed": [op for op in run.completed[:run.flushed]
                         if durable[op.slot] < op.seq],
        "pending": unflushed,
        "lost_pages": lost_pages, "unpowered": unpowered,
        "durable": durable,
    }


def distinct_pages(ops: List[Op]) -> int:
    return len({op.slot for op in ops})


@pytest.mark.parametrize("kind", list(KINDS))
def test_power_cuts(emulated_drive, kind):
    cache, extra = KINDS[kind]
    seed = SEED + list(KINDS).index(kind)
    rng = random.Random(seed)
    drive = emulated_drive("512e", cache, durable=True, size=SIZE, **extra)
    if kind == "lie_nv":
        assert drive.model().volatile == 0      # it claims capacitors
    path = drive.path or ""
    totals = {"completed": 0, "flushed": 0, "lost": 0, "lost_flushed": 0,
              "in_write": 0, "in_flush": 0}
    flush_ns: List[int] = []
    t0 = time.monotonic()
    for cycle in range(CUTS):
        pending = cycle % 2 == 1
        r = cycle_once(drive, path, cycle, rng, pending)
        path = str(r["path"])
        run: Run = r["run"]         # type: ignore[assignment]
        lost: List[Op] = r["lost"]  # type: ignore[assignment]
        lost_flushed: List[Op] = r["lost_flushed"]  # type: ignore
        pend: List[Op] = r["pending"]  # type: ignore[assignment]
        lost_pages = int(str(r["lost_pages"]))
        where = "%s seed %d cycle %d (%s cut)" % (
            kind, seed, cycle, "pending" if pending else "any")
        assert run.flushed >= 1, where
        assert int(str(r["unpowered"])) >= 1, where
        flush_ns += run.flush_ns
        totals["completed"] += len(run.completed)
        totals["flushed"] += run.flushed
        totals["lost"] += len(lost)
        totals["lost_flushed"] += len(lost_flushed)
        in_flight = 1 if run.failed is not None and \
            run.failed.kind == "w" else 0
        # what the writer was doing at the cut, or right after it
        failed = run.failed.kind if run.failed is not None else "-"
        totals["in_write"] += failed == "w"
        totals["in_flush"] += failed == "f"
        if kind == "nonvolatile-honest":
            assert lost == [], where
            assert lost_pages == 0, where
        elif kind == "volatile-honest":
            assert lost_flushed == [], where
            if pending:
                # every write completed after the last flush that
                # completed, at least those the cutter saw
                after = run.completed[run.flushed:]
                assert pend and lost == after, where
                assert all(op in after for op in pend), where
                assert distinct_pages(pend) <= lost_pages <= \
                    distinct_pages(after) + in_flight, where
        else:
            assert lost == run.completed, where
            assert lost_flushed, where
            durable: Dict[int, int] = r["durable"]  # type: ignore
            assert not any(durable.values()), where
            n = distinct_pages(run.completed)
            assert n <= lost_pages <= n + in_flight, where
    elapsed = time.monotonic() - t0
    flush_us = sorted(flush_ns)[len(flush_ns) // 2] / 1000.0
    print("MEASURED %s: cuts=%d (failing a write %d, a flush %d) "
          "completed=%d flushed=%d lost=%d lost_flushed=%d "
          "median_flush_us=%.0f seconds=%.1f"
          % (kind, CUTS, totals["in_write"], totals["in_flush"],
             totals["completed"], totals["flushed"], totals["lost"],
             totals["lost_flushed"], flush_us, elapsed))
    if kind == "volatile-honest":
        assert totals["lost"] > 0
    if kind == "lie_nv":
        # model: 40 us plus the FUSE path, against 3,200 us for a
        # volatile cache's flush (test_emu.py)
        assert flush_us < 1500


# -- the write-back rule and the image, one case each -----------------------

class Direct:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.buf = mmap.mmap(-1, BLOCK)

    def write(self, slot: int, seq: int) -> None:
        self.buf[:] = block(seq, slot, 0)
        os.pwrite(self.fd, memoryview(self.buf), slot * BLOCK)

    def read(self, slot: int) -> Optional[Tuple[int, int, int]]:
        os.preadv(self.fd, [self.buf], slot * BLOCK)
        return parse_block(bytes(self.buf))

    def close(self) -> None:
        self.buf.close()
        os.close(self.fd)


def test_full_cache_writes_back_the_page_that_joined_first(emulated_drive):
    drive = emulated_drive("512e", "volatile", durable=True, size=SIZE,
                           cache_pages=4)
    d = Direct(drive.path or "")
    try:
        for slot in range(6):
            d.write(slot, slot + 1)
        d.write(0, 10)      # not in the cache any more: joins again
        d.write(3, 11)      # in the cache: keeps its place
        d.write(6, 12)      # pushes 3 out, with its seq 11
        # the cache: 0 1 2 3 | 4 pushes 0 out | 5 pushes 1 | 0 pushes 2
        # | 3 stays | 6 pushes 3: the cache holds 4 5 0 6
        assert d.read(0)[:2] == (10, 0)     # reads see the cache
        c = drive.counters()
        assert (c.writebacks, c.dirty) == (4, 4)
    finally:
        d.close()
    assert drive.cut_power().lost_pages == 4
    d = Direct(drive.power_on())
    try:
        got = {slot: d.read(slot) for slot in range(7)}
    finally:
        d.close()
    seqs = {slot: (v[0] if v else 0) for slot, v in got.items()}
    assert seqs == {0: 1, 1: 2, 2: 3, 3: 11, 4: 0, 5: 0, 6: 0}


def test_sigkill_of_nbdkit_keeps_what_was_durable(emulated_drive):
    # a harder cut than SIGUSR1: the process dies mid-way, and power_on()
    # starts over on the image it left
    drive = emulated_drive("512e", "volatile", durable=True, size=SIZE)
    d = Direct(drive.path or "")
    try:
        for slot in range(3):
            d.write(slot, slot + 1)
        os.fdatasync(d.fd)
        d.write(3, 4)
        os.kill(drive.pids[0], signal.SIGKILL)
        with pytest.raises(OSError):
            d.write(4, 5)
    finally:
        d.close()
    d = Direct(drive.power_on())
    try:
        seqs = [(v[0] if v else 0) for v in (d.read(s) for s in range(5))]
    finally:
        d.close()
    assert seqs == [1, 2, 3, 0, 0]


def test_after_a_cut_every_request_fails_and_power_on_serves_again(
        emulated_drive):
    drive = emulated_drive("512e", "nonvolatile", durable=True, size=SIZE)
    d = Direct(drive.path or "")
    try:
        d.write(0, 1)
        cut = drive.cut_power()
        assert (cut.power, cut.lost_pages) == (1, 0)
        for op in (lambda: d.write(1, 2), lambda: d.read(0),
                   lambda: os.fdatasync(d.fd)):
            with pytest.raises(OSError) as e:
                op()
            assert e.value.errno == errno.EIO
        assert drive.counters().unpowered == 3
    finally:
        d.close()
    d = Direct(drive.power_on())
    try:
        assert d.read(0)[:2] == (1, 0)
        d.write(1, 2)
        assert d.read(1)[:2] == (2, 1)
        assert drive.counters().power == 0
    finally:
        d.close()


@pytest.mark.parametrize("params,message", [
    ({"durability": "lie_nv"}, "needs durable_image"),
    ({"durability": "lie_nv", "cache": "volatile", "durable": True},
     "lie_nv needs cache=nonvolatile"),
    ({"durability": "lie_flush", "durable": True},
     "lie_flush needs cache=volatile"),
])
def test_a_lie_needs_its_cache_kind_and_an_image(params, message):
    params = dict(params)
    cache = str(params.pop("cache", "nonvolatile"))
    drive = EmulatedDrive.preset("512e", cache, size=SIZE, **params)
    with pytest.raises(RuntimeError, match=message):
        drive.start()
    assert drive.tmpdir is None and drive.pids == []
