# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Parse driver.conf text into statements and properties, losslessly.

A model of the kernel's `hwc_parse_now()` / `get_hwc_spec()` /
`make_prop()` (usr/src/uts/common/os/modsysfile.c, facts §2.2): the same
state machine, the same recovery after errors, the same warnings.  The
result keeps the original text, and every statement, property and value
keeps its byte span, so rendering an unedited file gives back the same
bytes and edits can be spliced into place.  Pure: no I/O.

Rules of the kernel that the model keeps:

* A statement without `name=` is a list of driver-global properties; one
  with `name=` is a node spec and needs `parent=` or `class=`.
* A property without `=` is an integer "boolean" of value 0.
* Errors in most states only warn and go on; an unexpected token of
  another kind, or end of file inside a statement, drops the statement
  with every property it had.
* Inside one statement a repeated property name replaces the earlier
  value in place (ddi_prop_update semantics); across statements the
  global list keeps file order and lookups return the first.
* Names with reserved characters make no property.  A value list never
  mixes strings and integers: after `"x",` a number is an unexpected
  token and is skipped (so make_prop()'s "Mixed types in value list"
  cannot be reached from a file).  Integers are stored as 32-bit ints; a
  bad octal digit makes the value unpredictable (`kobj_getvalue()`
  failure is ignored).
* A second `name=` in one statement is not the error the kernel source
  seems to promise (its check reads the binding name, never set for a
  spec): the later name wins silently.  The model says so as a warning;
  every kernel message is an `error` diagnostic.
"""

import bisect
import gc
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import lexer as lx

# Property name characters the kernel refuses (valid_prop_name()).
_BAD_NAME_CHARS = set("/\\:[]@")


@dataclass
class Diagnostic:
    """A message about a location in the file."""

    severity: str        # "error", "warning" or "note"
    offset: int          # byte offset the message points at
    message: str
    code: str = "syntax"


@dataclass
class Value:
    """One element of a property's value list."""

    kind: str                 # "string" or "int"
    value: object             # str, int, or None when unpredictable
    token: lx.Token


@dataclass
class Property:
    name: str
    name_token: lx.Token
    kind: str                 # "string", "int" or "boolean"
    values: List[Value]
    statement: Optional["Statement"] = field(default=None, repr=False)

    @property
    def start(self) -> int:
        return self.name_token.start

    @property
    def end(self) -> int:
        return self.values[-1].token.end if self.values else \
            self.name_token.end


@dataclass
class Statement:
    """A `...;` statement: either global properties or a node spec."""

    start: int
    end: int                  # just past the ';' (or where parsing stopped)
    kind: str                 # "global", "node" or "dropped"
    properties: List[Property]
    node_name: Optional[str] = None
    parent: Optional[str] = None
    class_name: Optional[str] = None
    tokens: List[lx.Token] = field(default_factory=list, repr=False)


@dataclass
class ConfFile:
    """A parsed driver.conf: the original text plus its structure."""

    text: str
    statements: List[Statement]
    diagnostics: List[Diagnostic]
    comments: List[lx.Token]
    _line_starts: List[int] = field(default_factory=list, repr=False)

    def render(self) -> str:
        return self.text

    def global_properties(self) -> List[Property]:
        """Driver-global properties in the order the kernel keeps them."""
        return [p for s in self.statements if s.kind == "global"
                for p in s.properties]

    def global_property(self, name: str) -> Optional[Property]:
        """The property a lookup by name finds: the first one."""
        for prop in self.global_properties():
            if prop.name == name:
                return prop
        return None

    def line_col(self, offset: int) -> "tuple":
        """1-based line and column of a byte offset."""
        if not self._line_starts:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1


