# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""records/series.py: the one walk of a record's evidence that the text
charts and the SVG charts share."""

import xml.etree.ElementTree as ET

from sdtune.records import series
from sdtune.report import charts
from tests import builders, reportdata


def test_sector_arms_in_chart_order_with_their_kind():
    arms = series.sector_arms(reportdata.demo_records()[1])
    assert [(a.label, a.kind) for a in arms] == [
        ("512 B", "aligned"), ("1024 B", "aligned"), ("2048 B", "aligned"),
        ("4096 B", "aligned"), ("8192 B", "aligned"),
        ("16384 B", "aligned"), ("4096 B at +512", "misaligned"),
        ("512 B random", "random"), ("4096 B random", "random")]
    assert all(a.ci95_ns is None for a in arms)


def test_an_arm_interval_is_drawn_where_the_record_keeps_one():
    arm = {"bs": 4096, "offset": 0, "pattern": "seq", "flush": "none",
           "lat_median_ns": 900000.0, "lat_ci95_ns": [850000.0, 990000.0],
           "rounds": 8}
    bad = dict(arm, bs=8192, lat_ci95_ns=[2.0, 1.0])
    rec = builders.cert_record(evidence={"sector": {"size-4096": arm,
                                                    "size-8192": bad}})
    arms = series.sector_arms(rec)
    assert arms[0].ci95_ns == (850000.0, 990000.0)
    assert arms[1].ci95_ns is None
    chart = charts.cost_chart(rec)
    ET.fromstring(chart)
    assert chart.count('class="eb s0"') == 1
    assert "keeps no interval" not in chart


def test_steps_by_depth_with_the_steady_rate_and_percentiles():
    steps = series.queue_steps(reportdata.demo_records()[0], "write")
    assert [s.qd for s in steps] == [1, 2, 4, 8, 16, 32, 64]
    first = steps[0]
    assert first.iops == 990.0 and first.p50_ns and first.p99_9_ns
    assert series.queue_steps(builders.cert_record(), "read") == []


def test_what_is_not_a_measurement_gives_no_point():
    assert [series.number(v) for v in (True, "1", float("nan"), -1.0,
                                       float("inf"), 0, 2)] == \
        [None, None, None, None, None, 0.0, 2.0]
    rec = builders.cert_record(evidence={"cache": {"write_lat_ns": "x",
                                                   "write_flush_lat_ns": 1}})
    assert series.flush(rec) is None


def test_the_unit_figure_is_the_cross_checks():
    rec = reportdata.shelf_records(3)[0]
    value, what = series.unit_figure(rec, 4096)
    assert what == "QD1 4 KiB random write IOPS"
    assert value == rec.evidence["queue_depth"]["qd-write-1"]["iops"]
