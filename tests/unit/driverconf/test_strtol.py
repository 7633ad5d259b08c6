# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.driverconf.strtol: ddi_strtol() as sd reads its
tunables (facts §3.4) and ddi_strtoul() as nvme reads
min-phys-block-size."""

import pytest

from sdtune.driverconf.strtol import LONG_MAX, ddi_strtol, ddi_strtoul


# -- ddi_strtol ---------------------------------------------------------------

@pytest.mark.parametrize("text,value,rest", [
    ("4096", 4096, ""),
    ("0x1000", 4096, ""),
    ("0X1000", 4096, ""),
    ("0xFf", 255, ""),
    ("0x", 0, "x"),                  # no hex digit: the 0 alone
    ("0xg", 0, "xg"),
    ("04096", 32, "96"),             # octal 040
    ("010", 8, ""),
    ("0", 0, ""),
    ("08", 0, "8"),
    ("-5", -5, ""),
    ("+5", 5, ""),
    ("-0x10", -16, ""),
    ("4096abc", 4096, "abc"),
    ("4k", 4, "k"),
    ("32 junk", 32, " junk"),
    (" \t\n\r\f12", 12, ""),         # the kernel's isspace()
    ("9223372036854775807", LONG_MAX, ""),
    ("-9223372036854775808", -LONG_MAX - 1, ""),
    ("0x7fffffffffffffff", LONG_MAX, ""),
])
def test_ddi_strtol_values(text, value, rest):
    assert ddi_strtol(text) == (value, rest)


@pytest.mark.parametrize("text", ["", "abc", "x10", "-", "+", "--5", "+-5",
                                  "- 5", " ", "true", "\v12", "\u00b2"])
def test_ddi_strtol_no_digits_is_invalid(text):
    assert ddi_strtol(text)[0] is None


@pytest.mark.parametrize("text", ["9223372036854775808",
                                  "-9223372036854775809",
                                  "0x8000000000000000",
                                  "99999999999999999999999",
                                  "01000000000000000000000"])
def test_ddi_strtol_overflow_of_a_64_bit_long_is_invalid(text):
    assert ddi_strtol(text) == (None, "out of range")


# -- ddi_strtoul --------------------------------------------------------------

def test_ddi_strtoul():
    assert ddi_strtoul("0x") == (0, "x")
    assert ddi_strtoul("09") == (0, "9")
    assert ddi_strtoul("-1") == ((1 << 64) - 1, "")
    assert ddi_strtoul("x1")[0] is None
