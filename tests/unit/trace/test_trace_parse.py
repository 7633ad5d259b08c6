# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune.trace.parse: the printa()/quantize() parsers and the
`sdtune-agg` markers, on dtrace output emulated by dtrace_output.py."""

import pytest

from sdtune.errors import ParseError
from sdtune.trace.parse import (Bucket, parse_printa, parse_quantize,
                                split_sections)
from sdtune.trace.summarise import lquantize_step, percentile

from dtrace_output import (IOSIZE, LITERAL, iosize_output, lquantize_text,
                           printa_dists, printa_values)


# -- the emulation against a literal fixture ----------------------------------

def test_emulation_matches_literal_fixture():
    assert printa_dists([(("sd3", "W"),
                          {4096: 1724, 8192: 310, 16384: 98})]) == LITERAL


def test_parse_quantize_literal():
    (d,) = parse_quantize(LITERAL)
    assert d.keys == ("sd3", "W")
    assert [(b.value, b.count) for b in d.buckets] == [
        (2048, 0), (4096, 1724), (8192, 310), (16384, 98), (32768, 0)]
    assert d.total == 2132


# -- parse_quantize -----------------------------------------------------------

def test_parse_quantize_several_devices_and_keys():
    dists = parse_quantize(printa_dists(IOSIZE))
    assert [d.keys for d in dists] == [k for k, _ in IOSIZE]
    for d, (_, buckets) in zip(dists, IOSIZE):
        assert {b.value: b.count for b in d.buckets if b.count} == buckets
    # Zero buckets inside the data are printed, outside trimmed to one.
    sd3w = dists[1]
    assert [b.value for b in sd3w.buckets] == [
        256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
        262144]


def test_parse_quantize_single_bucket():
    (d,) = parse_quantize(printa_dists([(("sd10", "W"),
                                         {512: 5000})]))
    assert [(b.value, b.count) for b in d.buckets] == [
        (256, 0), (512, 5000), (1024, 0)]
    assert "|@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 5000" in \
        printa_dists([(("sd10", "W"), {512: 5000})])


def test_parse_quantize_all_zero_distribution():
    """A cleared quantize() prints the buckets around zero, all 0."""
    text = printa_dists([(("sd3",), {})])
    assert "              -1 |" in text
    (d,) = parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (-1, 0), (0, 0), (1, 0)]
    assert d.total == 0
    assert percentile(d, 0.5) is None


def test_parse_quantize_negative_and_zero_buckets():
    """Values below, at and above zero: negative bucket labels."""
    text = printa_dists([(("delta",), {-4: 3, -1: 1, 0: 5, 2: 10, 8: 1})])
    assert "              -4 |@@@@@@    " in text
    (d,) = parse_quantize(text)
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
    (d,) = parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (-1, 0), (0, -4), (1, 0), (2, 0), (4, 10), (8, -3), (16, 0)]


def test_parse_quantize_negative_only_and_negative_counts():
    """quantize(x, -1) makes negative counts: bars left of '|'."""
    text = printa_dists([(("sd3",), {4: -7, 8: -2})])
    assert "%16d %s%s| %-9d" % (4, " " * 9, "@" * 31, -7) in text
    (d,) = parse_quantize(text)
    assert [(b.value, b.count) for b in d.buckets] == [
        (2, 0), (4, -7), (8, -2), (16, 0)]


def test_parse_quantize_without_keys():
    text = printa_dists([((), {1048576: 4, 2097152: 40})])
    (d,) = parse_quantize(text)
    assert d.keys == ()
    assert d.total == 44


def test_parse_quantize_lquantize_outer_rows():
    text = printa_dists([(("sd3",), {-1: 2, 1: 5, 2: 3, 12: 1})],
                        lambda v: lquantize_text(v, 0, 10))
    assert "%16s |" % "< 0" in text and "%16s |" % ">= 10" in text
    (d,) = parse_quantize(text)
    assert d.buckets[0] == Bucket(0, 2, "<")
    assert d.buckets[-1] == Bucket(10, 1, ">=")
    assert lquantize_step(d) == 1


def test_parse_quantize_empty_aggregation():
    assert parse_quantize("\n") == []
    assert parse_quantize("") == []


def test_parse_quantize_utf8_bars():
    text = LITERAL.replace("@", "\u2588")
    (d,) = parse_quantize(text)
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
        parse_quantize(mangle(LITERAL), "dtrace -s sdtune-iosize.d")
    assert e.value.command == "dtrace -s sdtune-iosize.d"
    assert e.value.field == field
    assert "'dtrace -s sdtune-iosize.d'" in str(e.value)


# -- parse_printa -------------------------------------------------------------

def test_parse_printa_counts():
    text = printa_values([(("sd3",), 18211), (("sd10",), 312)])
    assert text.splitlines()[1] == "  sd3" + " " * 47 + "            18211"
    assert parse_printa(text) == {("sd3",): 18211, ("sd10",): 312}


def test_parse_printa_multi_key_negative_and_unkeyed():
    text = printa_values([(("sd3", "W"), 75563008), (("sd3", "R"), -5)])
    assert parse_printa(text) == {("sd3", "W"): 75563008,
                                  ("sd3", "R"): -5}
    assert parse_printa(printa_values([((), 7)])) == {(): 7}


def test_parse_printa_empty_aggregation():
    assert parse_printa(printa_values([])) == {}


def test_parse_printa_garbage():
    with pytest.raises(ParseError) as e:
        parse_printa("\n  sd3     W\n", "dtrace -s sdtune-align.d")
    assert e.value.field == "aggregation value"
    assert "sdtune-align.d" in str(e.value)
    with pytest.raises(ParseError) as e:
        parse_printa(printa_values([(("sd3",), 1), (("sd3",), 2)]))
    assert e.value.field == "aggregation key"


# -- split_sections -----------------------------------------------------------

def test_split_sections():
    sections, elapsed = split_sections(iosize_output())
    assert list(sections) == ["size", "bytes"]
    assert elapsed == 10000412377
    assert parse_printa(sections["bytes"])[("sd10", "W")] == 2560000
