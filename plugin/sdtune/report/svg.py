# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A small SVG plotter, standard library only, for the charts of the
HTML report: linear and logarithmic scales with their ticks, axes with
labels and units, lines with markers, error bars, horizontal bars and
interval rows, reference lines and a legend.

sdtune's runtime is the standard library on the appliance and on an SSH
controller alike (no pip there), so no plotting library can be assumed;
what the report needs is a few hundred lines.

Every series is told apart three ways, so that a chart reads printed in
black and white as well as on screen: a colour, a dash pattern and a
marker shape (STYLES).  Styling is by class (the report's stylesheet,
CLASS_CSS, holds the colours and dashes once for all charts, which keeps
a 24-drive report small).

All text that reaches the document passes through esc(): drive names,
serials and models come from disks and imported records, and must stay
text whatever they hold ("<script>", "]]>", control characters).

Pure: returns strings.
"""

import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

# Characters XML 1.0 does not allow, even escaped: they are replaced, so
# that every chart and the page parse as XML whatever a drive reports.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff"
                      "\ufffe\uffff]")


def esc(text: object) -> str:
    """``text`` as XML/HTML character data or attribute value: markup
    characters escaped, characters XML forbids replaced by U+FFFD."""
    s = _NOT_XML.sub("\ufffd", str(text))
    return (s.replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#39;"))


def num(v: float) -> str:
    """A coordinate: one decimal at most (a tenth of a pixel is below
    what any screen or printer shows), no trailing zeros."""
    s = "%.1f" % v
    return s[:-2] if s.endswith(".0") else s


# ------------------------------------------------------------ scales

def nice_step(span: float, count: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten that cuts ``span`` into
    about ``count`` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag * (1 + 1e-9):
            return m * mag
    return 10 * mag


def linear_ticks(lo: float, hi: float, count: int = 5) -> List[float]:
    """Round values from ``lo`` to ``hi`` (both included when round)."""
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9)
    out = []
    i = first
    while i * step <= hi + step * 1e-9:
        # Rounded to the step's digits: 0.30000000000000004 is 0.3.
        out.append(round(i * step, max(0, -int(math.floor(
            math.log10(step))) + 1)))
        i += 1
    return out


def nice_limit(hi: float) -> float:
    """The smallest tick at or above ``hi``, for an axis from zero."""
    if hi <= 0:
        return 1.0
    step = nice_step(hi)
    return math.ceil(hi / step - 1e-9) * step


def log_ticks(lo: float, hi: float) -> List[float]:
    """Ticks of a base-10 axis from ``lo`` to ``hi``: the powers of ten,
    and 2 and 5 times them where the axis spans less than two decades
    or would have fewer than three ticks (a chart needs a few labelled
    ticks)."""
    if lo <= 0 or hi <= 0 or hi < lo:
        return []
    a = math.floor(math.log10(lo) + 1e-9)
    b = math.ceil(math.log10(hi) - 1e-9)

    def within(mults: Tuple[int, ...]) -> List[float]:
        return [m * 10.0 ** e for e in range(a, b + 1) for m in mults
                if lo * (1 - 1e-9) <= m * 10.0 ** e <= hi * (1 + 1e-9)]
    out = within((1, 2, 5) if b - a < 2 else (1,))
    # An axis that holds fewer than three powers of ten (a ratio axis
    # from 0.4x to 2.5x) gets its 2 and 5 ticks too.
    return out if len(out) >= 3 else within((1, 2, 5))


def log2_ticks(lo: float, hi: float) -> List[float]:
    """The powers of two from ``lo`` to ``hi`` (transfer sizes, queue
    depths), every other one when there are more than nine."""
    if lo <= 0 or hi < lo:
        return []
    a = math.floor(math.log2(lo) + 1e-9)
    b = math.ceil(math.log2(hi) - 1e-9)
    step = 2 if b - a > 9 else 1
    return [2.0 ** e for e in range(a, b + 1, step)
            if lo * (1 - 1e-9) <= 2.0 ** e <= hi * (1 + 1e-9)]


def log_limits(lo: float, hi: float, base: float = 10.0
               ) -> Tuple[float, float]:
    """The powers of ``base`` around [lo, hi] (a degenerate range gets
    one power either side)."""
    a = math.floor(math.log(lo, base) + 1e-9)
    b = math.ceil(math.log(hi, base) - 1e-9)
    if b <= a:
        b = a + 1
    return base ** a, base ** b


def spans_decades(values: Sequence[float], decades: float = 1.0) -> bool:
    """Whether positive ``values`` span more than ``decades`` powers of
    ten: such an axis is drawn logarithmic."""
    vs = [v for v in values if v > 0]
    return bool(vs) and max(vs) / min(vs) > 10 ** decades


def si(v: float) -> str:
    """A tick label: 1.5k, 20k, 2M, 0.5 (short enough for an axis)."""
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return ("%g" % round(v / div, 3)) + suffix
    return "%g" % round(v, 6)


def size_label(v: float) -> str:
    """A transfer size tick: 512 B, 4 KiB, 1 MiB."""
    n = int(round(v))
    for shift, unit in ((20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


@dataclass
class Axis:
    """One axis: its title (with the unit, e.g. "latency (us)"), scale
    ("linear", "log" base 10 or "log2") and limits; ``fmt`` labels its
    ticks."""

    title: str
    lo: float
    hi: float
    scale: str = "linear"
    fmt: Callable[[float], str] = si

    def frac(self, v: float) -> float:
        """Where ``v`` falls, 0 at lo and 1 at hi (outside: beyond)."""
        if self.scale == "linear":
            return (v - self.lo) / ((self.hi - self.lo) or 1.0)
        v = max(v, self.lo * 1e-3)
        return (math.log(v) - math.log(self.lo)) / (
            (math.log(self.hi) - math.log(self.lo)) or 1.0)

    def ticks(self) -> List[float]:
        if self.scale == "log":
            return log_ticks(self.lo, self.hi)
        if self.scale == "log2":
            return log2_ticks(self.lo, self.hi)
        return linear_ticks(self.lo, self.hi)

    @property
    def scale_note(self) -> str:
        return ", log scale" if self.scale != "linear" else ""


def auto_axis(title: str, values: Sequence[float], zero: bool = True,
              fmt: Callable[[float], str] = si,
              decades: float = 1.0) -> Axis:
    """An axis for ``values``: logarithmic when they span more than
    ``decades`` powers of ten, else linear (from zero when ``zero``)."""
    vs = [v for v in values if v is not None and math.isfinite(v)]
    pos = [v for v in vs if v > 0]
    if pos and spans_decades(pos, decades):
        lo, hi = log_limits(min(pos), max(pos))
        return Axis(title, lo, hi, "log", fmt)
    if not vs:
        return Axis(title, 0.0, 1.0, "linear", fmt)
    top = nice_limit(max(vs) * 1.05)
    if zero or min(vs) <= 0:
        return Axis(title, 0.0, top, "linear", fmt)
    step = nice_step(top - min(vs))
    return Axis(title, math.floor(min(vs) / step) * step, top, "linear",
                fmt)


# ------------------------------------------------------------ styles

@dataclass(frozen=True)
class Style:
    """How one series looks: its class (CLASS_CSS gives colour and dash)
    and its marker."""

    cls: str
    colour: str
    dash: str
    marker: str


# Colour-blind-safe hues (Okabe-Ito), each with its own dash pattern
# and marker, so that no two series rely on colour alone.
STYLES = (
    Style("s0", "#0072b2", "", "circle"),
    Style("s1", "#d55e00", "7 3", "square"),
    Style("s2", "#009e73", "2 2", "triangle"),
    Style("s3", "#cc79a7", "9 3 2 3", "diamond"),
    Style("s4", "#e69f00", "4 4", "cross"),
    Style("s5", "#56b4e9", "1 3", "circle-open"),
)


def class_css() -> str:
    """The stylesheet of every chart (the report puts it in its head)."""
    rules = [
        "svg.chart{font:11px sans-serif;background:#fff}",
        "svg.chart text{fill:#000}",
        ".ax{stroke:#000;stroke-width:1;fill:none}",
        ".grid{stroke:#ccc;stroke-width:.5;fill:none}",
        ".ref{stroke:#000;stroke-width:1;stroke-dasharray:3 3;fill:none}",
        ".ln{fill:none;stroke-width:1.8}",
        ".eb{fill:none;stroke-width:1.2}",
        ".bar{stroke:#000;stroke-width:.6}",
        ".mk{stroke-width:1.2}",
        ".suspect{stroke:#000;stroke-width:1.2}",
        ".title{font-weight:bold;font-size:12px}",
        ".note{font-style:italic}",
    ]
    for s in STYLES:
        dash = "stroke-dasharray:%s;" % s.dash if s.dash else ""
        rules.append(".ln.%s{stroke:%s;%s}" % (s.cls, s.colour, dash))
        rules.append(".eb.%s,.mk.%s{stroke:%s}" % (s.cls, s.cls, s.colour))
        rules.append(".mk.%s{fill:%s}" % (s.cls, s.colour))
        rules.append(".bar.%s{fill:%s}" % (s.cls, s.colour))
    rules.append(".mk.open{fill:#fff}")
    return "\n".join(rules)


def marker(shape: str, x: float, y: float, cls: str, r: float = 3.5
           ) -> str:
    """One marker of ``shape`` centred on (x, y), of class "mk ``cls``";
    without ``cls`` it takes its group's (markers()), which keeps a
    series' many markers short."""
    opened = " open" if shape == "circle-open" else ""
    attr = ' class="mk %s%s"' % (cls, opened) if cls else ""
    if shape == "circle" or shape == "circle-open":
        return '<circle%s cx="%s" cy="%s" r="%s"/>' % (
            attr, num(x), num(y), num(r))
    if shape == "square":
        return '<rect%s x="%s" y="%s" width="%s" height="%s"/>' % (
            attr, num(x - r), num(y - r), num(2 * r), num(2 * r))
    if shape == "triangle":
        pts = ((x, y - r * 1.2), (x + r * 1.1, y + r * .8),
               (x - r * 1.1, y + r * .8))
    elif shape == "diamond":
        pts = ((x, y - r * 1.3), (x + r, y), (x, y + r * 1.3), (x - r, y))
    else:   # cross: an X, stroked
        return '<path%s d="M%s %sL%s %sM%s %sL%s %s"/>' % (
            attr, num(x - r), num(y - r), num(x + r), num(y + r),
            num(x - r), num(y + r), num(x + r), num(y - r))
    return '<polygon%s points="%s"/>' % (
        attr, " ".join("%s,%s" % (num(a), num(b)) for a, b in pts))


