"""Read existing benchmark output (vdbench text, fio JSON) into the same
StepResults the verdicts use, so `sdtune infer` decides with no I/O.

vdbench: each run starts with a line `HH:MM:SS.mmm Starting RD=<name>;
... For loops: xfersize=4k threads=1`, then a two-line column header and
one line per interval, ending with an `avg_N-M` summary line.  Columns
are found from the header words (some vdbench versions have separate
read/write maximum columns, some do not), never by fixed position.
Response times are in milliseconds.

fio: `--output-format=json` (or json+, or json,normal: text around the
JSON object is skipped); each job has its options and a `write` section
with iops and lat_ns (or lat in µs from fio 2.x).  fio JSON has no
per-interval data, so the per-I/O standard deviation is used with one
degree of freedom per second of runtime: the same standard error, but a
conservative t-distribution.  With fsync=1 or fdatasync=1, fio times
the write and the fsync apart (the fsync in the `sync` section, fio 3.4
and later), so a write-and-flush costs the sum of the two.

Every number is checked before it is used: a field of the wrong type,
text that is not a number, NaN, an infinity, a negative or zero latency
or block size is a ParseError naming the field (for fio its JSON path,
e.g. jobs[2].write.lat_ns.mean; for vdbench its line and column), never
a guess and never a verdict.

Pure: text in, StepResults out.
"""

import json
import math
import re
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ParseError
from .measure import Interval, StepResult

# Beyond these a value is not a measurement of a drive, and it would
# overflow the statistics: an hour per I/O, a billion IOPS, 1 GiB per
# I/O, a million outstanding I/Os, a year of runtime.
MAX_LAT_NS = 3600e9
MAX_IOPS = 1e9
MAX_BS = 1 << 30
MAX_QD = 1 << 20
MAX_IOS = 1e15
MAX_RUNTIME_MS = 366 * 86400e3

FIO = "fio"
VDBENCH = "vdbench"

_START = re.compile(r"Starting RD=([^;]+);(.*)$")
# An interval row: time, interval number (or avg_N-M), values.  Other
# timestamped lines are messages ("Vdbench execution completed ...").
_DATA = re.compile(r"^\d\d:\d\d:\d\d\.\d\d\d\s+([0-9]+|avg_\S+)\s+(.*)$")
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([kmgt]?)(?:i?b)?$", re.I)
_DECIMAL = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                      r"(?:[eE][+-]?[0-9]+)?$")
_BOM = "\ufeff"
# How many lines starting with "{" are tried as the fio JSON object: a
# preamble has a few notes, not thousands of braces.
_MAX_JSON_CANDIDATES = 50


def parse_size(text: str) -> Optional[int]:
    """vdbench/fio sizes: 512, 4k, 4K, 1m, 4096B, 4KiB, 512.0; None when
    the text is not a whole number of bytes."""
    m = _SIZE.match(text.strip())
    if not m:
        return None
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30,
            "t": 1 << 40}[m.group(2).lower()]
    value = float(m.group(1)) * mult
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def show(value: Any) -> str:
    """A value as it appears in an error message: short, one line, and
    named by its JSON type when it is not a scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return json.dumps(value[:40]) + ("..." if len(value) > 40 else "")
    if isinstance(value, float):
        return json.dumps(value)        # Infinity, NaN as JSON spells them
    text = str(value)
    return text if len(text) <= 24 else text[:20] + "..."


def number(value: Any, tool: str, field: str, high: float,
           zero_ok: bool = False, whole: bool = False) -> float:
    """A measured or configured value: a finite number in (0, high], or
    [0, high] when zero_ok, and a whole number when whole.  JSON numbers
    and decimal text (vdbench columns, fio options) are accepted;
    anything else is a ParseError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(tool, field, "not a number: %s" % show(value))
    if isinstance(value, str) and not _DECIMAL.match(value.strip()):
        finite = value.strip().lstrip("+-").lower() not in (
            "inf", "infinity", "nan")
        raise ParseError(tool, field, "not a %snumber: %s"
                         % ("" if finite else "finite ", show(value)))
    try:
        out = float(value)
    except OverflowError:
        raise ParseError(tool, field, "out of range: %s" % show(value)) \
            from None
    if not math.isfinite(out):
        raise ParseError(tool, field, "not a finite number: %s"
                         % show(value))
    if out < 0:
        raise ParseError(tool, field, "cannot be negative: %s"
                         % show(value))
    if out == 0 and not zero_ok:
        raise ParseError(tool, field, "must be above 0, not %s"
                         % show(value))
    if out > high:
        raise ParseError(tool, field, "%s is out of range (at most %s)"
                         % (show(value), "%d" % high if high < 1e18
                            else "%g" % high))
    if whole and out != int(out):
        raise ParseError(tool, field, "not a whole number: %s" % show(value))
    return out


