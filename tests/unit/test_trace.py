"""`sdtune trace`: the printa()/quantize() parsers, the per-script
summaries, the D scripts themselves, and cmd_trace against a fake dtrace.

The fixtures are dtrace's output as libdtrace prints it.  One is written out
literally; the rest come from `printa_*()` below, which follow the format
strings of usr/src/lib/libdtrace/common/dt_consume.c line by line:
dt_print_aggs() prints each string key as "  %-50s" (dt_print_bytes()) and
a count()/sum()/max() value as " %16lld", then "\\n"; printa() starts with
"\\n"; dt_print_quantize() prints the header "\\n%16s %41s %-9s\\n", then
per bucket "%16lld " and the bar of dt_print_quantline(), zero buckets
trimmed except one on each side; dt_print_lquantize() labels its outer
buckets "< base" and ">= limit".  A literal fixture checks the emulation.
"""

import json
import os
import stat

import pytest

from sdtune import trace
from sdtune.errors import ParseError, SdtuneError, UsageError
from sdtune.host import RealHost

DTRACE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "dtrace")

# -- dt_consume.c, emulated ---------------------------------------------------

ZERO = 63                       # DTRACE_QUANTIZE_ZEROBUCKET
NBUCKETS = 127                  # DTRACE_QUANTIZE_NBUCKETS
DIST = "------------- Distribution -------------"


def bucketval(i):
    """DTRACE_QUANTIZE_BUCKETVAL()."""
    if i < ZERO:
        return -(1 << (ZERO - 1 - i))
    return 0 if i == ZERO else 1 << (i - ZERO - 1)


def keys_text(keys):
    return "".join("  %-50s" % k for k in keys)


def quantline(val, total, positives, negatives):
    """dt_print_quantline() with the default (ASCII) encoding."""
    if not negatives:
        depth = int(abs(val) * 40 / total + 0.5) if positives else 0
        return "|%s%s %-9d\n" % ("@" * depth, " " * (40 - depth), val)
    if not positives:
        depth = int(abs(val) * 40 / total + 0.5)
        return "%s%s| %-9d\n" % (" " * (40 - depth), "@" * depth, val)
    depth = int(abs(val) * 20 / total + 0.5)
    if val <= 0:
        return "%s%s|%20s %-9d\n" % (" " * (20 - depth), "@" * depth, "",
                                     val)
    return "%20s|%s%s %-9d\n" % ("", "@" * depth, " " * (20 - depth), val)


def rows_text(labels, data):
    first, last = 0, len(data) - 1
    while first < last and data[first] == 0:
        first += 1
    if first == last and data[first] == 0:
        return None
    if first > 0:
        first -= 1
    while last > 0 and data[last] == 0:
        last -= 1
    if last < len(data) - 1:
        last += 1
    span = data[first:last + 1]
    pos = any(v > 0 for v in span)
    neg = any(v < 0 for v in span)
    total = sum(abs(v) for v in span)
    out = "\n%16s %41s %-9s\n" % ("value", DIST, "count")
    for i in range(first, last + 1):
        out += labels[i] + " " + quantline(data[i], total, pos, neg)
    return out


def quantize_text(buckets):
    """dt_print_quantize() of {bucket value: count}."""
    data = [buckets.get(bucketval(i), 0) for i in range(NBUCKETS)]
    labels = ["%16d" % bucketval(i) for i in range(NBUCKETS)]
    text = rows_text(labels, data)
    if text is None:        # no data: the buckets around zero
        data = [0] * NBUCKETS
        text = "\n%16s %41s %-9s\n" % ("value", DIST, "count") + "".join(
            labels[i] + " " + quantline(0, 0, False, False)
            for i in (ZERO - 1, ZERO, ZERO + 1))
    return text


