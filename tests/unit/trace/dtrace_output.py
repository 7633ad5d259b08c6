# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""dtrace's output as libdtrace prints it, for the tests of sdtune.trace.

One fixture (LITERAL) is written out literally; the rest come from the
`printa_*()` functions below, which follow the format strings of
usr/src/lib/libdtrace/common/dt_consume.c line by line: dt_print_aggs()
prints each string key as "  %-50s" (dt_print_bytes()) and a
count()/sum()/max() value as " %16lld", then "\\n"; printa() starts with
"\\n"; dt_print_quantize() prints the header "\\n%16s %41s %-9s\\n", then
per bucket "%16lld " and the bar of dt_print_quantline(), zero buckets
trimmed except one on each side; dt_print_lquantize() labels its outer
buckets "< base" and ">= limit".  test_trace_parse.py checks the emulation
against the literal fixture.

The test modules beside this file import it by its bare name: tests/ has
no __init__.py, so pytest puts each test module's own directory on
sys.path.
"""


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


# -- whole outputs of the scripts ---------------------------------------------

IOSIZE = [
    (("sd3", "R"), {4096: 2210, 8192: 640, 16384: 122, 131072: 9}),
    (("sd3", "W"), {512: 88, 1024: 12, 4096: 18211, 8192: 3022,
                    131072: 410}),
    (("sd10", "W"), {512: 5000}),
]


def iosize_output():
    return output(("size", printa_dists(IOSIZE)),
                  ("bytes", printa_values([
                      (("sd3", "R"), 32587776), (("sd3", "W"), 160520192),
                      (("sd10", "W"), 2560000)])))


def align_output():
    return output(
        ("writes", printa_values([(("sd3",), 21743), (("sd4",), 900)])),
        ("sub4k", printa_values([(("sd4",), 0), (("sd3",), 100)])),
        ("misaligned", printa_values([(("sd4",), 0), (("sd3",), 37)])),
        ("rmw", printa_values([(("sd4",), 0), (("sd3",), 121)])))


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
