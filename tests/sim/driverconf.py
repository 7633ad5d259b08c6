# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The kernel's reading of a driver.conf file, as the simulator's kernel
needs it (facts §2).

Written from the algorithm of kobj_lex(), get_hwc_spec(), make_prop(),
valid_prop_name(), kobj_getvalue(), hwc_parse_now() and add_props(): one
byte at a time, with the kernel's odd corners kept on purpose -- a byte
0xff reads as end of file (the buffer is a signed char), a string cut by
a newline becomes a lone newline, a failed number conversion keeps the
previous value, a property repeated inside one statement replaces the
earlier one, and global statements are appended to the driver's list so
that a lookup finds the first one.

The result is plain data (lists, strings, ints) so that it can be stored
in the appliance's JSON state.  Runs no commands.

It is also the tests' one model of the kernel's reader, independent of
the product (it imports nothing from plugin/): tokenize() gives every
token with its byte span, as the product's lexer must, and
ConfParse.statements every statement kept, as the product's parser must
(tests/unit/driverconf/test_lexer.py and test_parser.py compare them).
"""

from typing import Dict, List, Optional, Tuple

# Token kinds.
UNEXPECTED, EQUALS, AMPERSAND, BIT_OR, STAR, POUND, COLON = range(7)
SEMICOLON, COMMA, SLASH, WHITE_SPACE, NEWLINE, EOF = range(7, 13)
STRING, HEXVAL, DECVAL, NAME = range(13, 17)
# What kobj_find_eol() skipped after a POUND: not a kernel token, but
# tokenize() reports it so that the spans cover the file.
COMMENT = 17
KIND_NAMES = ("UNEXPECTED", "EQUALS", "AMPERSAND", "BIT_OR", "STAR", "POUND",
              "COLON", "SEMICOLON", "COMMA", "SLASH", "WHITE_SPACE",
              "NEWLINE", "EOF", "STRING", "HEXVAL", "DECVAL", "NAME",
              "COMMENT")

MAX_HWC_LINESIZE = 1024
_SINGLE = {ord("="): EQUALS, ord("&"): AMPERSAND, ord("|"): BIT_OR,
           ord("*"): STAR, ord("#"): POUND, ord(":"): COLON,
           ord(";"): SEMICOLON, ord(","): COMMA, ord("/"): SLASH}


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _isalpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _isxdigit(c: int) -> bool:
    return _isdigit(c) or 65 <= c <= 70 or 97 <= c <= 102


def _isnamechar(c: int) -> bool:
    return _isdigit(c) or _isalpha(c) or c in (95, 45)


class _File:
    """struct _buf with kobj_getc()/kobj_ungetc(): bytes are signed, a
    real end of file is sticky, and line numbers count NEWLINE tokens."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.pos = 0
        self.at_eof = False
        self.line = 1
        self.name = name
        self.start = 0          # where the last token read began

    def getc(self) -> int:
        if self.pos < len(self.data):
            b = self.data[self.pos]
            self.pos += 1
            self.at_eof = False
            return b - 256 if b >= 128 else b
        self.at_eof = True
        return -1

    def ungetc(self) -> None:
        if not self.at_eof and self.pos > 0:
            self.pos -= 1

    def find_eol(self) -> Tuple[int, int]:
        """kobj_find_eol(); the span of what it skipped."""
        start = self.pos
        while True:
            c = self.getc()
            if c == -1:
                return start, self.pos
            if c in (10, 13, 12):
                self.ungetc()
                return start, self.pos


def _cstr(raw: bytes) -> str:
    """The token buffer as the kernel uses it: a C string."""
    return raw.split(b"\0", 1)[0].decode("latin-1")