# -- vdbench ------------------------------------------------------------------

def _columns(line1: str, line2: str, lineno: int) -> List[str]:
    """Column names from the two header lines: the first names the date
    and `interval` (or `intervals`), the rest pair up word by word."""
    top = line1.split()
    # Drop the date ("Dec 02, 2020") in front of "interval".
    first = next((i for i, w in enumerate(top)
                  if w.startswith("interval")), None)
    if first is None:
        raise ParseError(VDBENCH, "line %d" % lineno, "a column header "
                         "without an 'interval' column")
    top = top[first:]
    bottom = line2.split()
    if len(bottom) != len(top) - 1:
        raise ParseError(VDBENCH, "lines %d-%d" % (lineno, lineno + 1),
                         "a column header of %d words after '%s' over %d "
                         "words: they do not pair up"
                         % (len(top) - 1, top[0], len(bottom)))
    return ["interval"] + ["%s %s" % (a, b) for a, b in zip(top[1:],
                                                            bottom)]


def _loops(text: str) -> Dict[str, str]:
    m = re.search(r"For loops:(.*)$", text)
    out = {}
    for word in (m.group(1).split() if m else []):
        key, _, value = word.partition("=")
        out[key] = value
    return out


class _Run:
    """What one RD of a vdbench file holds, as it is read."""

    def __init__(self, name: str, loops: Dict[str, str], lineno: int):
        self.name = name
        self.loops = loops
        self.lineno = lineno
        self.intervals: List[Interval] = []
        self.sizes: List[int] = []
        self.depths: List[float] = []
        self.reads: List[float] = []
        self.avg: Optional[Tuple[float, float]] = None

    def where(self, lineno: int, column: str) -> str:
        return "line %d column '%s'" % (lineno, column)

    def value(self, row: Dict[str, str], column: str, lineno: int,
              high: float, zero_ok: bool = True) -> float:
        if column not in row:
            raise ParseError(VDBENCH, self.where(lineno, column), "no "
                             "such column under the header (RD=%s)"
                             % self.name)
        try:
            return number(row[column], VDBENCH, self.where(lineno, column),
                          high, zero_ok)
        except ParseError as e:
            raise ParseError(VDBENCH, e.field, "%s (RD=%s)"
                             % (e.reason, self.name)) from None

    def add(self, row: Dict[str, str], lineno: int) -> None:
        rate = self.value(row, "i/o rate", lineno, MAX_IOPS)
        resp_ms = self.value(row, "resp time", lineno, MAX_LAT_NS / 1e6)
        if rate > 0 and resp_ms == 0:
            raise ParseError(VDBENCH, self.where(lineno, "resp time"),
                             "0 ms for %g I/Os per second (RD=%s)"
                             % (rate, self.name))
        if row["interval"].startswith("avg"):
            if rate == 0:
                raise ParseError(VDBENCH, self.where(lineno, "i/o rate"),
                                 "the average of RD=%s is 0 I/Os per "
                                 "second" % self.name)
            self.avg = (rate, resp_ms * 1e6)
            return
        if rate == 0:
            # An interval without I/O (a stall) says nothing of the cost
            # of one; it still counts as an interval of the run.
            self.intervals.append(Interval(0, 0.0, 0.0))
            return
        self.intervals.append(Interval(max(int(rate), 1), rate,
                                       resp_ms * 1e6))
        size = self.value(row, "bytes i/o", lineno, MAX_BS, zero_ok=False)
        self.sizes.append(int(size))
        if "read pct" in row:
            self.reads.append(self.value(row, "read pct", lineno, 100.0))
        if "queue depth" in row:
            self.depths.append(self.value(row, "queue depth", lineno,
                                          MAX_QD))

    def step(self) -> Optional[StepResult]:
        """The StepResult of this run; None when it has no usable write
        intervals (reads say nothing about write pages)."""
        measured = [iv for iv in self.intervals if iv.ios]
        if not measured or any(r > 0.0 for r in self.reads):
            return None
        where = "line %d 'For loops: %%s'" % self.lineno
        bs = None
        if "xfersize" in self.loops:
            # A distribution such as (512,40,4k,60) is no single size:
            # the bytes-per-I/O column says what was written then.
            bs = parse_size(self.loops["xfersize"])
            if bs is not None:
                bs = int(number(bs, VDBENCH, where % "xfersize", MAX_BS))
        if bs is None:
            bs = max(set(self.sizes), key=self.sizes.count)
        if self.loops.get("threads"):
            # vdbench prints `threads=1.0`: a whole number, as a decimal.
            qd = int(number(self.loops["threads"], VDBENCH,
                            where % "threads", MAX_QD, whole=True))
        else:
            depths = self.depths or [1.0]
            qd = max(1, round(sum(depths) / len(depths)))
        rate, resp = self.avg if self.avg else (
            sum(iv.iops for iv in measured) / len(measured),
            sum(iv.lat_mean_ns for iv in measured) / len(measured))
        return StepResult(
            name="vdbench %s" % self.name, bs=bs, qd=qd,
            intervals=self.intervals, iops=rate, lat_mean_ns=resp,
            ios=sum(iv.ios for iv in self.intervals))


