# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tokenise a driver.conf file exactly as the illumos kernel does.

This is a model of `kobj_lex()` in usr/src/uts/common/os/modsysfile.c
(facts §2.1), written so that every token also carries the byte span it
came from: the parser above it can then keep the file lossless and report
`FILE:LINE:COL` locations.  It runs no commands and touches no files.

The text is handled as latin-1 so that one character is one byte of the
file; offsets are byte offsets.

Behaviour worth knowing (all from the kernel source):

* Blanks and TABs before a token are skipped.  A form feed is *not*
  skipped: it starts a WHITE_SPACE token, which the statement parser
  treats as an unexpected token (the facts document simplifies this).
* A string ends at the closing quote.  A raw newline or end of file
  before it gives a "Missing \\"" warning and the token's value becomes a
  lone newline; the newline itself is left for the next token.
* Inside a string, a backslash followed by a non-digit yields that
  character (so a backslash-newline continues the string), a backslash
  followed by octal digits yields that byte; `\\8` and `\\9` yield a NUL
  and the digit is then read again as an ordinary character.
* Every token must fit in 1023 characters; one character more makes the
  token UNEXPECTED at that point and lexing resumes after it.
* `0x` starts a hexadecimal number (lower-case x only); other numbers
  are DECVAL, converted later (leading 0 = octal) by `kobj_getvalue()`.
* A `-` or `~` joins the following character: `-5` is a number, `-x`
  starts a name, a lone `-` before a blank is a NAME, anything else is
  UNEXPECTED (and the character after the sign is consumed with it).
"""

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

MAX_TOKEN = 1023  # MAX_HWC_LINESIZE (1024) minus the terminating NUL

UNEXPECTED = "UNEXPECTED"
EQUALS = "EQUALS"
AMPERSAND = "AMPERSAND"
BIT_OR = "BIT_OR"
STAR = "STAR"
POUND = "POUND"
COLON = "COLON"
SEMICOLON = "SEMICOLON"
COMMA = "COMMA"
SLASH = "SLASH"
WHITE_SPACE = "WHITE_SPACE"
NEWLINE = "NEWLINE"
EOF = "EOF"
STRING = "STRING"
HEXVAL = "HEXVAL"
DECVAL = "DECVAL"
NAME = "NAME"
COMMENT = "COMMENT"  # not a kernel token: what kobj_find_eol() skips

_SINGLE = {
    "=": EQUALS, "&": AMPERSAND, "|": BIT_OR, "*": STAR, "#": POUND,
    ":": COLON, ";": SEMICOLON, ",": COMMA, "/": SLASH,
    "\n": NEWLINE, "\r": NEWLINE,
}

_BLANKS = re.compile(r"[ \t]*")
# Tokens the fast path may take whole.  A name must not be followed by a
# backslash (an escape continues it) and a number must not be followed by
# another name character ("0X1" is DECVAL 0 then a NAME).
_FAST = re.compile(
    r'[ \t]*(?:(?P<STRING>"[^"\\\n]*")'
    r"|(?P<HEXVAL>0x[0-9a-fA-F]*)(?![0-9a-fA-F])"
    r"|(?P<DECVAL>[0-9]+)(?![0-9x])"
    r"|(?P<NAME>[A-Za-z_][A-Za-z0-9_\-]*)(?![A-Za-z0-9_\-\\])"
    r"|(?P<SEMICOLON>;)|(?P<COMMA>,)|(?P<EQUALS>=)|(?P<NEWLINE>[\n\r])"
    r"|(?P<POUND>#))")
_FF_RUN = re.compile(r"[ \t\f]*")
_PLAIN_STRING_RUN = re.compile(r'[^"\\\n]*')
_HEX_RUN = re.compile(r"[0-9a-fA-F]*")
_DEC_RUN = re.compile(r"[0-9]*")
_NAME_RUN = re.compile(r"[A-Za-z0-9_\-]*")
_TO_EOL = re.compile(r"[^\n\r\f]*")


def _isdigit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _isalpha(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z")


@dataclass
class Token:
    """One kernel token: its kind, its value as the kernel stores it, and
    the byte span [start, end) it was read from."""

    kind: str
    value: str
    start: int
    end: int
    # For STRING tokens: offset in the file of each character of `value`,
    # so diagnostics inside a string point at the right column.
    char_offsets: Optional[List[int]] = field(default=None, repr=False)
    # Kernel warnings raised while lexing this token ("Missing \"", ...);
    # a tuple, so the many tokens without any share one empty value.
    warnings: Sequence[str] = ()
    # True when a string was cut short (missing quote) or a token overflowed.
    damaged: bool = False

    def offset_of(self, index: int) -> int:
        """File offset of character `index` of the token's value."""
        if self.char_offsets is None:
            # A string without escapes: value starts after the quote.
            if self.kind == STRING and 0 <= index < len(self.value):
                return self.start + 1 + index
            return self.start
        if 0 <= index < len(self.char_offsets):
            return self.char_offsets[index]
        return self.start