def _lex(f: _File) -> Tuple[int, bytes, List[str]]:
    """One kobj_lex() call: (token, the token buffer as kobj_lex() filled
    it, lexer warnings); f.start is where the token began."""
    warnings: List[str] = []
    buf = bytearray()
    f.start = f.pos
    ch = f.getc()
    while ch in (32, 9):
        f.start = f.pos
        ch = f.getc()
    remain = MAX_HWC_LINESIZE - 1
    buf.append(ch & 0xFF)
    token = UNEXPECTED

    def text() -> bytes:
        return bytes(buf)

    if ch in _SINGLE:
        return _SINGLE[ch], text(), warnings
    if ch == 12:
        while True:
            ch = f.getc()
            if ch not in (32, 9, 12):
                break
            remain -= 1
            if remain == 0:
                return UNEXPECTED, text(), warnings
            buf.append(ch & 0xFF)
        f.ungetc()
        return WHITE_SPACE, text(), warnings
    if ch in (10, 13):
        return NEWLINE, text(), warnings
    if ch == 34:
        remain += 1
        del buf[-1]
        while True:
            ch = f.getc()
            if ch == 34:
                break
            if ch in (10, -1):
                warnings.append('Missing "')
                buf[:] = b"\n"
                f.ungetc()
                break
            if ch == 92:
                remain -= 1
                if remain == 0:
                    return UNEXPECTED, text(), warnings
                ch = f.getc()
                if not _isdigit(ch):
                    buf.append(ch & 0xFF)
                    continue
                oval = 0
                while 48 <= ch <= 55:
                    oval = (oval << 3) + ch - 48
                    ch = f.getc()
                f.ungetc()
                if oval > 127:
                    warnings.append("Character overflow detected.")
                buf.append(oval & 0xFF)
                continue
            remain -= 1
            if remain == 0:
                return UNEXPECTED, text(), warnings
            buf.append(ch & 0xFF)
        return STRING, text(), warnings
    if ch == -1:
        return EOF, b"", warnings
    if ch == 45:
        remain -= 1
        if remain == 0:
            return UNEXPECTED, text(), warnings
        ch = f.getc()
        buf.append(ch & 0xFF)
        if ch in (32, 9, 10):
            f.ungetc()
            del buf[-1]
            return NAME, text(), warnings
    elif ch == 126:
        remain -= 1
        if remain == 0:
            return UNEXPECTED, text(), warnings
        ch = f.getc()
        buf.append(ch & 0xFF)
    if _isdigit(ch):
        if ch == 48:
            ch = f.getc()
            if ch == 120:
                remain -= 1
                if remain == 0:
                    return UNEXPECTED, text(), warnings
                buf.append(ch)
                ch = f.getc()
                while _isxdigit(ch):
                    remain -= 1
                    if remain == 0:
                        return UNEXPECTED, text(), warnings
                    buf.append(ch)
                    ch = f.getc()
                f.ungetc()
                return HEXVAL, text(), warnings
        else:
            ch = f.getc()
        while _isdigit(ch):
            remain -= 1
            if remain == 0:
                return UNEXPECTED, text(), warnings
            buf.append(ch)
            ch = f.getc()
        f.ungetc()
        return DECVAL, text(), warnings
    if _isalpha(ch) or ch in (92, 95):
        if ch != 92:
            ch = f.getc()
        else:
            remain += 1
            del buf[-1]
        while _isnamechar(ch) or ch == 92:
            if ch == 92:
                ch = f.getc()
            remain -= 1
            if remain == 0:
                return UNEXPECTED, text(), warnings
            buf.append(ch & 0xFF)
            ch = f.getc()
        f.ungetc()
        return NAME, text(), warnings
    return token, text(), warnings


def tokenize(data: bytes) -> List[Tuple[str, str, int, int]]:
    """kobj_lex() over ``data`` up to its first EOF, as the lexer sees
    it: (kind name, the token buffer as latin-1 text -- not cut at a NUL
    as the parser's use of it is -- start, end), the spans in bytes, and
    after each POUND a COMMENT for what kobj_find_eol() skips."""
    f = _File(data, "")
    out: List[Tuple[str, str, int, int]] = []
    while True:
        tok, raw, _ = _lex(f)
        out.append((KIND_NAMES[tok], raw.decode("latin-1"), f.start, f.pos))
        if tok == EOF:
            return out
        if tok == POUND:
            start, end = f.find_eol()
            out.append((KIND_NAMES[COMMENT],
                        data[start:end].decode("latin-1"), start, end))


