# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Measured checks of the emulated drives through the real kernel path:
O_DIRECT pwrite/pread/fdatasync from Python on the nbdfuse file, one and
several threads.  Each test prints one MEASURED line (see with -s).

Thresholds sit well inside what the model predicts (ratios in comments)
and well outside the noise seen on this 2-vCPU machine, idle or with two
CPU hogs running.
"""

import errno
import mmap
import os
import threading
import time
from typing import Dict, List

import pytest

from . import conftest
from .build import build_plugin, build_shim
from .drive import (EmulatedDrive, PRESETS, child_processes, cpu_hogs,
                    emulator_mounts, leftovers)

pytestmark = pytest.mark.emu

KIB = 1024


class Direct:
    """An O_DIRECT descriptor on a drive file and a page-aligned buffer."""

    def __init__(self, path: str, size: int = 1 << 20) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.buf = mmap.mmap(-1, size)
        self.view = memoryview(self.buf)

    def write(self, nbytes: int, offset: int) -> int:
        return os.pwrite(self.fd, self.view[:nbytes], offset)

    def read(self, nbytes: int, offset: int) -> bytes:
        got = os.preadv(self.fd, [self.view[:nbytes]], offset)
        return bytes(self.view[:got])

    def sync(self) -> None:
        os.fdatasync(self.fd)

    def close(self) -> None:
        os.close(self.fd)
        self.view.release()
        self.buf.close()

    def __enter__(self) -> "Direct":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def typical_us(times_ns: List[int]) -> float:
    """The 25th percentile, in microseconds.  Scheduling delays on a
    loaded machine only ever add time, and to a few samples, so a low
    percentile tracks the drive where a median may not."""
    return sorted(times_ns)[len(times_ns) // 4] / 1000.0


def write_lat(d: Direct, nbytes: int, misalign: int = 0,
              n: int = 40) -> float:
    """Typical latency of n writes of nbytes, each in a fresh 64 KiB slot
    (so no two touch the same native page) at misalign past its start."""
    times = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        d.write(nbytes, i * 64 * KIB + misalign)
        times.append(time.perf_counter_ns() - t0)
    return typical_us(times)


def flush_lat(d: Direct, n: int = 15) -> float:
    """Typical latency of fdatasync after one 4 KiB write each."""
    times = []
    for i in range(n):
        d.write(4 * KIB, i * 64 * KIB)
        t0 = time.perf_counter_ns()
        d.sync()
        times.append(time.perf_counter_ns() - t0)
    return typical_us(times)


def iops(drive: EmulatedDrive, threads: int, seconds: float = 0.5,
         nbytes: int = 4 * KIB) -> float:
    """Aligned writes per second from `threads` threads, each with its own
    O_DIRECT descriptor, over `seconds` after a common start."""
    done = [0] * threads
    start = threading.Barrier(threads + 1)
    stop_at = [0.0]

    def worker(k: int) -> None:
        with Direct(drive.path or "", nbytes) as d:
            start.wait()
            i = 0
            while time.perf_counter() < stop_at[0]:
                d.write(nbytes, ((k * 4099 + i) % 8192) * nbytes)
                i += 1
            done[k] = i

    pool = [threading.Thread(target=worker, args=(k,))
            for k in range(threads)]
    for t in pool:
        t.start()
    drive.reset_counters()
    t0 = time.perf_counter()
    stop_at[0] = t0 + seconds
    start.wait()
    for t in pool:
        t.join()
    return sum(done) / (time.perf_counter() - t0)


def measured(what: str, **values: object) -> None:
    print("MEASURED %s: %s" % (what, ", ".join(
        "%s=%s" % (k, ("%.2f" % v) if isinstance(v, float) else v)
        for k, v in values.items())))


# -- building and parameters ---------------------------------------------

def test_build_is_cached_by_source_hash():
    first, shim = build_plugin(), build_shim()
    assert build_plugin() == first and build_shim() == shim
    assert os.path.basename(first).startswith("sdemu-")
    assert os.path.dirname(first).endswith(os.path.join("emu", ".build"))


def test_bad_parameters_fail_start_with_nbdkit_message():
    drive = EmulatedDrive({"logical": 4096, "native": 2048})
    with pytest.raises(RuntimeError, match="native must be"):
        drive.start()
    assert drive.tmpdir is None and drive.pids == []


def test_512e_reports_documented_default_model(emulated_drive):
    m = emulated_drive("512e", "volatile").model()
    # sdemu.c defaults (us) times scale 20, in ns
    assert (m.logical, m.native, m.volatile, m.channels) == (512, 4096, 1, 4)
    assert (m.cmd_ns, m.program_ns, m.rmw_ns, m.read_ns) == \
        (200000, 400000, 800000, 500000)
    assert m.xfer_ps == 20000       # 1000 MB/s, scaled: 20 ns per byte
    assert (m.flush_volatile_ns, m.flush_page_ns, m.flush_nv_ns) == \
        (3000000, 200000, 40000)
    assert 600000 <= m.write_ns(4096) <= 1000000
    measured("512e model (us)", write512=m.write_ns(512) / 1000,
             write4k=m.write_ns(4096) / 1000,
             write4k_misaligned=m.write_ns(4096, 512) / 1000,
             read4k=m.read_ns_for(4096) / 1000,
             flush_volatile_1page=m.flush_ns(1) / 1000)


def test_data_reads_back_and_unwritten_space_is_zero(emulated_drive):
    drive = emulated_drive("512e")
    with Direct(drive.path or "") as d:
        pattern = bytes(range(256)) * 64        # 16 KiB
        d.buf[:len(pattern)] = pattern
        d.write(len(pattern), 3 * 65536 + 512)
        assert d.read(len(pattern), 3 * 65536 + 512) == pattern
        assert d.read(4096, 200 * 65536) == bytes(4096)


# -- per-I/O latency by size and alignment ---------------------------------

def test_512n_smaller_writes_are_never_slower(emulated_drive):
    drive = emulated_drive("512n")
    with Direct(drive.path or "") as d:
        lat = {n: write_lat(d, n) for n in (512, 1024, 2048, 4096)}
    measured("512n write latency (us)", **{"w%d" % k: v
                                           for k, v in lat.items()})
    # model: 270, 342, 484, 762 us
    assert lat[512] <= lat[1024] * 1.05
    assert lat[1024] <= lat[2048] * 1.05
    assert lat[2048] <= lat[4096] * 1.05
    assert lat[512] < lat[4096] * 0.8


def test_512e_sub_native_and_misaligned_writes_are_slower(emulated_drive):
    drive = emulated_drive("512e")
    with Direct(drive.path or "") as d:
        w512 = write_lat(d, 512)
        w4k = write_lat(d, 4096)
        mis = write_lat(d, 4096, misalign=512)
    model = drive.model()
    measured("512e write latency (us)", w512=w512, w4k=w4k,
             w4k_misaligned=mis, ratio_512_4k=w512 / w4k,
             ratio_misaligned=mis / w4k)
    # model: 1410 / 682 = 2.07 and 2682 / 682 = 3.9, plus ~0.13 ms FUSE
    assert w512 > 1.5 * w4k
    assert mis > 2.5 * w4k
    # the virtual clock: close to the model, never early
    assert model.write_ns(4096) / 1000 < w4k < \
        model.write_ns(4096) / 1000 + 400


@pytest.mark.parametrize("name", ["8k", "16k"])
def test_4k_writes_slower_than_native_on_big_pages(emulated_drive, name):
    drive = emulated_drive(name)
    native = PRESETS[name][1]
    with Direct(drive.path or "") as d:
        w4k = write_lat(d, 4096)
        wnat = write_lat(d, native)
    measured("%s write latency (us)" % name, w4k=w4k, native=wnat,
             ratio=w4k / wnat)
    # model: 8k 1842 / 924 = 2.0; 16k 2482 / 1328 = 1.9
    assert w4k > 1.5 * wnat


def test_flush_costs_much_more_on_volatile_cache(emulated_drive):
    vol = emulated_drive("512e", "volatile")
    nv = emulated_drive("512e", "nonvolatile")
    with Direct(vol.path or "") as d:
        fv = flush_lat(d)
    with Direct(nv.path or "") as d:
        fn = flush_lat(d)
    measured("fdatasync latency (us)", volatile=fv, nonvolatile=fn,
             ratio=fv / fn)
    # model: 3200 us vs 40 us, plus ~0.13 ms FUSE each
    assert fv > 8 * fn
    assert vol.counters().flushes == 15 and nv.counters().flushes == 15


# -- exact counters ----------------------------------------------------------

def test_counters_match_what_was_issued(emulated_drive):
    drive = emulated_drive("512e", "volatile")
    slot = 64 * KIB
    issued = [  # (bytes, offset)
        (512, 0 * slot), (512, 1 * slot), (512, 2 * slot + 512),
        (1024, 3 * slot), (1024, 4 * slot + 1024),
        (2048, 5 * slot),
        (4096, 6 * slot), (4096, 7 * slot), (4096, 8 * slot),
        (4096, 9 * slot + 512), (4096, 10 * slot + 2048),
        (8192, 11 * slot), (16384, 12 * slot),
        (12288, 13 * slot), (65536, 14 * slot),
    ]
    with Direct(drive.path or "") as d:
        for nbytes, off in issued:
            d.write(nbytes, off)
        d.sync()
        d.sync()
        for i in range(3):
            d.read(4096, i * slot)
    c = drive.counters()
    assert c.writes == 15 and c.flushes == 2 and c.reads == 3
    assert c.bytes_written == sum(n for n, _ in issued)
    assert c.bytes_read == 3 * 4096
    assert c.writes_by_size == {512: 3, 1024: 2, 2048: 1, 4096: 5,
                                8192: 1, 16384: 1, "other": 2}
    # offsets not on a 4 KiB page: 2*slot+512, 4*slot+1024, the two 4K
    assert c.misaligned == 4
    # partial pages: six sub-4K writes one each, misaligned 4Ks two each
    assert c.rmw == 6 + 2 * 2
    assert (c.errors, c.rejected, c.fua_writes) == (0, 0, 0)
    assert c.max_inflight == 1 and c.inflight == 0
    measured("counters", writes=c.writes, flushes=c.flushes,
             misaligned=c.misaligned, rmw=c.rmw, late=c.late)


# -- faults and the logical block size --------------------------------------

def test_fail_eio_at_offset_fails_exactly_that_write(emulated_drive):
    bad = 1024 * KIB + 100
    drive = emulated_drive("512e", fail="eio@%d" % bad)
    with Direct(drive.path or "") as d:
        d.write(4096, 1024 * KIB - 4096)
        with pytest.raises(OSError) as e:
            d.write(4096, 1024 * KIB)
        assert e.value.errno == errno.EIO
        d.write(4096, 1024 * KIB + 4096)
        d.write(512, 1024 * KIB + 512)      # same page, not the byte
        with pytest.raises(OSError) as e:
            d.read(512, 1024 * KIB)
        assert e.value.errno == errno.EIO
        assert len(d.read(4096, 0)) == 4096
    c = drive.counters()
    assert (c.writes, c.reads, c.errors) == (4, 2, 2)


def test_fail_after_n_writes(emulated_drive):
    drive = emulated_drive("4kn", fail_after=3)
    with Direct(drive.path or "") as d:
        for i in range(3):
            d.write(4096, i * 4096)
        for op in (lambda: d.write(4096, 8192 * 4),
                   lambda: d.read(4096, 0), d.sync):
            with pytest.raises(OSError) as e:
                op()
            assert e.value.errno == errno.EIO
    c = drive.counters()
    assert (c.writes, c.errors) == (4, 3)


def test_4kn_rejects_512_byte_and_misaligned_writes(emulated_drive):
    drive = emulated_drive("4kn")
    with Direct(drive.path or "") as d:
        for nbytes, off in ((512, 0), (4096, 512), (1024, 4096)):
            with pytest.raises(OSError) as e:
                d.write(nbytes, off)
            assert e.value.errno == errno.EINVAL
        d.write(4096, 4096)
    c = drive.counters()
    assert c.writes == 1 and c.w4k == 1 and c.errors == 0


# -- queue depth -------------------------------------------------------------

def test_iops_grow_until_channels_then_flatten(emulated_drive):
    # scale 60: one 4 KiB write takes 2.05 ms, 8 channels cap the drive at
    # 3,910 writes/s, half of what the FUSE path itself can carry here
    drive = emulated_drive("512e", channels=8, scale=60)
    limit = 8 * 1e9 / drive.model().write_ns(4096)
    rate: Dict[int, float] = {}
    inflight: Dict[int, int] = {}
    for n in (1, 2, 4, 8, 16, 32):
        rate[n] = iops(drive, n)
        inflight[n] = drive.counters().max_inflight
    measured("iops, channels=8 scale=60", limit=limit,
             **{"t%d" % n: rate[n] for n in rate})
    measured("max in flight", **{"t%d" % n: inflight[n] for n in inflight})
    assert rate[2] > 1.7 * rate[1]
    assert rate[4] > 1.7 * rate[2]
    assert rate[8] > 1.4 * rate[4]
    # At QD 8 every channel has one writer, idle during its FUSE
    # hand-offs (0.5-1 ms on this VM, slower when the host is busy): 0.68
    # to 0.75 of the limit measured; the growth is the ratios above.
    assert rate[8] > 0.6 * limit
    for n in (16, 32):      # flat: at the drive's limit, never above
        assert 0.85 * limit < rate[n] < 1.03 * limit
    assert inflight[8] >= 7 and inflight[32] > 16


def test_without_the_shim_sync_writes_reach_the_drive_one_at_a_time(
        emulated_drive):
    # why fuseshim.c exists: the kernel's inode lock on a FUSE file
    drive = emulated_drive("512e", channels=8, shim=False)
    rate = iops(drive, 4, seconds=0.3)
    assert drive.counters().max_inflight == 1
    measured("4 threads without the shim", iops=rate,
             max_inflight=drive.counters().max_inflight)


# -- a loaded machine --------------------------------------------------------

def _ratios(vol: EmulatedDrive, nv: EmulatedDrive,
            big: EmulatedDrive) -> Dict[str, float]:
    with Direct(vol.path or "") as d:
        w512, w4k = write_lat(d, 512, n=30), write_lat(d, 4096, n=30)
        mis = write_lat(d, 4096, misalign=512, n=30)
        fv = flush_lat(d, n=12)
    with Direct(nv.path or "") as d:
        fn = flush_lat(d, n=20)
    with Direct(big.path or "") as d:
        b4k, b8k = write_lat(d, 4096, n=30), write_lat(d, 8192, n=30)
    return {"w4k": w4k, "512e": w512 / w4k, "misaligned": mis / w4k,
            "flush": fv / fn, "8k": b4k / b8k}


def test_model_ratios_hold_with_two_cpu_hogs(emulated_drive):
    vol = emulated_drive("512e", "volatile")
    nv = emulated_drive("512e", "nonvolatile")
    big = emulated_drive("8k")
    idle = _ratios(vol, nv, big)
    for drive in (vol, nv, big):
        drive.reset_counters()
    with cpu_hogs(2) as hogs:
        assert len(hogs) == 2
        loaded = _ratios(vol, nv, big)
    late = sum(d.counters().late for d in (vol, nv, big))
    total = sum(d.counters().writes + d.counters().flushes
                for d in (vol, nv, big))
    measured("idle", **idle)
    measured("2 cpu hogs", late="%d/%d" % (late, total), **loaded)
    for key in ("512e", "misaligned", "8k"):
        assert loaded[key] > 0.8 * idle[key], key
        assert loaded[key] > 1.4
    # The FUSE path adds the same time to a flushed write on both caches,
    # so load shrinks the ratio (about 5 idle, 3.3 with four hogs in a run of
    # the whole suite); what certification needs is that a volatile flush
    # still costs well over a whole write (verdict.FLUSH_COST: twice).
    assert loaded["flush"] > 2.5
    assert loaded["w4k"] < idle["w4k"] * 1.5
    assert late <= total // 20


# -- cleanup -----------------------------------------------------------------

def test_stop_after_an_exception_leaves_nothing():
    drive = EmulatedDrive.preset("512e")
    with pytest.raises(ZeroDivisionError):
        with drive:
            pids, tmp = drive.pids, drive.tmpdir
            assert len(pids) == 2 and tmp is not None
            fd = os.open(drive.path or "", os.O_RDONLY)   # still open
            try:
                1 / 0
            finally:
                os.close(fd)
    assert leftovers(pids, [tmp]) == []


def test_zz_nothing_survives_the_fixtures():
    assert conftest.CREATED, "run with the other tests"
    left: List[str] = []
    for pids, tmp in conftest.CREATED:
        left += leftovers(pids, [tmp])
    assert left == []
    assert child_processes() == []
    # A drive made outside the fixture (an appliance's, a shelf's) is
    # not in CREATED; any emulated-drive mount that appeared during the
    # run is one of ours.
    ours = [m for m in emulator_mounts() if m not in conftest.MOUNTED_BEFORE]
    assert ours == []