def markers(style: Style, points: Sequence[Tuple[float, float]]) -> str:
    """A series' markers as one group of its class."""
    if not points:
        return ""
    return '<g class="mk %s%s">%s</g>' % (
        style.cls, " open" if style.marker == "circle-open" else "",
        "".join(marker(style.marker, a, b, "") for a, b in points))


def text(x: float, y: float, s: str, anchor: str = "start",
         cls: str = "", rotate: bool = False) -> str:
    attrs = ' class="%s"' % cls if cls else ""
    if anchor != "start":
        attrs += ' text-anchor="%s"' % anchor
    if rotate:
        attrs += ' transform="rotate(-90 %s %s)"' % (num(x), num(y))
    return '<text x="%s" y="%s"%s>%s</text>' % (num(x), num(y), attrs,
                                                esc(s))


def _labels(items: Sequence[Tuple[float, float, str]], anchor: str) -> str:
    """Tick labels sharing one anchor, as one group."""
    return '<g text-anchor="%s">%s</g>' % (anchor, "".join(
        '<text x="%s" y="%s">%s</text>' % (num(a), num(b), esc(s))
        for a, b, s in items))


def clip(s: str, n: int) -> str:
    """At most ``n`` characters (a label longer than its room is cut,
    with an ellipsis)."""
    return s if len(s) <= n else s[:max(1, n - 1)] + "\u2026"


