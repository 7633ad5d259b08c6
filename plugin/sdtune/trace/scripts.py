# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The D scripts of `sdtune trace`: one record per script of dtrace/, in
one table, holding everything the rest of the package needs to know about
it: its name on the command line, its file, the aggregations its END
clause prints (in order, each after a `sdtune-agg NAME` marker), the
summariser that reads them, and the columns of its table.  Pure.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple

from ..errors import UsageError
from ..tables import Column, nicenum
from .cells import (histogram_text, ns_text, number_text, percent_text,
                    size_label)
from .summarise import (IosizeDevice, SizeStats, summarise_align,
                        summarise_flush, summarise_iosize, summarise_qdepth)


@dataclass(frozen=True)
class DScript:
    """One D script and the shape of its output."""

    name: str                   # `sdtune trace NAME`
    file: str                   # the script in the dtrace/ directory
    sections: Tuple[str, ...]   # its aggregations, in the order printed
    # (text of each section, command) → one record per device
    summarise: Callable[[Dict[str, str], str], List[Any]]
    # the summary's devices → the table's rows, which the columns read
    rows: Callable[[Sequence[Any]], List[Any]]
    columns: Tuple[Column, ...]

    @property
    def command(self) -> str:
        """The command errors about its output name."""
        return "dtrace -s %s" % self.file


class IosizeRow(NamedTuple):
    """A row of the iosize table: one device and direction."""

    device: str
    direction: str              # "R" or "W"
    stats: SizeStats


def _iosize_rows(devices: Sequence[IosizeDevice]) -> List[IosizeRow]:
    """Reads, then writes, of each device; a direction without I/O has no
    row."""
    rows = []
    for dev in devices:
        for label, stats in (("R", dev.read), ("W", dev.write)):
            if stats is not None:
                rows.append(IosizeRow(dev.device, label, stats))
    return rows


def _mean_size_text(stats: SizeStats, parsable: bool) -> str:
    if not stats.ios:
        return "-"
    mean = stats.bytes // stats.ios
    return str(mean) if parsable else nicenum(mean)


# The order is that of the usage message for an unknown name.
SCRIPTS: Dict[str, DScript] = {script.name: script for script in (
    DScript(
        name="iosize", file="sdtune-iosize.d",
        sections=("size", "bytes"),
        summarise=summarise_iosize, rows=_iosize_rows,
        columns=(
            ("DEVICE", lambda r, p: r.device),
            ("DIR", lambda r, p: r.direction),
            ("IOS", lambda r, p: str(r.stats.ios)),
            ("AVG", lambda r, p: _mean_size_text(r.stats, p)),
            ("<4K", lambda r, p: percent_text(r.stats.below_4k,
                                              r.stats.ios, p)),
            ("HISTOGRAM", lambda r, p: histogram_text(
                r.stats.histogram, str if p else size_label)),
        )),
    DScript(
        name="align", file="sdtune-align.d",
        sections=("writes", "sub4k", "misaligned", "rmw"),
        summarise=summarise_align, rows=list,
        columns=(
            ("DEVICE", lambda r, p: r.device),
            ("WRITES", lambda r, p: str(r.writes)),
            ("SUB4K", lambda r, p: str(r.sub_4k)),
            ("SUB4K%", lambda r, p: percent_text(r.sub_4k, r.writes, p)),
            ("MISALIGNED", lambda r, p: str(r.misaligned)),
            ("MISALIGNED%", lambda r, p: percent_text(r.misaligned,
                                                      r.writes, p)),
            ("RMW", lambda r, p: str(r.rmw)),
            ("RMW%", lambda r, p: percent_text(r.rmw, r.writes, p)),
        )),
    DScript(
        name="flush", file="sdtune-flush.d",
        sections=("calls", "sent", "lat", "latsum", "latmax"),
        summarise=summarise_flush, rows=list,
        columns=(
            ("DEVICE", lambda r, p: r.device),
            ("CALLS", lambda r, p: str(r.calls)),
            ("SENT", lambda r, p: str(r.sent)),
            ("SUPPRESSED", lambda r, p: str(r.suppressed)),
            ("MEAN", lambda r, p: ns_text(r.mean_ns, p)),
            ("P50", lambda r, p: ns_text(r.p50_ns, p)),
            ("P99", lambda r, p: ns_text(r.p99_ns, p)),
            ("MAX", lambda r, p: ns_text(r.max_ns, p)),
        )),
    DScript(
        name="qdepth", file="sdtune-qdepth.d",
        sections=("depth", "ios", "depthsum", "deepest"),
        summarise=summarise_qdepth, rows=list,
        columns=(
            ("DEVICE", lambda r, p: r.device),
            ("IOS", lambda r, p: str(r.ios)),
            ("MEAN", lambda r, p: number_text(r.mean, p)),
            ("P50", lambda r, p: number_text(r.p50, p)),
            ("P99", lambda r, p: number_text(r.p99, p)),
            ("MAX", lambda r, p: "-" if r.deepest is None
             else str(r.deepest)),
        )),
)}


def find_script(name: str) -> DScript:
    """The record of `sdtune trace NAME`; a UsageError for any other."""
    if name not in SCRIPTS:
        raise UsageError("trace", name, "unknown script: expected %s"
                         % ", ".join(SCRIPTS))
    return SCRIPTS[name]