def getvalue(text: str) -> Optional[int]:
    """kobj_getvalue(): decimal, 0x hex or leading-0 octal, with one
    leading `~` or `-`; None where the kernel's conversion fails."""
    s = text
    complement = negate = False
    if s[:1] == "~":
        complement, s = True, s[1:]
    elif s[:1] == "-":
        negate, s = True, s[1:]
    if s[:1] == "0":
        s = s[1:]
        if s == "":
            return 0
        if s[:1] in ("x", "X"):
            radix, s = 16, s[1:]
        else:
            radix = 8
    else:
        radix = 10
    digits = {8: "01234567", 10: "0123456789",
              16: "0123456789abcdefABCDEF"}[radix]
    value = 0
    for ch in s:
        if ch not in digits:
            return None
        value = value * radix + int(ch, 16)
    value &= (1 << 64) - 1
    if complement:
        value = ~value & ((1 << 64) - 1)
    if negate:
        value = -value & ((1 << 64) - 1)
    return to_int32(value)


def to_int32(value: int) -> int:
    """The kernel keeps driver.conf integers in a C int."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


_AFTER_EQUALS = {"drvname": "name_eq", "parent": "parent_eq",
                 "drvclass": "class_eq", "prop": "prop_eq"}


class _SpecParser:
    """One call of get_hwc_spec(): reads a statement after its first NAME."""

    def __init__(self, lexer: lx.Lexer, diags: List[Diagnostic],
                 comments: List[lx.Token]) -> None:
        self.lx = lexer
        self.diags = diags
        self.comments = comments

    def warn(self, tok: lx.Token, message: str, code: str = "syntax"):
        self.diags.append(Diagnostic("error", tok.start, message, code))

    def parse(self, first: lx.Token) -> Statement:
        props: List[Property] = []
        by_name: Dict[str, int] = {}
        tokens: List[lx.Token] = []
        state = "begin"
        prop_tok: Optional[lx.Token] = None
        values: List[Value] = []
        node_name = parent = class_name = None
        tok = first

        def make_prop() -> None:
            nonlocal prop_tok, values
            if prop_tok is not None:
                prop = self._make_prop(prop_tok, values)
                if prop is not None:
                    if prop.name in by_name:
                        props[by_name[prop.name]] = prop
                    else:
                        by_name[prop.name] = len(props)
                        props.append(prop)
            prop_tok, values = None, []

        while True:
            tokens.append(tok)
            for w in tok.warnings:
                self.warn(tok, w, "string")
            kind = tok.kind
            if kind == lx.NAME:
                if state in ("prop", "prop_str", "prop_int"):
                    make_prop()
                    state = "begin"
                if state == "begin":
                    word = tok.value
                    if word in ("parent", "PARENT"):
                        state = "parent"
                    elif word in ("name", "NAME"):
                        state = "drvname"
                    elif word in ("class", "CLASS"):
                        state, prop_tok = "drvclass", tok
                    else:
                        state, prop_tok = "prop", tok
                else:
                    self._unexpected(tok)
            elif kind == lx.EQUALS:
                nxt = _AFTER_EQUALS.get(state)
                if nxt is None:
                    self._unexpected(tok)
                else:
                    state = nxt
            elif kind == lx.STRING:
                if state == "name_eq":
                    if node_name is not None:
                        # ddi_get_name() returns devi_binding_name, the
                        # same field as devi_name (ddi_impldefs.h), which
                        # the first name= set (facts §2.2): the kernel
                        # drops the spec and reads on after this string.
                        self.warn(tok, "'name' property already specified "
                                  "(the ';' may have been omitted on "
                                  "previous spec!)", "missing-semicolon")
                        return self._dropped(first, tok, tokens)
                    node_name, state = tok.value, "begin"
                elif state == "parent_eq":
                    if parent is not None:
                        self.warn(tok, "'parent' property already specified "
                                  "(the ';' may have been omitted on "
                                  "previous spec!)", "missing-semicolon")
                        return self._dropped(first, tok, tokens)
                    parent, state = tok.value, "begin"
                elif state in ("class_eq", "prop_eq", "prop_str_comma"):
                    if state == "class_eq":
                        if class_name is not None:
                            self.warn(tok, "'class' property already "
                                      "specified", "missing-semicolon")
                            return self._dropped(first, tok, tokens)
                        class_name = tok.value
                    values.append(Value("string", tok.value, tok))
                    state = "prop_str"
                else:
                    self._unexpected(tok)
            elif kind in (lx.HEXVAL, lx.DECVAL):
                if state in ("prop_eq", "prop_int_comma"):
                    values.append(Value("int", getvalue(tok.value), tok))
                    state = "prop_int"
                else:
                    self._unexpected(tok)
            elif kind == lx.COMMA:
                if state == "prop_str":
                    state = "prop_str_comma"
                elif state == "prop_int":
                    state = "prop_int_comma"
                else:
                    self._unexpected(tok)
            elif kind == lx.NEWLINE:
                pass
            elif kind == lx.POUND:
                comment = self.lx.find_eol(tok.start)
                self.comments.append(comment)
                tokens.append(comment)
            elif kind == lx.EOF:
                self.warn(tok, "Unexpected EOF")
                return self._dropped(first, tok, tokens)
            else:
                self._unexpected(tok)
                return self._dropped(first, tok, tokens)
            tok = self.lx.lex()
            if tok.kind == lx.SEMICOLON:
                tokens.append(tok)
                break

        if state in ("prop", "prop_str", "prop_int"):
            make_prop()
        elif state != "begin":
            self.warn(tok, "Unexpected end of line")
        if node_name is None:
            kind = "global"
            if parent is not None or class_name is not None:
                self.warn(first, "missing name attribute")
                kind = "dropped"
        else:
            kind = "node"
            if parent is None and class_name is None:
                self.warn(first, "missing parent or class attribute")
                kind = "dropped"
        stmt = Statement(first.start, tok.end, kind, props, node_name,
                         parent, class_name, tokens)
        for prop in props:
            prop.statement = stmt
        return stmt

    def _unexpected(self, tok: lx.Token) -> None:
        shown = tok.value if tok.kind != lx.EOF else "EOF"
        if len(shown) > 40:
            shown = shown[:37] + "..."
        why = ""
        if tok.damaged and tok.end - tok.start > lx.MAX_TOKEN:
            why = " (longer than the kernel's %d-character limit)" % \
                lx.MAX_TOKEN
        self.warn(tok, "Unexpected token '%s'%s" % (_printable(shown), why))

    def _dropped(self, first, tok, tokens) -> Statement:
        return Statement(first.start, tok.end, "dropped", [], tokens=tokens)

    def _make_prop(self, name_tok: lx.Token,
                   values: List[Value]) -> Optional[Property]:
        name = name_tok.value
        # valid_prop_name() compares a signed char: bytes from 0x80 are
        # negative, so they fail the `< 0x21` test too.
        if any(not 0x21 <= ord(c) < 0x80 or c in _BAD_NAME_CHARS
               for c in name):
            self.warn(name_tok, "invalid property name '%s'"
                      % _printable(name), "property-name")
            return None
        if not values:
            return Property(name, name_tok, "boolean", [])
        kinds = {v.kind for v in values}
        if len(kinds) > 1:
            self.warn(name_tok, "Mixed types in value list", "mixed-types")
            return None
        return Property(name, name_tok, values[0].kind, list(values))


def _printable(s: str) -> str:
    return "".join(c if " " <= c <= "~" else "\\x%02x" % ord(c) for c in s)


def parse(text: str) -> ConfFile:
    """Parse driver.conf text (latin-1 decoded bytes)."""
    # A large file makes hundreds of thousands of small objects and no
    # cycles; the cyclic collector would rescan them over and over.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(text)
    finally:
        if was_enabled:
            gc.enable()


def _parse(text: str) -> ConfFile:
    lexer = lx.Lexer(text)
    diags: List[Diagnostic] = []
    comments: List[lx.Token] = []
    statements: List[Statement] = []
    spec = _SpecParser(lexer, diags, comments)
    while True:
        tok = lexer.lex()
        if tok.kind == lx.EOF:
            break
        if tok.kind == lx.POUND:
            comments.append(lexer.find_eol(tok.start))
        elif tok.kind == lx.NAME:
            statements.append(spec.parse(tok))
        elif tok.kind == lx.NEWLINE:
            continue
        else:
            for w in tok.warnings:
                diags.append(Diagnostic("error", tok.start, w, "string"))
            spec._unexpected(tok)
    return ConfFile(text, statements, diags, comments)


def parse_bytes(data: bytes) -> ConfFile:
    return parse(data.decode("latin-1"))