def lquantize_text(values, base, limit, step=1):
    """dt_print_lquantize() of {value: count} for lquantize(v, base, limit,
    step)."""
    levels = (limit - base) // step
    data = [0] * (levels + 2)
    for v, c in values.items():
        i = 0 if v < base else levels + 1 if v >= limit else \
            (v - base) // step + 1
        data[i] += c
    labels = ["%16s" % ("< %d" % base)] + \
        ["%16d" % (base + (i - 1) * step) for i in range(1, levels + 1)] + \
        ["%16s" % (">= %d" % (base + levels * step))]
    text = rows_text(labels, data)
    if text is None:
        text = "\n%16s %41s %-9s\n" % ("value", DIST, "count") + "".join(
            labels[i] + " " + quantline(0, 0, False, False)
            for i in (0, 1, 2))
    return text


def printa_values(entries):
    """printa() of a count()/sum()/max() aggregation."""
    return "\n" + "".join(keys_text(k) + " %16d\n" % v for k, v in entries)


def printa_dists(entries, render=quantize_text):
    """printa() of a quantize() aggregation: [(keys, buckets)]."""
    return "\n" + "".join(keys_text(k) + render(b) + "\n"
                          for k, b in entries)


def output(*sections, elapsed=10000412377):
    """A script's END output: markers, printa() texts, end line."""
    text = ""
    for name, body in sections:
        text += "sdtune-agg %s\n%s" % (name, body)
    return text + "sdtune-end %d\n" % elapsed


# -- a literal fixture --------------------------------------------------------

# `printa(@size)` with one entry, @size["sd3", "W"] = quantize(b_bcount),
# typed from the format strings; the key line's blanks are counted out
# because the lines end in them.
LITERAL = (
    "\n"
    "  sd3" + " " * 47 + "  W" + " " * 49 + "\n"
    "           value  ------------- Distribution ------------- count    \n"
    "            2048 |                                         0        \n"
    "            4096 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@         1724     \n"
    "            8192 |@@@@@@                                   310      \n"
    "           16384 |@@                                       98       \n"
    "           32768 |                                         0        \n"
    "\n"
)


def test_emulation_matches_literal_fixture():
    assert printa_dists([(("sd3", "W"),
                          {4096: 1724, 8192: 310, 16384: 98})]) == LITERAL


def test_parse_quantize_literal():
    (d,) = trace.parse_quantize(LITERAL)
    assert d.keys == ("sd3", "W")
    assert [(b.value, b.count) for b in d.buckets] == [
        (2048, 0), (4096, 1724), (8192, 310), (16384, 98), (32768, 0)]
    assert d.total == 2132


# -- parse_quantize -----------------------------------------------------------

IOSIZE = [
    (("sd3", "R"), {4096: 2210, 8192: 640, 16384: 122, 131072: 9}),
    (("sd3", "W"), {512: 88, 1024: 12, 4096: 18211, 8192: 3022,
                    131072: 410}),
    (("sd10", "W"), {512: 5000}),
]


def test_parse_quantize_several_devices_and_keys():
    dists = trace.parse_quantize(printa_dists(IOSIZE))
    assert [d.keys for d in dists] == [k for k, _ in IOSIZE]
    for d, (_, buckets) in zip(dists, IOSIZE):
        assert {b.value: b.count for b in d.buckets if b.count} == buckets
    # Zero buckets inside the data are printed, outside trimmed to one.
    sd3w = dists[1]
    assert [b.value for b in sd3w.buckets] == [
        256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
        262144]


def test_parse_quantize_single_bucket():
    (d,) = trace.parse_quantize(printa_dists([(("sd10", "W"),
                                               {512: 5000})]))
    assert [(b.value, b.count) for b in d.buckets] == [
        (256, 0), (512, 5000), (1024, 0)]
    assert "|@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 5000" in \
        printa_dists([(("sd10", "W"), {512: 5000})])


