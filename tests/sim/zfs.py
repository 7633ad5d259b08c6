# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fake zpool(1M) (``status``, ``list``, with ``-o bootfs`` from the
platform) and zdb(1M) (``-C``) for the scenario's pools (facts §12,
§13).

Pool trees come from the scenario; ashift is per top-level vdev; leaf
is_ssd is the attached unit's solid-state flag.  GUIDs, txgs and object
numbers are derived from names, stable and illustrative.  Runs no
commands.
"""

import hashlib
from typing import Dict, List, Tuple

from . import cliopt
from . import kernel
from . import scenario as scn

_ZPOOL_USAGE = {
    "status": "usage:\n\tstatus [-vx] [-T d|u] [pool] ... "
              "[interval [count]]\n",
    "list": "usage:\n\tlist [-Hp] [-o property[,...]] [-T d|u] [pool] ... "
            "[interval [count]]\n",
}


def _num(*parts) -> int:
    h = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big") | (1 << 60)


def imported(state: Dict) -> List[Dict]:
    return sorted((p for p in state["scenario"]["pools"]
                   if not p["exported"]), key=lambda p: p["name"])


def _leaf_name(dev: str) -> str:
    return dev


def _path(dev: str) -> str:
    return "/dev/dsk/%s" % (dev if dev != scn.base_name(dev)
                            else dev + "s0")


def _top_name(v: Dict, index: int) -> str:
    if v["type"] == "disk":
        return v["disks"][0]
    if v["type"] == "mirror":
        return "mirror-%d" % index
    return "%s-%d" % (v["type"], index)


# ---------------------------------------------------------------- status

def _status_pool(state: Dict, p: Dict, full_paths: bool) -> str:
    nx = state["flavour"] == "nexenta"
    tops = scn.top_level_vdevs(p)

    def name(dev: str) -> str:
        return _path(dev) if full_paths else _leaf_name(dev)

    width = len(p["name"])
    for index, (v, is_log) in enumerate(tops):
        width = max(width, len(_top_name(v, index)) + 2)
        if v["type"] != "disk":
            for dev in v["disks"]:
                width = max(width, len(name(dev)) + 4)
    for dev in p["cache"] + p["spares"]:
        width = max(width, len(name(dev)) + 2)
    width = max(width, 10)

    def row(depth: int, label: str, spare: bool = False) -> str:
        text = "\t%s%-*s  %-8s" % (" " * depth, width - depth, label,
                                   "AVAIL" if spare else p["state"])
        if not spare:
            text += " %5s %5s %5s" % ("0", "0", "0")
        return text + "\n"

    def vdev_rows(index: int, v: Dict) -> List[str]:
        if v["type"] == "disk":
            return [row(2, name(v["disks"][0]))]
        return [row(2, _top_name(v, index))] + \
            [row(4, name(dev)) for dev in v["disks"]]

    out = ["  pool: %s\n" % p["name"], " state: %s\n" % p["state"],
           "  scan: %s\n" % p["scan"], "config:\n\n",
           "\t%-*s  %-8s %5s %5s %5s\n" % (width, "NAME", "STATE", "READ",
                                           "WRITE", "CKSUM"),
           row(0, p["name"])]
    for index, (v, is_log) in enumerate(tops):
        if not is_log:
            out += vdev_rows(index, v)
    if any(is_log for _, is_log in tops):
        out.append("\tlogs\n" if nx else "\tlogs\t\n")
        for index, (v, is_log) in enumerate(tops):
            if is_log:
                out += vdev_rows(index, v)
    if p["cache"]:
        out.append("\tcache\n")
        out += [row(2, name(dev)) for dev in p["cache"]]
    if p["spares"]:
        out.append("\tspares\n")
        out += [row(2, name(dev), spare=True) for dev in p["spares"]]
    out.append("\nerrors: No known data errors\n")
    return "".join(out)


def zpool_status(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("zpool", argv, ":vxDPT:")
    except cliopt.GetoptError as e:
        if e.message:
            return "", e.message, 2
        return "", "invalid option '%s'\n%s" % (
            e.opt, _ZPOOL_USAGE["status"]), 2
    flags = {c for c, _ in opts}
    if flags & {"D", "T"} or any(o.isdigit() for o in operands):
        return "", "zpool: sim: only 'zpool status [-vxP] [pool]...' is " \
                   "modelled\n", 2
    pools = {p["name"]: p for p in imported(state)}
    err = []
    chosen = []
    rc = 0
    if operands:
        for name in operands:
            if name in pools:
                chosen.append(pools[name])
            else:
                err.append("cannot open '%s': no such pool\n" % name)
                rc = 1
    else:
        chosen = list(pools.values())
    if not operands and not chosen:
        return "no pools available\n", "", 0
    if "x" in flags:
        if operands:
            text = "".join("pool '%s' is healthy\n" % p["name"]
                           for p in chosen)
        else:
            text = "all pools are healthy\n"
        return text, "".join(err), rc
    text = "\n".join(_status_pool(state, p, "P" in flags) for p in chosen)
    return text, "".join(err), rc


def zpool_list(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("zpool", argv, ":Hpo:T:")
    except cliopt.GetoptError as e:
        if e.opt in "oT" and not e.message:
            return "", "missing argument for '%s' option\n%s" % (
                e.opt, _ZPOOL_USAGE["list"]), 2
        return "", "invalid option '%s'\n%s" % (
            e.opt, _ZPOOL_USAGE["list"]), 2
    scripted = any(c == "H" for c, _ in opts)
    props = ["name", "size", "alloc", "free", "expandsz", "frag", "cap",
             "dedup", "health", "altroot"]
    for c, v in opts:
        if c == "o":
            props = v.split(",")
        elif c == "T":
            return "", "zpool: sim: -T is not modelled\n", 2
    known = ("name", "size", "alloc", "free", "expandsz", "frag", "cap",
             "dedup", "health", "altroot", "guid", "bootfs")
    for prop in props:
        if prop not in known:
            return "", "bad property list: invalid property '%s'\n%s" % (
                prop, _ZPOOL_USAGE["list"]), 2
    pools = {p["name"]: p for p in imported(state)}
    err = []
    rc = 0
    chosen = []
    for name in operands or sorted(pools):
        if name in pools:
            chosen.append(pools[name])
        else:
            err.append("cannot open '%s': no such pool\n" % name)
            rc = 1
    if not operands and not chosen:
        return "no pools available\n", "", 0
    parseable = any(c == "p" for c, _ in opts)
    table = [[_list_value(state, p, prop, parseable) for prop in props]
             for p in chosen]
    if scripted:
        return "".join("\t".join(r) + "\n" for r in table), "".join(err), rc
    head = [prop.upper() for prop in props]
    widths = [max(len(x) for x in col) for col in zip(head, *table)]

    def line(cells: List[str]) -> str:
        parts = []
        for i, (c, w) in enumerate(zip(cells, widths)):
            left = props[i] in ("name", "health", "altroot", "bootfs")
            if i == len(cells) - 1 and left:
                parts.append(c)
            else:
                parts.append(c.ljust(w) if left else c.rjust(w))
        return "  ".join(parts) + "\n"
    return line(head) + "".join(line(r) for r in table), "".join(err), rc


def nicenum(n: int) -> str:
    """zfs_nicenum(): 1.23K, 465G, 3.62T."""
    index = 0
    while n >= 1024 ** (index + 1) and index < 6:
        index += 1
    if index == 0:
        return "%d" % n
    unit = " KMGTPE"[index]
    if n % (1024 ** index) == 0:
        return "%d%s" % (n // 1024 ** index, unit)
    for prec in (2, 1, 0):
        text = "%.*f%s" % (prec, n / float(1024 ** index), unit)
        if len(text) <= 5:
            break
    return text


def _list_value(state: Dict, p: Dict, prop: str, parseable: bool) -> str:
    """One zpool list column; sizes are illustrative (30% allocated)."""
    if prop == "name":
        return p["name"]
    if prop == "health":
        return p["state"]
    if prop == "guid":
        return str(p.get("guid") or _num(p["name"], "guid"))
    if prop == "bootfs":
        # The platform's: SmartOS pool boot, or the active BE on rpool.
        from . import platform
        return platform.bootfs(state, p["name"])
    if prop in ("altroot", "expandsz"):
        return "-"
    if prop == "dedup":
        return "1.00" if parseable else "1.00x"
    if prop == "frag":
        return "1" if parseable else "1%"
    if prop == "cap":
        return "30" if parseable else "30%"
    size = 0
    for v, is_log in scn.top_level_vdevs(p):
        if is_log:
            continue
        each = min(kernel.disk(state, scn.base_name(d))["blocks"] *
                   kernel.disk(state, scn.base_name(d))["logical_block"]
                   for d in v["disks"])
        if v["type"].startswith("raidz"):
            each *= len(v["disks"])
        size += each
    value = {"size": size, "alloc": size * 3 // 10,
             "free": size - size * 3 // 10}[prop]
    return str(value) if parseable else nicenum(value)


def zpool_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    if not argv:
        return "", "missing command\n", 2
    if argv[0] == "status":
        return zpool_status(state, argv[1:])
    if argv[0] == "list":
        return zpool_list(state, argv[1:])
    return "", "zpool: sim: '%s' is not modelled\n" % argv[0], 2


# ---------------------------------------------------------------- zdb

class _Nv:
    """An nvlist: [(name, kind, value)], kind in u64, str, bool, nvl."""

    def __init__(self) -> None:
        self.items: List[Tuple[str, str, object]] = []

    def add(self, name: str, kind: str, value=None) -> "_Nv":
        self.items.append((name, kind, value))
        return self


def dump_nvlist(nv: _Nv, indent: int) -> List[str]:
    """libnvpair dump_nvlist()."""
    out = []
    pad = " " * indent
    for name, kind, value in nv.items:
        if kind == "u64":
            out.append("%s%s: %d\n" % (pad, name, value))
        elif kind == "str":
            out.append("%s%s: '%s'\n" % (pad, name, value))
        elif kind == "bool":
            out.append("%s%s\n" % (pad, name))
        elif kind == "boolv":
            out.append("%s%s: %s\n" % (pad, name,
                                       "true" if value else "false"))
        elif kind == "nvl":
            out.append("%s%s:\n" % (pad, name))
            out += dump_nvlist(value, indent + 4)
        elif kind == "nvla":
            for i, sub in enumerate(value):
                out.append("%s%s[%d]:\n" % (pad, name, i))
                out += dump_nvlist(sub, indent + 4)
    return out


def _ssd(state: Dict, dev: str) -> bool:
    """vdev_is_ssd: sd's rotation-rate answer, or blkdev's media (NVMe
    is solid state)."""
    d = kernel.disk(state, scn.base_name(dev))
    if d.get("driver", "sd") != "sd":
        return bool(d.get("solid_state", True))
    u = kernel.unit_of(state, scn.base_name(dev))
    return bool(u and u["fields"]["un_f_is_solid_state"])


def pool_config(state: Dict, p: Dict) -> _Nv:
    """The pool's config nvlist as spa_config_generate() builds it."""
    nx = state["flavour"] == "nexenta"
    pool = p["name"]
    guid = p.get("guid") or _num(pool, "guid")
    tops = scn.top_level_vdevs(p)
    ashifts = kernel.top_ashifts(state, p)
    counter = {"ms": 256, "dtl": 520, "zap": 129}

    def take(kind: str) -> int:
        counter[kind] += 1
        return counter[kind] - 1

    def leaf_common(nv: _Nv, dev: str, index: int) -> None:
        d = kernel.disk(state, scn.base_name(dev))
        whole = dev == scn.base_name(dev)
        sl = 0 if whole else int(dev[-1])
        minor = chr(ord("a") + sl)
        nv.add("type", "str", "disk").add("id", "u64", index)
        nv.add("guid", "u64", _num(pool, dev))
        nv.add("path", "str", _path(dev))
        nv.add("devid", "str", "%s/%s" % (d["devid"], minor))
        nv.add("phys_path", "str", "%s:%s" % (d["phys_path"], minor))
        nv.add("whole_disk", "u64", 1 if whole else 0)

    def top_fields(nv: _Nv, v: Dict, index: int, is_log: bool,
                   ashift: int) -> None:
        sizes = [kernel.disk(state, scn.base_name(dev))["blocks"] *
                 kernel.disk(state, scn.base_name(dev))["logical_block"]
                 for dev in v["disks"]]
        size = min(sizes)
        if v["type"].startswith("raidz"):
            size *= len(v["disks"])
        asize = ((size - 15 * 1024 * 1024) >> ashift) << ashift
        nv.add("metaslab_array", "u64", take("ms"))
        nv.add("metaslab_shift", "u64", max(asize // 200, 1).bit_length())
        nv.add("ashift", "u64", ashift).add("asize", "u64", asize)
        nv.add("is_log", "u64", 1 if is_log else 0)
        if nx:
            nv.add("is_special", "u64", 0)

    children = []
    all_ssd = True
    for index, (v, is_log) in enumerate(tops):
        nv = _Nv()
        txg = 4 if not is_log else p["txg"] - 307
        if v["type"] == "disk":
            dev = v["disks"][0]
            ssd = _ssd(state, dev)
            leaf_common(nv, dev, index)
            top_fields(nv, v, index, is_log, ashifts[index])
            if nx:
                nv.add("is_ssd", "boolv", ssd)
            nv.add("DTL", "u64", take("dtl")).add("create_txg", "u64", txg)
            nv.add("com.delphix:vdev_zap_leaf", "u64", take("zap"))
            nv.add("com.delphix:vdev_zap_top", "u64", take("zap"))
        else:
            ssd = all(_ssd(state, dev) for dev in v["disks"])
            nv.add("type", "str", "raidz" if v["type"].startswith("raidz")
                   else v["type"])
            nv.add("id", "u64", index)
            nv.add("guid", "u64", _num(pool, "top", index))
            if v["type"].startswith("raidz"):
                nv.add("nparity", "u64", int(v["type"][-1]))
            top_fields(nv, v, index, is_log, ashifts[index])
            if nx:
                nv.add("is_ssd", "boolv", ssd)
            nv.add("create_txg", "u64", txg)
            nv.add("com.delphix:vdev_zap_top", "u64", take("zap"))
            leaves = []
            for i, dev in enumerate(v["disks"]):
                leaf = _Nv()
                leaf_common(leaf, dev, i)
                if nx:
                    leaf.add("is_ssd", "boolv", _ssd(state, dev))
                leaf.add("DTL", "u64", take("dtl"))
                leaf.add("create_txg", "u64", txg)
                leaf.add("com.delphix:vdev_zap_leaf", "u64", take("zap"))
                leaves.append(leaf)
            nv.add("children", "nvla", leaves)
        all_ssd = all_ssd and ssd
        children.append(nv)
    root = _Nv().add("type", "str", "root").add("id", "u64", 0)
    root.add("guid", "u64", guid)
    if nx:
        root.add("is_ssd", "boolv", all_ssd)
    root.add("create_txg", "u64", 4).add("children", "nvla", children)
    features = _Nv().add("com.delphix:hole_birth", "bool")
    features.add("com.delphix:embedded_data", "bool")
    cfg = _Nv().add("version", "u64", p["version"])
    cfg.add("name", "str", pool).add("state", "u64", 0)
    cfg.add("txg", "u64", p["txg"]).add("pool_guid", "u64", guid)
    if not nx:
        cfg.add("errata", "u64", p["errata"])
    if p["comment"]:
        cfg.add("comment", "str", p["comment"])
    cfg.add("hostid", "u64", p.get("hostid") or
            state["scenario"]["hostid"])
    cfg.add("hostname", "str", p.get("hostname") or
            state["scenario"]["hostname"])
    cfg.add("com.delphix:has_per_vdev_zaps", "bool")
    cfg.add("vdev_children", "u64", len(children))
    cfg.add("vdev_tree", "nvl", root)
    cfg.add("features_for_read", "nvl", features)
    return cfg


def zdb_main(state: Dict, argv0: str,
             argv: List[str]) -> Tuple[str, str, int]:
    usage = ("Usage:\t%s [-AbcdDFGhiLMPsvX] [-e [-V] [-p <path> ...]] "
             "[-I <inflight I/Os>]\n\t\t[-o <var>=<value>]... [-t <txg>] "
             "[-U <cache>] [-x <dumpdir>]\n\t\t[<poolname> [<object> ...]]"
             "\n\t%s -C [-A] [-U <cache>]\n" % ("zdb", "zdb"))
    try:
        opts, operands = cliopt.getopt(
            "zdb", argv, "AbcCdDeEFGhiI:lLmMo:Op:PqRsSt:uU:vVx:X")
    except cliopt.GetoptError as e:
        return "", e.message + usage, 1
    flags = [c for c, _ in opts]
    if set(flags) != {"C"} or flags.count("C") > 2:
        return "", "zdb: sim: only 'zdb -C [pool]' is modelled\n", 2
    pools = {p["name"]: p for p in imported(state)}
    if not operands:
        out = []
        for p in state["scenario"]["pools"]:
            if not p["exported"]:
                out.append("%s:\n" % p["name"])
                out += dump_nvlist(pool_config(state, p), 4)
        return "".join(out), "", 0
    target = operands[0]
    if target not in pools:
        return "", "zdb: can't open '%s': No such file or directory\n" \
            % target, 1
    cfg = pool_config(state, pools[target])
    out = []
    if flags.count("C") > 1:
        out.append("\nCached configuration:\n")
        out += dump_nvlist(cfg, 8)
    out.append("\nMOS Configuration:\n")
    out += dump_nvlist(cfg, 8)
    return "".join(out), "", 0
