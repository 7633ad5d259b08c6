# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""report/html.py and report/charts.py: the page is self-contained
well-formed XML whose every <svg> parses on its own, a shelf's page
stays small, a hostile name is inert, gains that are not measured are
said in words, and the proof section is fed by plain dicts."""

import re
import xml.etree.ElementTree as ET

from sdtune.records.crosscheck import cross_check
from sdtune.report import charts
from sdtune.report.html import Meta, render
from tests import reportdata

META = Meta("2026-11-27T12:00:00Z", "0.1.0", "demo")
XHTML = "{http://www.w3.org/1999/xhtml}"
SVG = "{http://www.w3.org/2000/svg}"


def page(recs, proofs=None):
    return render(recs, cross_check(recs), META, proofs)


def svgs(doc):
    return re.findall(r"<svg\b.*?</svg>", doc, re.S)


def test_the_page_is_xml_and_each_chart_parses_alone():
    doc = page(reportdata.demo_records())
    root = ET.fromstring(doc.split("\n", 1)[1])
    assert root.tag == XHTML + "html"
    charts_found = svgs(doc)
    # Two drives measured in full with gains, one without: six charts
    # each and the gains chart of two.
    assert len(charts_found) == 3 * 5 + 2
    for chart in charts_found:
        assert ET.fromstring(chart).tag == SVG + "svg"


def test_the_page_needs_nothing_outside_itself():
    doc = page(reportdata.shelf_records(4))
    assert "<script" not in doc.lower()
    assert "@import" not in doc and "url(http" not in doc
    # The only addresses are the XML namespaces.
    assert set(re.findall(r"https?://[^\"' )]+", doc)) == {
        "http://www.w3.org/1999/xhtml", "http://www.w3.org/2000/svg"}
    assert not re.search(r"\b(src|href)=\"(?!#)", doc)
    assert "@media print" in doc


def test_a_shelf_of_24_drives_stays_under_500_kb():
    doc = page(reportdata.shelf_records(24))
    assert len(doc.encode("utf-8")) < 500 * 1024, len(doc)


def test_the_units_of_a_model_side_by_side_the_suspect_marked():
    recs = reportdata.shelf_records(5)
    doc = page(recs)
    assert 'Model "ATA     ACME DC4K": 5 units' in doc
    unit_chart = [c for c in svgs(doc) if "Units of" in c][0]
    assert unit_chart.count('class="suspect"') == 1
    assert "DC4K-0004 c7t4d0 *" in unit_chart
    assert "* suspect unit DC4K-0004 (c7t4d0)" in doc


def test_gains_say_in_words_what_was_not_measured():
    rec = reportdata.demo_records()[1]
    chart = charts.gains_chart(rec.gains)
    root = ET.fromstring(chart)
    texts = list(root.itertext())
    # The chart says "not measured"; the table under it says why.
    assert "not measured" in texts
    assert "no workload shows seek ordering on an SSD" in page([rec])
    assert "1.64x gain" in texts and "0.43x loss" in texts
    assert "1.02x no measurable gain" in texts
    assert "no change" in texts
    # One point with its interval per metric; none for disksort.
    assert chart.count('class="eb ') == 5
    home = page(reportdata.demo_records()[2:])
    assert "Expected gain: not measured" in home


def test_a_hostile_serial_is_inert_everywhere():
    evil = '<script>alert(1)</script>]]>"\x01'
    rec = reportdata.record("c1t0d0</h2><img src=x>", "ACME <b>X</b>",
                            evil, 4096, True)
    doc = page([rec, reportdata.record("c1t1d0", "ACME <b>X</b>", "u2",
                                       4096, True, 2.0)])
    assert "<script" not in doc and "<img" not in doc and "<b>" not in doc
    root = ET.fromstring(doc.split("\n", 1)[1])
    assert not [e for e in root.iter() if e.tag.endswith("script") or
                e.tag.endswith("img") or e.tag == XHTML + "b"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;]]&gt;" in doc
    for chart in svgs(doc):
        ET.fromstring(chart)


def test_the_proof_section_takes_plain_dicts():
    recs = reportdata.demo_records()[:1]
    assert "Not part of this report" in page(recs)
    doc = page(recs, [{"disk": "c5t2d0", "state": "proven",
                       "details": "flush 12 us through sd", "flush_ns":
                       12000}])
    assert "<td>proven</td>" in doc
    assert "flush 12 us through sd; flush_ns 12000" in doc


def test_a_record_without_evidence_has_no_chart_and_says_so():
    from tests import builders
    doc = page([builders.cert_record(target="f")])
    assert svgs(doc) == []
    assert "holds no measurements to draw" in doc