def test_parse_quantize_all_zero_distribution():
    """A cleared quantize() prints the buckets around zero, all 0."""
    text = printa_dists([(("sd3",), {})])
    assert "              -1 |" in text
    (d,) = trace.parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (-1, 0), (0, 0), (1, 0)]
    assert d.total == 0
    assert trace.percentile(d, 0.5) is None


def test_parse_quantize_negative_and_zero_buckets():
    """Values below, at and above zero: negative bucket labels."""
    text = printa_dists([(("delta",), {-4: 3, -1: 1, 0: 5, 2: 10, 8: 1})])
    assert "              -4 |@@@@@@    " in text
    (d,) = trace.parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (-8, 0), (-4, 3), (-2, 0), (-1, 1), (0, 5), (1, 0), (2, 10),
        (4, 0), (8, 1), (16, 0)]


def test_parse_quantize_positive_and_negative_counts():
    """quantize(x, incr) with both signs of incr: half bars left and
    right of a centre '|'."""
    text = printa_dists([(("sd3",), {0: -4, 4: 10, 8: -3})])
    assert "                    |@@@@@@@@@@@@" in text
    assert "               0                @@@@@|                     -4" \
        in text
    (d,) = trace.parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (-1, 0), (0, -4), (1, 0), (2, 0), (4, 10), (8, -3), (16, 0)]


def test_parse_quantize_negative_only_and_negative_counts():
    """quantize(x, -1) makes negative counts: bars left of '|'."""
    text = printa_dists([(("sd3",), {4: -7, 8: -2})])
    assert "%16d %s%s| %-9d" % (4, " " * 9, "@" * 31, -7) in text
    (d,) = trace.parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (2, 0), (4, -7), (8, -2), (16, 0)]


def test_parse_quantize_without_keys():
    text = printa_dists([((), {1048576: 4, 2097152: 40})])
    (d,) = trace.parse_quantize(text)
    assert d.keys == ()
    assert d.total == 44


def test_parse_quantize_lquantize_outer_rows():
    text = printa_dists([(("sd3",), {-1: 2, 1: 5, 2: 3, 12: 1})],
                        lambda v: lquantize_text(v, 0, 10))
    assert "%16s |" % "< 0" in text and "%16s |" % ">= 10" in text
    (d,) = trace.parse_quantize(text)
    assert d.buckets[0] == trace.Bucket(0, 2, "<")
    assert d.buckets[-1] == trace.Bucket(10, 1, ">=")
    assert trace.lquantize_step(d) == 1


def test_parse_quantize_empty_aggregation():
    assert trace.parse_quantize("\n") == []
    assert trace.parse_quantize("") == []


def test_parse_quantize_utf8_bars():
    text = LITERAL.replace("@", "\u2588")
    (d,) = trace.parse_quantize(text)
    assert d.total == 2132


@pytest.mark.parametrize("mangle, field", [
    # Cut in the middle of a row.
    (lambda t: t[:t.index("8192 |") + 10], "distribution row"),
    # Key line with no distribution after it.
    (lambda t: t[:t.index("           value")], "distribution header"),
    # A header and nothing else.
    (lambda t: t[:t.index("            2048")], "distribution row"),
    # Rows swapped.
    (lambda t: t.replace("            4096 |", "           65536 |"),
     "distribution row"),
    (lambda t: t.replace("1724", "17x4"), "distribution row"),
])
def test_parse_quantize_garbage(mangle, field):
    with pytest.raises(ParseError) as e:
        trace.parse_quantize(mangle(LITERAL), "dtrace -s sdtune-iosize.d")
    assert e.value.command == "dtrace -s sdtune-iosize.d"
    assert e.value.field == field
    assert "'dtrace -s sdtune-iosize.d'" in str(e.value)


# -- parse_printa -------------------------------------------------------------

def test_parse_printa_counts():
    text = printa_values([(("sd3",), 18211), (("sd10",), 312)])
    assert text.splitlines()[1] == "  sd3" + " " * 47 + "            18211"
    assert trace.parse_printa(text) == {("sd3",): 18211, ("sd10",): 312}


