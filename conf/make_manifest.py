#!/usr/bin/env python3
# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Write the IPS manifest of sdtune: the hand-written header
(conf/sdtune.p5m: package name, summary, license, dependencies) plus one
dir or file action for everything `make install` put in a proto area, so
that the manifest lists exactly what is installed and cannot drift.

    make_manifest.py [-D NAME=VALUE ...] HEADER.p5m PROTO > sdtune.p5m

$(NAME) in the header is replaced as pkgmogrify -D would.  Owner and
group come from the path, the way illumos packages its own files:
root:sys for etc, usr and usr/share, root:bin elsewhere.  No file is
preserved: the package delivers nothing the operator edits (the local
settings, /etc/sdtune/sdtune.conf, are the operator's own file).
Modes are the proto area's, which must be 0555 or 0444 (read-only) for
files and 0755 for directories.  The output is in pkgfmt (v2) form:
actions grouped and sorted, attributes ordered, lines continued past 80
columns.  Reads files only; runs nothing.
"""

import argparse
import os
import re
import stat
import sys
from functools import cmp_to_key
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

Value = Union[str, List[str]]

FILE_MODES = ("0555", "0444")
DIR_MODE = "0755"
# Directories that illumos delivers with group sys; everything else is bin.
SYS_DIRS = ("etc", "usr", "usr/share", "opt", "var")
KEY_ATTRS = {"set": "name", "depend": "fmri", "license": "license",
             "legacy": "pkg", "file": "path", "dir": "path",
             "link": "path", "hardlink": "path", "driver": "name",
             "group": "groupname", "user": "username",
             "signature": "value"}
FS_ACTIONS = ("dir", "file", "link", "hardlink")


class ManifestError(Exception):
    pass


@dataclass
class Action:
    name: str
    attrs: Dict[str, Value]
    payload: Optional[str] = None       # the positional hash / file path
    comments: List[str] = field(default_factory=list)

    @property
    def key_attr(self) -> Optional[str]:
        return KEY_ATTRS.get(self.name)

    def key(self) -> str:
        value = self.attrs.get(self.key_attr or "", "")
        return value if isinstance(value, str) else value[0]


# -- reading -----------------------------------------------------------

def _tokens(text: str, where: str) -> List[str]:
    """Split an action on blanks, honouring "..." and '...' values."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        word = []
        while i < n and not text[i].isspace():
            c = text[i]
            if c in "\"'":
                end = i + 1
                while end < n and text[end] != c:
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    raise ManifestError("%s: unterminated quote" % where)
                word.append(text[i + 1:end].replace("\\" + c, c))
                i = end + 1
            else:
                word.append(c)
                i += 1
        out.append("".join(word))
    return out


def parse_action(text: str, where: str) -> Action:
    words = _tokens(text, where)
    if not words:
        raise ManifestError("%s: empty action" % where)
    name, rest = words[0], words[1:]
    payload = None
    if rest and "=" not in rest[0]:
        payload = rest.pop(0)
    attrs: Dict[str, Value] = {}
    for word in rest:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise ManifestError("%s: '%s' is not name=value" % (where, word))
        if key in attrs:
            old = attrs[key]
            attrs[key] = (old if isinstance(old, list) else [old]) + [value]
        else:
            attrs[key] = value
    return Action(name, attrs, payload)


def read_header(path: str, defines: Dict[str, str]
                ) -> Tuple[List[str], List[Action], List[str]]:
    """Leading comments, actions (with the comments before each) and
    trailing comments of a manifest, macros replaced."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    leading: List[str] = []
    actions: List[Action] = []
    pending: List[str] = []
    accumulate = ""
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.endswith("\\"):
            accumulate += line[:-1]
            continue
        line, accumulate = accumulate + line, ""
        if not line or line.startswith("#"):
            (pending if actions else leading).append(line)
            continue
        where = "%s:%d" % (path, number)

        def macro(m: "re.Match[str]") -> str:
            if m.group(1) not in defines:
                raise ManifestError("%s: $(%s) is not defined (-D %s=...)"
                                    % (where, m.group(1), m.group(1)))
            return defines[m.group(1)]
        act = parse_action(re.sub(r"\$\(([A-Za-z0-9_]+)\)", macro, line),
                           where)
        if act.name in FS_ACTIONS:
            raise ManifestError("%s: %s actions come from the proto area, "
                                "not the header" % (where, act.name))
        act.comments, pending = pending, []
        actions.append(act)
    if accumulate:
        raise ManifestError("%s: ends in a continuation line" % path)
    return leading, actions, pending


# -- the proto area ----------------------------------------------------

def _group(rel: str, is_dir: bool) -> str:
    top = rel.split("/")[0]
    if is_dir:
        return "sys" if rel in SYS_DIRS or rel.startswith("etc/") else "bin"
    return "sys" if top == "etc" else "bin"


def proto_actions(proto: str) -> List[Action]:
    """A dir or file action for every directory and file under proto."""
    root = os.path.realpath(proto)
    if root == "/":
        raise ManifestError("proto area '%s' is the system root" % proto)
    if not os.path.isdir(root):
        raise ManifestError("proto area '%s' is not a directory" % proto)
    actions = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            st = os.lstat(full)
            mode = "%04o" % stat.S_IMODE(st.st_mode)
            if name == "__pycache__" or name.endswith((".pyc", ".pyo")):
                raise ManifestError("%s: compiled Python in the proto area"
                                    % rel)
            if stat.S_ISDIR(st.st_mode):
                if mode != DIR_MODE:
                    raise ManifestError("%s/: mode %s, expected %s"
                                        % (rel, mode, DIR_MODE))
                actions.append(Action("dir", {
                    "path": rel, "owner": "root",
                    "group": _group(rel, True), "mode": mode}))
            elif stat.S_ISREG(st.st_mode):
                if mode not in FILE_MODES:
                    raise ManifestError("%s: mode %s, expected one of %s"
                                        % (rel, mode, ", ".join(FILE_MODES)))
                actions.append(Action("file", {
                    "path": rel, "owner": "root",
                    "group": _group(rel, False), "mode": mode}))
            else:
                raise ManifestError("%s: neither a file nor a directory"
                                    % rel)
    return actions


# -- pkgfmt v2 form ----------------------------------------------------

def quote(value: str) -> str:
    if " " in value or "'" in value or '"' in value or value == "":
        if '"' not in value:
            return '"%s"' % value
        if "'" not in value:
            return "'%s'" % value
        return '"%s"' % value.replace('"', '\\"')
    return value


def _type_order(act: Action) -> int:
    if act.name == "set":
        return 1
    if act.name in ("driver", "group", "user"):
        return 3
    if act.name in ("legacy", "license"):
        return 4
    if act.name == "depend":
        return 5
    return 2


def _cmp(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


def compare(a: Action, b: Action) -> int:
    """pkgfmt's order: set actions (pkg.fmri, pkg.summary,
    pkg.description, other pkg.*, the rest by name), file system actions
    by path, then driver/group/user, legacy/license and depend actions,
    each group by its key attribute, ties by the whole action."""
    c = _cmp(_type_order(a), _type_order(b))
    if c:
        return c
    if a.name == "set" and b.name == "set":
        def rank(act: Action) -> int:
            name = act.key()
            return {"pkg.fmri": 0, "pkg.summary": 1,
                    "pkg.description": 2}.get(
                        name, 3 if name.startswith("pkg.") else 4)
        c = _cmp(rank(a), rank(b))
        if c:
            return c
    if a.key_attr and a.key_attr == b.key_attr:
        if a.name == "depend" and b.name == "depend":
            c = _cmp((str(a.attrs.get("type", "")), a.key()),
                     (str(b.attrs.get("type", "")), b.key()))
        elif "target" in a.attrs and "target" in b.attrs:
            c = _cmp((a.key(), str(a.attrs["target"])),
                     (b.key(), str(b.attrs["target"])))
        else:
            c = _cmp(a.key(), b.key())
        if c:
            return c
    return _cmp(render(a, wrap=False), render(b, wrap=False))


def _attr_order(act: Action, name: str, value: Value) -> Tuple[int, str]:
    if name.startswith("variant."):
        rank = 7
    elif name.startswith("facet."):
        rank = 6
    elif isinstance(value, list):
        rank = 5
    elif act.name == "depend" and name in ("type", "fmri"):
        rank = 0 if name == "type" else 1
    elif act.name not in ("depend", "driver", "user") and \
            name in ("owner", "target", "group", "mode"):
        rank = {"owner": 1, "target": 1, "group": 2, "mode": 3}[name]
    elif name != act.key_attr:
        rank = 4
    else:
        rank = 0
    return (rank, name)


def render(act: Action, wrap: bool = True) -> str:
    """One action as pkgfmt writes it: continued with a backslash once a
    line would pass 80 columns (78 while more attributes follow)."""
    words = [act.name]
    if act.payload and act.payload != "NOHASH":
        words = [act.name + " " + act.payload]
    items = sorted(act.attrs.items(),
                   key=lambda kv: _attr_order(act, kv[0], kv[1]))
    pairs = []
    for name, value in items:
        values = sorted(value) if isinstance(value, list) else [value]
        pairs += ["%s=%s" % (name, quote(v)) for v in values]
    if not wrap:
        return " ".join(words + pairs)
    lines = [words[0]]
    wrapped_at = None
    for i, pair in enumerate(pairs):
        remaining = len(pairs) - i
        limit = 80 if remaining == 1 else 78
        current = lines[-1]
        width = len(current) + (1 if len(lines) > 1 else 0)
        if width + len(pair) < limit:
            lines[-1] = current + " " + pair
        else:
            if wrapped_at is None:
                wrapped_at = i
            lines.append("    " + pair)
    # pkgfmt keeps an action on one line when the only attribute would
    # otherwise sit alone on a continuation line.
    if len(lines) == 2 and wrapped_at == 0 and len(pairs) == 1 and \
            act.payload in (None, "NOHASH"):
        lines = [lines[0] + " " + lines[1].strip()]
    text = " \\\n".join(lines)
    if act.name == "dir":
        text = "dir  " + text[4:]
    return text


def build(header: str, proto: str, defines: Dict[str, str]) -> str:
    leading, actions, trailing = read_header(header, defines)
    files = proto_actions(proto)
    seen = {a.attrs["path"] for a in files}
    for act in actions:
        if act.name == "license" and act.payload is None:
            raise ManifestError("license action without a file")
    if not seen:
        raise ManifestError("proto area '%s' is empty" % proto)
    out = list(leading)
    for act in sorted(actions + files, key=cmp_to_key(compare)):
        out += act.comments
        out.append(render(act))
    out += trailing
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="make_manifest.py",
        description="IPS manifest of sdtune from its header and the proto "
        "area `make install` filled.")
    parser.add_argument("-D", dest="defines", action="append", default=[],
                        metavar="NAME=VALUE", help="replace $(NAME)")
    parser.add_argument("header")
    parser.add_argument("proto")
    args = parser.parse_args(argv)
    defines = {}
    for d in args.defines:
        name, eq, value = d.partition("=")
        if not eq or not name:
            parser.error("-D %s: expected NAME=VALUE" % d)
        defines[name] = value
    try:
        sys.stdout.write(build(args.header, args.proto, defines))
    except (ManifestError, OSError) as e:
        sys.stderr.write("make_manifest.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
