# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The ashift of every top-level vdev, from `zdb -C` (facts §12).

Without a pool argument zdb dumps the cache file: every imported pool and
its vdev tree (`tank:`, or `tank` without the colon from older zdb,
then the config 4 columns deeper); with one, the `MOS Configuration:`
of that pool.  ashift is printed only on top-level vdevs; each disk leaf
below one gets that vdev's ashift.  The same nvlist dump (libnvpair
dump_nvlist(): `name: value`, `name:` opening a list 4 columns deeper,
`name[i]:` array elements, a bare name for a boolean such as a feature
`com.delphix:hole_birth`) is what `zdb -l` prints for each of a
device's four labels under `LABEL n` banners.

A string value is printed between single quotes; anything after the
closing quote (an annotation someone added to a copy) is refused, as is
an ashift that is not a number.  Runs `zdb -C` through the host; the
parsers are pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import cut, excerpt, parse_count
from .devlinks import DISK_NAME, SLICE
from .runner import output_of
from .zpool import is_pool_name

_LEAF = re.compile(r"^/dev/dsk/(%s)(%s)?$" % (DISK_NAME, SLICE))
_BANNER = re.compile(r"^-{20,}\s*$")
_LABEL = re.compile(r"^LABEL ([0-9]+)\s*$")
_LABEL_FAILED = re.compile(r"^failed to (?:read|unpack) label ([0-9]+)\s*$")
_ASHIFT_LINE = re.compile(r"^\s*ashift: (.*?)\s*$")
# Top-level slots that hold no disk: a removed log (hole), a removed
# device whose data was copied elsewhere (indirect).
_NO_DISKS = ("hole", "indirect", "missing")
# `zdb -C pool` names its dumps instead of the pool.
_CONFIG_TITLES = ("MOS Configuration", "Cached configuration")


@dataclass
class NvNode:
    """One nvlist level of dump_nvlist() output."""

    values: Dict[str, str] = field(default_factory=dict)
    children: List[Tuple[str, "NvNode"]] = field(default_factory=list)
    lines: Dict[str, int] = field(default_factory=dict)   # value -> line
    line: int = 0                                       # where it opened

    def child(self, name: str) -> Optional["NvNode"]:
        for key, node in self.children:
            if key == name:
                return node
        return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def parse_nvlist_dump(text: str, command: str = "zdb -C",
                      first_line: int = 1) -> NvNode:
    """dump_nvlist(): `name: value`, `name:` opening a nested list whose
    members sit deeper, `name[i]:` array elements, bare names.  A bare
    name followed by deeper lines opens a list too (older zdb printed
    the pool name without a colon)."""
    lines = text.expandtabs(8).splitlines()
    # The indentation of the next non-blank line after each line.
    next_indent = [-1] * len(lines)
    upcoming = -1
    for k in range(len(lines) - 1, -1, -1):
        next_indent[k] = upcoming
        if lines[k].strip():
            upcoming = _indent(lines[k])
    root = NvNode()
    stack: List[Tuple[int, NvNode]] = [(-1, root)]
    for k, line in enumerate(lines):
        number = first_line + k
        if not line.strip():
            continue
        indent = _indent(line)
        body = line.strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        opens = next_indent[k] > indent and ": " not in body
        if opens or (body.endswith(":") and ": " not in body):
            name = body[:-1] if body.endswith(":") else body
            node = NvNode(line=number)
            parent.children.append((name, node))
            stack.append((indent, node))
        elif ": " in body:
            key, _, value = body.partition(": ")
            if value.startswith("'") and \
                    (len(value) < 2 or not value.endswith("'")):
                closing = value.find("'", 1)
                # The name as the field: nvpair names are short, text
                # taken for one need not be.
                raise ParseError(command, cut(key, 40), "line %d: %s" % (
                    number, "text after the quoted value: %r"
                    % value[closing + 1:].strip()[:40] if closing > 0 else
                    "a quoted value without its closing quote: %r"
                    % value[:40]))
            parent.values[key] = value
            parent.lines[key] = number
        else:
            parent.values[body] = "true"
            parent.lines[body] = number
    return root


@dataclass
class TopVdev:
    pool: str
    index: int
    type: str
    ashift: int
    is_log: bool
    disks: List[str]


def _str(value: Optional[str]) -> str:
    if value and len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    return value or ""


def _leaves(node: NvNode) -> List[str]:
    out = []
    m = _LEAF.match(_str(node.values.get("path")))
    if m:
        out.append(m.group(1))
    for key, child in node.children:
        if key.startswith("children["):
            out += _leaves(child)
    return out


def _paths(node: NvNode) -> List[str]:
    out = [_str(node.values["path"])] if "path" in node.values else []
    for key, child in node.children:
        if key.startswith("children["):
            out += _paths(child)
    return out


def _number(node: NvNode, name: str, command: str, what: str) -> int:
    value = node.values.get(name)
    if value is None:
        raise ParseError(command, name, "missing on %s" % what)
    return parse_count(value, command=command, field=name,
                       what="a number", where="line %d, %s"
                       % (node.lines[name], what))


def top_vdevs(pool: str, config: NvNode, command: str) -> List[TopVdev]:
    tree = config.child("vdev_tree")
    if tree is None:
        raise ParseError(command, "vdev_tree", "missing for pool %s" % pool)
    tops = []
    for key, child in tree.children:
        m = re.fullmatch(r"children\[([0-9]+)\]", key)
        if not m:
            continue
        index = parse_count(m.group(1), command=command, field="children",
                            what="a vdev number", where="line %d, pool %s"
                            % (child.line, pool))
        vtype = _str(child.values.get("type"))
        if vtype in _NO_DISKS:
            continue
        what = "top-level vdev %s of pool %s" % (key, pool)
        ashift = _number(child, "ashift", command, what)
        tops.append(TopVdev(pool, index, vtype, ashift,
                            child.values.get("is_log") == "1",
                            _leaves(child)))
    return tops