def test_parse_printa_multi_key_negative_and_unkeyed():
    text = printa_values([(("sd3", "W"), 75563008), (("sd3", "R"), -5)])
    assert trace.parse_printa(text) == {("sd3", "W"): 75563008,
                                        ("sd3", "R"): -5}
    assert trace.parse_printa(printa_values([((), 7)])) == {(): 7}


def test_parse_printa_empty_aggregation():
    assert trace.parse_printa(printa_values([])) == {}


def test_parse_printa_garbage():
    with pytest.raises(ParseError) as e:
        trace.parse_printa("\n  sd3     W\n", "dtrace -s sdtune-align.d")
    assert e.value.field == "aggregation value"
    assert "sdtune-align.d" in str(e.value)
    with pytest.raises(ParseError) as e:
        trace.parse_printa(printa_values([(("sd3",), 1), (("sd3",), 2)]))
    assert e.value.field == "aggregation key"


# -- sections and whole outputs -----------------------------------------------

def iosize_output():
    return output(("size", printa_dists(IOSIZE)),
                  ("bytes", printa_values([
                      (("sd3", "R"), 32587776), (("sd3", "W"), 160520192),
                      (("sd10", "W"), 2560000)])))


def test_split_sections():
    sections, elapsed = trace.split_sections(iosize_output())
    assert list(sections) == ["size", "bytes"]
    assert elapsed == 10000412377
    assert trace.parse_printa(sections["bytes"])[("sd10", "W")] == 2560000


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
        trace.parse_trace("iosize", mangle(iosize_output()))
    assert e.value.command == "dtrace -s sdtune-iosize.d"
    assert e.value.field == field


def test_truncated_output_names_command_and_field():
    text = iosize_output()
    with pytest.raises(ParseError) as e:
        trace.parse_trace("iosize", text[:text.index("16384 |")])
    assert str(e.value) == (
        "cannot parse 'dtrace -s sdtune-iosize.d' output: missing or bad "
        "field 'sdtune-end': missing: the output stops before the script's "
        "END clause finished (dtrace was stopped early or its output was "
        "cut)")


def test_missing_aggregation():
    text = output(("size", printa_dists(IOSIZE)))
    with pytest.raises(ParseError) as e:
        trace.parse_trace("iosize", text)
    assert e.value.field == "sdtune-agg bytes"


def test_summary_iosize():
    t = trace.parse_trace("iosize", iosize_output(), 10)
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
        trace.parse_trace("iosize", text)
    assert e.value.field == "size"


def align_output():
    return output(
        ("writes", printa_values([(("sd3",), 21743), (("sd4",), 900)])),
        ("sub4k", printa_values([(("sd4",), 0), (("sd3",), 100)])),
        ("misaligned", printa_values([(("sd4",), 0), (("sd3",), 37)])),
        ("rmw", printa_values([(("sd4",), 0), (("sd3",), 121)])))


def test_summary_align():
    t = trace.parse_trace("align", align_output(), 30)
    assert [d.to_json() for d in t.devices] == [
        {"device": "sd3", "writes": 21743, "sub_4k_writes": 100,
         "sub_4k_pct": 0.46, "misaligned_writes": 37,
         "misaligned_pct": 0.17, "rmw_writes": 121, "rmw_pct": 0.56},
        {"device": "sd4", "writes": 900, "sub_4k_writes": 0,
         "sub_4k_pct": 0.0, "misaligned_writes": 0, "misaligned_pct": 0.0,
         "rmw_writes": 0, "rmw_pct": 0.0}]


def test_summary_align_no_writes():
    t = trace.parse_trace("align", output(
        ("writes", "\n"), ("sub4k", "\n"), ("misaligned", "\n"),
        ("rmw", "\n")))
    assert t.devices == []


FLUSH_LAT = {
    "sd3": {524288: 12, 1048576: 220, 2097152: 730, 4194304: 38},
    "sd4": {16384: 50, 32768: 900, 65536: 50},
}


