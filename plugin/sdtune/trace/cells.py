# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pure text of one table cell of `sdtune trace`: for people (the default)
or, with -p (parsable), plain numbers in bytes, nanoseconds and percent.
A value the trace could not measure is "-".
"""

from typing import Callable, List, Optional, Tuple

from .summarise import percent


def percent_text(part: int, whole: int, parsable: bool) -> str:
    value = percent(part, whole)
    if value is None:
        return "-"
    return "%.2f" % value if parsable else "%.1f%%" % value


def ns_text(value: Optional[float], parsable: bool) -> str:
    if value is None:
        return "-"
    if parsable:
        return str(int(round(value)))
    if value < 1e3:
        return "%dns" % value
    if value < 1e6:
        return "%.1fus" % (value / 1e3)
    if value < 1e9:
        return "%.2fms" % (value / 1e6)
    return "%.2fs" % (value / 1e9)


def number_text(value: Optional[float], parsable: bool) -> str:
    if value is None:
        return "-"
    return ("%.4g" if parsable else "%.1f") % value


def size_label(value: int) -> str:
    """A histogram bucket's size: 4K, 1M, or bytes when not a whole unit."""
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return "%d%s" % (value >> shift, unit)
    return str(value)


def histogram_text(hist: List[Tuple[int, int]],
                   label: Callable[[int], str] = str) -> str:
    return " ".join("%s:%d" % (label(v), c) for v, c in hist) or "-"
