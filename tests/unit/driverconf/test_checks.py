# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.driverconf.checks: what the kernel misreads in any
driver.conf, whatever the driver (typographic quotes, a UTF-8
byte-order mark, integers read as octal), each checked for code,
severity, line and column and the words of the message.  Both drivers'
lints run these first (tests/unit/sdconf/test_lint.py,
tests/unit/nvmeconf/test_nvme_lint.py).
"""

import pytest

from sdtune.driverconf.checks import SEVERITY_ORDER, check_file
from sdtune.driverconf.parser import parse

KEY = "ATA     INTEL SSDSC2BA40"


def entry(tunables, key=KEY):
    return '# lint test\nsd-config-list =\n\t"%s", "%s";\n' % (key, tunables)


def run(text):
    """What the checks find, in the order a driver's lint gives it."""
    conf = parse(text)
    found = check_file(conf)
    found.sort(key=lambda d: (d.offset, SEVERITY_ORDER[d.severity]))
    return conf, found


def one(text, code):
    """The single diagnostic with `code`: (severity, line, col, message)."""
    conf, found = run(text)
    hits = [d for d in found if d.code == code]
    assert len(hits) == 1, found
    line, col = conf.line_col(hits[0].offset)
    return hits[0].severity, line, col, hits[0].message


def codes(text):
    return sorted(d.code for d in run(text)[1])


# -- typographic quotes -------------------------------------------------------

def _utf8(text):
    return text.encode("utf-8").decode("latin-1")


@pytest.mark.parametrize("text,cols", [
    (_utf8("sd-config-list = \u201cATA\u201d;"), [18, 24]),
    (_utf8("x = \u2018a\u2019;"), [5, 9]),
    ("x = \x93a\x94;", [5, 7]),                    # cp1252 bytes
])
def test_typographic_quotes(text, cols):
    conf, found = run(text)
    hits = [d for d in found if d.code == "typographic-quote"]
    assert [conf.line_col(d.offset) for d in hits] == [(1, c) for c in cols]
    assert all(d.severity == "error" for d in hits)
    assert all("typographic quote" in d.message and 'plain \'"\'' in
               d.message for d in hits)


def test_typographic_quote_inside_a_string_is_flagged():
    sev, line, col, _ = one(entry(_utf8("disksort:false \u201dx")),
                            "typographic-quote")
    assert (sev, line, col) == ("error", 3, 46)


def test_utf8_byte_order_mark_is_one_error_at_line_1_column_1():
    # F8: kobj_lex() reads EF BB BF as three unexpected tokens; byte BB
    # is not a typographic quote here.
    text = "\xef\xbb\xbf" + entry("disksort:false")
    conf, found = run(text)
    assert [d.code for d in found] == ["byte-order-mark"]
    assert conf.line_col(found[0].offset) == (1, 1)
    assert found[0].severity == "error"
    assert "Unexpected token' 3 times" in found[0].message
    # The kernel's own warnings are still there in the parse.
    assert len(conf.diagnostics) == 3
    # Only at the start of the file: elsewhere they are what they are.
    later = entry("disksort:false") + "\xef\xbb\xbf\n"
    assert "byte-order-mark" not in codes(later)
    assert "typographic-quote" in codes(later)


def test_typographic_quote_in_a_comment_is_harmless():
    text = (_utf8("# set \u201cphysical-block-size\u201d here\n"
                  "a = 1; # \u2018ok\u2019\n") + "# cp1252 \x93x\x94\n")
    assert run(text)[1] == []


# -- integers -----------------------------------------------------------------

def test_octal_integer_property():
    sev, line, col, msg = one("a = 1;\nx = 1, 010;\n", "octal")
    assert (sev, line, col) == ("warning", 2, 8)
    assert "'010'" in msg and "octal (8)" in msg


def test_invalid_octal_integer_property():
    sev, line, col, msg = one("x = 089;\n", "octal")
    assert (sev, line, col) == ("error", 1, 5)
    assert "'089' is not a valid octal number" in msg
    assert "unpredictable" in msg