def flush_output():
    return output(
        ("calls", printa_values([(("sd4",), 1000), (("sd3",), 1000),
                                 (("sd5",), 2400)])),
        ("sent", printa_values([(("sd4",), 1000), (("sd3",), 1000)])),
        ("lat", printa_dists([(("sd4",), FLUSH_LAT["sd4"]),
                              (("sd3",), FLUSH_LAT["sd3"])])),
        ("latsum", printa_values([(("sd4",), 41250000),
                                  (("sd3",), 2460000000)])),
        ("latmax", printa_values([(("sd4",), 120000),
                                  (("sd3",), 7200000)])))


def test_summary_flush():
    t = trace.parse_trace("flush", flush_output(), 10)
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
    (d,) = trace.parse_quantize(printa_dists([(("x",), {1024: 100})]))
    assert trace.percentile(d, 0.5) == pytest.approx(1024 + 0.5 * 1023)
    assert trace.percentile(d, 1.0) == 2047


QDEPTH = {"sd3": {1: 400, 2: 900, 3: 1200, 4: 2500, 5: 30, 32: 1},
          "sd4": {1: 700}}


def qdepth_output():
    return output(
        ("depth", printa_dists([(("sd4",), QDEPTH["sd4"]),
                                (("sd3",), QDEPTH["sd3"])],
                               lambda v: lquantize_text(v, 0, 256))),
        ("ios", printa_values([(("sd4",), 700), (("sd3",), 5031)])),
        ("depthsum", printa_values([(("sd4",), 700), (("sd3",), 16382)])),
        ("deepest", printa_values([(("sd4",), 1), (("sd3",), 32)])))


def test_summary_qdepth():
    t = trace.parse_trace("qdepth", qdepth_output(), 10)
    sd3, sd4 = t.devices
    assert sd3.mean == pytest.approx(16382 / 5031)
    assert sd3.deepest == 32
    assert (sd3.p50, sd3.p99) == (4, 4)
    assert sd3.histogram[-1] == (32, 1)
    assert (sd4.ios, sd4.deepest, sd4.mean) == (700, 1, 1.0)
    assert sd4.to_json()["histogram"] == [{"outstanding": 1, "count": 700}]


def test_render_tables():
    t = trace.parse_trace("flush", flush_output(), 10)
    lines = trace.render_trace(t).splitlines()
    assert lines[0].split() == ["DEVICE", "CALLS", "SENT", "SUPPRESSED",
                                "MEAN", "P50", "P99", "MAX"]
    assert lines[1].split()[:5] == ["sd3", "1000", "1000", "0", "2.46ms"]
    assert lines[3].split() == ["sd5", "2400", "0", "2400", "-", "-", "-",
                                "-"]
    rows = trace.render_trace(trace.parse_trace("iosize", iosize_output()),
                              scripted=True, parsable=True).splitlines()
    assert rows[1].split("\t")[:5] == ["sd3", "W", "21743", "7382", "0.46"]
    assert "4K:2210" in trace.render_trace(
        trace.parse_trace("iosize", iosize_output()))


# -- the D scripts ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(trace.SCRIPTS))
def test_scripts_exist_with_pragma_usage_and_markers(name):
    path = os.path.join(DTRACE_DIR, trace.SCRIPTS[name])
    assert os.path.samefile(trace.script_path(name), path)
    with open(path) as f:
        text = f.read()
    assert text.startswith("#!/usr/sbin/dtrace -s\n/*\n")
    header = text[:text.index("*/")]
    assert "Usage" in header
    assert "dtrace -s %s [DEVNAME [SECONDS]]" % trace.SCRIPTS[name] in header
    assert "Probes" in header
    assert "#pragma D option quiet\n" in text
    assert "#pragma D option defaultargs\n" in text
    # The device filter, the time limit and nothing but tick-1sec.
    assert '$$1 == ""' in text and "$2 > 0" in text
    assert "exit(0);" in text
    body = text[text.index("*/"):]
    ticks = [w for w in body.split() if "tick-" in w]
    assert set(ticks) == {"profile:::tick-1sec"}
    # Every aggregation the parser expects is printed after its marker.
    end = text[text.index("\nEND\n"):]
    for agg in trace.SECTIONS[name]:
        assert 'printf("sdtune-agg %s\\n");\n\tprinta(@%s);' % (agg, agg) \
            in end
    assert 'printf("sdtune-end %d\\n", timestamp - sdtune_start);' in end
    # D has no // comments without the C preprocessor.
    assert not any(line.lstrip().startswith("//")
                   for line in text.splitlines())