def _svg(width: int, height: int, title: str, body: List[str]) -> str:
    # role and <title>: a screen reader and a print of the page both get
    # the chart's name.
    return ('<svg xmlns="http://www.w3.org/2000/svg" class="chart" '
            'width="%d" height="%d" viewBox="0 0 %d %d" role="img">'
            '<title>%s</title>%s</svg>' % (width, height, width, height,
                                           esc(title), "".join(body)))


# ------------------------------------------------------------ x-y plots

@dataclass
class Series:
    """Points of one series: (x, y) with an optional interval of y
    (low, high); drawn as a line through its markers unless
    ``line`` is False."""

    label: str
    style: Style
    points: List[Tuple[float, float]]
    intervals: List[Optional[Tuple[float, float]]] = field(
        default_factory=list)
    line: bool = True
    # Text beside each point (e.g. "QD8" on the latency-vs-IOPS curve).
    tags: List[str] = field(default_factory=list)


def plot(title: str, x: Axis, y: Axis, series: Sequence[Series],
         notes: Sequence[str] = (), width: int = 520,
         height: int = 270) -> str:
    """An x-y chart with its axes, grid, ticks, series and legend (below
    the plot, one entry per series with its line and marker), and notes
    (one italic line each) under the legend."""
    left, right, top = 58, 26, 22
    legend_rows = (len(series) + 1) // 2
    bottom = 40 + 16 * legend_rows + 14 * len(notes)
    pw, ph = width - left - right, height - top - bottom
    if ph < 80:
        height += 80 - ph
        ph = 80

    def px(v: float) -> float:
        return left + pw * min(1.02, max(-0.02, x.frac(v)))

    def py(v: float) -> float:
        return top + ph * (1 - min(1.02, max(-0.02, y.frac(v))))

    out = [text(left, 14, title, cls="title")]
    xt = [(px(t), x.fmt(t)) for t in x.ticks()]
    yt = [(py(t), y.fmt(t)) for t in y.ticks()]
    # One path for the grid and one group per axis' labels: a shelf's
    # report has hundreds of charts, and this halves their size.
    out.append('<path class="grid" d="%s"/>' % "".join(
        ["M%s %sV%s" % (num(xx), num(top), num(top + ph)) for xx, _ in xt]
        + ["M%s %sH%s" % (num(left), num(yy), num(left + pw))
           for yy, _ in yt]))
    out.append(_labels([(xx, top + ph + 13, s) for xx, s in xt], "middle"))
    out.append(_labels([(left - 4, yy + 4, s) for yy, s in yt], "end"))
    out.append('<path class="ax" d="M%s %sV%sH%s"/>' % (
        num(left), num(top), num(top + ph), num(left + pw)))
    out.append(text(left + pw / 2, top + ph + 28, x.title + x.scale_note,
                    "middle"))
    out.append(text(13, top + ph / 2, y.title + y.scale_note, "middle",
                    rotate=True))
    for s in series:
        pts = [(px(a), py(b)) for a, b in s.points]
        for (a, _), iv in zip(s.points, s.intervals):
            if iv is None:
                continue
            xx, lo, hi = px(a), py(iv[0]), py(iv[1])
            out.append('<path class="eb %s" d="M%s %sV%sM%s %sh8M%s %sh8"/>'
                       % (s.style.cls, num(xx), num(lo), num(hi),
                          num(xx - 4), num(lo), num(xx - 4), num(hi)))
        if s.line and len(pts) > 1:
            out.append('<path class="ln %s" d="M%s"/>' % (
                s.style.cls, "L".join("%s %s" % (num(a), num(b))
                                      for a, b in pts)))
        out.append(markers(s.style, pts))
        for (a, b), tag in zip(pts, s.tags):
            out.append(text(a + 5, b - 5, tag))
    ly = top + ph + 44
    for i, s in enumerate(series):
        lx = left + (i % 2) * (pw / 2)
        yy = ly + 16 * (i // 2)
        if s.line:
            out.append('<path class="ln %s" d="M%s %sh26"/>' % (
                s.style.cls, num(lx), num(yy - 4)))
        out.append(marker(s.style.marker, lx + 13, yy - 4, s.style.cls))
        out.append(text(lx + 32, yy, clip(s.label, 44)))
    ny = ly + 16 * legend_rows
    for note in notes:
        out.append(text(left, ny, note, cls="note"))
        ny += 14
    return _svg(width, height, title, out)


# ------------------------------------------------------------ rows

@dataclass
class Row:
    """One row of a row chart: a bar to ``value``, or a point at
    ``value`` with an interval, or neither (then only ``text``, e.g.
    "not measured": never a bar of zero)."""

    label: str
    value: Optional[float] = None
    interval: Optional[Tuple[float, float]] = None
    text: str = ""
    style: Style = STYLES[0]
    # A suspect unit's bar is hatched and its label says so.
    suspect: bool = False


# The hatching of a suspect unit's bar.  Its id is the chart's own (from
# its title): ids are document-wide, and a shelf's page has a chart per
# model.
HATCH = ('<defs><pattern id="%s" width="6" height="6" '
         'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
         '<rect width="6" height="6" fill="#fff"/>'
         '<path d="M0 0V6" stroke="#000" stroke-width="2"/></pattern>'
         '</defs>')


def hatch_id(title: str) -> str:
    return "hatch-%08x" % zlib.crc32(title.encode("utf-8", "replace"))


def rows_chart(title: str, axis: Axis, rows: Sequence[Row],
               kind: str = "bar", ref: Optional[Tuple[float, str]] = None,
               notes: Sequence[str] = (), width: int = 540) -> str:
    """Horizontal rows on one value axis: bars from the axis' start
    (``kind`` "bar") or points with intervals ("point"); ``ref`` a
    reference line (value, its label), e.g. 1.0 "no change"."""
    label_chars = min(34, max([len(r.label) for r in rows] + [4]))
    left = 12 + int(label_chars * 6.2)
    text_w = 150
    right = text_w + 8
    top, row_h = 22, 20
    pw = max(120, width - left - right)
    width = left + pw + right
    ph = row_h * max(1, len(rows))
    height = top + ph + 36 + 14 * len(notes)

    def px(v: float) -> float:
        return left + pw * min(1.02, max(0.0, axis.frac(v)))

    out = [text(8, 14, title, cls="title")]
    hatch = hatch_id(title)
    if any(r.suspect for r in rows):
        out.insert(0, HATCH % hatch)
    xt = [(px(t), axis.fmt(t)) for t in axis.ticks()]
    out.append('<path class="grid" d="%s"/>' % "".join(
        "M%s %sV%s" % (num(xx), num(top), num(top + ph)) for xx, _ in xt))
    out.append(_labels([(xx, top + ph + 13, s) for xx, s in xt], "middle"))
    out.append('<path class="ax" d="M%s %sV%sH%s"/>' % (
        num(left), num(top), num(top + ph), num(left + pw)))
    out.append(text(left + pw / 2, top + ph + 28,
                    axis.title + axis.scale_note, "middle"))
    if ref is not None:
        xx = px(ref[0])
        out.append('<path class="ref" d="M%s %sV%s"/>' % (
            num(xx), num(top - 4), num(top + ph)))
        out.append(text(xx + 3, top - 5, ref[1]))
    for i, r in enumerate(rows):
        yy = top + i * row_h
        mid = yy + row_h / 2
        label = clip(r.label, label_chars) + (" *" if r.suspect else "")
        out.append(text(left - 6, mid + 4, label, "end"))
        end = left
        if r.value is not None and kind == "bar":
            end = px(r.value)
            look = 'class="suspect" fill="url(#%s)"' % hatch \
                if r.suspect else 'class="bar %s"' % r.style.cls
            out.append('<rect %s x="%s" y="%s" width="%s" height="%s"/>'
                       % (look, num(left), num(yy + 3),
                          num(max(1.0, end - left)), num(row_h - 6)))
        if r.interval is not None:
            lo, hi = px(r.interval[0]), px(r.interval[1])
            out.append('<path class="eb %s" d="M%s %sH%sM%s %sv8M%s %sv8"/>'
                       % (r.style.cls, num(lo), num(mid), num(hi), num(lo),
                          num(mid - 4), num(hi), num(mid - 4)))
            end = max(end, hi)
        if r.value is not None and kind == "point":
            out.append(marker(r.style.marker, px(r.value), mid,
                              r.style.cls, 4))
            end = max(end, px(r.value))
        if r.text:
            if r.value is None:
                # Nothing to draw: the text says why, where a bar would be.
                out.append(text(left + 6, mid + 4, r.text, cls="note"))
            else:
                out.append(text(left + pw + 6, mid + 4,
                                clip(r.text, 26)))
    ny = top + ph + 44
    for note in notes:
        out.append(text(8, ny, note, cls="note"))
        ny += 14
    return _svg(width, height, title, out)