def parse_vdbench(text: str) -> List[StepResult]:
    """One StepResult per RD, with its interval lines as intervals."""
    steps: List[StepResult] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _START.search(lines[i])
        if not m:
            i += 1
            continue
        run = _Run(m.group(1).strip(), _loops(m.group(2)), i + 1)
        cols: Optional[List[str]] = None
        i += 1
        while i < len(lines) and not _START.search(lines[i]):
            line = lines[i]
            if "interval" in line and i + 1 < len(lines) and \
                    "rate" in lines[i + 1]:
                cols = _columns(line, lines[i + 1], i + 1)
                i += 2
                continue
            d = _DATA.match(line)
            if d and cols is not None:
                values = [d.group(1)] + d.group(2).split()
                if len(values) < len(cols):
                    raise ParseError(VDBENCH, "line %d" % (i + 1), "%d "
                                     "values under a header of %d columns "
                                     "(RD=%s)" % (len(values), len(cols),
                                                  run.name))
                run.add(dict(zip(cols, values)), i + 1)
            i += 1
        step = run.step()
        if step is not None:
            steps.append(step)
    if not steps:
        raise ParseError(VDBENCH, "", "no write run ('Starting RD=' and "
                         "interval lines) found")
    return steps


# -- fio ----------------------------------------------------------------------

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
        start = offset + len(line) - len(line.lstrip(_BOM + " \t"))
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


def detect_format(text: str) -> str:
    """fio when the text holds the fio JSON object (or tries to: a line
    starting with "{" and no vdbench run), otherwise vdbench."""
    doc, _ = find_fio_json(text)
    if doc is not None:
        return FIO
    if "Starting RD=" in text:
        return VDBENCH
    if any(line.lstrip(_BOM + " \t").startswith("{")
           for line in text.splitlines()):
        return FIO
    return VDBENCH


def _member(obj: dict, key: str, where: str) -> Any:
    if key not in obj:
        raise ParseError(FIO, _path(where, key), "missing")
    return obj[key]


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise ParseError(FIO, where, "not an object: %s" % show(value))
    return value


class _Options:
    """A job's options over the global ones, each looked up with the
    JSON path it came from."""

    def __init__(self, job: dict, where: str, global_opts: Optional[dict]):
        self.sources: List[Tuple[str, dict]] = []
        key = "job options"
        if key in job:
            self.sources.append((_path(where, key),
                                 _object(job[key], _path(where, key))))
        if global_opts is not None:
            self.sources.append(('["global options"]', global_opts))
        if not self.sources:
            raise ParseError(FIO, _path(where, key), "missing, and there "
                             "are no global options: fio before 2.3 does "
                             "not print them, so the block size, queue "
                             "depth and flushes are unknown")

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
    bs = parse_size(part)
    if bs is None:
        raise ParseError(FIO, field, "not a block size: %s" % show(text))
    return int(number(bs, FIO, field, MAX_BS))


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
    """none, each (a flush after every write) or periodic (every N)."""
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


