# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Text charts of one certification, for a terminal (`sdtune results
DISK`): what the record's evidence measured, drawn as horizontal bars
of ASCII '#', so that they read the same over ssh, in a log and on an
illumos console in the C locale.

* cost per I/O against transfer size: the sector phase's arms (median
  latency of the rounds), the misaligned and random arms marked;
* the cache flush: a write alone against a write and a flush;
* IOPS against queue depth, writes and reads, each step with its
  latency percentiles (p50/p99, microseconds) where the record has them;
  certify's verdict gives the same steps' p50/p99/p99.9 as one line per
  direction (queue_latency_lines);
* the expected gain of each recommended tunable: its lead metric's
  ratio (times better) as a bar on a log scale, with the 95 % interval,
  or why it has none (gain_chart; certify's verdict lists the same as
  lines).

A bar is scaled to the largest value of its chart; a record without a
phase's evidence (imported, or an older version) has no chart for it.
Which arms and steps, and their numbers, come from records/series.py,
which the SVG charts of the HTML report (report/) draw from too.
Pure: returns lines.
"""

import math
from typing import List, Sequence, Tuple

from ..records import series
from ..records.gains import NOT_MEASURED, headline, lead_metric, metric_words
from ..records.record import CertRecord
from ..sdconf.tunables import value_text

WIDTH = 30
Row = Tuple[str, float, str]     # label, value (the bar), text after it


def bars(rows: Sequence[Row], width: int = WIDTH) -> List[str]:
    """One line per row: the label, the bar (to scale with the largest
    value; a value above zero has at least one '#'), and its text."""
    if not rows:
        return []
    top = max(value for _, value, _ in rows) or 1.0
    label_width = max(len(label) for label, _, _ in rows)
    out = []
    for label, value, text in rows:
        n = int(round(width * value / top)) if value > 0 else 0
        if value > 0 and n == 0:
            n = 1
        out.append(("  %-*s %-*s %s" % (label_width, label, width,
                                        "#" * n, text)).rstrip())
    return out


def micros(ns: float) -> str:
    """Nanoseconds as microseconds: three significant digits, whole
    microseconds from 100 up."""
    us = ns / 1000.0
    return "%.3g" % us if us < 100 else "%d" % round(us)


def _us(ns: float) -> str:
    return micros(ns) + " us"


def sector_chart(rec: CertRecord) -> List[str]:
    """Cost per I/O by transfer size: sequential sizes first, smallest
    first, then the misaligned and the random arms (series.sector_arms
    chooses and orders them, for the SVG chart too)."""
    rows = [(arm.label, arm.lat_ns, _us(arm.lat_ns))
            for arm in series.sector_arms(rec)]
    if not rows:
        return []
    return ["cost per I/O by transfer size (median of the rounds):"] + \
        bars(rows)


def cache_chart(rec: CertRecord) -> List[str]:
    """A write alone against a write and a flush."""
    found = series.flush(rec)
    if found is None:
        return []
    ratio = " (%.2fx a write)" % found.ratio if found.ratio else ""
    return ["cache flush, 4 KiB sequential writes:"] + bars([
        ("write", found.write_ns, _us(found.write_ns)),
        ("write + flush", found.flushed_ns, _us(found.flushed_ns) + ratio)])


def queue_chart(rec: CertRecord) -> List[str]:
    """IOPS by queue depth, writes then reads, with latency percentiles
    where the steps have them."""
    out: List[str] = []
    for rw in series.DIRECTIONS:
        rows = []
        for step in series.queue_steps(rec, rw):
            text = "%d IOPS" % round(step.iops)
            if step.p50_ns is not None and step.p99_ns is not None:
                text += ", p50 %s, p99 %s" % (_us(step.p50_ns),
                                              _us(step.p99_ns))
            rows.append(("QD%s" % step.qd, step.iops, text))
        if rows:
            out.append("random 4 KiB %ss by queue depth:" % rw)
            out += bars(rows)
    return out


def queue_latency_lines(rec: CertRecord) -> List[str]:
    """certify's verdict lines for the queue-depth phase's latency: one
    per direction, p50/p99/p99.9 in microseconds at each depth; none for
    a record whose steps have no percentiles (imported, or older)."""
    out = []
    for rw in series.DIRECTIONS:
        cells = []
        for step in series.queue_steps(rec, rw):
            ps = (step.p50_ns, step.p99_ns, step.p99_9_ns)
            if None not in ps:
                cells.append("QD%s %s" % (step.qd, "/".join(
                    micros(p) for p in ps)))  # type: ignore[arg-type]
        if cells:
            out.append("  %-14s p50/p99/p99.9 us: %s" % (
                "%s latency:" % rw, ", ".join(cells)))
    return out


def gain_chart(rec: CertRecord, verdict: bool = False) -> List[str]:
    """What each recommended tunable buys: a bar per measured tunable,
    its best metric's ratio (1.0 is no change), the interval and the
    headline; a tunable without a measured gain says why.  With
    ``verdict``: certify's lines instead (the headline, then why)."""
    gains = rec.gains
    if gains is None or not gains.tunables:
        return []
    took = " (measured in %.1f s)" % gains.seconds \
        if gains.seconds is not None else ""
    if verdict:
        out = ["  expected gain%s:" % took]
        width = max(len(g.tunable) + 1 + len(value_text(g.value))
                    for g in gains.tunables)
        for g in gains.tunables:
            out.append("    %-*s  %s" % (width, "%s:%s" % (
                g.tunable, value_text(g.value)), headline(g)))
            if g.why:
                out.append("    %-*s  %s" % (width, "", g.why))
        return out
    rows: List[Row] = []
    notes: List[str] = []
    for g in gains.tunables:
        label = "%s:%s" % (g.tunable, value_text(g.value))
        best = lead_metric(g.metrics)
        if g.status == NOT_MEASURED or best is None:
            notes.append("  %s: not measured: %s" % (label, g.why or ""))
            continue
        text = "%.2fx %s [%.2f-%.2f]" % (
            best.ratio, metric_words(best), best.ci95[0], best.ci95[1])
        if not best.significant:
            text += " no measurable gain"
        if g.space_ratio is not None:
            text += ", space %.2fx" % g.space_ratio
        # On a log scale: 1.5x and 20x both show (1.0x, no change, is
        # no bar; a loss is none either, and its text says so).
        rows.append((label, max(0.0, math.log2(best.ratio)), text))
    return ["expected gain per tunable (times better, log scale, 95 %% "
            "interval)%s:" % took] + bars(rows) + notes


def record_charts(rec: CertRecord) -> List[str]:
    """Every chart the record's evidence allows, in the order certify
    measures: sector, cache, queue depth, gains."""
    out: List[str] = []
    for chart in (sector_chart, cache_chart, queue_chart, gain_chart):
        out += chart(rec)
    return out
