# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

r"""Render tables the illumos way: a header and aligned columns, `-H` for
TAB-separated rows without a header, `-p` for exact numbers.  JSON output
is written from the same objects.  Pure: returns text.

Cells are escaped the C way, in both forms: a backslash becomes `\\`,
TAB `\t`, newline `\n`, carriage return `\r`, and any other control
character `\ooo` (octal, as `ls -b` shows names).  A value read from a
disk (an INQUIRY id with a TAB in it) then cannot split a `-H` row into
more fields or a table row into more lines, and a script can undo the
escape exactly.
"""

import json
import re
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .errors import SdtuneError

Column = Tuple[str, Callable[[Any, bool], str]]


def nicenum(value: Optional[int]) -> str:
    """1024-based size with one or two decimals, like zfs' nicenum."""
    if value is None:
        return "-"
    units = "BKMGTPE"
    n, i = float(value), 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    if i == 0:
        return "%dB" % value
    return ("%.2f%s" if n < 100 else "%.1f%s" if n < 1000 else
            "%.0f%s") % (n, units[i])


def yes_no(value: Optional[bool]) -> str:
    return "-" if value is None else ("yes" if value else "no")


def text_or_dash(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


_C_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile("[\\\\\x00-\x1f\x7f]")


def _escape_char(m: "re.Match") -> str:
    ch = m.group(0)
    return _C_ESCAPES.get(ch) or "\\%03o" % ord(ch)


def escape_cell(text: str) -> str:
    """A cell with backslash and control characters C-escaped."""
    return _NEEDS_ESCAPE.sub(_escape_char, text)


def render_table(columns: Sequence[Column], rows: Sequence[Any],
                 scripted: bool = False, parsable: bool = False) -> str:
    """Aligned table with a header, or (scripted) TAB-separated rows."""
    cells: List[List[str]] = [[escape_cell(fmt(row, parsable))
                               for _, fmt in columns] for row in rows]
    if scripted:
        return "".join("\t".join(c) + "\n" for c in cells)
    header = [name for name, _ in columns]
    widths = [max([len(header[i])] + [len(c[i]) for c in cells])
              for i in range(len(columns))]
    lines = []
    for line in [header] + cells:
        parts = [v.ljust(widths[i]) for i, v in enumerate(line[:-1])]
        lines.append("  ".join(parts + [line[-1]]).rstrip() + "\n")
    return "".join(lines)


def to_json(obj: Any) -> str:
    """Strict JSON: NaN and Infinity are not JSON, and a reader would
    choke on them, so a value like that is an error, not output."""
    try:
        return json.dumps(obj, indent=2, sort_keys=False,
                          allow_nan=False) + "\n"
    except ValueError as e:
        raise SdtuneError("print", "JSON output", "a value is not a finite "
                          "number") from e


def change_json(changed: bool, *, diff: str = "", dry_run: bool = False,
                files: Sequence[dict] = (), reboot_required: bool = False,
                journal_entry: Optional[str] = None,
                result: Optional[str] = None, **extra: Any) -> dict:
    """The `-o json` document of every command that changes something
    (apply, rollback, sdconf set|unset --write, results --import), so
    that a wrapper (the Ansible modules) never parses text:

    * ``changed``: whether this run changed the system; false for
      "nothing to do" (exit 0) and for a dry run;
    * ``dry_run``: true when the change was only shown (no --yes, no
      --write);
    * ``diff``: the unified diff of the change, shown or made ("" when
      there is none);
    * ``files``: each file written or removed, {"path", "role",
      "before_sha256", "after_sha256"} (null for a file absent before
      or after);
    * ``reboot_required``: disks keep their old values until the next
      boot (verify says "pending reboot"), or the platform needs one;
    * ``journal_entry``: the id of the journal entry of the change
      (null when nothing was journalled) and ``result`` its words;

    then the command's own keys (``extra``)."""
    doc = {"changed": changed, "dry_run": dry_run, "diff": diff,
           "files": list(files), "reboot_required": reboot_required,
           "journal_entry": journal_entry, "result": result}
    doc.update(extra)
    return doc
