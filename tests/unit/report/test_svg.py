# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""report/svg.py: tick and scale arithmetic, and that every text a
chart draws stays text (escaping of hostile drive names)."""

import xml.etree.ElementTree as ET

import pytest

from sdtune.report import svg

NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("span,count,step", [
    (10, 5, 2), (1, 5, 0.2), (4500, 5, 1000), (3, 5, 1), (7, 5, 2),
    (0.07, 5, 0.02), (0, 5, 1.0)])
def test_nice_steps_are_one_two_or_five_times_a_power_of_ten(
        span, count, step):
    assert svg.nice_step(span, count) == pytest.approx(step)


def test_linear_ticks_are_round_and_cover_the_range():
    assert svg.linear_ticks(0, 5000) == [0, 1000, 2000, 3000, 4000, 5000]
    assert svg.linear_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.linear_ticks(0.1, 0.7) == [0.2, 0.4, 0.6]
    assert svg.nice_limit(4737) == 5000
    assert svg.nice_limit(0) == 1.0


def test_log_ticks_are_decades_with_two_and_five_in_a_short_range():
    assert svg.log_ticks(100, 1e6) == [100, 1000, 1e4, 1e5, 1e6]
    assert svg.log_ticks(1000, 10000) == [1000, 2000, 5000, 10000]
    assert svg.log_ticks(0, 10) == []
    # A ratio axis: 1 alone would be one tick.
    assert svg.log_ticks(0.4, 2.5) == [0.5, 1, 2]
    assert svg.log_limits(950, 41000) == (100, 1e5)
    assert svg.log_limits(1000, 1000) == (1000, 10000)
    assert svg.log_limits(512, 16384, 2.0) == (512, 16384)


def test_log2_ticks_are_powers_of_two():
    assert svg.log2_ticks(1, 64) == [1, 2, 4, 8, 16, 32, 64]
    assert svg.log2_ticks(512, 16384) == [512, 1024, 2048, 4096, 8192,
                                          16384]
    # More than nine: every other one, so that labels do not collide.
    assert svg.log2_ticks(1, 4096) == [2.0 ** e for e in range(0, 13, 2)]


def test_an_axis_is_logarithmic_where_the_data_spans_decades():
    wide = svg.auto_axis("latency (us)", [900, 4000, 41000])
    assert (wide.scale, wide.lo, wide.hi) == ("log", 100, 1e5)
    assert wide.frac(100) == 0 and wide.frac(1e5) == 1
    assert wide.frac(1000) == pytest.approx(1 / 3)
    narrow = svg.auto_axis("IOPS", [995, 2016, 3097])
    assert (narrow.scale, narrow.lo, narrow.hi) == ("linear", 0, 4000)
    assert narrow.frac(2000) == pytest.approx(0.5)
    assert "log scale" in wide.title + wide.scale_note
    assert svg.size_label(4096) == "4 KiB" and svg.size_label(512) == "512 B"
    assert svg.si(2500) == "2.5k" and svg.si(0.5) == "0.5"


HOSTILE = ['<script>alert(1)</script>', ']]><x/>', '"onload="x', "a&b",
           "tab\there\x00nul\x1b[31m", "\ud800 lone surrogate"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_text_stays_text(name):
    chart = svg.rows_chart(name, svg.Axis(name, 0, 10), [
        svg.Row(name, 5.0, text=name, suspect=True),
        svg.Row(name, text=name)], notes=[name])
    root = ET.fromstring(chart)
    assert root.tag == NS + "svg"
    # No element came from the name: only the plotter's own.
    assert {e.tag[len(NS):] for e in root.iter()} <= {
        "svg", "title", "text", "path", "rect", "g", "defs", "pattern",
        "circle", "polygon"}
    texts = "".join(root.itertext())
    assert "script" not in {e.tag for e in root.iter()}
    if "\x00" not in name and "\ud800" not in name:
        assert name in texts
    line = svg.plot(name, svg.Axis(name, 1, 64, "log2"),
                    svg.Axis(name, 0, 10),
                    [svg.Series(name, svg.STYLES[0], [(1, 1), (64, 9)],
                                [(0.5, 2), None], tags=[name, name])])
    ET.fromstring(line)


def test_esc_escapes_markup_and_replaces_what_xml_forbids():
    assert svg.esc('<a href="x">&\'') == \
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    assert svg.esc("a\x00b\x1fc\td") == "a\ufffdb\ufffdc\td"


def test_a_plot_has_its_series_legend_and_axes():
    chart = svg.plot("T", svg.Axis("x (B)", 512, 16384, "log2",
                                   svg.size_label),
                     svg.Axis("y (us)", 0, 4000),
                     [svg.Series("aligned", svg.STYLES[0],
                                 [(512, 1600), (4096, 900)]),
                      svg.Series("misaligned", svg.STYLES[1],
                                 [(4096, 2900)], [(2500, 3300)],
                                 line=False)], notes=["a note"])
    root = ET.fromstring(chart)
    texts = list(root.itertext())
    for label in ("512 B", "16 KiB", "x (B), log scale", "y (us)",
                  "aligned", "misaligned", "a note", "4k"):
        assert label in texts
    classes = [e.get("class", "") for e in root.iter()]
    assert "ln s0" in classes          # the aligned line (and its legend)
    assert "ln s1" not in classes      # markers only, no line
    assert "eb s1" in classes          # its interval
    assert 'class="mk s1"' in chart    # its square markers


def test_every_style_differs_without_colour():
    dashes = [s.dash for s in svg.STYLES]
    markers = [s.marker for s in svg.STYLES]
    assert len(set(dashes)) == len(dashes)
    assert len(set(markers)) == len(markers)
    css = svg.class_css()
    for s in svg.STYLES[1:]:
        assert "stroke-dasharray:%s" % s.dash in css
