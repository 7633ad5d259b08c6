# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Read a number out of a property string as the kernel's ddi_strtol()
and ddi_strtoul() do (usr/src/common/util/ddi_strtol.c and
ddi_strtoul.c): the base from the prefix, a sign, and whatever follows
the digits handed back rather than refused.  sd reads its tunables with
ddi_strtol() (sd_set_properties()), nvme its min-phys-block-size with
ddi_strtoul() (nvme_config_list()).  Pure: no I/O.
"""

from typing import Optional, Tuple

LONG_MAX = (1 << 63) - 1     # the kernel is LP64
ULONG_MASK = (1 << 64) - 1   # ddi_strtoul() works on a 64-bit ulong_t
# What both skip before a number: the kernel's own isspace(), which has
# no vertical tab.
_SPACES = " \t\n\r\f"


def scan_digits(text: str, i: int) -> Tuple[Optional[int], int]:
    """The digits of a number at text[i:], as the kernel's ddi_strtol()
    and ddi_strtoul() read them after any blanks and sign: the base from
    the prefix (0x/0X hex when a hex digit follows, a leading 0 octal,
    else decimal), then every digit of that base.  (value, index after
    it); value None when there is no digit."""
    if text[i:i + 1] != "0":
        base = 10
    elif text[i + 1:i + 2] in ("x", "X"):
        base = 16
    else:
        base = 8
    if base == 16 and text[i + 2:i + 3] and \
            text[i + 2] in "0123456789abcdefABCDEF":
        i += 2
    start, value = i, 0
    while i < len(text):
        ch = text[i]
        digit = int(ch, 36) if ch.isascii() and ch.isalnum() else 99
        if digit >= base:
            break
        value = value * base + digit
        i += 1
    return (None if i == start else value), i


def ddi_strtol(text: str) -> Tuple[Optional[int], str]:
    """ddi_strtol(text, &end, 0, &val): (value, rest) or (None, reason).

    Base is detected from the prefix (0x/0X hex, leading 0 octal); a sign
    is allowed; trailing characters are accepted and returned as `rest`.
    """
    if text.isdigit() and text.isascii() and text[0] != "0" and \
            len(text) < 18:
        return int(text), ""        # the common case: plain decimal
    i, n = 0, len(text)
    while i < n and text[i] in _SPACES:
        i += 1
    neg = False
    if i < n and text[i] in "+-":
        neg = text[i] == "-"
        i += 1
    value, i = scan_digits(text, i)
    if value is None:
        return None, "no digits"
    if value > LONG_MAX + (1 if neg else 0):
        return None, "out of range"
    return (-value if neg else value), text[i:]


def ddi_strtoul(text: str) -> Tuple[Optional[int], str]:
    """ddi_strtoul(text, &end, 0, &val): (value, rest) or (None, reason).

    Base from the prefix (0x/0X hex, leading 0 octal, else decimal);
    blanks and one sign are skipped only when the text does not start
    with a letter or digit; a '-' negates modulo 2^64; text after the
    digits is accepted and returned as `rest`.
    """
    i, n = 0, len(text)
    neg = False
    if not (text[:1].isascii() and text[:1].isalnum()):
        while i < n and text[i] in _SPACES:
            i += 1
        if i < n and text[i] in "+-":
            neg = text[i] == "-"
            i += 1
    value, i = scan_digits(text, i)
    if value is None:
        return None, "no digits"
    if value > ULONG_MASK:
        return None, "out of range"
    return ((-value) & ULONG_MASK if neg else value), text[i:]