class Lexer:
    """Reads tokens from latin-1 text one at a time, like kobj_lex()."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.n = len(text)

    def _getc(self) -> str:
        """Next character, or '' at end of file (the kernel's -1)."""
        if self.pos < self.n:
            ch = self.text[self.pos]
            self.pos += 1
            return ch
        self.pos = self.n + 1  # remember that EOF was read, for _ungetc
        return ""

    def _ungetc(self) -> None:
        if self.pos > self.n:
            self.pos = self.n
        else:
            self.pos -= 1

    def find_eol(self, start: int) -> Token:
        """Skip to (not past) the end of line, as kobj_find_eol() does
        after a '#'; returns the skipped comment as a token."""
        m = _TO_EOL.match(self.text, self.pos)
        self.pos = m.end()
        return Token(COMMENT, self.text[start:self.pos], start, self.pos)

    def lex(self) -> Token:
        text = self.text
        m = _FAST.match(text, min(self.pos, self.n))
        kind = m.lastgroup if m is not None else None
        if kind is not None:
            # Common tokens in one regex step; anything unusual (escapes,
            # signs, overlong tokens) takes the exact path below.
            start = m.start(kind)
            end = m.end()
            if end - start <= MAX_TOKEN:
                self.pos = end
                if kind == STRING:
                    return Token(STRING, text[start + 1:end - 1], start, end)
                return Token(kind, text[start:end], start, end)
        self.pos = _BLANKS.match(text, min(self.pos, self.n)).end()
        start = self.pos
        ch = self._getc()
        if ch == "":
            return Token(EOF, "", start, self.n)
        kind = _SINGLE.get(ch)
        if kind is not None:
            return Token(kind, ch, start, self.pos)
        if ch == "\f":
            return self._whitespace(start)
        if ch == '"':
            return self._string(start)
        return self._word(start, ch)

    def _whitespace(self, start: int) -> Token:
        end = _FF_RUN.match(self.text, self.pos).end()
        if end - start > MAX_TOKEN:
            # The kernel gives up once the buffer is full.
            self.pos = start + MAX_TOKEN + 1
            return Token(UNEXPECTED, self.text[start:self.pos - 1], start,
                         self.pos, damaged=True)
        self.pos = end
        return Token(WHITE_SPACE, self.text[start:end], start, end)

    def _string(self, start: int) -> Token:
        text = self.text
        chars: List[str] = []
        offsets: List[int] = []
        warnings: List[str] = []
        remain = MAX_TOKEN + 1
        while True:
            # Fast path for ordinary characters; the kernel's per-character
            # budget is applied to the whole run at once.
            m = _PLAIN_STRING_RUN.match(text, self.pos)
            run = m.group(0)
            if run:
                if len(run) >= remain:
                    take = remain - 1
                    chars.append(run[:take])
                    offsets.extend(range(self.pos, self.pos + take))
                    # The character that overflows is read and dropped.
                    self.pos += take + 1
                    return Token(UNEXPECTED, "".join(chars), start, self.pos,
                                 damaged=True)
                chars.append(run)
                offsets.extend(range(self.pos, m.end()))
                remain -= len(run)
                self.pos = m.end()
            ch = self._getc()
            if ch == '"':
                return Token(STRING, "".join(chars), start, self.pos,
                             char_offsets=offsets, warnings=warnings)
            if ch in ("\n", ""):
                self._ungetc()
                return Token(STRING, "\n", start, min(self.pos, self.n),
                             char_offsets=[start], damaged=True,
                             warnings=warnings + ['Missing "'])
            # A backslash escape.
            remain -= 1
            if remain == 0:
                return Token(UNEXPECTED, "".join(chars), start, self.pos,
                             damaged=True)
            esc_at = self.pos - 1
            ch = self._getc()
            if not _isdigit(ch):
                # (char)-1 at end of file is stored as byte 0xff.
                chars.append(ch if ch else "\xff")
                offsets.append(esc_at)
                continue
            oval = 0
            while "0" <= ch <= "7":
                oval = (oval << 3) + (ord(ch) - 48)
                ch = self._getc()
            self._ungetc()
            if oval > 127:
                warnings.append("Character overflow detected.")
            chars.append(chr(oval & 0xFF))
            offsets.append(esc_at)

    def _word(self, start: int, ch: str) -> Token:
        """Numbers, names, signs and anything unexpected."""
        text = self.text
        if ch in ("-", "~"):
            nxt = self._getc()
            if ch == "-" and nxt in (" ", "\t", "\n"):
                self._ungetc()
                return Token(NAME, "-", start, self.pos)
            ch = nxt
        if _isdigit(ch):
            if ch == "0" and self.pos < self.n and text[self.pos] == "x":
                self.pos += 1
                end = _HEX_RUN.match(text, self.pos).end()
                kind = HEXVAL
            else:
                end = _DEC_RUN.match(text, self.pos).end()
                kind = DECVAL
            return self._bounded(kind, start, end, text[start:end])
        if _isalpha(ch) or ch == "\\" or ch == "_":
            return self._name(start, ch)
        return Token(UNEXPECTED, text[start:self.pos], start,
                     min(self.pos, self.n), damaged=True)

    def _bounded(self, kind: str, start: int, end: int, value: str) -> Token:
        if end - start > MAX_TOKEN:
            self.pos = start + MAX_TOKEN + 1
            return Token(UNEXPECTED, self.text[start:self.pos - 1], start,
                         self.pos, damaged=True)
        self.pos = end
        return Token(kind, value, start, end)

    def _name(self, start: int, ch: str) -> Token:
        text = self.text
        # A sign before the name is part of its value ("-abc").
        value: List[str] = [text[start:self.pos - 1]] if self.pos - 1 > start \
            else []
        count = len(value[0]) if value else 0
        if ch != "\\":
            value.append(ch)
            count += 1
        else:
            self._ungetc()
        while True:
            m = _NAME_RUN.match(text, self.pos)
            run = m.group(0)
            if run:
                if count + len(run) > MAX_TOKEN:
                    take = MAX_TOKEN - count
                    value.append(run[:take])
                    self.pos += take + 1
                    return Token(UNEXPECTED, "".join(value), start, self.pos,
                                 damaged=True)
                value.append(run)
                count += len(run)
                self.pos = m.end()
            if self.pos < self.n and text[self.pos] == "\\":
                # An escaped character becomes part of the name.
                self.pos += 1
                esc = self._getc()
                if count + 1 > MAX_TOKEN:
                    return Token(UNEXPECTED, "".join(value), start,
                                 min(self.pos, self.n), damaged=True)
                value.append(esc if esc else "\xff")
                count += 1
                continue
            # A backslash at end of file reads EOF: keep the span in
            # the text.
            return Token(NAME, "".join(value), start,
                         min(self.pos, self.n))


def tokenize(text: str) -> List[Token]:
    """All tokens of a file, comments included, for tests and tools.

    A '#' token is followed by the COMMENT token that kobj_find_eol()
    skips; the kernel parser calls find_eol itself.
    """
    lx = Lexer(text)
    out: List[Token] = []
    while True:
        tok = lx.lex()
        out.append(tok)
        if tok.kind == EOF:
            return out
        if tok.kind == POUND:
            out.append(lx.find_eol(tok.end))
