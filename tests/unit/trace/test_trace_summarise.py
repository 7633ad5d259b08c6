# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune.trace.summarise and sdtune.trace.result: a script's whole
output, emulated by dtrace_output.py, to its summary; cut or mangled
output to a ParseError that names the command and the field."""

import pytest

from sdtune.errors import ParseError
from sdtune.trace.parse import parse_quantize
from sdtune.trace.result import parse_trace
from sdtune.trace.summarise import percentile

from dtrace_output import (IOSIZE, align_output, flush_output,
                           iosize_output, output, printa_dists,
                           qdepth_output)


# -- whole outputs ------------------------------------------------------------

@pytest.mark.parametrize("mangle, field", [
    (lambda t: t[:t.index("sdtune-end")], "sdtune-end"),
    (lambda t: t[:t.index("sdtune-agg bytes")], "sdtune-end"),
    (lambda t: "garbage\n" + t, "sdtune-agg"),
    (lambda t: t.replace("sdtune-end 10000412377", "sdtune-end soon"),
     "sdtune-end"),
    (lambda t: t.replace("sdtune-agg bytes", "sdtune-agg size"),
     "sdtune-agg"),
])
def test_split_sections_garbage(mangle, field):
    with pytest.raises(ParseError) as e:
        parse_trace("iosize", mangle(iosize_output()))
    assert e.value.command == "dtrace -s sdtune-iosize.d"
    assert e.value.field == field


def test_truncated_output_names_command_and_field():
    text = iosize_output()
    with pytest.raises(ParseError) as e:
        parse_trace("iosize", text[:text.index("16384 |")])
    assert str(e.value) == (
        "cannot parse 'dtrace -s sdtune-iosize.d' output: missing or bad "
        "field 'sdtune-end': missing: the output stops before the script's "
        "END clause finished (dtrace was stopped early or its output was "
        "cut)")


def test_missing_aggregation():
    text = output(("size", printa_dists(IOSIZE)))
    with pytest.raises(ParseError) as e:
        parse_trace("iosize", text)
    assert e.value.field == "sdtune-agg bytes"


# -- the per-script summaries -------------------------------------------------

def test_summary_iosize():
    t = parse_trace("iosize", iosize_output(), 10)
    assert [d.device for d in t.devices] == ["sd3", "sd10"]
    sd3 = t.devices[0]
    assert sd3.read.ios == 2981 and sd3.read.below_4k == 0
    assert sd3.write.ios == 21743
    assert sd3.write.below_4k == 100            # 88 x 512 + 12 x 1024
    assert sd3.write.histogram[0] == (512, 88)
    assert t.devices[1].read is None
    j = t.to_json()
    assert j["trace"] == "iosize" and j["seconds"] == 10
    assert j["devices"][1] == {
        "device": "sd10", "read": None,
        "write": {"ios": 5000, "bytes": 2560000, "mean_bytes": 512,
                  "below_4k_ios": 5000, "below_4k_pct": 100.0,
                  "histogram": [{"bucket_bytes": 512, "count": 5000}]}}
    assert j["devices"][0]["write"]["below_4k_pct"] == 0.46


def test_summary_iosize_rejects_non_quantize_buckets():
    text = iosize_output().replace("            4096 |", "            4000 |")
    with pytest.raises(ParseError) as e:
        parse_trace("iosize", text)
    assert e.value.field == "size"


def test_summary_align():
    t = parse_trace("align", align_output(), 30)
    assert [d.to_json() for d in t.devices] == [
        {"device": "sd3", "writes": 21743, "sub_4k_writes": 100,
         "sub_4k_pct": 0.46, "misaligned_writes": 37,
         "misaligned_pct": 0.17, "rmw_writes": 121, "rmw_pct": 0.56},
        {"device": "sd4", "writes": 900, "sub_4k_writes": 0,
         "sub_4k_pct": 0.0, "misaligned_writes": 0, "misaligned_pct": 0.0,
         "rmw_writes": 0, "rmw_pct": 0.0}]


def test_summary_align_no_writes():
    t = parse_trace("align", output(
        ("writes", "\n"), ("sub4k", "\n"), ("misaligned", "\n"),
        ("rmw", "\n")))
    assert t.devices == []


def test_summary_flush():
    t = parse_trace("flush", flush_output(), 10)
    sd3, sd4, sd5 = t.devices
    assert (sd3.calls, sd3.sent, sd3.suppressed) == (1000, 1000, 0)
    assert sd3.mean_ns == 2460000
    assert sd3.max_ns == 7200000
    # The median is in the 2 ms bucket [2097152, 4194304).
    assert 2097152 <= sd3.p50_ns < 4194304
    assert 4194304 <= sd3.p99_ns < 8388608
    assert 32768 <= sd4.p50_ns < 65536
    # sd5 has cache-nonvolatile set: every flush suppressed by sd.
    assert (sd5.calls, sd5.sent, sd5.suppressed) == (2400, 0, 2400)
    assert sd5.to_json()["mean_ns"] is None
    assert sd5.to_json()["histogram"] == []


def test_percentile_interpolates_inside_bucket():
    (d,) = parse_quantize(printa_dists([(("x",), {1024: 100})]))
    assert percentile(d, 0.5) == pytest.approx(1024 + 0.5 * 1023)
    assert percentile(d, 1.0) == 2047


def test_summary_qdepth():
    t = parse_trace("qdepth", qdepth_output(), 10)
    sd3, sd4 = t.devices
    assert sd3.mean == pytest.approx(16382 / 5031)
    assert sd3.deepest == 32
    assert (sd3.p50, sd3.p99) == (4, 4)
    assert sd3.histogram[-1] == (32, 1)
    assert (sd4.ios, sd4.deepest, sd4.mean) == (700, 1, 1.0)
    assert sd4.to_json()["histogram"] == [{"outstanding": 1, "count": 700}]
