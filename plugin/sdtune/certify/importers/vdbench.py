# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""vdbench output as StepResults for `sdtune infer`.

Accepted: what vdbench writes to the terminal and to logfile.html,
summary.html, totals.html and flatfile.html, whole or pasted in part
(HTML tags are dropped and entities decoded; shell prompts, parameter
files, comments and messages around the tables are ignored).

Report text (stdout, logfile, summary, totals).  Each run starts with a
line `HH:MM:SS.mmm Starting RD=<name>; I/O rate: ...; elapsed=...; For
loops: xfersize=4k threads=1` (one line per run: a `forxfersize=` list
gives one run per size, all under the same RD name).  A two-line column
header follows (`<date> interval  i/o  MB/sec ...` over `rate 1024**2
...`), repeated every 30 intervals, the date in the locale of the
machine (`Mar 08, 2019`, `5月 10, 2023`).  Columns are named by pairing
the header words (`i/o rate`, `bytes i/o`, `read pct`, `resp time`,
`queue depth`), never by position, so the layouts of every version read
alike: 14 columns (5.04.07: read and write max), 13 (5.04.06: one resp
max), 12 (no cpu% columns) or 10 (5.00-5.03: no read/write resp, no
queue depth).  An interval line is `HH:MM:SS.mmm <n> <values>` or, in
copies that dropped it, no time of day; the run ends with `avg_<a>-<b>`,
the average of intervals a..b, glued to the time of day when the label
is ten characters wide (`17:46:35.163avg_31-150`).  A line `...` marks
rows left out of a copy; values too wide for their column touch the
next one and are cut apart by the decimals the column has elsewhere.
A table copied without its Starting RD line is a run named by its line;
`Simulating RD=` (vdbench -s) measured nothing.  Response times are
milliseconds.

Flatfile (flatfile.html): `*` comment lines, one line of one-word column
names (`tod timestamp Run Interval reqrate rate MB/sec bytes/io read%
resp ... xfersize threads rdpct seekpct ... queue_depth ...`), one line
per interval and `avg_<a>-<b>` lines, `n/a` where vdbench has no value.

