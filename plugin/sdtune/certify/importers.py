"""Read existing benchmark output (vdbench text, fio JSON) into the same
StepResults the verdicts use, so `sdtune infer` decides with no I/O.

vdbench: each run starts with a line `HH:MM:SS.mmm Starting RD=<name>;
... For loops: xfersize=4k threads=1`, then a two-line column header and
one line per interval, ending with an `avg_N-M` summary line.  Columns
are found from the header words (some vdbench versions have separate
read/write maximum columns, some do not), never by fixed position.
Response times are in milliseconds.

fio: `--output-format=json`; each job has its options and a `write`
section with iops and lat_ns (or lat in µs from old versions).  fio JSON
has no per-interval data, so the per-I/O standard deviation is used with
one degree of freedom per second of runtime: the same standard error,
but a conservative t-distribution.

Pure: text in, StepResults out.
"""

import json
import re
from typing import List, Optional, Tuple

from ..errors import ParseError
from .measure import Interval, StepResult

_START = re.compile(r"Starting RD=([^;]+);(.*)$")
_DATA = re.compile(r"^\d\d:\d\d:\d\d\.\d\d\d\s+(\S+)\s+(.*)$")
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([kmg]?)b?$", re.I)


def parse_size(text: str) -> Optional[int]:
    """vdbench/fio sizes: 512, 4k, 4K, 1m, 4096B."""
    m = _SIZE.match(text.strip())
    if not m:
        return None
    mult = {"": 1, "k": 1024, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def _columns(line1: str, line2: str) -> List[str]:
    """Column names from the two header lines: the first names the date
    and `interval`, the rest pair up word by word."""
    top = line1.split()
    # Drop the date ("Dec 02, 2020") in front of "interval".
    top = top[top.index("interval"):]
    bottom = line2.split()
    if len(bottom) != len(top) - 1:
        raise ParseError("vdbench", "column header", "%d and %d header "
                         "words do not pair up" % (len(top), len(bottom)))
    return ["interval"] + ["%s %s" % (a, b) for a, b in zip(top[1:],
                                                            bottom)]


def _loops(text: str) -> dict:
    m = re.search(r"For loops:(.*)$", text)
    out = {}
    for word in (m.group(1).split() if m else []):
        key, _, value = word.partition("=")
        out[key] = value
    return out


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
        name, loops = m.group(1).strip(), _loops(m.group(2))
        cols: Optional[List[str]] = None
        intervals: List[Interval] = []
        sizes, depths, reads = [], [], []
        avg = None
        i += 1
        while i < len(lines) and not _START.search(lines[i]):
            line = lines[i]
            if "interval" in line and i + 1 < len(lines) and \
                    "rate" in lines[i + 1]:
                cols = _columns(line, lines[i + 1])
                i += 2
                continue
            d = _DATA.match(line)
            if d and cols is not None:
                values = [d.group(1)] + d.group(2).split()
                row = dict(zip(cols, values))
                try:
                    rate = float(row["i/o rate"])
                    resp = float(row["resp time"]) * 1e6
                    if row["interval"].startswith("avg"):
                        avg = (rate, resp)
                    else:
                        intervals.append(Interval(max(int(rate), 1), rate,
                                                  resp))
                        sizes.append(int(float(row["bytes i/o"])))
                        reads.append(float(row.get("read pct", "0")))
                        depths.append(float(row.get("queue depth", "1")))
                except (KeyError, ValueError) as e:
                    raise ParseError("vdbench", str(e).strip("'"),
                                     "unreadable interval line of RD=%s"
                                     % name) from e
            i += 1
        if not intervals:
            continue
        if any(r > 0.0 for r in reads):
            continue                # reads say nothing about write pages
        bs = parse_size(loops.get("xfersize", "")) or max(set(sizes),
                                                          key=sizes.count)
        threads = int(loops.get("threads", "0") or 0) or \
            max(1, round(sum(depths) / len(depths)))
        rate, resp = avg if avg else (
            sum(iv.iops for iv in intervals) / len(intervals),
            sum(iv.lat_mean_ns for iv in intervals) / len(intervals))
        steps.append(StepResult(
            name="vdbench %s" % name, bs=bs, qd=threads, intervals=intervals,
            iops=rate, lat_mean_ns=resp,
            ios=sum(iv.ios for iv in intervals)))
    if not steps:
        raise ParseError("vdbench", "Starting RD=", "no write run with "
                         "interval lines found")
    return steps


def _fio_opts(job: dict, global_opts: dict) -> dict:
    opts = dict(global_opts)
    opts.update(job.get("job options", {}))
    return opts


def parse_fio(text: str) -> List[StepResult]:
    """One StepResult per fio job that wrote."""
    try:
        doc = json.loads(text)
        jobs = doc["jobs"]
    except (ValueError, KeyError, TypeError) as e:
        raise ParseError("fio", "jobs", "not fio JSON output: %s" % e)
    global_opts = doc.get("global options", {})
    steps = []
    for job in jobs:
        opts = _fio_opts(job, global_opts)
        w = job.get("write", {})
        ios = int(w.get("total_ios", 0) or 0)
        if not ios:
            continue
        bs = parse_size(str(opts.get("bs", opts.get("blocksize", "4k"))))
        if bs is None:
            raise ParseError("fio", "bs", "unreadable block size %r in job "
                             "%s" % (opts.get("bs"), job.get("jobname")))
        lat, scale = (w["lat_ns"], 1.0) if "lat_ns" in w else \
            (w.get("lat", {}), 1000.0)
        mean = float(lat.get("mean", 0.0)) * scale
        sd = float(lat.get("stddev", 0.0)) * scale
        runtime_s = max(float(w.get("runtime", 1000)) / 1000.0, 1.0)
        qd = int(opts.get("iodepth", 1)) * int(opts.get("numjobs", 1))
        flush = "each" if str(opts.get("fsync", "0")) == "1" or \
            str(opts.get("fdatasync", "0")) == "1" or \
            opts.get("sync") in ("1", "sync", "dsync") else "none"
        pattern = "rand" if "rand" in str(opts.get("rw", "")) else "seq"
        offset = parse_size(str(opts.get("offset", "0"))) or 0
        n_eff = max(2, int(runtime_s))
        per = ios / n_eff
        # Same standard error as over all I/Os, spread on n_eff intervals.
        steps.append(StepResult(
            name="fio %s" % job.get("jobname", len(steps)), bs=bs, qd=qd,
            offset=offset % bs if bs else 0, flush=flush, pattern=pattern,
            iops=float(w.get("iops", 0.0)), lat_mean_ns=mean, ios=n_eff,
            lat_sd_ns=sd / (per ** 0.5) if per > 0 else sd))
    if not steps:
        raise ParseError("fio", "write", "no job wrote anything")
    return steps


Phases = Tuple[List[StepResult], List[StepResult], List[StepResult]]


def classify(steps: List[StepResult]) -> Phases:
    """(sector steps, cache steps, queue-depth steps) of imported runs."""
    sector = [s for s in steps if s.qd == 1 and s.flush == "none"]
    cache = [s for s in steps if s.qd == 1 and s.bs == 4096]
    qd = [s for s in steps if s.bs == 4096 and s.flush == "none"
          and s.offset == 0]
    if len({s.qd for s in qd}) < 3:
        qd = []
    return sector, cache, qd