def test_scripts_use_stable_io_provider_and_fbt_only_for_flush():
    for name, file in trace.SCRIPTS.items():
        with open(os.path.join(DTRACE_DIR, file)) as f:
            body = f.read().split("*/", 1)[1]
        if name == "flush":
            assert "fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry" in body
            assert "fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE_biodone:entry" \
                in body
            assert "io:::" not in body
        else:
            assert "io:::start" in body and "fbt" not in body


# -- cmd_trace through a fake dtrace ------------------------------------------

def fake_dtrace(tmp_path, stdout="", stderr="", status=0):
    """A dtrace that records its arguments and prints a fixture."""
    (tmp_path / "out.txt").write_text(stdout)
    (tmp_path / "err.txt").write_text(stderr)
    path = tmp_path / "dtrace"
    path.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do printf '%%s\\n' \"$a\"; done > '%s'\n"
        "cat '%s'\ncat '%s' >&2\nexit %d\n" % (
            tmp_path / "args.txt", tmp_path / "out.txt",
            tmp_path / "err.txt", status))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return RealHost(root=str(tmp_path), commands={"dtrace": str(path)})


def args_of(tmp_path):
    return (tmp_path / "args.txt").read_text().splitlines()


def test_cmd_trace_json(tmp_path, capsys):
    host = fake_dtrace(tmp_path, align_output(),
                       "dtrace: 3 dynamic variable drops\n")
    out = _Out()
    assert trace.cmd_trace(host, "align", "sd3", 5, out, True) == 0
    assert args_of(tmp_path) == ["-s", trace.script_path("align"), "sd3",
                                 "5"]
    doc = json.loads(out.text)
    assert doc["trace"] == "align" and doc["seconds"] == 5
    assert doc["devices"][0]["rmw_writes"] == 121
    assert doc["elapsed_ns"] == 10000412377
    assert doc["warnings"] == ["dtrace: 3 dynamic variable drops"]
    assert "warning: dtrace: 3 dynamic variable drops" in \
        capsys.readouterr().err


def test_cmd_trace_table_all_disks(tmp_path):
    host = fake_dtrace(tmp_path, qdepth_output())
    out = _Out()
    assert trace.cmd_trace(host, "qdepth", None, 10, out, False) == 0
    assert args_of(tmp_path)[2:] == ["all", "10"]
    lines = out.text.splitlines()
    assert lines[0].split() == ["DEVICE", "IOS", "MEAN", "P50", "P99",
                                "MAX"]
    assert lines[1].split()[:3] == ["sd3", "5031", "3.3"]