Only the intervals vdbench averaged (a..b of its avg line; without one,
every interval but the first, vdbench's least warm-up) are measurements.
A run is read as a StepResult when it wrote only, at one fixed transfer
size (the bytes per I/O of every interval equal to each other, to its
xfersize when known, and a whole number of 512-byte sectors) at a known
number of outstanding I/Os (a `threads=` loop or flatfile column, else
the queue depth column).  Other runs are not usable, each for a reason
read_vdbench() names: reads in the mix, a file-system (FSD/FWD) report,
an xfersize distribution (the flatfile's xfersize column then holds only
its first size), no interval after warm-up.  A value that is not a
number where one is needed, a row that does not fit its header or
values that contradict each other are a ParseError naming the line and
column.  Pure: text in, StepResults out.
"""

import html
import re
from collections import Counter
from typing import Dict, List, Optional, Set, Tuple

from ...errors import ParseError
from ...parsing import cut, parse_count
from ..reports import Interval, StepResult
from .common import (BOM, MAX_BS, MAX_IOPS, MAX_LAT_NS, MAX_QD, VDBENCH,
                     listing, number, parse_size)

SECTOR = 512
# Characters of an RD name (and of a label, its loops added) a message
# quotes.
_MAX_RD_SHOWN = 60
_MAX_LABEL_SHOWN = 160

_START = re.compile(r"\b(Starting|Simulating) RD=([^;\s]+)(.*)$")
_TOD = r"\d\d:\d\d:\d\d\.\d\d\d"
# An interval row of a report: the time of day (absent in some copies;
# glued to a label ten characters wide), the interval number or avg_a-b,
# then the values.  Numbers of any length: a row whose number is too
# long is refused (parse_count), not skipped as text that is no row.
_LABEL = r"avg_\d+-\d+|\d+"
_ROW = re.compile(r"^\s*(?:%s\s*)?(%s)\s+(\S.*)$" % (_TOD, _LABEL))
_AVG = re.compile(r"^avg_(\d+)-(\d+)$")
# Tokens that are (or try to be) values: a majority of them makes a line
# an interval row, not a message such as "10 SDs found".
_VALUE_LIKE = re.compile(r"^(?:[+-]?[0-9.]*[0-9][0-9.]*(?:[eE][+-]?[0-9]+)?"
                         r"|nan|[+-]?inf(?:inity)?|n/a)$", re.I)
_GLUED = re.compile(r"^[0-9]*\.[0-9]+\.[0-9.]*$")
_ELIDED = re.compile(r"^\s*(?:\.{3,}|\u2026)\s*$")
# HTML as vdbench writes it (<title>, <pre>, <a name>, <A HREF>, <i><b>)
# or as a browser saves it.
_HTML = re.compile(r"<(?:pre|title|html|a\s|b>|i>)", re.I)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>\n]*)?/?>")
_NUMBER_TEXT = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")

# Loop names (after `For loops:`) that only file-system workloads have.
_FSD_LOOPS = {"fwdrate", "operation", "depth", "width", "files", "sizes",
              "totalsize", "wss"}

# Report columns (header words paired) and flatfile columns (one word,
# any case) by what they measure.
_REPORT_COLUMNS = {"rate": "i/o rate", "resp": "resp time",
                   "bytes": "bytes i/o", "readpct": "read pct",
                   "qdepth": "queue depth"}
_FLAT_COLUMNS = {"rate": "rate", "resp": "resp", "bytes": "bytes/io",
                 "readpct": "read%", "qdepth": "queue_depth",
                 "xfersize": "xfersize", "threads": "threads",
                 "rdpct": "rdpct", "seekpct": "seekpct"}


class _Table:
    """A column header: the report's paired words or the flatfile's."""

    def __init__(self, kind: str, columns: List[str], lineno: int):
        self.kind = kind            # "report", "flat", "fsd" or "other"
        self.columns = columns
        self.lineno = lineno
        names = _FLAT_COLUMNS if kind == "flat" else _REPORT_COLUMNS
        lower = {c.lower(): c for c in columns}
        self.role = {role: lower.get(name) for role, name in names.items()}


class _Row:
    """One interval or avg line as written: its label and value texts."""

    def __init__(self, lineno: int, label: str, values: List[str],
                 table: _Table):
        self.lineno = lineno
        self.label = label
        self.values = values
        self.table = table
        m = _AVG.match(label)
        self.avg = (self._count(m.group(1)), self._count(m.group(2))) \
            if m else None
        self.number = self._count(label) if m is None else None
        self.cells: Dict[str, str] = {}

    def _count(self, text: str) -> int:
        return parse_count(text, command=VDBENCH, field="line %d"
                           % self.lineno, what="an interval number")


class _Run:
    """What one run of a vdbench file holds, as it is read."""

    def __init__(self, name: Optional[str], loops: Dict[str, str],
                 loops_text: str, lineno: int, kind: str = "report"):
        self.name = name
        self.loops = loops
        self.loops_text = loops_text
        self.lineno = lineno
        self.kind = kind            # "report", "flat", "fsd" or "sim"
        self.rows: List[_Row] = []
        self.avg: Optional[_Row] = None
        self.label = ""             # set once all runs are known
        self.text = ""              # the Starting RD line after the name

    def rd(self) -> str:
        """The run as messages name it; a name that runs on cut short."""
        if self.name is None:
            return "the table at line %d" % self.lineno
        return "RD=%s" % cut(self.name, _MAX_RD_SHOWN)


# -- reading the text ---------------------------------------------------------

def _plain(text: str) -> List[str]:
    """The lines of the text with HTML tags dropped and entities decoded
    (only when the text is HTML: a `<` in a log message stays)."""
    if text.startswith(BOM):
        text = text[1:]
    if _HTML.search(text):
        text = html.unescape(_TAG.sub("", text))
    return text.splitlines()


def _loops(text: str) -> Tuple[Dict[str, str], str]:
    m = re.search(r"For loops:(.*)$", text)
    words = m.group(1).split() if m else []
    if words == ["None"]:
        words = []
    out = {}
    for word in words:
        key, _, value = word.partition("=")
        out[key.lower()] = value
    return out, " ".join(words)


def _report_header(line: str, nxt: str, lineno: int) -> Optional[_Table]:
    """The table a column header starts, None when line is no header.
    vdbench pairs its words: the first line names the date (any locale)
    and `interval`, the second has the second word of each column."""
    top = line.split()
    if ".Interval." in line or any(w.startswith(".ReqstdOps") for w in top):
        return _Table("fsd", [], lineno)
    first = next((i for i, w in enumerate(top)
                  if w in ("interval", "intervals")), None)
    if first is None or "rate" not in nxt.split():
        return None
    if any(w.startswith("KSTAT") for w in top):
        return _Table("other", [], lineno)
    top = top[first:]
    bottom = nxt.split()
    if len(bottom) != len(top) - 1:
        raise ParseError(VDBENCH, "lines %d-%d" % (lineno, lineno + 1),
                         "a column header of %d words after '%s' over %d "
                         "words: they do not pair up"
                         % (len(top) - 1, top[0], len(bottom)))
    return _Table("report", ["interval"] + [
        "%s %s" % (a, b) for a, b in zip(top[1:], bottom)], lineno)


def _values_like(values: List[str]) -> bool:
    return 2 * sum(1 for v in values if _VALUE_LIKE.match(v)) >= len(values)


def _scan_report(lines: List[str]) -> List[_Run]:
    """The runs of report text, their rows not yet read as numbers."""
    runs: List[_Run] = []
    run: Optional[_Run] = None
    table: Optional[_Table] = None
    i = 0
    while i < len(lines):
        line = lines[i]
        start = _START.search(line)
        if start and run is not None and not run.rows and \
                run.name == start.group(2) and run.text == start.group(3):
            i += 1                      # the same run announced again
            continue
        if start:
            loops, loops_text = _loops(start.group(3))
            kind = "sim" if start.group(1) == "Simulating" else "report"
            if start.group(2).startswith("format_for_") or \
                    "fwdrate=" in start.group(3) or _FSD_LOOPS & set(loops):
                kind = "fsd"
            run = _Run(start.group(2), loops, loops_text, i + 1, kind)
            run.text = start.group(3)
            runs.append(run)
            table = None
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        header = _report_header(line, nxt, i + 1)
        if header is not None:
            table = header
            if run is not None and run.avg is not None:
                # A new table after a run's avg line: a run whose
                # Starting RD line the copy left out.
                run = None
            elif header.kind == "fsd" and run is not None:
                run.kind = "fsd"
            i += 2
            continue
        row = _ROW.match(line)
        if row and table is not None and table.kind == "report":
            values = row.group(2).split()
            if _values_like(values):
                if run is None:
                    # A table copied without its Starting RD line.
                    run = _Run(None, {}, "", table.lineno)
                    runs.append(run)
                # Rows after the avg line belong to no run we can name.
                if run.avg is None:
                    r = _Row(i + 1, row.group(1), values, table)
                    run.rows.append(r)
                    if r.avg is not None:
                        run.avg = r
        i += 1
    return runs


def _flat_header(lines: List[str]) -> Optional[int]:
    for i, line in enumerate(lines):
        words = [w.lower() for w in line.split()]
        if line.lstrip().startswith("*") or not words:
            continue
        if "run" in words and "interval" in words and "rate" in words:
            return i
    return None


def _scan_flat(lines: List[str], start: int) -> List[_Run]:
    """The runs of a flatfile: consecutive rows of one Run name, a new
    run where the interval number starts again or after an avg row."""
    table = _Table("flat", lines[start].split(), start + 1)
    lower = [c.lower() for c in table.columns]
    fsd = "bytes/io" not in lower
    run_col, interval_col = lower.index("run"), lower.index("interval")
    runs: List[_Run] = []
    run: Optional[_Run] = None
    for i in range(start + 1, len(lines)):
        values = lines[i].split()
        if not values or lines[i].lstrip().startswith("*") or \
                _ELIDED.match(lines[i]):
            continue
        if [v.lower() for v in values] == lower:
            continue                    # the header again
        if len(values) != len(table.columns):
            if not _values_like(values):
                continue                # not a row: text around the file
            raise ParseError(VDBENCH, "line %d" % (i + 1), "%d values under "
                             "the flatfile header of %d columns (line %d)"
                             % (len(values), len(table.columns),
                                table.lineno))
        label = values[interval_col]
        if not re.match(r"^(?:%s)$" % _LABEL, label):
            raise ParseError(VDBENCH, "line %d column 'Interval'" % (i + 1),
                             "not an interval number: %s" % label[:40])
        row = _Row(i + 1, label, values, table)
        row.cells = dict(zip(lower, values))
        name = values[run_col]
        if run is None or name != run.name or run.avg is not None or \
                row.number is not None and run.rows and \
                run.rows[-1].number is not None and \
                row.number <= run.rows[-1].number:
            run = _Run(name, {}, "", i + 1, "fsd" if fsd else "flat")
            runs.append(run)
        run.rows.append(row)
        if row.avg is not None:
            run.avg = row
    return runs


# -- columns that ran together -----------------------------------------------

def _decimals(runs: List[_Run]) -> Dict[str, int]:
    """How many decimals each report column is printed with, from the
    rows that fit their header: where to cut values that touch."""
    seen: Dict[str, Set[int]] = {}
    for run in runs:
        for row in run.rows:
            cols = row.table.columns
            if row.table.kind != "report" or \
                    len(row.values) != len(cols) - 1:
                continue
            for col, value in zip(cols[1:], row.values):
                if _NUMBER_TEXT.match(value):
                    d = len(value) - value.index(".") - 1 \
                        if "." in value else 0
                    seen.setdefault(col, set()).add(d)
    return {col: ds.pop() for col, ds in seen.items() if len(ds) == 1}


def _unglue(values: List[str], cols: List[str],
            decimals: Dict[str, int]) -> Optional[List[str]]:
    """The values with numbers that touch cut apart (`1234.567449135.46`
    is 1234.567 and 449135.46 when the first column has 3 decimals),
    None when that does not give one value per column."""
    out: List[str] = []
    for value in values:
        while _GLUED.match(value):
            col = cols[len(out) + 1] if len(out) + 1 < len(cols) else None
            if col not in decimals or decimals[col] == 0:
                return None
            cut = value.index(".") + 1 + decimals[col]
            out.append(value[:cut])
            value = value[cut:]
        out.append(value)
    return out if len(out) == len(cols) - 1 else None


def _cells(run: _Run, decimals: Dict[str, int]) -> None:
    """Each row's values by column name; a row that does not fit its
    header is a ParseError."""
    for row in run.rows:
        if row.table.kind != "report":
            continue
        cols = row.table.columns
        values = row.values
        if len(values) != len(cols) - 1:
            values = _unglue(values, cols, decimals) or values
        if len(values) != len(cols) - 1:
            raise ParseError(VDBENCH, "line %d" % row.lineno, "%d values "
                             "under a header of %d columns (%s)"
                             % (len(values) + 1, len(cols), run.rd()))
        row.cells = dict(zip(cols[1:], values))


# -- reading a run ------------------------------------------------------------

def _fmt(value: float) -> str:
    return "%.4g" % value


class _Reader:
    """The numbers of one run, checked as they are read."""

    def __init__(self, run: _Run):
        self.run = run

    def where(self, row: _Row, column: str) -> str:
        return "line %d column '%s'" % (row.lineno, column)

    def value(self, row: _Row, role: str, high: float,
              zero_ok: bool = True, whole: bool = False) -> float:
        column = row.table.role.get(role)
        if column is None:
            name = (_FLAT_COLUMNS if row.table.kind == "flat"
                    else _REPORT_COLUMNS)[role]
            raise ParseError(VDBENCH, self.where(row, name), "no such "
                             "column under the header (%s)" % self.run.rd())
        key = column.lower() if row.table.kind == "flat" else column
        try:
            return number(row.cells[key], VDBENCH, self.where(row, column),
                          high, zero_ok, whole)
        except ParseError as e:
            raise ParseError(VDBENCH, e.field, "%s (%s)"
                             % (e.reason, self.run.rd())) from None

    def optional(self, row: _Row, role: str, high: float) -> Optional[float]:
        """A value vdbench may leave out (`n/a`, NaN): None then."""
        if row.table.role.get(role) is None:
            return None
        try:
            return self.value(row, role, high)
        except ParseError:
            return None

    def loop(self, key: str, high: float, whole: bool = False
             ) -> Optional[float]:
        """A `For loops:` value or None.  vdbench prints counts of 1024
        and more as sizes (threads=1k), some versions with a decimal
        (threads=1.0, xfersize=512.0).  An xfersize that is no size
        (a distribution cannot be a loop value) is left to the bytes
        per I/O column."""
        text = self.run.loops.get(key)
        if not text:
            return None
        size = parse_size(text) if key == "xfersize" or \
            re.search(r"[kmgtKMGT]", text) else None
        if key == "xfersize" and size is None:
            return None
        where = "line %d 'For loops: %s'" % (self.run.lineno, key)
        return number(size if size is not None else text, VDBENCH, where,
                      high, zero_ok=True, whole=whole)


def _flat_setting(reader: _Reader, rows: List[_Row], role: str,
                  high: float) -> Optional[float]:
    """A flatfile column of requested settings (xfersize, threads,
    rdpct): its value in the run's rows, None when n/a or absent."""
    for row in rows:
        column = row.table.role.get(role)
        if column is None:
            return None
        text = row.cells.get(column.lower(), "n/a")
        size = parse_size(text) if role == "xfersize" else None
        if size is not None:
            return float(size)
        value = reader.optional(row, role, high)
        if value is not None:
            return value
    return None


def _pattern(run: _Run, rows: List[_Row]) -> Optional[str]:
    text = run.loops.get("seekpct")
    if text is None:
        for row in rows:
            column = row.table.role.get("seekpct")
            if column is not None:
                text = row.cells.get(column.lower())
                break
    if text is None or text.lower() == "n/a":
        return None
    if text.lower() in ("seq", "sequential", "eof", "0"):
        return "seq"
    if text.lower() == "random":
        return "rand"
    return "rand" if _NUMBER_TEXT.match(text) else None


def _read_run(run: _Run) -> Tuple[Optional[StepResult], str]:
    """(StepResult, "") for a usable run, else (None, why not)."""
    if run.kind == "fsd":
        return None, "file-system (FSD) report"
    if run.kind == "sim":
        return None, "vdbench -s simulation: nothing was measured"
    reader = _Reader(run)
    if not run.rows:
        return None, "no interval lines under a column header"
    # Every row is checked, the warm-up too: a damaged file is refused.
    # Rates and read shares first: a run that reads is named as such
    # whatever its other columns hold.
    rows = [r for r in run.rows if r.avg is None or r.avg[0] <= r.avg[1]]
    rates = {id(r): reader.value(r, "rate", MAX_IOPS) for r in rows}
    reads = {id(r): reader.value(r, "readpct", 100.0) for r in rows
             if rates[id(r)] > 0 and r.table.role.get("readpct")}
    avg = run.avg
    empty_avg = avg is not None and avg.avg[0] > avg.avg[1]
    avg_io = avg is not None and not empty_avg and rates[id(avg)] > 0
    requested = reader.loop("rdpct", 100.0)
    if run.kind == "flat" and requested is None:
        requested = _flat_setting(reader, run.rows, "rdpct", 100.0)
    observed = list(reads.values())
    if (requested or 0) > 0 or any(v > 0 for v in observed):
        share = requested if requested else (
            reads[id(avg)] if avg_io and id(avg) in reads else
            sum(observed) / len(observed))
        return None, "%s %% reads" % _fmt(share)
    resp: Dict[int, float] = {}
    sizes: Dict[int, int] = {}
    for row in rows:
        rate = rates[id(row)]
        if rate == 0:
            continue                # no I/O: the other columns say nothing
        resp_ms = reader.value(row, "resp", MAX_LAT_NS / 1e6)
        if resp_ms == 0:
            raise ParseError(VDBENCH,
                             reader.where(row, row.table.role["resp"]),
                             "0 ms for %g I/Os per second (%s)"
                             % (rate, run.rd()))
        resp[id(row)] = resp_ms
        sizes[id(row)] = int(reader.value(row, "bytes", MAX_BS,
                                          zero_ok=False, whole=True))
    if avg is not None and not empty_avg:
        lo, hi = avg.avg
        measured = [r for r in rows if r.number is not None
                    and lo <= r.number <= hi]
    elif avg is None:
        measured = [r for r in rows if r.number is not None
                    and r.number >= 2]
    else:
        measured = []
    with_io = [r for r in measured if rates[id(r)] > 0]
    if avg is not None and not empty_avg and not avg_io and with_io:
        raise ParseError(VDBENCH, reader.where(avg, avg.table.role["rate"]),
                         "the average of %s is 0 I/Os per second"
                         % run.rd())
    if empty_avg:
        return None, "no interval measured after warm-up (vdbench's %s " \
            "averages none)" % avg.label
    if not measured and avg is None:
        return None, "no interval after the first (vdbench's warm-up)"
    if not with_io and not avg_io:
        return None, "no I/O completed"
    bs, why = _size(reader, run, with_io, avg if avg_io else None, sizes)
    if bs is None:
        return None, why
    qd, why = _depth(reader, run, with_io or ([avg] if avg_io else []))
    if qd is None:
        return None, why
    intervals = [Interval(max(int(rates[id(r)]), 1), rates[id(r)],
                          resp[id(r)] * 1e6) if id(r) in resp
                 else Interval(0, 0.0, 0.0) for r in measured]
    if avg_io:
        iops, lat = rates[id(avg)], resp[id(avg)] * 1e6
    else:
        iops = sum(rates[id(r)] for r in with_io) / len(with_io)
        lat = sum(resp[id(r)] for r in with_io) * 1e6 / len(with_io)
    step = StepResult(name="vdbench " + run.label, bs=bs, qd=qd,
                      intervals=intervals, iops=iops, lat_mean_ns=lat,
                      ios=sum(iv.ios for iv in intervals))
    pattern = _pattern(run, run.rows)
    if pattern is not None:
        step.pattern = pattern
    return step, ""


def _size(reader: _Reader, run: _Run, with_io: List[_Row],
          avg: Optional[_Row], sizes: Dict[int, int]
          ) -> Tuple[Optional[int], str]:
    """The one transfer size of the run, or why it has none."""
    xfer = reader.loop("xfersize", MAX_BS, whole=True)
    if xfer is None and run.kind == "flat":
        xfer = _flat_setting(reader, run.rows, "xfersize", MAX_BS)
    seen = [sizes[id(r)] for r in with_io] + \
        ([sizes[id(avg)]] if avg is not None else [])
    low, high = min(seen), max(seen)
    span = "%d" % low if low == high else "%d to %d" % (low, high)
    if xfer is not None and (low != xfer or high != xfer):
        # flatfile.html prints the first size of a distribution as its
        # xfersize: the bytes per I/O say what was written.
        return None, "bytes per I/O (%s) is not the xfersize %d: an " \
            "xfersize distribution, not one fixed size" % (span, xfer)
    if low != high:
        return None, "bytes per I/O varies from %s: an xfersize " \
            "distribution, not one fixed size" % span
    if low % SECTOR:
        return None, "%d bytes per I/O is not a whole number of %d-byte " \
            "sectors: not one fixed size" % (low, SECTOR)
    if xfer is None and len(with_io) < 2:
        return None, "no xfersize and %s: %d bytes per I/O is not known " \
            "to be one fixed size" % (
                "only vdbench's average" if not with_io else
                "one interval", low)
    return low, ""


def _depth(reader: _Reader, run: _Run, rows: List[_Row]
           ) -> Tuple[Optional[int], str]:
    """Outstanding I/Os: the threads setting, else the queue depth vdbench
    measured in rows (rounded), or why it is not known."""
    threads = reader.loop("threads", MAX_QD, whole=True)
    if threads is None and run.kind == "flat":
        threads = _flat_setting(reader, run.rows, "threads", MAX_QD)
    if threads is not None and threads >= 1:
        return int(threads), ""
    depths = [d for d in (reader.optional(r, "qdepth", MAX_QD) for r in rows)
              if d is not None]
    if not depths:
        return None, "no threads= setting and no queue depth column: " \
            "the number of outstanding I/Os is not known"
    return max(1, round(sum(depths) / len(depths))), ""


def _label(runs: List[_Run]) -> None:
    """Step names: the RD name alone when unique in the file, else with
    its For loops values, else with its place among the runs so named."""
    def base(run: _Run) -> str:
        return run.name if run.name is not None else \
            "table at line %d" % run.lineno

    def repeated(labels: List[str]) -> Set[str]:
        return {x for x, n in Counter(labels).items() if n > 1}

    labels = [base(r) for r in runs]
    twice = repeated(labels)
    labels = [x + " (%s)" % r.loops_text if x in twice and r.loops_text
              else x for x, r in zip(labels, runs)]
    twice = repeated(labels)
    seen: Dict[str, int] = {}
    for run, label in zip(runs, labels):
        seen[label] = seen.get(label, 0) + 1
        run.label = label + (" (run %d)" % seen[label] if label in twice
                             else "")


def read_vdbench(text: str) -> Tuple[List[StepResult], List[str]]:
    """(one StepResult per usable run, `RD=<name>: <why not>` for each
    run that is not usable).  Output that is damaged is a ParseError;
    output without runs gives two empty lists."""
    lines = _plain(text)
    start = _flat_header(lines)
    if start is not None and "Starting RD=" not in text:
        runs = _scan_flat(lines, start)
    else:
        runs = _scan_report(lines)
    decimals = _decimals(runs)
    for run in runs:
        _cells(run, decimals)
    _label(runs)
    steps: List[StepResult] = []
    notes: List[str] = []
    for run in runs:
        step, why = _read_run(run)
        if step is not None:
            steps.append(step)
        else:
            shown = cut(run.label, _MAX_LABEL_SHOWN) \
                if run.name is not None else run.rd()
            notes.append("%s%s: %s" % ("RD=" if run.name is not None
                                       else "", shown, why))
    return steps, notes


def parse_vdbench(text: str) -> List[StepResult]:
    """One StepResult per usable run; a ParseError naming every run and
    why it is not usable when none is."""
    steps, notes = read_vdbench(text)
    if steps:
        return steps
    if not notes:
        raise ParseError(VDBENCH, "", "no write run ('Starting RD=' and "
                         "interval lines) found")
    raise ParseError(VDBENCH, "", "no run is usable (writes only, one "
                     "fixed transfer size, a raw device): %s"
                     % listing(notes, "runs"))