def _latency(section: dict, where: str, names: Tuple[str, str],
             ios: float) -> Optional[Tuple[float, float, str]]:
    """(mean ns, per-I/O sd ns, field) of a latency object (ns, or µs in
    fio 2.x), or None when it is absent or all zero: fio prints zeros for
    a statistic it did not collect (disable_lat, disable_clat)."""
    for name, scale in zip(names, (1.0, 1000.0)):
        if name not in section:
            continue
        where_lat = _path(where, name)
        lat = _object(section[name], where_lat)
        mean = number(_member(lat, "mean", where_lat), FIO,
                      _path(where_lat, "mean"), MAX_LAT_NS / scale,
                      zero_ok=True) * scale
        if mean == 0:
            return None
        sd = number(_member(lat, "stddev", where_lat), FIO,
                    _path(where_lat, "stddev"), MAX_LAT_NS / scale,
                    zero_ok=True) * scale
        if sd == 0 and ios > 1:
            raise ParseError(FIO, _path(where_lat, "stddev"), "0 over %d "
                             "I/Os: not a measured spread" % ios)
        return mean, sd, name
    return None


class _FioJob:
    """One job that wrote, read and checked."""

    def __init__(self, index: int, job: dict, global_opts: Optional[dict]):
        where = "jobs[%d]" % index
        self.where = where
        name = job.get("jobname")
        self.name = name if isinstance(name, str) and name.strip() \
            else "job%d" % index
        w_where = _path(where, "write")
        w = _object(job["write"], w_where)
        if "total_ios" not in w:
            raise ParseError(FIO, _path(w_where, "total_ios"), "missing: "
                             "fio before 2.1.14 does not count I/Os")
        self.ios = number(w["total_ios"], FIO,
                          _path(w_where, "total_ios"), MAX_IOS,
                          zero_ok=True, whole=True)
        if not self.ios:
            return
        error = number(job.get("error", 0), FIO, _path(where, "error"),
                       1 << 31, zero_ok=True, whole=True)
        if error:
            raise ParseError(FIO, _path(where, "error"), "fio reports error"
                             " %d for job %s: its numbers are not a "
                             "measurement" % (error, self.name))
        self.iops = number(_member(w, "iops", w_where), FIO,
                           _path(w_where, "iops"), MAX_IOPS)
        self.runtime_ms = number(_member(w, "runtime", w_where), FIO,
                                 _path(w_where, "runtime"), MAX_RUNTIME_MS)
        opts = _Options(job, where, global_opts)
        self.bs = _fio_bs(opts)
        self.qd = opts.count("iodepth", 1, MAX_QD) * \
            opts.count("numjobs", 1, MAX_QD)
        self.flush = _fio_flush(opts)
        rw, _ = opts.get("rw", "readwrite")
        self.pattern = "rand" if rw and "rand" in rw else "seq"
        self.offset = _fio_offset(opts, self.bs)
        self.lat = _latency(w, w_where, ("lat_ns", "lat"), self.ios)
        self.clat = _latency(w, w_where, ("clat_ns", "clat"), self.ios)
        self.sync = None
        if self.flush == "fsync" and "sync" in job:
            self.sync = self._sync(job, where)

    def _sync(self, job: dict, where: str) -> Tuple[float, float, str]:
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
                             "write" % self.name)
        if count < 0.9 * self.ios:
            # Spread over all writes, a few fsyncs would make the flush
            # look cheap: the numbers do not describe a flush per write.
            raise ParseError(FIO, _path(s_where, "total_ios"), "%d fsyncs "
                             "for %d writes, although job %s flushes after "
                             "each write" % (count, self.ios, self.name))
        mean, sd, field = lat
        share = count / self.ios
        return mean * share, sd * share, "sync." + field

    def step(self, use_clat: bool) -> StepResult:
        mean, sd, field = self.clat if use_clat else self.lat
        flush, timed = self.flush, True
        if flush == "fsync":
            flush = "each"
            if self.sync is None:
                # fio before 3.4 does not time fsyncs: the write latency
                # alone would make every flush look free.
                timed = False
                field += " (fsync not timed: no sync section)"
            else:
                mean += self.sync[0]
                sd = math.hypot(sd, self.sync[1])
                field += " + " + self.sync[2]
        runtime_s = max(self.runtime_ms / 1000.0, 1.0)
        n_eff = max(2, int(runtime_s))
        per = self.ios / n_eff
        # Same standard error as over all I/Os, spread on n_eff intervals.
        return StepResult(
            name="fio %s" % self.name, bs=self.bs, qd=self.qd,
            offset=self.offset, flush=flush, pattern=self.pattern,
            iops=self.iops, lat_mean_ns=mean, ios=n_eff,
            lat_sd_ns=sd / (per ** 0.5) if per > 0 else sd,
            lat_field="write." + field, flush_timed=timed)


