# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""fio output as StepResults for `sdtune infer`.

Two of fio's output formats are read:

* JSON (`--output-format=json`, `json+`, or `json,normal`: text around
  the JSON object is skipped), from fio 2.x (latencies in µs under
  `lat`/`clat`) to 3.4x (ns under `lat_ns`/`clat_ns`).  fio prints the
  options of each job from 2.3 on ("job options", "global options"); an
  older fio prints none, and a job whose block size or direction cannot
  be known is not used, never assumed to be 4 KiB.
* terse output version 3 (`--minimal`, `--output-format=terse`; 4 and 5
  too): one `;`-separated line per job, latencies in µs.  It holds no
  options: the block size, direction, engine and iodepth come from fio's
  own description of the job ("name: (g=0): rw=write, bs=(R) 4096B-4096B,
  (W) ..., ioengine=psync, iodepth=1") when the text holds it.

A job is used for a write verdict only when it wrote and nothing else: a
job that reads (rw=read, randrw, a verify pass), trims, ran at the same
time as another job (the same reporting group, no stonewall between them)
or says more than its options describe is reported by name with the
reason, and the others are used.  The options are trusted, not the job
name ("random-read" with rw=randwrite writes).  A job cloned by numjobs
counts numjobs times its iodepth (a synchronous engine such as psync runs
one I/O at a time, whatever iodepth says): group_reporting prints the
clones as one entry, without it fio prints one entry per clone and they
are added up here as fio would.

fio output has no per-interval data, so the per-I/O standard deviation
is used with one degree of freedom per second of runtime: the same
standard error, but a conservative t-distribution.  With fsync=1 or
fdatasync=1 fio times the write and the fsync apart (the fsync in the
`sync` section, fio 3.4 and later), so a write-and-flush costs the sum of
the two.

Any value that is not what fio prints there (a wrong type, text that is
not a number, NaN, an infinity) is a ParseError naming the field: the
JSON path (jobs[2].write.lat_ns.mean) or the terse line and field
(line 5 field 81 (write lat mean)).  Pure: text in, StepResults out.
"""

import json
import math
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from ...errors import ParseError
from ...parsing import parse_count
from ..reports import StepResult
from .common import (FIO, MAX_BS, MAX_IOPS, MAX_IOS, MAX_LAT_NS, MAX_QD,
                     MAX_RUNTIME_MS, BOM, listing, number,
                     parse_size, show)

# How many lines starting with "{" are tried as the fio JSON object: a
# preamble has a few notes, not thousands of braces.
_MAX_JSON_CANDIDATES = 50

# Engines that do one I/O at a time: fio says "queue depth will be capped
# at 1" for them (engines with FIO_SYNCIO in fio's source).
_SYNC_ENGINES = frozenset(("sync", "psync", "vsync", "pvsync", "pvsync2",
                           "mmap", "splice"))
# Engines whose "writes" are not writes to a drive.
_NO_DRIVE_ENGINES = frozenset((
    "null", "cpuio", "net", "netsplice", "exec", "filecreate", "filestat",
    "filedelete", "dircreate", "dirstat", "dirdelete", "falloc",
    "ftruncate"))

# rw= values that write and nothing else: the access pattern of each.
_WRITES = {"write": "seq", "randwrite": "rand"}
# Why a job with any other rw= value is no write measurement.
_NOT_WRITES = {
    "read": "it reads", "randread": "it reads",
    "rw": "it mixes reads with the writes",
    "readwrite": "it mixes reads with the writes",
    "randrw": "it mixes reads with the writes",
    "trim": "it trims", "randtrim": "it trims",
    "trimwrite": "it trims before each write",
    "randtrimwrite": "it trims before each write"}

# iops x mean latency is the mean number of I/Os in flight (Little's
# law); fio never has more than iodepth x numjobs.  Beyond this margin
# for rounding, an entry holds more I/O than its options describe.
_IN_FLIGHT_MARGIN = (1.1, 0.5)
# A terse job is taken as plain writes only when its queue was this full:
# an fsync or a pause between writes (which terse output does not show)
# leaves it mostly empty.
_TERSE_MIN_FULL = 0.5

# fio's description of a job, printed before it runs (init.c add_job):
# "w4k: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) ...,
# ioengine=psync, iodepth=1"; fio 2.x prints bs=4K-4K/4K-4K/4K-4K or
# bs=4096B-4096B,4096B-4096B,4096B-4096B.  Matched after the name, at
# the first ": (g=" (one try per line, not one per position).
_HEADER = re.compile(r"\(g=(?P<group>[0-9]+)\): "
                     r"rw=(?P<rw>[a-z]+), bs=(?P<bs>.+), "
                     r"ioengine=(?P<engine>[^,\s]+), "
                     r"iodepth=(?P<depth>[0-9]+)\s*$")
# fio job names are at most 128 bytes: a longer line is not fio's.
_MAX_HEADER_LEN = 1024
# The bytes of a job name fio keeps for its reports (FIO_JOBNAME_SIZE
# less the NUL).
_MAX_JOB_NAME = 127
# The first line of a job in fio's normal report, after its name: how
# many clones (group_reporting) its numbers hold.
_REPORT = re.compile(r"\(groupid=(?P<group>[0-9]+), "
                     r"jobs=(?P<jobs>[0-9]+)\): err=")
# A terse line of version 3, 4 or 5: "3;fio-3.32;name;0;0;...".
_TERSE = re.compile(r"^([345]);fio-[^;]*;")


class FioImport(NamedTuple):
    """What an fio output gave: the steps, each job that is not used with
    why ("job NAME: why"), and notes on how the used jobs were read."""
    steps: List[StepResult]
    unused: List[str]
    notes: List[str]


def _path(parent: str, key: str) -> str:
    """JSON path of a member: jobs[0].write, jobs[0]["job options"]."""
    if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
        return "%s.%s" % (parent, key) if parent else key
    return '%s["%s"]' % (parent, key)


def _json_at(text: str, offset: int) -> Tuple[Any, Optional[str]]:
    """The JSON value starting at offset (text after it is ignored), or
    why there is none there, with its line and column."""
    try:
        return json.JSONDecoder().raw_decode(text, offset)[0], None
    except json.JSONDecodeError as e:
        return None, "not valid JSON at line %d column %d" % (
            e.lineno, e.colno)
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError:
        # Python refuses integers of thousands of digits.
        return None, "a JSON number too long to read"


def find_fio_json(text: str) -> Tuple[Optional[dict], str]:
    """The fio JSON object: the first line starting with "{" (after an
    optional UTF-8 byte order mark and blanks) that parses as an object
    with "jobs".
    fio prints notes ("note: both iodepth >= 1 and synchronous I/O engine
    are selected ...", "fio: terminating on signal 2") before it and,
    with --output-format=json,normal, its normal report after it.
    Returns (object, "") or (None, why not)."""
    why = "no line starting with '{': not fio JSON output"
    offset = 0
    tried = 0
    for line in text.splitlines(keepends=True):
        start = offset + len(line) - len(line.lstrip(BOM + " \t"))
        offset += len(line)
        if not text.startswith("{", start):
            continue
        doc, error = _json_at(text, start)
        if isinstance(doc, dict) and "jobs" in doc:
            return doc, ""
        if tried == 0:
            why = error or "the JSON at line %d is not fio output (no " \
                "\"jobs\")" % (text.count("\n", 0, start) + 1)
        tried += 1
        if tried >= _MAX_JSON_CANDIDATES:
            break
    return None, why


def find_fio_terse(text: str) -> List[Tuple[int, str]]:
    """(line number, line) of each fio terse line (version 3 to 5) in the
    text: a line starting "3;fio-", after an optional byte order mark."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.lstrip(BOM + " \t").rstrip()
        if _TERSE.match(line):
            found.append((lineno, line))
    return found


def _member(obj: dict, key: str, where: str) -> Any:
    if key not in obj:
        raise ParseError(FIO, _path(where, key), "missing")
    return obj[key]


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ParseError(FIO, where, "not an object: %s" % show(value))
    return value


def _job_name(name: str, field: str) -> str:
    """A job name as fio prints it: it keeps 127 bytes of one (struct
    thread_stat), so a longer one is not fio's output."""
    if len(name.encode("utf-8", "replace")) > _MAX_JOB_NAME:
        raise ParseError(FIO, field, "%s is not a fio job name: longer "
                         "than the %d bytes fio keeps of one"
                         % (show(name), _MAX_JOB_NAME))
    return name


def _fio_version(value: Any) -> Optional[Tuple[int, ...]]:
    """(3, 42) of "fio-3.42-6-g219f", (2, 1, 4) of "fio-2.1.4"; None when
    the document does not say."""
    if not isinstance(value, str):
        return None
    m = re.match(r"^fio-([0-9]+(?:\.[0-9]+)*)", value.strip())
    if not m:
        return None
    return tuple(parse_count(part, command=FIO, field='"fio version"',
                             what="a fio version number")
                 for part in m.group(1).split(".")[:4])


# -- the measurements ---------------------------------------------------------

class _Lat(NamedTuple):
    """A latency in ns: per-I/O mean and standard deviation, and the field
    it was read from."""
    mean: float
    sd: float
    field: str


class _Measure:
    """What one entry (or the clones of a job, added up) measured."""

    def __init__(self, ios: float, iops: float, runtime_ms: float,
                 lat: Optional[_Lat], clat: Optional[_Lat],
                 where_lat: str) -> None:
        self.ios = ios
        self.iops = iops
        self.runtime_ms = runtime_ms
        self.lat = lat
        self.clat = clat
        # Where the error goes when neither latency is there.
        self.where_lat = where_lat
        # The fsync cost per write (fsync=1 with fio 3.4's sync section).
        self.sync: Optional[_Lat] = None


def _pool(parts: List[Tuple[float, Optional[_Lat]]]) -> Optional[_Lat]:
    """The mean and standard deviation over all I/Os of several clones,
    as fio's group_reporting computes them."""
    if any(lat is None for _, lat in parts):
        return None
    total = sum(n for n, _ in parts)
    mean = sum(n * lat.mean for n, lat in parts) / total
    var = sum(n * (lat.sd ** 2 + (lat.mean - mean) ** 2)
              for n, lat in parts) / total
    return _Lat(mean, math.sqrt(var), parts[0][1].field)


def _combine(measures: List[_Measure]) -> _Measure:
    """The clones of a job as one: they ran together, so their rates add
    up and their latencies pool."""
    if len(measures) == 1:
        return measures[0]
    out = _Measure(sum(m.ios for m in measures),
                   sum(m.iops for m in measures),
                   max(m.runtime_ms for m in measures),
                   _pool([(m.ios, m.lat) for m in measures]),
                   _pool([(m.ios, m.clat) for m in measures]),
                   measures[0].where_lat)
    out.sync = _pool([(m.ios, m.sync) for m in measures])
    return out


# The standard deviation of a JSON latency object that has none.
_MISSING = object()


def _lat_value(mean_raw: Any, sd_raw: Any, mean_field: str, sd_field: str,
               scale: float, ios: float, label: str) -> Optional[_Lat]:
    """A latency from its printed mean and standard deviation (in ns when
    scale is 1, µs when 1000), or None when the mean is 0: fio prints
    zeros for a statistic it did not collect (disable_lat,
    disable_clat)."""
    mean = number(mean_raw, FIO, mean_field, MAX_LAT_NS / scale,
                  zero_ok=True) * scale
    if mean == 0:
        return None
    if sd_raw is _MISSING:
        raise ParseError(FIO, sd_field, "missing")
    sd = number(sd_raw, FIO, sd_field, MAX_LAT_NS / scale,
                zero_ok=True) * scale
    if sd == 0 and ios > 1:
        raise ParseError(FIO, sd_field, "0 over %d I/Os: not a measured "
                         "spread" % ios)
    return _Lat(mean, sd, label)


def _latency(section: dict, where: str, names: Tuple[str, str],
             ios: float) -> Optional[_Lat]:
    """A JSON latency object: ns (fio 3), or µs in fio 2.x."""
    for name, scale in zip(names, (1.0, 1000.0)):
        if name not in section:
            continue
        where_lat = _path(where, name)
        lat = _object(section[name], where_lat)
        return _lat_value(_member(lat, "mean", where_lat),
                          lat.get("stddev", _MISSING),
                          _path(where_lat, "mean"),
                          _path(where_lat, "stddev"), scale, ios, name)
    return None


# -- what a job did -----------------------------------------------------------

class _Desc:
    """How a job wrote: what its options (or fio's description line)
    say."""

    def __init__(self) -> None:
        self.bs = 4096
        self.pattern = "seq"
        self.offset = 0
        self.flush = "none"
        # False in terse output: whether the job flushed is not printed.
        self.flush_known = True
        # I/Os one clone keeps in flight (iodepth, 1 with a sync engine).
        self.depth = 1
        # numjobs; None when the output shows clones but not how many.
        self.numjobs: Optional[int] = 1
        # Why the job is not a write measurement despite writing.
        self.why: Optional[str] = None
        self.notes: List[str] = []


class _Entry:
    """One job as fio reported it: a JSON job or a terse line."""

    def __init__(self, name: str, where: str, group: Optional[int],
                 block: int = 0) -> None:
        self.name = name
        self.where = where
        self.group = group
        # Which fio run in the text (terse output pasted twice).
        self.block = block
        self.why: Optional[str] = None
        self.desc: Optional[_Desc] = None
        self.measure: Optional[_Measure] = None


def _engine_depth(desc: _Desc, engine: Optional[str], iodepth: int,
                  offload: bool) -> None:
    """desc.depth from the engine and iodepth, or desc.why."""
    desc.depth = iodepth
    if engine is None:
        if iodepth > 1:
            desc.notes.append(
                "iodepth=%d and no ioengine in the output: taken as %d "
                "writes in flight, but fio's default engine on Unix "
                "(psync) runs one at a time" % (iodepth, iodepth))
        return
    base = engine.split(":")[0].strip().lower()
    if base in _NO_DRIVE_ENGINES:
        desc.why = "ioengine=%s writes to no drive" % base
    elif base in _SYNC_ENGINES and iodepth > 1 and not offload:
        desc.depth = 1
        desc.notes.append("iodepth=%d with ioengine=%s, which runs one "
                          "write at a time: queue depth 1 per job"
                          % (iodepth, base))


class _Options:
    """A job's options over the global ones, each looked up with the
    JSON path it came from."""

    def __init__(self, sources: List[Tuple[str, dict]]) -> None:
        self.sources = sources

    @classmethod
    def of(cls, job: dict, where: str, global_opts: Optional[dict],
           version: Optional[Tuple[int, ...]], version_text: str
           ) -> Optional["_Options"]:
        """The options, or None when this fio prints none (before 2.3)."""
        sources: List[Tuple[str, dict]] = []
        key = "job options"
        if key in job:
            sources.append((_path(where, key),
                            _object(job[key], _path(where, key))))
        if global_opts is not None:
            sources.append(('["global options"]', global_opts))
        if sources:
            return cls(sources)
        if version is not None and version >= (2, 3):
            # fio 2.3 and later print every option a job set, and a job
            # that writes set rw: this output lost them.
            raise ParseError(FIO, _path(where, key), "missing, and there "
                             "are no global options: %s prints the options"
                             " of every job, so the block size, queue "
                             "depth and flushes are unknown"
                             % version_text)
        return None

    def get(self, *names: str) -> Tuple[Optional[str], str]:
        """(text, field) of the first option set under one of names."""
        for where, opts in self.sources:
            for name in names:
                if name in opts:
                    value, field = opts[name], _path(where, name)
                    if isinstance(value, bool) or \
                            not isinstance(value, (str, int)):
                        raise ParseError(FIO, field, "not an option value:"
                                         " %s" % show(value))
                    return str(value).strip(), field
        return None, ""

    def count(self, name: str, default: int, high: int,
              zero_ok: bool = False) -> int:
        text, field = self.get(name)
        if text is None:
            return default
        return int(number(text, FIO, field, high, zero_ok, whole=True))


def _write_size(text: str, field: str) -> int:
    """A block size as fio prints it (4k, 4096B, 4KiB)."""
    bs = parse_size(text)
    if bs is None:
        raise ParseError(FIO, field, "not a block size: %s" % show(text))
    return int(number(bs, FIO, field, MAX_BS))


def _fio_bs(opts: _Options) -> int:
    """The write block size: bs=4k, or bs=READ,WRITE[,TRIM] (an empty
    part is fio's default); fio's default is 4 KiB."""
    text, field = opts.get("bs", "blocksize")
    if text is None:
        return 4096
    parts = text.split(",")
    part = (parts[1] if len(parts) > 1 else parts[0]).strip()
    if not part:
        return 4096
    if parse_size(part) is None:
        raise ParseError(FIO, field, "not a block size: %s" % show(text))
    return _write_size(part, field)


def _fio_offset(opts: _Options, bs: int) -> int:
    """Where the writes start relative to bs: fio aligns an offset given
    in percent to the block size."""
    text, field = opts.get("offset")
    if text is None or text.endswith("%"):
        return 0
    offset = parse_size(text)
    if offset is None:
        raise ParseError(FIO, field, "not an offset: %s" % show(text))
    return offset % bs


def _fio_flush(opts: _Options) -> str:
    """none, each (a flush after every write), fsync (one after every
    write, timed apart) or periodic (every N)."""
    every = [opts.count(name, 0, 1 << 31, zero_ok=True)
             for name in ("fsync", "fdatasync")]
    text, field = opts.get("sync")
    if text is not None and text.lower() not in ("0", "1", "none", "sync",
                                                 "dsync"):
        raise ParseError(FIO, field, "not a sync mode: %s" % show(text))
    if 1 in every:
        return "fsync"          # timed apart, in the sync section
    if text is not None and text.lower() in ("1", "sync", "dsync"):
        return "each"           # O_SYNC: the flush is inside each write
    return "periodic" if any(every) else "none"


def _rw_base(text: str) -> str:
    """rw=randwrite:8 -> randwrite (the suffix spaces the offsets)."""
    return text.split(":")[0].strip().lower()


def _json_desc(opts: _Options) -> _Desc:
    """A JSON job's description from its options."""
    desc = _Desc()
    rw, _ = opts.get("rw", "readwrite")
    if rw is not None:
        desc.pattern = _WRITES.get(_rw_base(rw), "seq")
    desc.bs = _fio_bs(opts)
    for name in ("bsrange", "bssplit"):
        text, _ = opts.get(name)
        if text is not None:
            desc.why = "%s=%s varies the block size" % (name, text)
    iodepth = opts.count("iodepth", 1, MAX_QD)
    desc.numjobs = opts.count("numjobs", 1, MAX_QD)
    engine, _ = opts.get("ioengine")
    mode, _ = opts.get("io_submit_mode")
    _engine_depth(desc, engine, iodepth, (mode or "").lower() == "offload")
    desc.flush = _fio_flush(opts)
    desc.offset = _fio_offset(opts, desc.bs)
    return desc


def _json_count(job: dict, ddir: str, where: str,
                version: Optional[Tuple[int, ...]]) -> Tuple[float, str]:
    """(I/Os, field) of a direction: total_ios, or before fio 2.1.14 (which
    does not count I/Os) io_bytes, enough to tell whether it did any."""
    if ddir not in job:
        return 0, ""
    d_where = _path(where, ddir)
    section = _object(job[ddir], d_where)
    if "total_ios" in section:
        field = _path(d_where, "total_ios")
        return number(section["total_ios"], FIO, field, MAX_IOS,
                      zero_ok=True, whole=True), field
    if version is not None and version < (2, 1, 14) and \
            "io_bytes" in section:
        field = _path(d_where, "io_bytes")
        return number(section["io_bytes"], FIO, field, MAX_IOS * MAX_BS,
                      zero_ok=True, whole=True), field
    raise ParseError(FIO, _path(d_where, "total_ios"), "missing: fio before"
                     " 2.1.14 does not count I/Os")


def _direction_why(rw: Optional[str], reads: Tuple[float, str],
                   trims: Tuple[float, str], writes: Tuple[float, str]
                   ) -> Optional[str]:
    """Why a job is no pure write job, from its rw= and its counts."""
    if rw is not None:
        base = _rw_base(rw)
        if base in _NOT_WRITES:
            return "rw=%s: %s, a write verdict needs writes only" % (
                base, _NOT_WRITES[base])
        if base not in _WRITES:
            return "rw=%s is no fio I/O pattern" % show(rw)
    for (count, field), what in ((reads, "read"), (trims, "trimmed")):
        if count:
            return "it %s as well (%s = %d), a write verdict needs writes" \
                " only" % (what, field, count) if writes[0] else \
                "it %s (%s = %d) and wrote nothing" % (what, field, count)
    if not writes[0]:
        return "it wrote nothing (%s = 0)" % writes[1]
    return None


def _json_entry(index: int, job: Any, global_opts: Optional[dict],
                version: Optional[Tuple[int, ...]], version_text: str
                ) -> _Entry:
    """One JSON job: what it did and, when it wrote, what it measured."""
    where = "jobs[%d]" % index
    job = _object(job, where)
    name = job.get("jobname")
    name = _job_name(name, _path(where, "jobname")) \
        if isinstance(name, str) and name.strip() else "job%d" % index
    group = None
    if "groupid" in job:
        group = int(number(job["groupid"], FIO, _path(where, "groupid"),
                           1 << 31, zero_ok=True, whole=True))
    entry = _Entry(name, where, group)
    if "write" not in job:
        entry.why = 'unified_rw_reporting merges its writes with the ' \
            'reads into "mixed": run fio without it' if "mixed" in job \
            else "no write section in the output"
        return entry
    w_where = _path(where, "write")
    w = _object(job["write"], w_where)
    opts = _Options.of(job, where, global_opts, version, version_text)
    rw = opts.get("rw", "readwrite")[0] if opts is not None else None
    writes = _json_count(job, "write", where, version)
    entry.why = _direction_why(
        rw, _json_count(job, "read", where, version),
        _json_count(job, "trim", where, version), writes)
    if entry.why:
        return entry
    if opts is None:
        entry.why = "block size not in the output (%s prints no job " \
            "options)" % version_text
        return entry
    desc = _json_desc(opts)
    if desc.why:
        entry.why = desc.why
        return entry
    error = number(job.get("error", 0), FIO, _path(where, "error"),
                   1 << 31, zero_ok=True, whole=True)
    if error:
        raise ParseError(FIO, _path(where, "error"), "fio reports error"
                         " %d for job %s: its numbers are not a "
                         "measurement" % (error, name))
    ios = writes[0]
    measure = _Measure(
        ios, number(_member(w, "iops", w_where), FIO,
                    _path(w_where, "iops"), MAX_IOPS),
        number(_member(w, "runtime", w_where), FIO,
               _path(w_where, "runtime"), MAX_RUNTIME_MS),
        _latency(w, w_where, ("lat_ns", "lat"), ios),
        _latency(w, w_where, ("clat_ns", "clat"), ios),
        _path(w_where, "lat_ns"))
    if desc.flush == "fsync" and "sync" in job:
        measure.sync = _json_sync(job, where, name, ios)
    entry.desc, entry.measure = desc, measure
    return entry


def _json_sync(job: dict, where: str, name: str, ios: float) -> _Lat:
    """The fsync cost per write, from the sync section."""
    s_where = _path(where, "sync")
    section = _object(job["sync"], s_where)
    count = number(_member(section, "total_ios", s_where), FIO,
                   _path(s_where, "total_ios"), MAX_IOS, zero_ok=True,
                   whole=True)
    lat = _latency(section, s_where, ("lat_ns", "lat"), count)
    if not count or lat is None:
        raise ParseError(FIO, _path(s_where, "total_ios"), "no fsync "
                         "timed although job %s flushes after each "
                         "write" % name)
    if count < 0.9 * ios:
        # Spread over all writes, a few fsyncs would make the flush look
        # cheap: the numbers do not describe a flush per write.
        raise ParseError(FIO, _path(s_where, "total_ios"), "%d fsyncs "
                         "for %d writes, although job %s flushes after "
                         "each write" % (count, ios, name))
    share = count / ios
    return _Lat(lat.mean * share, lat.sd * share, "sync." + lat.field)


def _json_entries(doc: dict) -> List[_Entry]:
    jobs = doc["jobs"]
    if not isinstance(jobs, list):
        raise ParseError(FIO, "jobs", "not a list of jobs: %s" % show(jobs))
    version = _fio_version(doc.get("fio version"))
    version_text = "fio %s" % ".".join(map(str, version)) if version \
        else "this fio"
    global_opts = None
    if "global options" in doc:
        global_opts = _object(doc["global options"], '["global options"]')
    return [_json_entry(index, job, global_opts, version, version_text)
            for index, job in enumerate(jobs)]


# -- terse output -------------------------------------------------------------

class _Header(NamedTuple):
    """fio's description of a job before it runs."""
    line: int
    name: str
    group: int
    rw: str
    bs: str
    engine: str
    depth: int
    clones: bool        # followed by "...": numjobs > 1


class _Layout:
    """Field numbers (1-based, as fio's HOWTO counts) of a terse line."""

    def __init__(self, version: int) -> None:
        ddir = 41 + (6 if version == 5 else 0)
        self.read = 5                   # the field before the read block
        self.write = self.read + ddir
        self.trim = self.write + ddir if version in (4, 5) else None
        self.cpu = (self.trim or self.write) + ddir
        # cpu (5), I/O depths (7), latency µs (10) and ms (12).
        self.minimum = self.cpu + 5 + 7 + 10 + 12


class _Terse:
    """One terse line, its fields read with errors naming them."""

    def __init__(self, lineno: int, line: str) -> None:
        self.lineno = lineno
        self.fields = line.split(";")
        self.version = parse_count(self.fields[0], command=FIO,
                                   field=self.where(1, "terse version"),
                                   what="a terse version")
        self.layout = _Layout(self.version)
        if len(self.fields) < self.layout.minimum:
            raise ParseError(FIO, "line %d" % lineno, "a terse version %d "
                             "line has at least %d fields, this one %d"
                             % (self.version, self.layout.minimum,
                                len(self.fields)))
        lay = self.layout
        # Fields that hold a percentage wherever the layout is fio's: a
        # ';' in a job name or unified_rw_reporting moves them.
        for field, label in ((lay.read + 39, "read bw share"),
                             (lay.write + 39, "write bw share"),
                             (lay.cpu + 1, "cpu user"),
                             (lay.cpu + 2, "cpu system"),
                             (lay.cpu + 6, "I/O depth 1")):
            if not self.fields[field - 1].strip().endswith("%"):
                raise ParseError(FIO, self.where(field, label), "not a "
                                 "percentage: %s: the line is not laid out"
                                 " as fio's terse version %d (a ';' in the "
                                 "job name, or unified_rw_reporting?)"
                                 % (show(self.fields[field - 1]),
                                    self.version))

    def where(self, field: int, label: str) -> str:
        return "line %d field %d (%s)" % (self.lineno, field, label)

    def text(self, field: int) -> str:
        return self.fields[field - 1]

    def value(self, field: int, label: str, high: float,
              zero_ok: bool = True, whole: bool = False) -> float:
        return number(self.text(field), FIO, self.where(field, label), high,
                      zero_ok=zero_ok, whole=whole)


def _header_bs(text: str) -> Tuple[Optional[str], Optional[str]]:
    """(write block size text, why not) from the bs= of a description:
    3.x "(R) 4096B-4096B, (W) 4096B-4096B, (T) ...", 2.x
    "4K-4K/4K-4K/4K-4K" or "4096B-4096B,4096B-4096B,4096B-4096B"."""
    if "bs_is_seq_rand" in text:
        return None, "bs_is_seq_rand: its block size depends on the " \
            "access pattern"
    m = re.search(r"\(W\) ([^,\s]+)", text)
    if m:
        part = m.group(1)
    else:
        parts = re.split(r"[/,]", text)
        if len(parts) < 2:
            return None, "fio's description of it has no write block " \
                "size: bs=%s" % text
        part = parts[1].strip()
    low, _, high = part.partition("-")
    if low != high:
        return None, "its block size varies (%s)" % part
    return low, None


def _terse_desc(header: _Header) -> _Desc:
    desc = _Desc()
    desc.pattern = _WRITES.get(header.rw, "seq")
    desc.flush_known = False
    desc.numjobs = None if header.clones else 1
    bs, why = _header_bs(header.bs)
    if bs is None:
        desc.why = why
        return desc
    desc.bs = _write_size(bs, "line %d (bs=)" % header.line)
    depth = int(number(header.depth, FIO, "line %d (iodepth=)"
                       % header.line, MAX_QD))
    _engine_depth(desc, header.engine, depth, False)
    return desc


def _terse_entry(terse: _Terse, block: int,
                 headers: List[_Header]) -> _Entry:
    lay = terse.layout
    name = _job_name(terse.text(3), terse.where(3, "jobname"))
    group = int(terse.value(4, "groupid", 1 << 31, whole=True))
    entry = _Entry(name, "line %d" % terse.lineno, group, block)
    error = terse.value(5, "error", 1 << 31, whole=True)
    kib = (terse.value(lay.read + 1, "read io KiB", MAX_IOS * MAX_BS,
                       whole=True),
           terse.value(lay.write + 1, "write io KiB", MAX_IOS * MAX_BS,
                       whole=True),
           terse.value(lay.trim + 1, "trim io KiB", MAX_IOS * MAX_BS,
                       whole=True) if lay.trim else 0)
    described = [h for h in headers if h.name == name and h.group == group]
    rw = described[0].rw if len(described) == 1 else None
    entry.why = _direction_why(
        rw, (kib[0], "field %d (read io KiB)" % (lay.read + 1)),
        (kib[2], "field %d (trim io KiB)" % (lay.trim or 0)),
        (kib[1], "field %d (write io KiB)" % (lay.write + 1)))
    if entry.why:
        return entry
    if not described:
        entry.why = "block size not in the output (terse output prints no" \
            " job options, and fio's description \"%s: (g=%d): rw=..., " \
            "bs=...\" is not in the text)" % (name, group)
        return entry
    if len(described) > 1:
        entry.why = "the text describes two jobs named %s in group %d " \
            "(lines %d and %d)" % (name, group, described[0].line,
                                   described[1].line)
        return entry
    desc = _terse_desc(described[0])
    if desc.why:
        entry.why = desc.why
        return entry
    if error:
        raise ParseError(FIO, terse.where(5, "error"), "fio reports error "
                         "%d for job %s: its numbers are not a measurement"
                         % (error, name))
    # fio prints the KiB written, not the I/Os: with one block size the
    # count follows (fio's own iops field is rounded down to a whole
    # number).
    ios = number(kib[1] * 1024 // desc.bs, FIO,
                 terse.where(lay.write + 1, "write io KiB"), MAX_IOS,
                 zero_ok=True)
    if not ios:
        entry.why = "it wrote less than one block (field %d (write io " \
            "KiB) = %d)" % (lay.write + 1, kib[1])
        return entry
    runtime = terse.value(lay.write + 4, "write runtime ms",
                          MAX_RUNTIME_MS, zero_ok=False)

    def lat(first: int, label: str) -> Optional[_Lat]:
        return _lat_value(terse.text(first), terse.text(first + 1),
                          terse.where(first, "write %s mean" % label),
                          terse.where(first + 1, "write %s stddev" % label),
                          1000.0, ios,
                          "write %s (terse field %d)" % (label, first))
    measure = _Measure(ios, number(ios * 1000.0 / runtime, FIO,
                                   terse.where(lay.write + 3, "write iops"),
                                   MAX_IOPS),
                       runtime, lat(lay.write + 35, "lat"),
                       lat(lay.write + 11, "clat"),
                       terse.where(lay.write + 35, "write lat mean"))
    entry.desc, entry.measure = desc, measure
    return entry


class _Run:
    """One fio run in the text: fio's descriptions of its jobs, its terse
    lines, and how many clones each entry of its normal report holds."""

    def __init__(self) -> None:
        self.headers: List[_Header] = []
        self.terse: List[Tuple[int, str]] = []
        self.members: Dict[Tuple[str, int], int] = {}


def _after_name(pattern: "re.Pattern[str]", line: str, mark: str
                ) -> Tuple[str, Optional["re.Match[str]"]]:
    """(name, match) of a line "NAME: (..." whose part after the first
    mark matches pattern; ("", None) when it does not."""
    at = line.find(mark) if len(line) <= _MAX_HEADER_LEN else -1
    if at < 1:
        return "", None
    return line[:at], pattern.match(line, at + 2)


def _count(text: str, lineno: int, option: str, what: str) -> int:
    """A number in fio's description or report of a job."""
    return parse_count(text, command=FIO, field="line %d (%s)"
                       % (lineno, option), what=what)


def _runs(text: str) -> List[_Run]:
    """The runs in the text: a description after terse lines starts the
    next (the output of two runs pasted one after the other)."""
    lines = text.splitlines()
    runs = [_Run()]
    for index, raw in enumerate(lines):
        line = raw.lstrip(BOM + " \t").rstrip()
        name, m = _after_name(_HEADER, line, ": (g=")
        if m:
            if runs[-1].terse:
                runs.append(_Run())
            after = index + 1
            while after < len(lines) and not lines[after].strip():
                after += 1
            clones = after < len(lines) and lines[after].strip() == "..."
            runs[-1].headers.append(_Header(
                index + 1, name,
                _count(m.group("group"), index + 1, "g=", "a group number"),
                m.group("rw"), m.group("bs"), m.group("engine"),
                _count(m.group("depth"), index + 1, "iodepth=",
                       "a queue depth"), clones))
        elif _TERSE.match(line):
            runs[-1].terse.append((index + 1, line))
        else:
            name, m = _after_name(_REPORT, line, ": (groupid=")
            if m:
                group = _count(m.group("group"), index + 1, "groupid=",
                               "a group number")
                runs[-1].members[(name, group)] = _count(
                    m.group("jobs"), index + 1, "jobs=", "a number of jobs")
    return runs


def _terse_entries(text: str) -> Tuple[List[_Entry], List[str],
                                       Dict[Tuple[int, int], List[str]]]:
    """The entries of terse lines, the notes, and the jobs fio described
    in each (run, reporting group): the jobs that ran together."""
    entries: List[_Entry] = []
    notes: List[str] = []
    seen: Dict[Tuple[str, Tuple[Any, ...]], int] = {}
    together: Dict[Tuple[int, int], List[str]] = {}
    for block, run in enumerate(_runs(text)):
        for h in run.headers:
            names = together.setdefault((block, h.group), [])
            if h.name not in names:
                names.append(h.name)
        for lineno, line in run.terse:
            terse = _Terse(lineno, line)
            mine = tuple(h[1:] for h in run.headers
                         if h.name == terse.text(3))
            if (line, mine) in seen:
                # Not two runs: their timings would differ.
                notes.append("line %d repeats line %d (the same output "
                             "twice): read once"
                             % (lineno, seen[(line, mine)]))
                continue
            seen[(line, mine)] = lineno
            entry = _terse_entry(terse, block, run.headers)
            clones = run.members.get((entry.name, entry.group or 0), 1)
            if entry.desc is not None and entry.desc.numjobs is None and \
                    clones > 1:
                # group_reporting: the normal report says how many
                # clones the one terse line holds.
                entry.desc.numjobs = clones
            entries.append(entry)
    if any(e.desc is not None for e in entries):
        notes.append("terse output does not say whether a job flushed "
                     "(fsync=, sync=), wrote direct= or at an offset=: its "
                     "jobs are taken as plain writes from offset 0 (run "
                     "fio with --output-format=json to have them checked)")
    return entries, notes, together


# -- from entries to steps ----------------------------------------------------

class _Job:
    """A job as it ran: one entry, or the entries of its clones."""

    def __init__(self, entries: List[_Entry]) -> None:
        self.entries = entries
        first = entries[0]
        self.name, self.where = first.name, first.where
        self.group, self.block = first.group, first.block
        self.label = "job %s" % self.name
        self.why: Optional[str] = next(
            (e.why for e in entries if e.why), None)
        self.desc = first.desc
        self.measure: Optional[_Measure] = None
        self.qd = 1
        self.notes: List[str] = []
        if self.why is None:
            self._clones()

    def _clones(self) -> None:
        """The queue depth and measurements over the clones of the job."""
        desc = self.desc
        assert desc is not None
        count = len(self.entries)
        numjobs = desc.numjobs
        if numjobs is None and count == 1:
            self.why = "fio ran it as several clones (numjobs, the '...' " \
                "after its description) and the terse output does not say" \
                " how many"
            return
        if numjobs is not None and count > 1 and count != numjobs:
            self.why = "%d entries named %s in group %s, but numjobs=%d: " \
                "they ran at the same time" % (count, self.name,
                                               self.group, numjobs)
            return
        if numjobs is not None and count == 1 and numjobs > 1:
            # group_reporting: one entry for all the clones.
            clones = numjobs
            self.notes.append("one entry for its numjobs=%d clones "
                              "(group_reporting): queue depth %d x %d = %d"
                              % (numjobs, desc.depth, numjobs,
                                 desc.depth * numjobs))
        else:
            clones = count
            if count > 1:
                self.notes.append("%d entries of its clones (numjobs=%d, "
                                  "no group_reporting) added up"
                                  % (count, count))
        self.qd = desc.depth * clones
        self.measure = _combine([e.measure for e in self.entries
                                 if e.measure is not None])
        self.notes.extend(desc.notes)

    def in_flight(self) -> Optional[float]:
        """iops x mean latency: the I/Os in flight (Little's law)."""
        m = self.measure
        if m is None:
            return None
        lat = m.lat or m.clat
        if lat is None:
            return None
        return m.iops * lat.mean / 1e9

    def check_in_flight(self) -> None:
        """Refuse an entry that kept more I/Os in flight than its options
        allow (group_reporting over several jobs of a group), and a terse
        job whose queue stood mostly empty (a flush or a pause between
        writes that terse output does not show)."""
        busy = self.in_flight()
        if busy is None or self.why:
            return
        high, margin = _IN_FLIGHT_MARGIN
        if busy > self.qd * high + margin:
            self.why = "iops x mean latency = %.1f writes in flight, more " \
                "than its queue depth of %d (iodepth x numjobs): the entry" \
                " holds more than the job its options describe " \
                "(group_reporting over several jobs?)" % (busy, self.qd)
        elif not self.desc.flush_known and busy < _TERSE_MIN_FULL * self.qd:
            self.why = "iops x mean latency = %.2f writes in flight at " \
                "queue depth %d: the time between its writes is not the " \
                "drive's (a flush, think time or a rate limit, which terse " \
                "output does not show)" % (busy, self.qd)

    def step(self, use_clat: bool, name: str) -> StepResult:
        m, desc = self.measure, self.desc
        lat = m.clat if use_clat else m.lat
        mean, sd, field = lat
        flush, timed = desc.flush, True
        if flush == "fsync":
            flush = "each"
            if m.sync is None:
                # fio before 3.4 does not time fsyncs: the write latency
                # alone would make every flush look free.
                timed = False
                field += " (fsync not timed: no sync section)"
            else:
                mean += m.sync.mean
                sd = math.hypot(sd, m.sync.sd)
                field += " + " + m.sync.field
        if not field.startswith("write "):
            field = "write." + field
        runtime_s = max(m.runtime_ms / 1000.0, 1.0)
        n_eff = max(2, int(runtime_s))
        per = m.ios / n_eff
        # Same standard error as over all I/Os, spread on n_eff intervals.
        return StepResult(
            name=name, bs=desc.bs, qd=self.qd, offset=desc.offset,
            flush=flush, pattern=desc.pattern, iops=m.iops,
            lat_mean_ns=mean, ios=n_eff,
            lat_sd_ns=sd / (per ** 0.5) if per > 0 else sd,
            lat_field=field, flush_timed=timed)


def _jobs(entries: List[_Entry]) -> List[_Job]:
    """Entries grouped into jobs: the consecutive entries of the same name
    in the same reporting group are the clones of one job (fio adds the
    numjobs clones of a job right after it)."""
    jobs: List[_Job] = []
    run: List[_Entry] = []
    for entry in entries:
        if run and (entry.name, entry.group, entry.block) != \
                (run[0].name, run[0].group, run[0].block):
            jobs.append(_Job(run))
            run = []
        run.append(entry)
    if run:
        jobs.append(_Job(run))
    return jobs


def _check_together(jobs: List[_Job],
                    together: Dict[Tuple[int, int], List[str]]) -> None:
    """Jobs of one reporting group run at the same time (stonewall starts
    a new group): each measured the drive under the other's load too.
    together: the jobs fio described in each (run, group), which
    group_reporting may have printed as one entry."""
    groups: Dict[Tuple[int, int], List[_Job]] = {}
    for job in jobs:
        if job.group is not None:
            groups.setdefault((job.block, job.group), []).append(job)
    for job in jobs:
        if job.why or job.group is None:
            continue
        key = (job.block, job.group)
        others: List[str] = []
        for name in [j.name for j in groups[key] if j is not job] + \
                together.get(key, []):
            if name != job.name and name not in others:
                others.append(name)
        if not others and len(groups[key]) > 1:
            others = [job.name]
        if others:
            job.why = "it ran at the same time as %s (all in group %d: no " \
                "stonewall between them)" % (
                    ", ".join("job %s" % n for n in others), job.group)


def _latency_choice(jobs: List[_Job]) -> bool:
    """Whether the completion latency (clat) is used: only when some job
    has no total latency (lat) and every job has clat, so that all jobs
    are compared on the same measure."""
    if all(j.measure.lat is not None for j in jobs):
        return False
    if all(j.measure.clat is not None for j in jobs):
        return True
    bad = next(j for j in jobs
               if j.measure.lat is None and j.measure.clat is None)
    raise ParseError(FIO, bad.measure.where_lat, "missing or 0, and so is "
                     "the completion latency (clat): job %s wrote %d I/Os "
                     "with no latency" % (bad.name, bad.measure.ios))


def _import(entries: List[_Entry], scope: str, notes: List[str],
            together: Dict[Tuple[int, int], List[str]]) -> FioImport:
    jobs = _jobs(entries)
    _check_together(jobs, together)
    for job in jobs:
        job.check_in_flight()
    labels = [j.label for j in jobs]
    for job in jobs:
        if labels.count(job.label) > 1:
            job.label += " (%s)" % job.where
    unused = ["%s: %s" % (j.label, j.why) for j in jobs if j.why]
    used = [j for j in jobs if not j.why]
    if not used:
        raise ParseError(FIO, scope, "no job can be used for a write "
                         "verdict: %s" % (listing(unused, "jobs")
                                          or "there are no jobs"))
    use_clat = _latency_choice(used)
    steps: List[StepResult] = []
    names = set()
    for job in used:
        name = "fio %s" % job.name
        if name in names:
            name = "%s (%s)" % (name, job.where)
        names.add(name)
        steps.append(job.step(use_clat, name))
        notes.extend("%s: %s" % (job.label, note) for note in job.notes)
    return FioImport(steps, unused, notes)


def read_fio(text: str) -> FioImport:
    """The steps of an fio output (JSON, or terse lines), the jobs that
    are not used and why, and notes on how the used ones were read.  A
    ParseError when the text is not fio output or no job can be used."""
    doc, why = find_fio_json(text)
    if doc is not None:
        return _import(_json_entries(doc), "jobs", [], {})
    if not find_fio_terse(text):
        raise ParseError(FIO, "", why)
    entries, notes, together = _terse_entries(text)
    return _import(entries, "terse output", notes, together)


def parse_fio(text: str) -> List[StepResult]:
    """One StepResult per fio job that can be used for a write verdict."""
    return read_fio(text).steps