def parse_zdb_cachefile(text: str) -> Dict[str, List[TopVdev]]:
    """Parse `zdb -C` without a pool (the cache-file form), or with one
    (its `MOS Configuration:`).

    Sample (facts §12.2, cache-file form):

        tank:
            version: 5000
            name: 'tank'
            vdev_tree:
                type: 'root'
                children[0]:
                    type: 'mirror'
                    ashift: 12
                    children[0]:
                        type: 'disk'
                        path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0'
    """
    root = parse_nvlist_dump(text.replace("\u00a0", " "))
    if root.values:
        first = min(root.values, key=lambda k: root.lines[k])
        raise ParseError("zdb -C", "line %d" % root.lines[first],
                         "%r is not part of a pool's configuration"
                         % first[:60])
    pools: Dict[str, List[TopVdev]] = {}
    for name, config in root.children:
        if not is_pool_name(name):
            raise ParseError("zdb -C", "line %d" % config.line,
                             "%s is not a pool name" % excerpt(name, 60))
        if name in _CONFIG_TITLES:
            name = _str(config.values.get("name"))
            if not name or name in pools:
                continue        # -CC: the cached copy, then the MOS one
            if not is_pool_name(name):
                raise ParseError("zdb -C", "name", "line %d: %s is not a "
                                 "pool name" % (config.lines["name"],
                                                excerpt(name, 60)))
        pools[name] = top_vdevs(name, config, "zdb -C")
    return pools


@dataclass
class ZdbLabel:
    """One vdev label as `zdb -l DEVICE` prints it.

    `paths` are the device paths the pool last recorded for the leaves
    of the label's top-level vdev: they may name another device than
    the one the label was read from (a disk renamed since), so they are
    not reported as disks."""

    number: int
    pool: str
    version: int
    top_index: int
    type: str
    ashift: int
    is_log: bool
    paths: List[str]


def parse_zdb_label(text: str, command: str = "zdb -l"
                    ) -> Dict[int, ZdbLabel]:
    """Parse `zdb -l DEVICE`: label number -> the label's pool and its
    top-level vdev.  Labels zdb could not read are absent.

    Sample (a label of a version 28 pool, before feature flags):

        --------------------------------------------
        LABEL 0
        --------------------------------------------
            version: 28
            name: 'syspool'
            vdev_tree:
                type: 'disk'
                id: 0
                path: '/dev/dsk/c3t2048d0s0'
                ashift: 9
    """
    lines = text.expandtabs(8).splitlines()
    heads = [k for k, line in enumerate(lines)
             if _LABEL.match(line) and k > 0 and _BANNER.match(lines[k - 1])
             and k + 1 < len(lines) and _BANNER.match(lines[k + 1])]
    if not heads:
        raise ParseError(command, "LABEL", "no 'LABEL n' banner in the "
                         "output")
    labels: Dict[int, ZdbLabel] = {}
    for n, head in enumerate(heads):
        number = parse_count(_LABEL.match(lines[head]).group(1),
                             command=command, field="LABEL",
                             what="a label number",
                             where="line %d" % (head + 1))
        end = heads[n + 1] - 1 if n + 1 < len(heads) else len(lines)
        body = lines[head + 2:end]
        if any(_LABEL_FAILED.match(line) for line in body):
            continue
        config = parse_nvlist_dump("\n".join(body), command, head + 3)
        for k, line in enumerate(body):
            if line.strip() and _indent(line) == 0:
                raise ParseError(command, "line %d" % (head + 3 + k),
                                 "%r is not part of label %d (was the "
                                 "copy cut or annotated?)"
                                 % (line.strip()[:40], number))
        what = "label %d" % number
        tree = config.child("vdev_tree")
        if tree is None:
            raise ParseError(command, "vdev_tree", "missing in " + what)
        labels[number] = ZdbLabel(
            number, _str(config.values.get("name")),
            _number(config, "version", command, what),
            _number(tree, "id", command, what),
            _str(tree.values.get("type")),
            _number(tree, "ashift", command, what),
            tree.values.get("is_log") == "1", _paths(tree))
    return labels


def parse_zdb_ashifts(text: str, command: str = "zdb") -> List[int]:
    """Every `ashift: N` line of zdb output, in order, as `zdb | grep
    ashift` shows them.  Which pool or vdev each belongs to is not in
    such output; the other lines (a prompt, the command) are skipped."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _ASHIFT_LINE.match(line)
        if m is None:
            continue
        out.append(parse_count(m.group(1), command=command,
                               field="ashift", what="a number",
                               where="line %d" % n))
    if not out:
        raise ParseError(command, "ashift", "no 'ashift:' line in the "
                         "output")
    return out


def ashift_by_disk(pools: Dict[str, List[TopVdev]]
                   ) -> Dict[str, Tuple[str, int]]:
    """cXtYdZ → (pool, ashift of its top-level vdev)."""
    out = {}
    for pool, tops in pools.items():
        for top in tops:
            for disk in top.disks:
                out[disk] = (pool, top.ashift)
    return out


def query_zdb_cachefile(host: Host) -> Dict[str, List[TopVdev]]:
    return parse_zdb_cachefile(output_of(host, "zdb", ["-C"], "pool"))