def _latency_choice(jobs: List[_FioJob]) -> bool:
    """Whether the completion latency (clat) is used: only when some job
    has no total latency (lat) and every job has clat, so that all jobs
    are compared on the same measure."""
    if all(j.lat is not None for j in jobs):
        return False
    if all(j.clat is not None for j in jobs):
        return True
    bad = next(j for j in jobs if j.lat is None and j.clat is None)
    raise ParseError(FIO, bad.where + ".write.lat_ns", "missing or 0, and "
                     "so is clat_ns: job %s wrote %d I/Os with no latency"
                     % (bad.name, bad.ios))


def parse_fio(text: str) -> List[StepResult]:
    """One StepResult per fio job that wrote."""
    doc, why = find_fio_json(text)
    if doc is None:
        raise ParseError(FIO, "", why)
    jobs = doc["jobs"]
    if not isinstance(jobs, list):
        raise ParseError(FIO, "jobs", "not a list of jobs: %s" % show(jobs))
    global_opts = None
    if "global options" in doc:
        global_opts = _object(doc["global options"], '["global options"]')
    wrote = []
    mixed = False
    for index, job in enumerate(jobs):
        _object(job, "jobs[%d]" % index)
        mixed = mixed or "mixed" in job
        if "write" in job:
            parsed = _FioJob(index, job, global_opts)
            if parsed.ios:
                wrote.append(parsed)
    if not wrote:
        raise ParseError(FIO, "jobs", "no job wrote anything%s" % (
            " (unified_rw_reporting merges writes with reads into \"mixed\""
            ": run fio without it)" if mixed else ""))
    use_clat = _latency_choice(wrote)
    steps: List[StepResult] = []
    names = set()
    for job in wrote:
        step = job.step(use_clat)
        if step.name in names:
            step.name = "%s (%s)" % (step.name, job.where)
        names.add(step.name)
        steps.append(step)
    return steps


Phases = Tuple[List[StepResult], Optional[Tuple[StepResult, StepResult]],
               List[StepResult]]


def _cache_pair(steps: List[StepResult]
                ) -> Optional[Tuple[StepResult, StepResult]]:
    """(write, write-and-flush) at QD 1 of the same block size, 4 KiB
    first (as certify measures), the same access pattern first."""
    writes = [s for s in steps if s.qd == 1 and s.offset == 0
              and s.flush == "none"]
    flushed = [s for s in steps if s.qd == 1 and s.offset == 0
               and s.flush == "each" and s.flush_timed]
    for wf in sorted(flushed, key=lambda s: s.bs != 4096):
        same = [w for w in writes if w.bs == wf.bs]
        same.sort(key=lambda w: w.pattern != wf.pattern)
        if same:
            return same[0], wf
    return None


def classify(steps: List[StepResult]) -> Phases:
    """(sector steps, the cache pair or None, queue-depth steps) of
    imported runs."""
    sector = [s for s in steps if s.qd == 1 and s.flush == "none"]
    qd = [s for s in steps if s.bs == 4096 and s.flush == "none"
          and s.offset == 0]
    if len({s.qd for s in qd}) < 3:
        qd = []
    return sector, _cache_pair(steps), qd
