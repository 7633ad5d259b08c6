# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pool membership of every disk, from `zpool status` (facts §13).

For each pool: which disks are data members (and of which top-level
vdev), logs, cache devices and spares.  zpool_main.c prints one section
per pool (`  pool:`, ` state:`, maybe `status:`/`action:`/`see:` with
continuation lines, `  scan:` with progress lines, `config:`), then the
config table: a TAB, the NAME/STATE/READ/WRITE/CKSUM header, and one
row per vdev whose name is indented two columns per level below the
pool (print_status_config()), with class headers `logs`, `cache`,
`spares`, `special` and `dedup` at the pool's level.  Interior vdevs are
mirror-N, raidzP-N, replacing-N (the device being replaced shows as
`<name>/old`) and spare-N; a missing device is printed as its guid with
`was <path>`; spares show AVAIL or INUSE without counters; a row may end
in a note (`too many errors`, `(resilvering)`).

The tree is read from the indentation relative to the NAME header, so
tabs expanded to spaces and a copy indented as a whole read the same;
a copy whose indentation was lost is refused (ParseError), because the
tree cannot then be told from the names.  A pool name may hold blanks
(`zpool create "my pool" ...`): the `pool:` line gives the whole name
and the pool's config row starts with exactly that name.  Every
`pool:` line must start a section that reads: a section that does not
is an error naming its line, never skipped (its disks would look free).
Runs `zpool status` through the host; the parser is pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import excerpt
from .devlinks import DISK_NAME, SLICE
from .runner import output_of

COMMAND = "zpool status"
CLASS_HEADERS = {"logs": "log", "cache": "cache", "spares": "spare",
                 "special": "special", "dedup": "dedup"}
_DISK = re.compile(r"^(%s)(%s)?$" % (DISK_NAME, SLICE))
# A pool name (zfs_namecheck.c pool_namecheck(), valid_char()): a letter,
# then letters, digits, "_", "-", ".", ":" and blanks, shorter than
# ZFS_MAX_DATASET_NAME_LEN - 2 - 2 * strlen("$ORIGIN") = 240.  zdb.py
# reads pool names by the same rule.
POOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.: -]*$")
MAX_POOL_NAME = 239
# "  pool: %s": the name runs to the end of the line.  A trailing blank
# of the name cannot be told from one a copy added, so it is dropped.
_POOL = re.compile(r"^\s*pool:(.*)$")
_STATE = re.compile(r"^\s*state: (\S+)\s*$")
_HEADER = re.compile(r"^(\s*)NAME\s+STATE\s+READ\s+WRITE\s+CKSUM(\s|$)")
# Lines that end the config table (a new section or the errors line).
_SECTION = re.compile(r"^\s*(?:pool|state|status|action|see|scan|config|"
                      r"errors|remove|checkpoint|dedup):")
_WAS = re.compile(r"\bwas (\S+)")
# zfs_nicenum(): 0, 12, 1.05K; exact with -p.
_COUNT = re.compile(r"^[0-9]+(?:\.[0-9]+)?[KMGTPEZ]?$")


@dataclass
class PoolMember:
    disk: str               # cXtYdZ
    slice: Optional[str]    # "s0" etc. for partition vdevs, None whole disk
    role: str               # data, log, cache, spare, special, dedup
    top: str                # top-level vdev name (mirror-0, or the disk)
    state: str
    name: str = ""          # the row as printed (c1t4d0/old, a guid)
    parent: Optional[str] = None    # the vdev right above (replacing-4)


@dataclass
class TopLevel:
    """A top-level vdev row (or a cache device or spare)."""

    name: str
    role: str
    state: str


@dataclass
class Pool:
    name: str
    state: str
    members: List[PoolMember] = field(default_factory=list)
    vdevs: List[TopLevel] = field(default_factory=list)


def _fail(field_name: str, reason: str) -> ParseError:
    return ParseError(COMMAND, field_name, reason)


def is_pool_name(name: str) -> bool:
    """Whether `name` is one zpool create accepts (its length and
    characters; the reserved names are not checked)."""
    return len(name) <= MAX_POOL_NAME and POOL_NAME.match(name) is not None


def _disk_of(name: str, note: str) -> Optional[Tuple[str, Optional[str]]]:
    """The disk a row stands for: its name (`/dev/dsk/` and `/old`
    removed), or for a missing device the path after `was`."""
    for candidate in (name, *_WAS.findall(note)):
        if candidate.endswith("/old"):
            candidate = candidate[:-4]
        for prefix in ("/dev/dsk/", "/dev/rdsk/"):
            if candidate.startswith(prefix):
                candidate = candidate[len(prefix):]
        m = _DISK.match(candidate)
        if m:
            return m.group(1), m.group(2)
    return None


