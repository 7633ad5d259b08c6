"""The ashift of every top-level vdev, from `zdb -C` (facts §12).

Without a pool argument zdb dumps the cache file: every imported pool and
its vdev tree.  ashift is printed only on top-level vdevs; each disk leaf
below one gets that vdev's ashift.  Runs `zdb -C` through the host; the
parsers are pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from .command import output_of

_LINE = re.compile(r"^( *)([^:]+?)(?:: (.*))?(:)?$")
_LEAF = re.compile(r"^/dev/dsk/(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)"
                   r"((?:s|p)[0-9]+)?$")


@dataclass
class NvNode:
    """One nvlist level of dump_nvlist() output."""

    values: Dict[str, str] = field(default_factory=dict)
    children: List[Tuple[str, "NvNode"]] = field(default_factory=list)

    def child(self, name: str) -> Optional["NvNode"]:
        for key, node in self.children:
            if key == name:
                return node
        return None


def parse_nvlist_dump(text: str, command: str = "zdb -C") -> NvNode:
    """dump_nvlist(): `name: value`, `name:` opening a nested list whose
    members sit 4 spaces deeper, `name[i]:` array elements, bare names."""
    root = NvNode()
    stack: List[Tuple[int, NvNode]] = [(-1, root)]
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            raise ParseError(command, "line %d" % n, "bad indentation")
        parent = stack[-1][1]
        if body.endswith(":") and ": " not in body:
            node = NvNode()
            parent.children.append((body[:-1], node))
            stack.append((indent, node))
        elif ": " in body:
            key, _, value = body.partition(": ")
            parent.values[key] = value
        else:
            parent.values[body] = "true"
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
    path = _str(node.values.get("path"))
    m = _LEAF.match(path)
    if m:
        out.append(m.group(1))
    for key, child in node.children:
        if key.startswith("children["):
            out += _leaves(child)
    return out


def top_vdevs(pool: str, config: NvNode, command: str) -> List[TopVdev]:
    tree = config.child("vdev_tree")
    if tree is None:
        raise ParseError(command, "vdev_tree", "missing for pool %s" % pool)
    tops = []
    for key, child in tree.children:
        if not key.startswith("children["):
            continue
        ashift = child.values.get("ashift")
        if ashift is None or not ashift.isdigit():
            raise ParseError(command, "ashift", "missing on top-level vdev "
                             "%s of pool %s" % (key, pool))
        tops.append(TopVdev(pool, int(key[9:-1]), _str(child.values.get(
            "type")), int(ashift), child.values.get("is_log") == "1",
            _leaves(child)))
    return tops


def parse_zdb_cachefile(text: str) -> Dict[str, List[TopVdev]]:
    """Parse `zdb -C` without a pool (the cache-file form).

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
    root = parse_nvlist_dump(text)
    pools: Dict[str, List[TopVdev]] = {}
    for name, config in root.children:
        pools[name] = top_vdevs(name, config, "zdb -C")
    if root.values:
        raise ParseError("zdb -C", "pool", "unexpected top-level line %r"
                         % next(iter(root.values)))
    return pools


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
