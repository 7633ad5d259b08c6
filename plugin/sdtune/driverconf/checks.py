# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The checks of a driver.conf that hold whatever the driver: a UTF-8
byte-order mark, typographic quotes, integers the kernel misreads, and
the largest physical block size ZFS can use, which sd's
physical-block-size and nvme's min-phys-block-size are both held to.
Each driver's lint (sdconf/lint.py, nvmeconf/lint.py) runs these first,
then its own rules.  Pure: no I/O.
"""

import bisect
import re
from typing import List

from .parser import ConfFile, Diagnostic

SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}

# Quotes word processors substitute for '"', as UTF-8 and as cp1252 bytes.
_SMART_QUOTES = re.compile("\u00e2\u0080[\u0098\u0099\u009c\u009d]|"
                           "[\u0093\u0094\u0091\u0092]|[\u00ab\u00bb]")
# What an editor saving "UTF-8 with BOM" puts first, as latin-1.
_UTF8_BOM = "\u00ef\u00bb\u00bf"
# The largest physical block any ZFS ashift can use (ASHIFT_MAX 16): sd's
# physical-block-size and nvme's min-phys-block-size above it buy nothing.
ZFS_MAX_BLOCK = 1 << 16


def check_file(conf: ConfFile) -> List[Diagnostic]:
    """The kernel's own warnings about the file and what the checks
    below find, unsorted: a driver's lint adds its rules' findings, then
    sorts them all by position (SEVERITY_ORDER within one)."""
    out: List[Diagnostic] = list(conf.diagnostics)
    bom = check_bom(conf, out)
    check_quotes(conf, out, bom)
    check_integers(conf, out)
    return out


def add_diagnostic(out: List[Diagnostic], severity: str, offset: int,
                   message: str, code: str) -> None:
    out.append(Diagnostic(severity, offset, message, code))


def check_bom(conf: ConfFile, out: List[Diagnostic]) -> int:
    """A UTF-8 byte-order mark at the start of the file: one diagnostic
    in place of the three kernel warnings it causes.  Returns its length
    (0 when there is none), so that no other check reads its bytes."""
    if not conf.text.startswith(_UTF8_BOM):
        return 0
    end = len(_UTF8_BOM)
    # kobj_lex() has no token for bytes 0xEF 0xBB 0xBF: each one is an
    # unexpected token of its own, which hwc_parse_now() warns about and
    # skips; the file is read from the fourth byte on as usual.
    out[:] = [d for d in out if not (d.offset < end and
                                     d.message.startswith(
                                         "Unexpected token"))]
    add_diagnostic(
        out, "error", 0, "UTF-8 byte-order mark (bytes EF BB BF) at the "
        "start of the file: kobj_lex() has no token for these bytes and "
        "takes each one as an unexpected token, so the kernel warns "
        "'Unexpected token' 3 times whenever it reads the file, then "
        "skips them; save the file without the byte-order mark",
        "byte-order-mark")
    return end


def check_quotes(conf: ConfFile, out: List[Diagnostic],
                 skip: int = 0) -> None:
    """Quotes from a word processor; the first `skip` bytes are a
    byte-order mark, whose byte 0xBB is also the cp1252 closing
    guillemet, and already reported."""
    # The kernel skips comments, so a quote there is harmless.
    starts = [c.start for c in conf.comments]
    for m in _SMART_QUOTES.finditer(conf.text, skip):
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and m.start() < conf.comments[i].end:
            continue
        add_diagnostic(out, "error", m.start(),
                       "typographic quote pasted from a document; "
                       "driver.conf needs a plain '\"'",
                       "typographic-quote")


def check_integers(conf: ConfFile, out: List[Diagnostic]) -> None:
    """Integer property values the kernel reads as octal, or cannot read
    at all (a bad octal digit)."""
    for stmt in conf.statements:
        for prop in stmt.properties:
            if prop.kind != "int":
                continue
            for v in prop.values:
                text = v.token.value.lstrip("-~")
                if v.value is None:
                    add_diagnostic(
                        out, "error", v.token.start,
                        "'%s' is not a valid octal number: the kernel "
                        "stores an unpredictable value" % v.token.value,
                        "octal")
                elif len(text) > 1 and text[0] == "0" and text[1] != "x":
                    add_diagnostic(
                        out, "warning", v.token.start,
                        "'%s' has a leading zero: the kernel reads it as "
                        "octal (%d)" % (v.token.value, v.value), "octal")


def too_large_for_zfs(num: int) -> str:
    """Why a physical block of ``num`` bytes is refused, "" if it is not
    above ZFS_MAX_BLOCK."""
    return "larger than %d: no ZFS ashift can use it" % ZFS_MAX_BLOCK \
        if num > ZFS_MAX_BLOCK else ""


def format_diagnostic(conf: ConfFile, path: str, d: Diagnostic) -> str:
    """FILE:LINE:COL: severity: message, as a compiler says it."""
    line, col = conf.line_col(d.offset)
    return "%s:%d:%d: %s: %s" % (path, line, col, d.severity, d.message)


def is_problem(d: Diagnostic) -> bool:
    """An error or a warning: what makes `sdconf check` fail."""
    return d.severity in ("error", "warning")
