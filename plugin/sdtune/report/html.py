# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The HTML report of `sdtune report`: one self-contained page from
certification records (one drive, one model or a whole shelf).

Self-contained means: the charts are inline SVG (report/charts.py), the
stylesheet is in the head, and there is no script, no external font,
stylesheet or image and no link that leaves the page, so that it opens
the same from a mail attachment, on an air-gapped controller and in a
printout.  It reads without colour: series differ by dash and marker
too, a suspect unit is hatched and starred, and the print stylesheet
starts each drive on a new page.  The page is well-formed XML as well
as HTML (every chart can be taken out and used as an .svg file), and
every text that comes from a record is escaped (svg.esc).

The proof after apply (`sdtune prove`) is a section fed by a plain list
of dicts, one per disk ({"disk", "state", "details"}, more keys shown as
they come): render() draws it when given one, so that the command can
pass prove's results once it has them.

Pure: returns the document as a string.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..records.crosscheck import Suspect
from ..records.gains import gain_lines
from ..records.group import certified_when
from ..records.record import CertRecord
from ..sdconf.tunables import settings_text
from . import charts
from .svg import class_css, esc

PAGE_CSS = """
body{font:13px/1.4 sans-serif;color:#000;background:#fff;margin:1.5em;
max-width:1120px}
h1{font-size:20px}h2{font-size:16px;border-bottom:1px solid #000;
margin-top:2em}h3{font-size:14px}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #888;padding:2px 6px;text-align:left;
vertical-align:top}
th{background:#eee}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.charts svg{border:1px solid #ddd}
.meta,.small{color:#333;font-size:12px}
.suspect-text{font-weight:bold}
pre{white-space:pre-wrap;margin:.3em 0}
@media print{body{margin:0;max-width:none}
section.drive{break-before:page}
.charts svg{border:none;break-inside:avoid}
th{background:none}}
"""


# The browser enforces what the page promises: nothing is fetched and no
# script runs, whatever a record smuggled in; a violation is logged,
# which the browser test looks for.
CSP = ('<meta http-equiv="Content-Security-Policy" content="default-src '
       "'none'; style-src 'unsafe-inline'\"/>")


@dataclass(frozen=True)
class Meta:
    """What the page says of itself: when it was made, by which sdtune,
    from the records of which host."""

    time_iso: str
    version: str
    host: Optional[str] = None


def _cell(value: object) -> str:
    return "<td>%s</td>" % esc("-" if value is None or value == ""
                               else value)


def _recommended(rec: CertRecord) -> str:
    return settings_text(rec.recommended) or "nothing to change"


def _anchor(i: int) -> str:
    return "drive-%d" % i


def _summary(recs: Sequence[CertRecord],
             suspect: Dict[Tuple[Optional[str], Optional[str]], Suspect]
             ) -> List[str]:
    out = ["<table><tr><th>drive</th><th>model (key)</th><th>serial</th>"
           "<th>firmware</th><th>native sector</th><th>cache</th>"
           "<th>recommended</th><th>note</th></tr>"]
    for i, rec in enumerate(recs):
        native = "%d B" % rec.native_sector_bytes \
            if rec.native_sector_bytes else "inconclusive"
        note = "suspect unit" if (rec.key, rec.unit_serial) in suspect \
            else ""
        out.append('<tr><td><a href="#%s">%s</a></td>%s%s%s%s%s%s%s</tr>' % (
            _anchor(i), esc(rec.target or "-"),
            _cell(rec.key if rec.key else rec.model),
            _cell(rec.unit_serial), _cell(rec.firmware), _cell(native),
            _cell(rec.cache), _cell(_recommended(rec)), _cell(note)))
    out.append("</table>")
    return out


def _models(recs: Sequence[CertRecord], suspects: Sequence[Suspect]
            ) -> List[str]:
    """A section per model with more than one unit: the units side by
    side, and why a suspect stands out."""
    by_key: Dict[str, List[CertRecord]] = {}
    for rec in recs:
        if rec.key:
            by_key.setdefault(rec.key, []).append(rec)
    out: List[str] = []
    for key, units in sorted(by_key.items()):
        if len(units) < 2:
            continue
        odd = [s for s in suspects if s.key == key]
        chart = charts.units_chart('Units of "%s"' % key.rstrip(), units,
                                   {s.serial for s in odd})
        out.append('<h3>Model "%s": %d units</h3>'
                   % (esc(key.rstrip()), len(units)))
        if chart:
            out.append('<div class="charts">%s</div>' % chart)
        for s in odd:
            out.append('<p class="suspect-text">* suspect unit %s%s: %s'
                       '</p>' % (esc(s.serial), " (%s)" % esc(s.target)
                                 if s.target else "",
                                 esc("; ".join(s.reasons))))
        if not odd:
            out.append("<p>No unit stands out among its siblings.</p>")
    if out:
        out.insert(0, "<h2>Units of each model side by side</h2>")
    return out


