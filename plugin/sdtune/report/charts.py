# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The SVG charts of one record, and of the units of one model, for the
HTML report (report/html.py):

* cost per I/O against transfer size: the aligned sequential arms as a
  line, the misaligned and random arms as their own markers, intervals
  where the record keeps them;
* the cache flush: a write alone against a write and a flush;
* IOPS against queue depth, latency percentiles (p50, p99, p99.9)
  against queue depth, and latency against IOPS (the curve SPC-1 and
  vdbench draw), each step tagged with its depth;
* the expected gain of each recommended tunable: every metric's ratio
  ("times better", 1.0 no change) with its 95 % interval, and a tunable
  with no measurable gain or not measured said in words, never a bar of
  zero;
* for a model with several units: one figure per unit side by side,
  a suspect unit (records/crosscheck.py) hatched and starred.

The numbers come from records/series.py, as those of the text charts
of `results DISK` do.  Each function returns the SVG of one chart, or
None when the record has nothing for it.  Pure.
"""

import math
from typing import List, Optional, Sequence, Set, Tuple

from ..records import series
from ..records.gains import Gains, metric_words
from ..records.record import CertRecord
from ..sdconf.tunables import value_text
from . import svg

US = 1000.0     # nanoseconds per microsecond: the charts speak in us


def _us(ns: float) -> float:
    return ns / US


def cost_chart(rec: CertRecord) -> Optional[str]:
    """Cost per I/O (us, median of the rounds) against transfer size."""
    arms = series.sector_arms(rec)
    if not arms:
        return None
    sizes = [a.bs for a in arms]
    lo, hi = svg.log_limits(min(sizes), max(sizes), 2.0)
    x = svg.Axis("transfer size (bytes)", lo, hi, "log2", svg.size_label)
    values = [_us(a.lat_ns) for a in arms] + [
        _us(v) for a in arms if a.ci95_ns for v in a.ci95_ns]
    y = svg.auto_axis("cost per I/O (\u00b5s)", values)
    groups = ((series.ALIGNED, "aligned sequential writes", svg.STYLES[0],
               True),
              (series.MISALIGNED, "misaligned (offset not a multiple of "
               "the size)", svg.STYLES[1], False),
              (series.RANDOM, "random offsets", svg.STYLES[2], True))
    drawn = []
    for kind, label, style, line in groups:
        chosen = [a for a in arms if a.kind == kind]
        if not chosen:
            continue
        if kind == series.MISALIGNED:
            label = "%s at +%d B (misaligned)" % (
                svg.size_label(chosen[0].bs), chosen[0].offset) \
                if len(chosen) == 1 else label
        drawn.append(svg.Series(
            label, style, [(a.bs, _us(a.lat_ns)) for a in chosen],
            [(_us(a.ci95_ns[0]), _us(a.ci95_ns[1])) if a.ci95_ns else None
             for a in chosen], line=line))
    notes = []
    if not any(a.ci95_ns for a in arms):
        notes.append("medians of %s rounds; this record keeps no "
                     "interval per arm" % (arms[0].rounds or "the"))
    return svg.plot("Cost per I/O by transfer size", x, y, drawn, notes)


def flush_chart(rec: CertRecord) -> Optional[str]:
    """A 4 KiB sequential write alone against a write and a flush."""
    found = series.flush(rec)
    if found is None:
        return None
    w, f = _us(found.write_ns), _us(found.flushed_ns)
    top = svg.nice_limit(max(w, f) * 1.05)
    axis = svg.Axis("time per I/O (\u00b5s)", 0.0, top)
    ratio = found.ratio
    rows = [svg.Row("write", w, text="%.4g \u00b5s" % w,
                    style=svg.STYLES[0]),
            svg.Row("write + flush", f, text="%.4g \u00b5s%s" % (
                f, " (%.2fx)" % ratio if ratio else ""),
                style=svg.STYLES[1])]
    return svg.rows_chart("Cache flush: 4 KiB sequential writes", axis,
                          rows)


def _depth_axis(steps: Sequence[series.Step]) -> svg.Axis:
    depths = [s.qd for s in steps if s.qd > 0] or [1]
    lo, hi = svg.log_limits(min(depths), max(depths), 2.0)
    return svg.Axis("queue depth (I/Os in flight)", lo, hi, "log2",
                    lambda v: "%d" % v)


def _steps(rec: CertRecord) -> List[Tuple[str, List[series.Step]]]:
    return [(rw, [s for s in series.queue_steps(rec, rw) if s.qd > 0])
            for rw in series.DIRECTIONS
            if any(s.qd > 0 for s in series.queue_steps(rec, rw))]


def iops_chart(rec: CertRecord) -> Optional[str]:
    """IOPS (after the warm-up) against queue depth, writes and reads."""
    found = _steps(rec)
    if not found:
        return None
    every = [s for _, steps in found for s in steps]
    y = svg.auto_axis("I/Os per second (IOPS)", [s.iops for s in every])
    drawn = [svg.Series("random 4 KiB %ss" % rw, svg.STYLES[i],
                        [(s.qd, s.iops) for s in steps])
             for i, (rw, steps) in enumerate(found)]
    return svg.plot("IOPS by queue depth", _depth_axis(every), y, drawn)


PERCENTILES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"))


def latency_chart(rec: CertRecord) -> Optional[str]:
    """Latency percentiles (us) against queue depth, per direction."""
    found = _steps(rec)
    drawn = []
    i = 0
    for rw, steps in found:
        for name, attr in PERCENTILES:
            pts = [(s.qd, _us(getattr(s, attr))) for s in steps
                   if getattr(s, attr) is not None]
            if pts:
                # Its style by direction and percentile, so that a
                # record with only some percentiles keeps the legend's
                # meaning.
                drawn.append(svg.Series("%s %s" % (rw, name),
                                        svg.STYLES[i % len(svg.STYLES)],
                                        pts))
            i += 1
    if not drawn:
        return None
    values = [v for s in drawn for _, v in s.points]
    y = svg.auto_axis("latency (\u00b5s)", values)
    every = [s for _, steps in found for s in steps]
    return svg.plot("Latency percentiles by queue depth", _depth_axis(every),
                    y, drawn, height=300)


def curve_chart(rec: CertRecord) -> Optional[str]:
    """Latency (p50 and p99, us) against IOPS, each point a depth."""
    drawn = []
    i = 0
    for rw, steps in _steps(rec):
        for name, attr in PERCENTILES[:2]:
            chosen = [s for s in steps if getattr(s, attr) is not None]
            if chosen:
                drawn.append(svg.Series(
                    "%s %s" % (rw, name), svg.STYLES[i % len(svg.STYLES)],
                    [(s.iops, _us(getattr(s, attr))) for s in chosen],
                    # The write p50 curve's depths tag the others' too.
                    tags=["QD%d" % s.qd for s in chosen]
                    if name == "p50" and rw == "write" else []))
            i += 1
    if not drawn:
        return None
    x = svg.auto_axis("I/Os per second (IOPS)",
                      [a for s in drawn for a, _ in s.points])
    y = svg.auto_axis("latency (\u00b5s)",
                      [b for s in drawn for _, b in s.points])
    return svg.plot("Latency against IOPS (each point a queue depth)", x, y,
                    drawn, height=300)


def gains_chart(gains: Optional[Gains]) -> Optional[str]:
    """Each recommended tunable's metrics: ratio and 95 % interval on a
    log axis around 1.0 (no change); a tunable without metrics is a row
    of words."""
    if gains is None or not gains.tunables:
        return None
    rows: List[svg.Row] = []
    ratios: List[float] = [1.0]
    for i, g in enumerate(gains.tunables):
        style = svg.STYLES[i % len(svg.STYLES)]
        # The tunable heads its rows, each metric a row of its own in
        # words (a label of both would be clipped); why a tunable has no
        # metric is in the table under the chart.
        rows.append(svg.Row("%s=%s" % (g.tunable, value_text(g.value)),
                            text="" if g.metrics else g.status,
                            style=style))
        for m in g.metrics:
            ratios += [m.ratio, m.ci95[0], m.ci95[1]]
            verdict = "gain" if m.significant else "loss" if m.loss \
                else "no measurable gain"
            rows.append(svg.Row(metric_words(m), m.ratio, m.ci95,
                                style=style,
                                text="%.2fx %s" % (m.ratio, verdict)))
    lo, hi = min(ratios), max(ratios)
    axis = svg.Axis("times better with the tunable (ratio, 95 % interval)",
                    *_ratio_limits(lo, hi), scale="log",
                    fmt=lambda v: "%gx" % round(v, 3))
    return svg.rows_chart("Expected gain per tunable", axis, rows,
                          kind="point", ref=(1.0, "no change"), width=640)


def _ratio_limits(lo: float, hi: float) -> Tuple[float, float]:
    """Limits of a ratio axis: symmetric around 1.0 on the log scale, at
    least 0.5x to 2x, so that small and large gains read alike."""
    span = max(abs(math.log(lo)), abs(math.log(hi)), math.log(2.0)) * 1.1
    return math.exp(-span), math.exp(span)


def record_charts(rec: CertRecord) -> List[str]:
    """Every chart the record allows, in the order certify measures."""
    out = []
    for chart in (cost_chart, flush_chart, iops_chart, latency_chart,
                  curve_chart):
        found = chart(rec)
        if found is not None:
            out.append(found)
    found = gains_chart(rec.gains)
    if found is not None:
        out.append(found)
    return out


def units_chart(title: str, units: Sequence[CertRecord],
                suspects: Set[str]) -> Optional[str]:
    """The units of one model side by side on the figure the cross-check
    compares them on; a suspect unit hatched and starred."""
    found = []
    what = None
    for rec in units:
        figure = series.unit_figure(rec, rec.native_sector_bytes)
        if figure is not None:
            found.append((rec, figure[0]))
            what = what or figure[1]
    if len(found) < 2:
        return None
    axis = svg.Axis(what or "IOPS", 0.0, svg.nice_limit(
        max(v for _, v in found) * 1.05))
    rows = [svg.Row("%s %s" % (rec.unit_serial or "-", rec.target or ""),
                    value, text="{:,.0f}".format(value),
                    style=svg.STYLES[0], suspect=rec.unit_serial in suspects)
            for rec, value in found]
    notes = ["* suspect unit: stands out among its siblings (see below)"] \
        if any(r.suspect for r in rows) else []
    return svg.rows_chart(title, axis, rows, notes=notes)
