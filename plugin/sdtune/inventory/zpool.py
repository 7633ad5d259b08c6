"""Pool membership of every disk, from `zpool status` (facts §13).

For each pool: which disks are data members (and of which top-level
vdev), logs, cache devices and spares.  Runs `zpool status` through the
host; the parser is pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..errors import ParseError
from ..host import Host
from .command import output_of

CLASS_HEADERS = {"logs": "log", "cache": "cache", "spares": "spare",
                 "special": "special", "dedup": "dedup"}
_DISK = re.compile(r"^(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)((?:s|p)[0-9]+)?$")


@dataclass
class PoolMember:
    disk: str               # cXtYdZ
    slice: Optional[str]    # "s0" etc. for partition vdevs, None whole disk
    role: str               # data, log, cache, spare, special, dedup
    top: str                # top-level vdev name (mirror-0, or the disk)
    state: str


@dataclass
class Pool:
    name: str
    state: str
    members: List[PoolMember] = field(default_factory=list)


def _rows(lines: List[str], start: int, pool: str):
    """Config rows after the NAME header: (depth, name, state)."""
    for line in lines[start:]:
        if not line.strip():
            return
        if not line.startswith("\t"):
            raise ParseError("zpool status", "config",
                             "row without a TAB in pool %s: %r"
                             % (pool, line[:60]))
        body = line[1:].rstrip("\t")
        stripped = body.lstrip(" ")
        depth = len(body) - len(stripped)
        parts = stripped.split()
        yield depth, parts[0], parts[1] if len(parts) > 1 else ""


def parse_zpool_status(text: str) -> Dict[str, Pool]:
    """Parse `zpool status` for all pools.

    Sample (facts §13; every row from NAME on starts with a TAB, shown
    here as "> "):

          pool: tank
         state: ONLINE
        config:

        > NAME                       STATE     READ WRITE CKSUM
        > tank                       ONLINE       0     0     0
        >   mirror-0                 ONLINE       0     0     0
        >     c0t5000CCA0496E6F8Dd0  ONLINE       0     0     0
        > logs
        >   c0t55CD2E404C0D8D0Ed0    ONLINE       0     0     0
        > spares
        >   c0t5000CCA0496E8D14d0    AVAIL

        errors: No known data errors
    """
    pools: Dict[str, Pool] = {}
    if text.strip() == "no pools available":
        return pools
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^  pool: (\S+)$", lines[i])
        if not m:
            i += 1
            continue
        name = m.group(1)
        state_m = re.match(r"^ state: (\S+)", lines[i + 1]) \
            if i + 1 < len(lines) else None
        if state_m is None:
            raise ParseError("zpool status", "state",
                             "missing for pool %s" % name)
        pool = Pool(name, state_m.group(1))
        j = i + 2
        while j < len(lines) and not lines[j].startswith("\tNAME"):
            if re.match(r"^  pool: ", lines[j]):
                break
            j += 1
        if j >= len(lines) or not lines[j].startswith("\tNAME"):
            raise ParseError("zpool status", "config",
                             "no NAME header for pool %s" % name)
        role, top = "data", None
        for depth, vname, vstate in _rows(lines, j + 1, name):
            if depth == 0:
                if vname == name:
                    role = "data"
                elif vname in CLASS_HEADERS:
                    role = CLASS_HEADERS[vname]
                else:
                    raise ParseError("zpool status", "NAME",
                                     "unexpected row %r in pool %s"
                                     % (vname, name))
                continue
            if depth == 2:
                top = vname
            dm = _DISK.match(vname)
            if dm:
                pool.members.append(PoolMember(dm.group(1), dm.group(2),
                                               role, top or vname, vstate))
        pools[name] = pool
        i = j + 1
    if not pools and text.strip():
        raise ParseError("zpool status", "pool", "no pool found in output")
    return pools


def query_zpool_status(host: Host) -> Dict[str, Pool]:
    return parse_zpool_status(output_of(host, "zpool", ["status"], "pool"))