def getvalue(token: str) -> Optional[int]:
    """kobj_getvalue() then the int cast of make_prop(); None when the
    kernel's conversion fails."""
    s = token
    onescompl = negate = False
    if s[:1] == "~":
        onescompl, s = True, s[1:]
    elif s[:1] == "-":
        negate, s = True, s[1:]
    if s[:1] == "0":
        s = s[1:]
        if s == "":
            return 0
        if s[0] in "xX":
            radix, s = 16, s[1:]
        else:
            radix = 8
    else:
        radix = 10
    value = 0
    for c in s:
        if radix == 16 and c in "0123456789abcdefABCDEF":
            d = int(c, 16)
        elif radix != 16 and "0" <= c <= "9" and int(c) < radix:
            d = int(c)
        else:
            return None
        value = (value * radix + d) & 0xFFFFFFFFFFFFFFFF
    if onescompl:
        value = ~value & 0xFFFFFFFFFFFFFFFF
    if negate:
        value = -value & 0xFFFFFFFFFFFFFFFF
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _valid_prop_name(name: str) -> bool:
    for c in name.encode("latin-1"):
        signed = c - 256 if c >= 128 else c
        if signed < 0x21 or chr(c) in "/\\:[]@":
            return False
    return True


class _Spec:
    """The hwc_spec being built by one statement."""

    def __init__(self) -> None:
        self.name: Optional[str] = None
        self.parent: Optional[str] = None
        self.cls: Optional[str] = None
        # [name, kind, values]; kind is "string", "int" or "boolean".
        self.props: List[list] = []
        # The same with None for each unpredictable int (ConfParse.statements).
        self.as_written: List[list] = []

    def add(self, name: str, kind: str, values: list, written: list) -> None:
        ptype = "string" if kind == "string" else "int"
        for i, prop in enumerate(self.props):
            ktype = "string" if prop[1] == "string" else "int"
            if prop[0] == name and ktype == ptype:
                prop[1], prop[2] = kind, values
                self.as_written[i] = [name, kind, written]
                return
        self.props.append([name, kind, values])
        self.as_written.append([name, kind, written])


class ConfParse:
    """What the kernel kept from one driver.conf: the driver-global
    properties in list order, the node specs, and the console warnings."""

    def __init__(self) -> None:
        self.globals: List[list] = []
        self.specs: List[Dict] = []
        self.warnings: List[str] = []
        # Every statement kept, in file order, as written: ("global" or
        # "node", name, parent, class, [[name, kind, values], ...]), an
        # int None where the kernel's value is unpredictable (a failed
        # kobj_getvalue(), facts §2.1).  Not part of as_dict().
        self.statements: List[tuple] = []

    def as_dict(self) -> Dict:
        return {"globals": self.globals, "specs": self.specs,
                "warnings": self.warnings}


def parse(data: bytes, filename: str = "/kernel/drv/sd.conf") -> ConfParse:
    """hwc_parse_now() over ``data``; never fails (the kernel does not)."""
    f = _File(data, filename)
    out = ConfParse()

    def file_err(msg: str) -> None:
        out.warnings.append("%s on line %d of %s" % (msg, f.line, f.name))

    def lex() -> Tuple[int, str]:
        tok, raw, warns = _lex(f)
        for w in warns:
            if w.startswith("Missing"):
                file_err(w)
            else:
                out.warnings.append(w)
        return tok, _cstr(raw)

    while True:
        tok, val = lex()
        if tok == EOF:
            break
        if tok == POUND:
            f.find_eol()
        elif tok == NAME:
            spec = _get_spec(f, val, lex, file_err, out.warnings)
            if spec is None:
                continue
            if spec.name is None:
                if spec.parent is not None or spec.cls is not None:
                    file_err("missing name attribute")
                    continue
                out.globals.extend(spec.props)
                out.statements.append(("global", None, None, None,
                                       spec.as_written))
            elif spec.parent is None and spec.cls is None:
                file_err("missing parent or class attribute")
            else:
                out.specs.append({"name": spec.name, "parent": spec.parent,
                                  "class": spec.cls, "props": spec.props})
                out.statements.append(("node", spec.name, spec.parent,
                                       spec.cls, spec.as_written))
        elif tok == NEWLINE:
            f.line += 1
        else:
            file_err("Unexpected token '%s'" % val)
    return out


