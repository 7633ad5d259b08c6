# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the benchmark importers share: the limits beyond which a value is
not a measurement of a drive, size and number parsing with errors that
name the field, and the format names.

Every number is checked before it is used: a field of the wrong type,
text that is not a number, NaN, an infinity, a negative or zero latency
or block size is a ParseError naming the field (for fio its JSON path,
e.g. jobs[2].write.lat_ns.mean; for vdbench its line and column), never
a guess and never a verdict.  Pure.
"""

import json
import math
import re
from typing import Any, List, Optional

from ...errors import ParseError
from ...parsing import cut

# Beyond these a value is not a measurement of a drive, and it would
# overflow the statistics: an hour per I/O, a billion IOPS, 1 GiB per
# I/O, a million outstanding I/Os, a year of runtime.
MAX_LAT_NS = 3600e9
MAX_IOPS = 1e9
MAX_BS = 1 << 30
MAX_QD = 1 << 20
MAX_IOS = 1e15
MAX_RUNTIME_MS = 366 * 86400e3

FIO = "fio"
VDBENCH = "vdbench"

_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([kmgt]?)(?:i?b)?$", re.I)
_DECIMAL = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                      r"(?:[eE][+-]?[0-9]+)?$")
# A UTF-8 byte order mark as decoded text: editors put it before JSON.
BOM = "\ufeff"
# How many unusable runs a refusal names, and how much of each: the
# message stays a few lines whatever the file holds.
MAX_NOTES = 12
MAX_NOTE = 300


def parse_size(text: str) -> Optional[int]:
    """vdbench/fio sizes: 512, 4k, 4K, 1m, 4096B, 4KiB, 512.0; None when
    the text is not a whole number of bytes."""
    m = _SIZE.match(text.strip())
    if not m:
        return None
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30,
            "t": 1 << 40}[m.group(2).lower()]
    value = float(m.group(1)) * mult
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def listing(notes: List[str], what: str) -> str:
    """Notes ("RD=rd1: 50 % reads") joined for a refusal, at most
    MAX_NOTES of them, each cut at MAX_NOTE characters; what names the
    ones left out ("runs")."""
    shown = [cut(note, MAX_NOTE) for note in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        shown.append("and %d more %s" % (len(notes) - MAX_NOTES, what))
    return "; ".join(shown)


def show(value: Any) -> str:
    """A value as it appears in an error message: short, one line, and
    named by its JSON type when it is not a scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return json.dumps(value[:40]) + ("..." if len(value) > 40 else "")
    if isinstance(value, float):
        return json.dumps(value)        # Infinity, NaN as JSON spells them
    text = str(value)
    return text if len(text) <= 24 else text[:20] + "..."


def number(value: Any, tool: str, field: str, high: float,
           zero_ok: bool = False, whole: bool = False) -> float:
    """A measured or configured value: a finite number in (0, high], or
    [0, high] when zero_ok, and a whole number when whole.  JSON numbers
    and decimal text (vdbench columns, fio options) are accepted;
    anything else is a ParseError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(tool, field, "not a number: %s" % show(value))
    if isinstance(value, str) and not _DECIMAL.match(value.strip()):
        finite = value.strip().lstrip("+-").lower() not in (
            "inf", "infinity", "nan")
        raise ParseError(tool, field, "not a %snumber: %s"
                         % ("" if finite else "finite ", show(value)))
    try:
        out = float(value)
    except OverflowError:
        raise ParseError(tool, field, "out of range: %s" % show(value)) \
            from None
    if not math.isfinite(out):
        raise ParseError(tool, field, "not a finite number: %s"
                         % show(value))
    if out < 0:
        raise ParseError(tool, field, "cannot be negative: %s"
                         % show(value))
    if out == 0 and not zero_ok:
        raise ParseError(tool, field, "must be above 0, not %s"
                         % show(value))
    if out > high:
        raise ParseError(tool, field, "%s is out of range (at most %s)"
                         % (show(value), "%d" % high if high < 1e18
                            else "%g" % high))
    if whole and out != int(out):
        raise ParseError(tool, field, "not a whole number: %s" % show(value))
    return out