def test_cmd_trace_maps_ctd_name_to_sd_instance(tmp_path):
    host = fake_dtrace(tmp_path, iosize_output())
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "path_to_inst").write_text(
        '"/pci@0,0/pci15ad,1976@10/sd@0,0" 0 "sd"\n'
        '"/scsi_vhci/disk@g5000cca0496e6f8d" 10 "sd"\n')
    rdsk = tmp_path / "dev" / "rdsk"
    rdsk.mkdir(parents=True)
    os.symlink("../../devices/scsi_vhci/disk@g5000cca0496e6f8d:a,raw",
               str(rdsk / "c0t5000CCA0496E6F8Dd0s0"))
    os.symlink("../../devices/pci@0,0/pci15ad,1976@10/sd@0,0:a,raw",
               str(rdsk / "c1t0d0s0"))
    out = _Out()
    trace.cmd_trace(host, "iosize", "c0t5000CCA0496E6F8Dd0", 3, out, True)
    assert args_of(tmp_path)[2:] == ["sd10", "3"]
    trace.cmd_trace(host, "iosize", "/dev/rdsk/c1t0d0s0", 3, out, True)
    assert args_of(tmp_path)[2:] == ["sd0", "3"]
    with pytest.raises(UsageError):
        trace.cmd_trace(host, "iosize", "c9t9d9", 3, out, True)


@pytest.mark.parametrize("stderr, words", [
    ("dtrace: failed to initialize dtrace: DTrace requires additional "
     "privileges\n", "requires additional privileges: run sdtune as root"),
    ("dtrace: failed to compile script sdtune-flush.d: line 96: probe "
     "description fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry does not "
     "match any probes\n",
     "probe fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry does not match any "
     "probes on this kernel"),
    ("dtrace: failed to compile script sdtune-flush.d: line 99: un_sd is "
     "not a member of struct sd_ssc\n", "dtrace could not compile"),
    ("", "dtrace exited with status 1"),
])
def test_cmd_trace_dtrace_errors(tmp_path, stderr, words):
    host = fake_dtrace(tmp_path, "", stderr, 1)
    with pytest.raises(SdtuneError) as e:
        trace.cmd_trace(host, "flush", None, 1, _Out(), False)
    assert words in str(e.value)
    assert str(e.value).startswith("cannot trace 'flush': ")


def test_cmd_trace_dtrace_missing(tmp_path):
    host = RealHost(root=str(tmp_path),
                    commands={"dtrace": str(tmp_path / "no-dtrace")})
    with pytest.raises(SdtuneError) as e:
        trace.cmd_trace(host, "iosize", None, 1, _Out(), False)
    assert "DTrace is not available" in str(e.value)


def test_cmd_trace_cut_output_is_a_parse_error(tmp_path):
    text = flush_output()
    host = fake_dtrace(tmp_path, text[:text.index("sdtune-agg latsum")])
    with pytest.raises(ParseError) as e:
        trace.cmd_trace(host, "flush", "sd3", 2, _Out(), False)
    assert e.value.command == "dtrace -s sdtune-flush.d"
    assert e.value.field == "sdtune-end"


@pytest.mark.parametrize("name, disk, seconds", [
    ("iopattern", None, 5), ("iosize", "sd3x", 5), ("iosize", None, 0),
    ("iosize", None, -1), ("iosize", None, True),
])
def test_bad_arguments(tmp_path, name, disk, seconds):
    host = fake_dtrace(tmp_path, iosize_output())
    with pytest.raises(UsageError):
        trace.query_trace(host, name, disk, seconds)
    assert not (tmp_path / "args.txt").exists()


class _Out:
    """A text stream that is not a terminal."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s


def test_trace_through_the_command_line(tmp_path, capsys):
    """`sdtune trace` as wired in cli.py: the config's dtrace runs the
    script with the device and seconds, and the summary is printed."""
    from sdtune.cli import main
    host = fake_dtrace(tmp_path, align_output())
    conf = tmp_path / "trace.conf"
    conf.write_text("[commands]\ndtrace = %s\n" % host.commands["dtrace"])
    rc = main(["-R", str(tmp_path), "--config", str(conf), "trace", "align",
               "-d", "sd3", "-t", "5", "-o", "json"])
    assert rc == 0
    assert args_of(tmp_path) == ["-s", trace.script_path("align"), "sd3",
                                 "5"]
    doc = json.loads(capsys.readouterr().out)
    assert doc["trace"] == "align" and doc["devices"][0]["rmw_writes"] == 121
