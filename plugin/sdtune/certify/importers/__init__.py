# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Read existing benchmark output (vdbench text or HTML reports, fio JSON
or terse lines) into the same StepResults the verdicts use, so `sdtune
infer` decides with no I/O: one module per tool (vdbench.py, fio.py),
what they share in common.py, and here the choice of format, one entry
point for both (read_benchmark) and the sorting of imported runs into
the certification phases.  Pure: text in, StepResults out.
"""

from typing import List, NamedTuple, Optional, Tuple

from ..reports import StepResult
from .common import FIO, VDBENCH, BOM, number, parse_size
from .fio import find_fio_json, find_fio_terse, parse_fio, read_fio
from .vdbench import parse_vdbench, read_vdbench

__all__ = ["FIO", "VDBENCH", "Imported", "classify", "detect_format",
           "find_fio_json", "number", "parse_fio", "parse_size",
           "parse_vdbench", "read_benchmark"]


class Imported(NamedTuple):
    """What a benchmark output gave: its format, the usable runs, the
    runs that are not usable with why ("RD=rd1: 50 % reads", "job w: it
    read ..."), and notes on how the usable ones were read."""
    format: str
    steps: List[StepResult]
    unused: List[str]
    notes: List[str]


def read_benchmark(text: str, fmt: Optional[str] = None) -> Imported:
    """The runs of a vdbench or fio output (``fmt`` None: detected).  A
    ParseError when it is not such output, is damaged, or has no usable
    run (the error then names each run and why)."""
    fmt = fmt or detect_format(text)
    if fmt == FIO:
        got = read_fio(text)
        return Imported(FIO, got.steps, got.unused, got.notes)
    steps, unused = read_vdbench(text)
    if not steps:
        parse_vdbench(text)     # raises the refusal that names every run
    return Imported(VDBENCH, steps, unused, [])


def detect_format(text: str) -> str:
    """fio when the text holds the fio JSON object or fio terse lines (or
    tries to: a line starting with "{" and no vdbench run), otherwise
    vdbench."""
    doc, _ = find_fio_json(text)
    if doc is not None or find_fio_terse(text):
        return FIO
    if "Starting RD=" in text:
        return VDBENCH
    if any(line.lstrip(BOM + " \t").startswith("{")
           for line in text.splitlines()):
        return FIO
    return VDBENCH


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