def _get_spec(f: _File, first: str, lex, file_err,
              warnings: List[str]) -> Optional[_Spec]:
    """get_hwc_spec(): the statement that starts with NAME ``first``."""
    spec = _Spec()
    state = "begin"
    prop_name: Optional[str] = None
    # (kind, value the kernel stores, value as written: None for an int
    # whose conversion failed)
    vals: List[Tuple[str, object, object]] = []
    ival = 0
    tok, val = NAME, first
    omit = "(the ';' may have been omitted on previous spec!)"

    def make_prop() -> None:
        if prop_name is None:
            return
        if not _valid_prop_name(prop_name):
            warnings.append("invalid property name '%s'" % prop_name)
            return
        if not vals:
            spec.add(prop_name, "boolean", [0], [0])
            return
        kinds = {k for k, _, _ in vals}
        if len(kinds) > 1:
            warnings.append("Mixed types in value list")
            return
        spec.add(prop_name, vals[0][0], [v for _, v, _ in vals],
                 [w for _, _, w in vals])

    while True:
        if tok == NAME:
            if state in ("prop", "prop_str", "prop_int"):
                make_prop()
                prop_name, vals = None, []
                state = "begin"
            if state == "begin":
                if val in ("PARENT", "parent"):
                    state = "parent"
                elif val in ("NAME", "name"):
                    state = "drvname"
                elif val in ("CLASS", "class"):
                    state, prop_name = "drvclass", val
                else:
                    state, prop_name = "prop", val
            else:
                file_err("Unexpected token '%s'" % val)
        elif tok == EQUALS:
            nxt = {"drvname": "name_eq", "parent": "parent_eq",
                   "drvclass": "class_eq", "prop": "prop_eq"}.get(state)
            if nxt is None:
                file_err("Unexpected token '%s'" % val)
            else:
                state = nxt
        elif tok == STRING:
            if state == "name_eq":
                # ddi_get_name() returns devi_binding_name, which
                # ddi_impldefs.h makes the same field as devi_name: the
                # first name= set it, so a second one drops the spec.
                if spec.name is not None:
                    file_err("'name' property already specified " + omit)
                    return None
                spec.name, state = val, "begin"
            elif state == "parent_eq":
                if spec.parent is not None:
                    file_err("'parent' property already specified " + omit)
                    return None
                spec.parent, state = val, "begin"
            elif state in ("class_eq", "prop_eq", "prop_str_comma"):
                if state == "class_eq":
                    if spec.cls is not None:
                        file_err("'class' property already specified")
                        return None
                    spec.cls = val
                vals.append(("string", val, val))
                state = "prop_str"
            else:
                file_err("Unexpected token '%s'" % val)
        elif tok in (HEXVAL, DECVAL):
            if state in ("prop_eq", "prop_int_comma"):
                converted = getvalue(val)
                if converted is not None:
                    ival = converted
                vals.append(("int", ival, converted))
                state = "prop_int"
            else:
                file_err("Unexpected token '%s'" % val)
        elif tok == COMMA:
            if state == "prop_str":
                state = "prop_str_comma"
            elif state == "prop_int":
                state = "prop_int_comma"
            else:
                file_err("Unexpected token '%s'" % val)
        elif tok == NEWLINE:
            f.line += 1
        elif tok == POUND:
            f.find_eol()
        elif tok == EOF:
            file_err("Unexpected EOF")
            return None
        else:
            file_err("Unexpected token '%s'" % val)
            return None
        tok, val = lex()
        if tok == SEMICOLON:
            break
    if state in ("prop", "prop_str", "prop_int"):
        make_prop()
    elif state != "begin":
        file_err("Unexpected end of line")
    return spec


def lookup(props: List[list], name: str, kind: str) -> Optional[list]:
    """i_ddi_prop_search(): the values of the first property called
    ``name`` whose type is ``kind`` ("string" or "int"), else None."""
    for pname, pkind, values in props:
        ptype = "string" if pkind == "string" else "int"
        if pname == name and ptype == kind:
            return values
    return None
