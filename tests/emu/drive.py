# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Emulated SSDs as files that take real O_DIRECT pwrite/pread/fdatasync
(DESIGN.md seam 5), for tests of the measuring engine and of the verdicts.

One EmulatedDrive is two child processes, both ended by PID in stop():

    nbdkit -f --exit-with-parent -U SOCK -P PIDFILE sdemu.so key=value...
    setpriv --pdeathsig TERM nbdfuse -C 16 -P PIDFILE MNT/disk nbd+unix://
        (with LD_PRELOAD=fuseshim.so)

and `fusermount3 -u MNT` to unmount.  Why not the simpler `nbdfuse
--command nbdkit -s`: one NBD connection carries every request through
one socket reader at each end, and each hand-over costs a wake-up on
this 2-vCPU virtual machine: 8 threads writing to a drive with 8
channels and 2 ms writes got 1.3k IOPS over one connection, 3.0k over 16
(the model's limit is 3.9k).  nbdfuse multi-conn needs a URI.  Why the
shim: see fuseshim.c (without it the kernel runs synchronous O_DIRECT
writes to a FUSE file one at a time, so no queue-depth knee could show,
and libfuse serves at most 10 requests).

The timing model, its parameters and their defaults are in sdemu.c.  The
default scale (20) makes an aligned native 4 KiB write take about 0.7 ms,
well above the ~0.13 ms the FUSE path adds.  Keep `channels / service
time` at or under ~4,000 I/Os per second when a test needs the knee to
be the drive's and not the machine's: the whole path (Python threads,
FUSE, nbdfuse, nbdkit) tops out near 5,500 4 KiB writes per second on
these two vCPUs (channels=8 at the default scale would allow 11,700).

The counters file (stats=PATH) is an array of native-endian uint64; the
index of each field is its position in FIELDS below, which must match
struct sdemu_stats in sdemu.c:

     0 magic 0x5344454d55000002     1 nfields (49)
     2 size     3 logical   4 native    5 volatile (1/0)   6 channels
     7 cmd_ns   8 xfer_ps (per byte)    9 program_ns  10 rmw_ns
    11 read_ns 12 flush_volatile_ns    13 flush_page_ns  14 flush_nv_ns
    15 cache_pages  16 jitter_ppm  17 spin_ns (0: auto)
    18 writes  19 reads  20 flushes  21 bytes_written  22 bytes_read
    23-29 writes of 512, 1K, 2K, 4K, 8K, 16K, other bytes
    30 misaligned (offset % native != 0)   31 rmw (partial native pages)
    32 errors (injected EIO)  33 max_inflight  34 inflight
    35 rejected (EINVAL, not logical-aligned, seen by the plugin)
    36 fua_writes  37 late (ended > 50 us past deadline)  38 late_ns
    39 busy_ns (sum of modelled service times)
    40 durability (0 honest, 1 lie_flush, 2 lie_nv)  41 durable (1: with
       a durable image)   42 power (1: cut)   43 dirty (pages in the
       volatile cache now)  44 durable_pages (made durable)
    45 writebacks (of those: written back as the cache filled)
    46 durable_flushes (honest flushes)  47 lost_pages (dropped at the cut)
    48 unpowered (requests failed EIO after the cut)

Parameters (2-17, 40-41) are the effective, scaled values; counters count
every request that passed the alignment check, including injected
failures; inflight, power and dirty are gauges, never reset.  A request
that libnbd itself refuses for alignment (it knows the block size) never
reaches the plugin: the caller gets EINVAL and no counter moves.

Durability (durable=True: sdemu's durable_image=, in the drive's temp
dir): writes wait in a volatile cache until the drive makes them durable
(sdemu.c says when, for each durability= kind); cut_power() sends
SIGUSR1, after which the drive fails every request with EIO and has lost
its cache, and power_on() starts nbdkit and nbdfuse again on the same
durable image, which is then all the drive holds.
"""

import atexit
import contextlib
import mmap
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields
from typing import (Dict, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

# tests/marks.py, whichever way this module was imported (emu.drive,
# tests.emu.drive, sshd, tests.ssh.sshd).
_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
from marks import needs  # noqa: E402

try:
    from .build import build_plugin, build_shim
except ImportError:     # imported as a top-level module
    from build import build_plugin, build_shim  # type: ignore

MAGIC = 0x5344454D55000002
FIELDS = (
    "magic", "nfields",
    "size", "logical", "native", "volatile", "channels", "cmd_ns",
    "xfer_ps", "program_ns", "rmw_ns", "read_ns", "flush_volatile_ns",
    "flush_page_ns", "flush_nv_ns", "cache_pages", "jitter_ppm", "spin_ns",
    "writes", "reads", "flushes", "bytes_written", "bytes_read",
    "w512", "w1k", "w2k", "w4k", "w8k", "w16k", "wother",
    "misaligned", "rmw", "errors", "max_inflight", "inflight", "rejected",
    "fua_writes", "late", "late_ns", "busy_ns",
    "durability", "durable", "power", "dirty", "durable_pages", "writebacks",
    "durable_flushes", "lost_pages", "unpowered",
)
LAYOUT = struct.Struct("=%dQ" % len(FIELDS))
FIRST_COUNTER = FIELDS.index("writes")
# What reset_counters() leaves alone: parameters and gauges.
KEPT = frozenset(FIELDS.index(f) for f in ("inflight", "durability",
                                           "durable", "power", "dirty"))
SIZE_CLASSES = (512, 1024, 2048, 4096, 8192, 16384)

# name: (logical, native) block sizes
PRESETS = {
    "512n": (512, 512),
    "512e": (512, 4096),
    "4kn": (4096, 4096),
    "8k": (512, 8192),
    "16k": (512, 16384),
    "4k-rmw5": (512, 4096),
}
# Model parameters a preset sets beyond its block sizes.  4k-rmw5: a
# 4K-native drive whose 512-byte write costs only 5 % more than its 4 KiB
# write (cmd 10 + 512 B at 1000 MB/s + program 20 + rmw 5.289 us =
# 1.05 x (10 + 4.096 + 20)), as where firmware buffers sub-page writes.
PRESET_PARAMS: Dict[str, Dict[str, object]] = {
    "4k-rmw5": {"rmw": 5.289},
}
CACHES = ("volatile", "nonvolatile")
DURABILITIES = ("honest", "lie_flush", "lie_nv")

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
CUT_TIMEOUT_S = 5.0
NBDKIT_THREADS = 16


@dataclass(frozen=True)
class DriveParams:
    """The effective model parameters the plugin reports (scaled ns)."""

    size: int
    logical: int
    native: int
    volatile: int
    channels: int
    cmd_ns: int
    xfer_ps: int
    program_ns: int
    rmw_ns: int
    read_ns: int
    flush_volatile_ns: int
    flush_page_ns: int
    flush_nv_ns: int
    cache_pages: int
    jitter_ppm: int
    spin_ns: int
    durability: int
    durable: int

    @property
    def durability_name(self) -> str:
        """honest, lie_flush or lie_nv."""
        return DURABILITIES[self.durability]

    def write_ns(self, nbytes: int, offset: int = 0) -> float:
        """Modelled service time of a write, without jitter (sdemu.c)."""
        first = offset // self.native
        last = (offset + nbytes - 1) // self.native
        pages = last - first + 1
        head = offset % self.native
        tail = (offset + nbytes) % self.native
        if pages == 1:
            partial = 1 if head or tail else 0
        else:
            partial = (1 if head else 0) + (1 if tail else 0)
        return (self.cmd_ns + self.xfer_ps * nbytes / 1000.0 +
                self.program_ns * pages + self.rmw_ns * partial)

    def read_ns_for(self, nbytes: int) -> float:
        """Modelled service time of a read."""
        return self.read_ns + self.xfer_ps * nbytes / 1000.0

    def flush_ns(self, dirty_pages: int = 0) -> float:
        """Modelled service time of a flush after dirty_pages pages."""
        if not self.volatile:
            return float(self.flush_nv_ns)
        return (self.flush_volatile_ns +
                self.flush_page_ns * min(dirty_pages, self.cache_pages))


@dataclass(frozen=True)
class Counters:
    """What the drive saw since the last reset (see the module doc)."""

    writes: int
    reads: int
    flushes: int
    bytes_written: int
    bytes_read: int
    w512: int
    w1k: int
    w2k: int
    w4k: int
    w8k: int
    w16k: int
    wother: int
    misaligned: int
    rmw: int
    errors: int
    max_inflight: int
    inflight: int
    rejected: int
    fua_writes: int
    late: int
    late_ns: int
    busy_ns: int
    power: int
    dirty: int
    durable_pages: int
    writebacks: int
    durable_flushes: int
    lost_pages: int
    unpowered: int

    @property
    def writes_by_size(self) -> Dict[Union[int, str], int]:
        """Writes per size class: {512: n, ..., 16384: n, "other": n}."""
        vals = (self.w512, self.w1k, self.w2k, self.w4k, self.w8k,
                self.w16k)
        out: Dict[Union[int, str], int] = dict(zip(SIZE_CLASSES, vals))
        out["other"] = self.wother
        return out


def parse_stats(raw: bytes) -> Tuple[DriveParams, Counters]:
    """Split a stats file image into (DriveParams, Counters)."""
    if len(raw) < LAYOUT.size:
        raise ValueError("stats file too short: %d bytes" % len(raw))
    vals = dict(zip(FIELDS, LAYOUT.unpack_from(raw)))
    if vals["magic"] != MAGIC or vals["nfields"] != len(FIELDS):
        raise ValueError("stats file: bad magic or layout (%#x, %d fields)"
                         % (vals["magic"], vals["nfields"]))
    params = DriveParams(**{f.name: vals[f.name]
                            for f in fields(DriveParams)})
    counters = Counters(**{f.name: vals[f.name] for f in fields(Counters)})
    return params, counters


def _nonempty(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def _mounted(path: str) -> bool:
    want = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 4 and \
                        parts[4].replace("\\040", " ") == want:
                    return True
    except OSError:
        pass
    return False


def emulator_mounts() -> List[str]:
    """Mount points of emulated drives (a temp dir named sdemu-*) that
    this mount namespace holds now, whoever made them."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 4 and "/sdemu-" in parts[4]:
                    found.append(parts[4].replace("\\040", " "))
    except OSError:
        pass
    return found


def _alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _end(proc: Optional[subprocess.Popen], grace: float) -> None:
    """Wait up to grace seconds, then SIGTERM, then SIGKILL, by PID."""
    if proc is None:
        return
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None and proc.poll() is None:
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _deathsig(argv: List[str]) -> List[str]:
    """Make argv die with SIGTERM if this process dies first."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return argv
    return [setpriv, "--pdeathsig", "TERM"] + argv


_LIVE: List["EmulatedDrive"] = []


def _stop_all() -> None:
    for drive in list(_LIVE):
        drive.stop()


atexit.register(_stop_all)


class EmulatedDrive:
    """A drive served by nbdkit+sdemu and exported as a file by nbdfuse.

    Use as a context manager, or start()/stop().  params are sdemu
    key=value parameters; a list value repeats the key (fail=...).
    durable=True gives the drive a durable image in its temp dir, which
    lives from start() to stop() across cut_power() and power_on().
    """

    def __init__(self, params: Optional[Mapping[str, object]] = None,
                 connections: int = 16, fuse_threads: int = 64,
                 shim: bool = True, durable: bool = False) -> None:
        self.params = dict(params or {})
        self.connections = connections
        self.fuse_threads = fuse_threads
        self.shim = shim
        self.durable = durable
        self.durable_image: Optional[str] = None
        self.path: Optional[str] = None
        self.tmpdir: Optional[str] = None
        self.mountpoint: Optional[str] = None
        self.stats_path: Optional[str] = None
        self._nbdkit: Optional[subprocess.Popen] = None
        self._nbdfuse: Optional[subprocess.Popen] = None

    @classmethod
    def preset(cls, name: str, cache: str = "nonvolatile",
               **overrides: object) -> "EmulatedDrive":
        """A drive of preset name (512n, 512e, 4kn, 8k, 16k, 4k-rmw5) and cache
        (volatile, nonvolatile); overrides are further sdemu parameters
        (channels=8, scale=40, fail="eio@8192", ...) or the EmulatedDrive
        arguments connections=, fuse_threads=, shim=, durable=."""
        if name not in PRESETS:
            raise ValueError("unknown preset %r (one of %s)"
                             % (name, ", ".join(PRESETS)))
        if cache not in CACHES:
            raise ValueError("cache must be volatile or nonvolatile")
        logical, native = PRESETS[name]
        params: Dict[str, object] = {"logical": logical, "native": native,
                                     "cache": cache}
        params.update(PRESET_PARAMS.get(name, {}))
        connections = int(str(overrides.pop("connections", 16)))
        fuse_threads = int(str(overrides.pop("fuse_threads", 64)))
        shim = bool(overrides.pop("shim", True))
        durable = bool(overrides.pop("durable", False))
        params.update(overrides)
        return cls(params, connections=connections,
                   fuse_threads=fuse_threads, shim=shim, durable=durable)

    def _argv_params(self) -> List[str]:
        out = []
        for key, value in self.params.items():
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                out.append("%s=%s" % (key, v))
        return out

    @property
    def pids(self) -> List[int]:
        """PIDs of the live child processes (nbdkit, nbdfuse)."""
        return [p.pid for p in (self._nbdkit, self._nbdfuse)
                if p is not None and p.poll() is None]

    def _log(self, name: str) -> str:
        assert self.tmpdir is not None
        try:
            with open(os.path.join(self.tmpdir, name), encoding="utf-8",
                      errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def _wait_for(self, what: str, ready, procs: Sequence) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            for proc, log in procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        "emulated drive: %s exited (%s) before %s:\n%s"
                        % (proc.args[0], proc.returncode, what,
                           self._log(log)))
            if time.monotonic() > deadline:
                raise RuntimeError("emulated drive: timed out waiting for "
                                   "%s" % what)
            time.sleep(0.01)

    def start(self) -> str:
        """Serve and mount the drive; return the path of its disk file."""
        if self.path is not None:
            return self.path
        needs("emu", "an emulated drive")
        plugin = build_plugin()
        shim = build_shim()
        self.tmpdir = tempfile.mkdtemp(prefix="sdemu-")
        _LIVE.append(self)
        try:
            return self._start(plugin, shim)
        except BaseException:
            self.stop()
            raise

    def _start(self, plugin: str, shim: str) -> str:
        assert self.tmpdir is not None
        tmp = self.tmpdir
        self.mountpoint = os.path.join(tmp, "mnt")
        os.makedirs(self.mountpoint, exist_ok=True)
        sock = os.path.join(tmp, "nbd.sock")
        kit_pidfile = os.path.join(tmp, "nbdkit.pid")
        fuse_pidfile = os.path.join(tmp, "nbdfuse.pid")
        # A power-on starts again in the same dir: the last boot's
        # pidfiles would read as ready at once.
        for stale in (sock, kit_pidfile, fuse_pidfile):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(stale)
        self.stats_path = os.path.join(tmp, "stats")
        disk = os.path.join(self.mountpoint, "disk")
        extra = []
        if self.durable:
            self.durable_image = os.path.join(tmp, "durable.img")
            extra.append("durable_image=" + self.durable_image)

        with open(os.path.join(tmp, "nbdkit.log"), "wb") as log:
            self._nbdkit = subprocess.Popen(
                ["nbdkit", "-f", "--exit-with-parent", "-U", sock,
                 "-P", kit_pidfile, "-t", str(NBDKIT_THREADS), plugin,
                 "stats=" + self.stats_path] + extra + self._argv_params(),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        kit = [(self._nbdkit, "nbdkit.log")]
        self._wait_for("nbdkit is ready", lambda: _nonempty(kit_pidfile),
                       kit)

        env = dict(os.environ)
        if self.shim:
            env["LD_PRELOAD"] = shim
            env["SDEMU_FUSE_THREADS"] = str(self.fuse_threads)
        with open(os.path.join(tmp, "nbdfuse.log"), "wb") as log:
            self._nbdfuse = subprocess.Popen(
                _deathsig(["nbdfuse", "-C", str(self.connections),
                           "-P", fuse_pidfile, disk,
                           "nbd+unix:///?socket=" + sock]),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        both = kit + [(self._nbdfuse, "nbdfuse.log")]
        self._wait_for("nbdfuse is ready",
                       lambda: _nonempty(fuse_pidfile) and
                       os.path.exists(disk), both)
        self._wait_for("the disk answers a read",
                       lambda: self._answers(disk), both)
        self.path = disk
        self.reset_counters()
        return disk

    def _answers(self, disk: str) -> bool:
        logical = int(str(self.params.get("logical", 512)))
        buf = mmap.mmap(-1, max(logical, mmap.PAGESIZE))
        try:
            fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)
        except OSError:
            return False
        try:
            os.preadv(fd, [memoryview(buf)[:logical]], 0)
        except OSError:
            pass    # an injected failure is still an answer
        finally:
            os.close(fd)
            buf.close()
        return True

    def stop(self) -> None:
        """Unmount, end both children by PID, remove the temp dir.
        Safe to call twice, and after a failed start."""
        mnt = self.mountpoint
        self._halt()
        if self.tmpdir is not None and \
                not (mnt is not None and _mounted(mnt)):
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        self.path = None
        self.durable_image = None
        if self in _LIVE:
            _LIVE.remove(self)

    def _halt(self) -> None:
        """Unmount and end both children by PID; keep the temp dir."""
        mnt = self.mountpoint
        clean = True
        if mnt is not None and _mounted(mnt):
            deadline = time.monotonic() + 2.0
            while _mounted(mnt):
                done = subprocess.run(["fusermount3", "-u", mnt],
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL,
                                      check=False).returncode == 0
                if done or time.monotonic() > deadline:
                    break
                time.sleep(0.05)   # busy: a test still has it open
            if _mounted(mnt):
                # Still busy: detach it; nbdfuse would serve the open
                # descriptors forever, so it is ended at once below.
                clean = False
                subprocess.run(["fusermount3", "-u", "-z", mnt],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
        _end(self._nbdfuse, STOP_TIMEOUT_S if clean else 0.2)
        if self._nbdkit is not None and self._nbdkit.poll() is None:
            try:
                os.kill(self._nbdkit.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        _end(self._nbdkit, STOP_TIMEOUT_S)
        self.path = None

    def cut_power(self) -> Counters:
        """Cut the drive's power (durable=True): it drops its volatile
        cache and fails every request from now on with EIO, the ones in
        flight too.  Returns the counters as the cut left them
        (lost_pages: dirty pages dropped).  Cutting twice is harmless."""
        if not self.durable or self._nbdkit is None or self.path is None:
            raise RuntimeError("cut_power: not a started durable drive")
        if self.counters().power:
            return self.counters()
        os.kill(self._nbdkit.pid, signal.SIGUSR1)
        deadline = time.monotonic() + CUT_TIMEOUT_S
        while not self.counters().power:
            if self._nbdkit.poll() is not None:
                raise RuntimeError("emulated drive: nbdkit exited (%s) at "
                                   "the power cut:\n%s"
                                   % (self._nbdkit.returncode,
                                      self._log("nbdkit.log")))
            if time.monotonic() > deadline:
                raise RuntimeError("emulated drive: the power cut was not "
                                   "seen in %.0f s" % CUT_TIMEOUT_S)
            time.sleep(0.0002)
        return self.counters()

    def power_on(self) -> str:
        """Start the drive again on its durable image (cutting the power
        first if it is on: nothing volatile survives a restart); return
        the path of its disk file, a new mount: descriptors on the old
        one are dead and must be closed first."""
        if not self.durable or self.tmpdir is None:
            raise RuntimeError("power_on: not a started durable drive")
        kit = self._nbdkit
        if self.path is not None and kit is not None and kit.poll() is None:
            try:
                self.cut_power()
            except RuntimeError:
                # nbdkit was dying already (a test's SIGKILL, which a
                # poll() may not see yet): as much a cut as any
                if kit.poll() is None:
                    raise
        self._halt()
        try:
            return self._start(build_plugin(), build_shim())
        except BaseException:
            self.stop()
            raise

    def __enter__(self) -> "EmulatedDrive":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _raw(self) -> bytes:
        if self.stats_path is None:
            raise RuntimeError("emulated drive is not started")
        with open(self.stats_path, "rb") as f:
            return f.read(LAYOUT.size)

    def counters(self) -> Counters:
        """The counters since start() or the last reset_counters()."""
        return parse_stats(self._raw())[1]

    def model(self) -> DriveParams:
        """The effective timing parameters, as the plugin computed them."""
        return parse_stats(self._raw())[0]

    def reset_counters(self) -> None:
        """Zero the counters (not the parameters, not the live in-flight
        gauge).  Call only while no I/O is in flight."""
        if self.stats_path is None:
            raise RuntimeError("emulated drive is not started")
        fd = os.open(self.stats_path, os.O_RDWR)
        try:
            with mmap.mmap(fd, LAYOUT.size) as m:
                for i in range(FIRST_COUNTER, len(FIELDS)):
                    if i not in KEPT:
                        struct.pack_into("=Q", m, i * 8, 0)
        finally:
            os.close(fd)


preset = EmulatedDrive.preset


@contextlib.contextmanager
def cpu_hogs(n: int = 2) -> Iterator[List[int]]:
    """Run n busy-looping child processes; yield their PIDs; kill them by
    PID on exit."""
    procs: List[subprocess.Popen] = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen(
                _deathsig([sys.executable, "-c", "while True: pass"]),
                stdin=subprocess.DEVNULL))
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()


def leftovers(pids: Sequence[int], tmpdirs: Sequence[str]) -> List[str]:
    """What survives of the given processes and mounts: a list of
    descriptions, empty when all is gone."""
    out = ["pid %d alive" % pid for pid in pids if _alive(pid)]
    out += ["%s still mounted" % os.path.join(d, "mnt") for d in tmpdirs
            if _mounted(os.path.join(d, "mnt"))]
    out += ["%s still exists" % d for d in tmpdirs if os.path.exists(d)]
    return out


CHILD_NAMES = ("nbdkit", "nbdfuse", "setpriv")


def child_processes(names: Sequence[str] = CHILD_NAMES) -> List[int]:
    """PIDs of this process's children whose command name is in names,
    read from /proc."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2:].split()
        if int(rest[1]) == me and comm in names and rest[0] not in "ZX":
            found.append(int(entry))
    return found