def _config(lines: List[str], header: int, pool: Pool) -> int:
    """Read the table whose NAME header is lines[header]; return the
    index of the first line after it."""
    base = len(_HEADER.match(lines[header]).group(1))
    role = None
    stack: List[Tuple[int, str]] = []       # (depth, name) above this row
    i = header + 1
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _SECTION.match(line):
            break
        indent = len(line) - len(line.lstrip(" "))
        depth = indent - base
        body = line[indent:]
        if depth == 0 and role is None and " " in pool.name and \
                body.startswith(pool.name + " "):
            # The pool's own row: its name may hold blanks, the vdevs'
            # names never do.
            name, rest = pool.name, body[len(pool.name):].split()
        else:
            parts = body.split()
            name, rest = parts[0], parts[1:]
        where = "line %d" % (i + 1)
        # A vdev name (a device path at most) as messages quote it.
        shown = excerpt(name, 60)
        if depth < 0 or depth % 2:
            raise _fail("NAME", "%s: %s is not indented under the NAME "
                        "header of pool %s" % (where, shown, pool.name))
        if depth == 0:
            if name == pool.name and rest and role is None:
                role = "data"
            elif name in CLASS_HEADERS and not rest and role is not None:
                role = CLASS_HEADERS[name]
            else:
                raise _fail("NAME", "%s: %s at the indentation of the "
                            "pool name in pool %s; the vdev tree cannot be "
                            "told (was the indentation lost?)"
                            % (where, shown, pool.name))
            stack = []
            i += 1
            continue
        if role is None:
            raise _fail("NAME", "%s: vdev %s comes before the row of pool "
                        "%s itself" % (where, shown, pool.name))
        if not rest:
            raise _fail("STATE", "%s: vdev %s of pool %s has no state"
                        % (where, shown, pool.name))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if (stack[-1][0] if stack else 0) != depth - 2:
            raise _fail("NAME", "%s: %s is indented deeper than a child "
                        "of the row above" % (where, shown))
        state = rest[0]
        if role != "spare" and (len(rest) < 4 or not all(
                _COUNT.match(count) for count in rest[1:4])):
            raise _fail("READ WRITE CKSUM", "%s: no error counts for %s "
                        "in pool %s" % (where, shown, pool.name))
        note = " ".join(rest[1:] if role == "spare" else rest[4:])
        top = stack[0][1] if stack else name
        if depth == 2:
            pool.vdevs.append(TopLevel(name, role, state))
        disk = _disk_of(name, note)
        if disk is not None:
            pool.members.append(PoolMember(
                disk[0], disk[1], role, top, state, name,
                stack[-1][1] if stack else None))
        stack.append((depth, name))
        i += 1
    if role is None:
        raise _fail("config", "no row for pool %s under the NAME header"
                    % pool.name)
    return i


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
    # A copy from a web page may carry no-break spaces for blanks.
    lines = text.replace("\u00a0", " ").expandtabs(8).splitlines()
    i = 0
    while i < len(lines):
        m = _POOL.match(lines[i])
        if not m:
            i += 1
            continue
        if m.group(1)[:1] not in ("", " "):
            raise _fail("pool", "line %d: %s is not a line '  pool: "
                        "<name>'" % (i + 1, excerpt(lines[i].strip(), 60)))
        name = m.group(1)[1:].rstrip()
        if not is_pool_name(name):
            raise _fail("pool", "line %d: %s is not a pool name (a letter, "
                        "then letters, digits, blanks and _-.:, at most "
                        "%d characters)"
                        % (i + 1, excerpt(name, 60), MAX_POOL_NAME))
        if name in pools:
            raise _fail("pool", "line %d: pool %s shown twice"
                        % (i + 1, name))
        state_m = _STATE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if state_m is None:
            raise _fail("state", "missing for pool %s (line %d)"
                        % (name, i + 2))
        pool = Pool(name, state_m.group(1))
        j = i + 2
        while j < len(lines) and not _HEADER.match(lines[j]):
            if _POOL.match(lines[j]):
                break
            if re.match(r"^\s*config: The configuration cannot be "
                        r"determined", lines[j]):
                raise _fail("config", "zpool cannot determine the "
                            "configuration of pool %s" % name)
            j += 1
        if j >= len(lines) or not _HEADER.match(lines[j]):
            raise _fail("config", "no NAME header for pool %s (line %d)"
                        % (name, i + 1))
        i = _config(lines, j, pool)
        pools[name] = pool
    if not pools and text.strip():
        raise _fail("pool", "no pool found in output")
    return pools


def query_zpool_status(host: Host) -> Dict[str, Pool]:
    return parse_zpool_status(output_of(host, "zpool", ["status"], "pool"))
