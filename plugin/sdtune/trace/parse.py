# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pure parsers of what the D scripts of dtrace/ print: text in, typed
values out, a ParseError naming the command, the field and (where the text
still has lines) the line on anything else.

A script's END clause writes `sdtune-agg NAME` before each printa() and
`sdtune-end NS` last (split_sections()).  Between the markers is
libdtrace's own printa() output, in the formats of
usr/src/lib/libdtrace/common/dt_consume.c: quantize()/lquantize()
distributions (parse_quantize()) or one number per key (parse_printa()).
"""

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import ParseError

# dt_print_quanthdr(): "\n%16s %41s %-9s\n" with "value", the 40-column
# "------------- Distribution -------------" and "count".
_HEADER = re.compile(r"^ +value +-+ Distribution -+ +count *$")
# One row: "%16lld " (lquantize/llquantize: "%16s " of "< N" or ">= N"),
# the bar ("|@@@ ", or bars left of "|" for negative values), then
# " %-9lld".  The bar may hold UTF-8 blocks with -x encoding=utf8.
_ROW = re.compile(r"^ *(-?[0-9]+|< -?[0-9]+|>= -?[0-9]+) "
                  r"([^|0-9]*\|[^|0-9]*) (-?[0-9]+) *$")
_MARK = "sdtune-agg "
_END = re.compile(r"^sdtune-end ([0-9]+)$")


@dataclass(frozen=True)
class Bucket:
    """One printed row of a quantize()/lquantize() distribution."""

    value: int          # the row's label: the bucket's lower bound
    count: int
    bound: str = ""     # "<" or ">=" for lquantize's outer rows


@dataclass(frozen=True)
class Distribution:
    """One entry of a quantize()/lquantize() aggregation: keys and rows."""

    keys: Tuple[str, ...]
    buckets: Tuple[Bucket, ...]

    @property
    def total(self) -> int:
        return sum(b.count for b in self.buckets)


def _bucket(m: "re.Match[str]") -> Bucket:
    label = m.group(1)
    count = int(m.group(3))
    if label.startswith(">="):
        return Bucket(int(label[2:]), count, ">=")
    if label.startswith("<"):
        return Bucket(int(label[1:]), count, "<")
    return Bucket(int(label), count)


def _check_rows(buckets: Sequence[Bucket], command: str, lineno: int) -> None:
    """Rows come in increasing order, "<" only first, ">=" only last:
    anything else is not one distribution."""
    for i, b in enumerate(buckets):
        if (b.bound == "<" and i != 0) or \
                (b.bound == ">=" and i != len(buckets) - 1):
            raise ParseError(command, "distribution row", "line %d: '%s %d' "
                             "row in the middle of a distribution"
                             % (lineno, b.bound, b.value))
        if i and b.bound == "" and buckets[i - 1].bound == "" and \
                b.value <= buckets[i - 1].value:
            raise ParseError(command, "distribution row", "line %d: bucket "
                             "%d after %d: rows out of order"
                             % (lineno, b.value, buckets[i - 1].value))


def parse_quantize(text: str, command: str = "dtrace") -> List[Distribution]:
    """Every quantize()/lquantize() entry printed by printa(), in order.

    Sample (printa(@size) of @size[statname, dir] = quantize(bytes): the
    key line holds each key as "  %-50s", the rows are "%16lld |<bar>
    %-9lld", zero rows are trimmed except one before and one after the
    data, and an entry ends with an empty line):

          sd3                                                 W
                   value  ------------- Distribution ------------- count
                    2048 |                                         0
                    4096 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@         1724
                    8192 |@@@@@@                                   310
                   16384 |@@                                       98
                   32768 |                                         0

    (the key line ends where the header's leading newline starts; an
    entry without keys has an empty line there).  Keys are split at
    blanks, so they must not contain any: statnames and R/W do not.
    """
    lines = text.splitlines()
    found: List[Distribution] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        keys: Tuple[str, ...] = ()
        if not _HEADER.match(line):
            if i + 1 >= len(lines) or not _HEADER.match(lines[i + 1]):
                raise ParseError(command, "distribution header",
                                 "line %d: %r is not followed by a "
                                 "distribution (output cut short?)"
                                 % (i + 1, line.strip()[:60]))
            keys = tuple(line.split())
            i += 1
        start = i + 1
        i += 1
        buckets: List[Bucket] = []
        while i < len(lines) and lines[i].strip():
            m = _ROW.match(lines[i])
            if not m:
                raise ParseError(command, "distribution row",
                                 "line %d: unreadable row %r"
                                 % (i + 1, lines[i].strip()[:60]))
            buckets.append(_bucket(m))
            i += 1
        if not buckets:
            raise ParseError(command, "distribution row", "line %d: "
                             "distribution without rows (output cut short?)"
                             % start)
        _check_rows(buckets, command, start)
        found.append(Distribution(keys, tuple(buckets)))
    return found


def parse_printa(text: str,
                 command: str = "dtrace") -> Dict[Tuple[str, ...], int]:
    """Keys → value of one printa() of a count()/sum()/max()/min()/avg()
    aggregation.

    Sample (printa(@writes) of @writes[statname] = count(): a leading
    empty line, then per entry each key as "  %-50s" and the value as
    " %16lld"):

        <empty line>
          sd3                                                          18211
          sd4                                                            312

    An aggregation that never fired prints only the empty line: {}.
    """
    values: Dict[Tuple[str, ...], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        try:
            value = int(words[-1])
        except ValueError:
            raise ParseError(command, "aggregation value", "line %d: %r "
                             "does not end with a number"
                             % (n, line.strip()[:60])) from None
        keys = tuple(words[:-1])
        if keys in values:
            raise ParseError(command, "aggregation key", "line %d: key %s "
                             "printed twice" % (n, " ".join(keys)))
        values[keys] = value
    return values


def split_sections(text: str,
                   command: str = "dtrace") -> Tuple[Dict[str, str], int]:
    """The text after each `sdtune-agg NAME` marker, and the nanoseconds of
    the closing `sdtune-end NS` line.

    Sample (the END clause of sdtune-align.d):

        sdtune-agg writes

          sd3                                                          18211
        sdtune-agg sub4k
        ...
        sdtune-end 10000412377

    Whatever dtrace prints after the end line is ignored.
    """
    sections: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(_MARK):
            name = line[len(_MARK):].strip()
            if not name or name in sections:
                raise ParseError(command, "sdtune-agg", "line %d: bad or "
                                 "repeated marker %r" % (n, line[:60]))
            sections[name] = []
            current = name
            continue
        if line.startswith("sdtune-end"):
            m = _END.match(line.strip())
            if not m:
                raise ParseError(command, "sdtune-end", "line %d: %r"
                                 % (n, line[:60]))
            return ({k: "\n".join(v) + "\n" for k, v in sections.items()},
                    int(m.group(1)))
        if current is None:
            if line.strip():
                raise ParseError(command, "sdtune-agg", "line %d: %r before "
                                 "the first aggregation" % (n, line[:60]))
            continue
        sections[current].append(line)
    raise ParseError(command, "sdtune-end", "missing: the output stops "
                     "before the script's END clause finished (dtrace was "
                     "stopped early or its output was cut)")
