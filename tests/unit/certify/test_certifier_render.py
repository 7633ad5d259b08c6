# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify's verdict text: the queue-depth phase's latency percentiles,
one line per direction, from the steps a record stores."""

from sdtune.certify.certifier import render_verdict
from sdtune.certify.charts import queue_latency_lines
from tests import builders


def step(rw, qd, p50, p99, p999):
    return {"bs": 4096, "qd": qd, "rw": rw, "iops": 1000.0 * qd,
            "lat_p50_ns": p50, "lat_p99_ns": p99, "lat_p99_9_ns": p999}


def record(**steps):
    return builders.cert_record(target="c1t1d0", evidence={
        "device": {"nv_sup": False}, "queue_depth": steps})


def test_each_direction_has_its_percentiles_by_depth():
    rec = record(**{
        "qd-write-4": step("write", 4, 250000, 1200000, 4000000),
        "qd-write-1": step("write", 1, 62500, 81234, 95000),
        "qd-read-1": step("read", 1, 40100, 52000, 61000)})
    assert queue_latency_lines(rec) == [
        "  write latency: p50/p99/p99.9 us: QD1 62.5/81.2/95, "
        "QD4 250/1200/4000",
        "  read latency:  p50/p99/p99.9 us: QD1 40.1/52/61"]
    text = render_verdict(rec)
    assert text.index("  queue depth:") < text.index("  write latency:") \
        < text.index("  recommended:")


def test_steps_without_percentiles_say_nothing():
    old = step("write", 1, None, None, None)
    assert queue_latency_lines(record(**{"qd-write-1": old})) == []
    assert queue_latency_lines(builders.cert_record()) == []
    assert "latency:" not in render_verdict(builders.cert_record(
        target="f"))
