# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Whole numbers in the text that commands and benchmark tools print, and
the values that parsers quote back in their messages, cut short.

Every parser reads its counts, sizes, instance and label numbers with
parse_count(), never with int(): int() accepts what no tool prints
(blanks around the digits, a sign, '_' between digits, digits of other
scripts such as '١٢') and refuses a number of more than 4300 digits
with Python's own words instead of the field's name.  parse_count()
reads ASCII digits only, at most 20 of them by default (2**64 has 20
digits: no counter, size, instance or label number a tool prints is
longer), and refuses anything else with a ParseError that names the
command, the field and where it is, the value cut short.  A message
quotes a value with excerpt() or cut(), and a name longer than MAX_NAME
is refused: text the input holds must not make a message run on.  Pure.
"""

from .errors import ParseError

# Digits of 2**64: the widest integer a tool prints in decimal.
MAX_DIGITS = 20
# The longest file, device or pool name (MAXNAMELEN and ZPOOL_MAXNAMELEN
# less the NUL): a longer "name" is other text, and would make a message
# that quotes it run on.
MAX_NAME = 255
# Of a value quoted back in a message: enough to recognize it, short
# enough to keep the message one line.
SHOWN = 20
_DIGITS = {8: frozenset("01234567"), 10: frozenset("0123456789"),
           16: frozenset("0123456789abcdefABCDEF")}


def cut(text: str, limit: int) -> str:
    """text for a message as it is, or its first limit characters and
    "..." when longer."""
    return text if len(text) <= limit else text[:limit] + "..."


def excerpt(text: str, limit: int = SHOWN) -> str:
    """text quoted for a message, cut after limit characters."""
    if len(text) <= limit:
        return repr(text)
    return "%r... (%d characters)" % (text[:limit], len(text))


def parse_count(text: str, *, command: str, field: str, what: str,
                where: str = "", base: int = 10,
                digits: int = MAX_DIGITS) -> int:
    """The whole number text spells in digits of base (8, 10 or 16; no
    sign, prefix or blank), of at most `digits` digits.

    Otherwise a ParseError(command, field) reading "<where>: <the
    value> is not <what>", where `what` names what the field holds ("a
    count", "an instance number") and `where` the line or device."""
    prefix = "%s: " % where if where else ""
    if not text or not set(text) <= _DIGITS[base]:
        raise ParseError(command, field, "%s%s is not %s"
                         % (prefix, excerpt(text), what))
    if len(text) > digits:
        raise ParseError(command, field, "%s%s is not %s: more than %d "
                         "digits" % (prefix, excerpt(text), what, digits))
    return int(text, base)
