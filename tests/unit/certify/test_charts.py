# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify/charts.py: the text charts `results DISK` draws from a
record's evidence."""

from sdtune.certify.charts import bars, record_charts
from tests import builders


def arm(bs, lat, offset=0, pattern="seq"):
    return {"bs": bs, "offset": offset, "pattern": pattern, "flush": "none",
            "lat_median_ns": lat, "rounds": 128, "ios": 49299}


def qd(rw, depth, iops, p50=None, p99=None):
    return {"bs": 4096, "qd": depth, "rw": rw, "iops": iops,
            "lat_p50_ns": p50, "lat_p99_ns": p99}


EVIDENCE = {
    "device": {"nv_sup": False},
    "sector": {"size-512": arm(512, 240000.0),
               "size-4096": arm(4096, 60000.0),
               "size-4096-misaligned": arm(4096, 250000.0, offset=512),
               "rand-4096": arm(4096, 80000.0, pattern="rand"),
               "size-1024": arm(1024, 239000.0)},
    "cache": {"write_lat_ns": 53434.0, "write_flush_lat_ns": 114367.4},
    "queue_depth": {"qd-write-4": qd("write", 4, 40000.0, 90000, 450000),
                    "qd-write-1": qd("write", 1, 10000.0, 69887, 285695),
                    "qd-read-1": qd("read", 1, 14000.0)},
}


def test_bars_scale_to_the_largest_value():
    assert bars([("a", 10.0, "ten"), ("bb", 5.0, "five"),
                 ("c", 0.1, "small"), ("d", 0.0, "none")], width=10) == [
        "  a  ########## ten",
        "  bb #####      five",
        "  c  #          small",
        "  d             none"]
    assert bars([]) == []


def test_a_record_is_drawn_phase_by_phase():
    lines = record_charts(builders.cert_record(evidence=EVIDENCE))
    assert lines == [
        "cost per I/O by transfer size (median of the rounds):",
        "  512 B          " + "#" * 29 + "  240 us",
        "  1024 B         " + "#" * 29 + "  239 us",
        "  4096 B         " + "#" * 7 + " " * 23 + " 60 us",
        "  4096 B at +512 " + "#" * 30 + " 250 us",
        "  4096 B random  " + "#" * 10 + " " * 20 + " 80 us",
        "cache flush, 4 KiB sequential writes:",
        "  write         " + "#" * 14 + " " * 16 + " 53.4 us",
        "  write + flush " + "#" * 30 + " 114 us (2.14x a write)",
        "random 4 KiB writes by queue depth:",
        "  QD1 " + "#" * 8 + " " * 22 + " 10000 IOPS, p50 69.9 us, "
        "p99 286 us",
        "  QD4 " + "#" * 30 + " 40000 IOPS, p50 90 us, p99 450 us",
        "random 4 KiB reads by queue depth:",
        "  QD1 " + "#" * 30 + " 14000 IOPS"]


def test_the_steady_rate_is_drawn_where_the_record_has_it():
    step = dict(qd("write", 1, 9000.0), iops_steady=10000.0)
    evidence = {"queue_depth": {"qd-write-1": step,
                                "qd-write-2": qd("write", 2, 20000.0)}}
    assert record_charts(builders.cert_record(evidence=evidence)) == [
        "random 4 KiB writes by queue depth:",
        "  QD1 " + "#" * 15 + " " * 15 + " 10000 IOPS",
        "  QD2 " + "#" * 30 + " 20000 IOPS"]


def test_a_record_without_evidence_has_no_chart():
    assert record_charts(builders.cert_record()) == []
    odd = dict(EVIDENCE, sector={"size-512": "?"}, cache=[],
               queue_depth={"qd-write-1": qd("write", 1, True)})
    assert record_charts(builders.cert_record(evidence=odd)) == []
