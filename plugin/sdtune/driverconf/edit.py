# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Lossless edits of a driver.conf, whatever the driver: a string
quoted as sdtune writes it, an entry (an sd-config-list pair, an
nvme-config-list triplet) appended to a list property, one removed, and
the result of an edit with its diff.

Edits are splices into the original text: every byte outside the
changed entry stays as it was, and removing text never removes a
comment: a comment inside a removed entry or list stays, on a line of
its own.  What an entry means and which edit is allowed are the
driver's rules (sdconf/edit.py, nvmeconf/edit.py).  Pure: no I/O.
"""

import difflib
import re
from typing import List, NamedTuple, Optional, Sequence

from .parser import ConfFile, Property

MAX_STRING = 1023
_BLANKS = re.compile(r"[ \t]*")


class EditError(Exception):
    """An edit sdtune refuses to make; the message says why."""


class NothingToUnset(EditError):
    """unset found no entry of the key or model, or none setting the
    names given: the command asked for something that is not there."""


class Edit(NamedTuple):
    """A set or unset: the new text, its one-line journal summary, and
    notes for stderr, full lines (sd's: what `sdconf check` says about
    an inexact key)."""

    new_text: str
    summary: List[str]
    notes: List[str]


def quote_string(content: str) -> str:
    """`content` as a driver.conf string: refused when it holds what
    sdtune will not write, or is longer than the kernel takes."""
    for ch in content:
        if not " " <= ch <= "~" or ch in '"\\':
            raise EditError("string %r contains %r, which sdtune will not "
                            "rewrite; edit it by hand" % (content, ch))
    if len(content) > MAX_STRING:
        raise EditError("string longer than the kernel's %d-character limit"
                        % MAX_STRING)
    return '"%s"' % content


def splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _line_start(text: str, pos: int) -> int:
    """Start of pos's line if only blanks precede pos there, else pos."""
    ls = text.rfind("\n", 0, pos) + 1
    return ls if text[ls:pos].strip(" \t") == "" else pos


def _cut(conf: ConfFile, start: int, end: int) -> str:
    """conf.text without [start, end), except the comments in that span:
    they are the operator's and stay, each on a line of its own with the
    indent of the line it was on (facts §16.1: comments on their own
    lines)."""
    text = conf.text
    kept = []
    for comment in conf.comments:
        if start <= comment.start and comment.end <= end:
            ls = text.rfind("\n", 0, comment.start) + 1
            indent = _BLANKS.match(text, ls, comment.start).group(0)
            kept.append(indent + comment.value + "\n")
    if kept and text[text.rfind("\n", 0, start) + 1:start].strip(" \t"):
        # The cut starts after text on its line: the comments go below.
        kept.insert(0, "\n")
    return text[:start] + "".join(kept) + text[end:]


def _comma_after(conf: ConfFile, pair_end: int, limit: int) -> Optional[int]:
    stmt = next(s for s in conf.statements if s.start <= pair_end <= s.end)
    for tok in stmt.tokens:
        if tok.kind == "COMMA" and pair_end <= tok.start < limit:
            return tok.start
    return None


def append_entry(conf: ConfFile, prop: Optional[Property], name: str,
                 values: Sequence[str]) -> str:
    """The text with one more entry, `values` quoted, at the end of the
    list property `prop` (an sd-config-list pair, an nvme-config-list
    triplet), on a line of its own, TAB indented; with no `prop`, a new
    property `name` holding the entry at the end of the file."""
    text = conf.text
    new = "\t" + ", ".join(quote_string(v) for v in values)
    if prop is None:
        if text and not text.endswith("\n"):
            text += "\n"
        return text + "%s =\n%s;\n" % (name, new)
    last = prop.values[-1].token
    semi = prop.statement.end - 1
    eol = text.find("\n", last.end)
    eol = len(text) if eol < 0 else eol
    # A comment after the last value must stay with it, so the new entry
    # goes on the line after that comment.
    if "#" in text[last.end:min(semi, eol)]:
        text = splice(text, eol, eol, "\n" + new)
        return splice(text, last.end, last.end, ",")
    return splice(text, last.end, last.end, ",\n" + new)


def remove_group(conf: ConfFile, prop: Property, first: int,
                 size: int) -> str:
    """The text without the `size` values of the list property `prop`
    from index `first` (an sd-config-list pair, an nvme-config-list
    triplet) and their comma; comments stay.  The list's last group
    takes the property with it."""
    text = conf.text
    vals = prop.values
    if len(vals) == size:
        return _remove_property(conf, prop)
    start_at = vals[first].token.start
    end_at = vals[first + size - 1].token.end
    if first + size == len(vals):
        prev_end = vals[first - 1].token.end
        between = text[prev_end:start_at]
        if "#" not in between:
            return _cut(conf, prev_end, end_at)
        comma = _comma_after(conf, prev_end, start_at)
        start = _line_start(text, start_at)
        # The comma is before the cut, so its offset still holds.
        text = _cut(conf, start, end_at)
        return splice(text, comma, comma + 1, "")
    nxt = vals[first + size].token.start
    comma = _comma_after(conf, end_at, nxt)
    start = _line_start(text, start_at)
    end = comma + 1
    eol = text.find("\n", end)
    eol = len(text) if eol < 0 else eol
    if text[end:eol].strip(" \t") == "" and start != start_at:
        end = eol + 1
    else:
        while end < len(text) and text[end] in " \t":
            end += 1
    return _cut(conf, start, end)


def _remove_property(conf: ConfFile, prop: Property) -> str:
    """The list's last group goes: remove the property (or statement)."""
    text = conf.text
    stmt = prop.statement
    if len(stmt.properties) == 1:
        start, end = _line_start(text, stmt.start), stmt.end
    else:
        start, end = prop.start, prop.end
    eol = text.find("\n", end)
    eol = len(text) if eol < 0 else eol
    at_line_start = start == 0 or text[start - 1] == "\n"
    if at_line_start and text[end:eol].strip(" \t") == "":
        end = min(eol + 1, len(text))
    return _cut(conf, start, end)


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    return "".join(difflib.unified_diff(
        old.splitlines(True), new.splitlines(True), old_name, new_name))