def _drive(i: int, rec: CertRecord, suspect: Optional[Suspect]
           ) -> List[str]:
    native = rec.native_sector_bytes
    rows = [
        ("certified", certified_when(rec)),
        ("native sector", "%s (confidence %.2f): %s" % (
            "%d B" % native if native else "inconclusive",
            rec.sector_confidence or 0, rec.sector_reason)),
        ("cache", "%s (confidence %.2f): %s" % (
            rec.cache, rec.cache_confidence or 0, rec.cache_reason)),
        ("queue depth", rec.queue_depth.reason),
        ("recommended", _recommended(rec)),
    ]
    ident = ", ".join(p for p in (
        'key "%s"' % rec.key if rec.key else rec.driver or "",
        "serial %s" % rec.unit_serial if rec.unit_serial else "",
        "firmware %s" % rec.firmware if rec.firmware else "") if p)
    out = ['<section class="drive" id="%s">' % _anchor(i),
           "<h2>%s%s</h2>" % (esc(rec.target or "-"),
                              " (%s)" % esc(ident) if ident else "")]
    if suspect is not None:
        out.append('<p class="suspect-text">Suspect unit: %s</p>'
                   % esc("; ".join(suspect.reasons)))
    out.append("<table>%s</table>" % "".join(
        "<tr><th>%s</th><td>%s</td></tr>" % (esc(k), esc(v or "-"))
        for k, v in rows))
    drawn = charts.record_charts(rec)
    if drawn:
        out.append('<div class="charts">%s</div>' % "".join(drawn))
    else:
        out.append("<p>This record holds no measurements to draw "
                   "(imported, or an older version).</p>")
    out += _gains_text(rec)
    out.append("</section>")
    return out


def _gains_text(rec: CertRecord) -> List[str]:
    if rec.gains is None:
        if rec.recommended:
            return ["<p>Expected gain: not measured (this record has no "
                    "gains; certify measures them).</p>"]
        return []
    out = ["<h3>Expected gain per tunable</h3><table>"]
    for g in rec.gains.tunables:
        out.append("<tr><th>%s=%s</th><td><pre>%s</pre></td></tr>" % (
            esc(g.tunable), esc(g.value), esc("\n".join(gain_lines(g)))))
    out.append("</table>")
    return out


def _proofs(proofs: Optional[Sequence[Dict[str, object]]]) -> List[str]:
    out = ["<h2>Proof after apply</h2>"]
    if proofs is None:
        out.append("<p>Not part of this report: <code>sdtune prove</code> "
                   "shows, per disk, what the kernel does now.</p>")
        return out
    out.append("<table><tr><th>disk</th><th>state</th><th>details</th>"
               "</tr>")
    for p in proofs:
        rest = "; ".join("%s %s" % (k, v) for k, v in p.items()
                         if k not in ("disk", "state", "details"))
        details = "; ".join(str(x) for x in (p.get("details"), rest) if x)
        out.append("<tr>%s%s%s</tr>" % (_cell(p.get("disk")),
                                        _cell(p.get("state")),
                                        _cell(details)))
    out.append("</table>")
    return out


def render(recs: Sequence[CertRecord], suspects: Sequence[Suspect],
           meta: Meta,
           proofs: Optional[Sequence[Dict[str, object]]] = None) -> str:
    """The page: a summary table, the units of each model side by side,
    each record with its verdicts, charts and expected gains, then the
    proof after apply."""
    by_unit = {(s.key, s.serial): s for s in suspects}
    models = len({r.key or r.model for r in recs})
    body = ["<h1>sdtune certification report</h1>",
            '<p class="meta">%d record%s, %d model%s; made %s by sdtune %s'
            '%s.  Times are microseconds (\u00b5s); "log scale" axes step by '
            'powers of ten or two.</p>' % (
                len(recs), "" if len(recs) == 1 else "s", models,
                "" if models == 1 else "s", esc(meta.time_iso),
                esc(meta.version), " from the records stored on %s"
                % esc(meta.host) if meta.host else "")]
    body += _summary(recs, by_unit)
    body += _models(recs, suspects)
    for i, rec in enumerate(recs):
        body += _drive(i, rec, by_unit.get((rec.key, rec.unit_serial)))
    body += _proofs(proofs)
    return ('<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" '
            'lang="en"><head><meta charset="utf-8"/>%s'
            "<title>sdtune certification report</title>"
            "<style>%s\n%s</style></head><body>\n%s\n</body></html>\n"
            % (CSP, PAGE_CSS, class_css(), "\n".join(body)))
