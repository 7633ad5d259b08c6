# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated kernel: when sd.conf is read and which list each sd
unit attached with (facts §1, §11, §16.2, §17).

sd.conf -- the first drv/sd.conf on the module path, at boot from the
boot archive's copy when platform.reboot() passes one -- is parsed at
boot and by ``update_drv -f`` into the driver's loaded property list.
Each unit keeps the list it attached with: a busy unit keeps its values
after ``update_drv -vf``; an idle unit is detached and attached again
but keeps the list it had (its devinfo node is never uninitialised); a
reboot attaches every unit with the loaded list, and a hot-plugged disk
gets a new node and therefore the loaded list.

nvme.conf is read at the same moments by nvme.py (``state["nvme"]``).
The state is one JSON document, DIR/state.json, written atomically.
Runs no commands.
"""

import json
import os
import time
from typing import Dict, List, Optional, Tuple

from . import attach as att
from . import driverconf
from . import rootfs
from . import scenario as scn

STATE_FILE = "state.json"
SD_CONF = "/kernel/drv/sd.conf"
# The module search path with boot modules present (platforms.md 1.2):
# hwc_parse_now() opens the first drv/<driver>.conf found on it, one
# file, no merge; /etc/driver/drv (Oracle Solaris 11) is never read.
MODULE_PATH = ("/system/boot/kernel", "/platform/i86pc/kernel", "/kernel",
               "/usr/kernel")
# The drivers whose .conf file the simulated kernel reads.
CONF_DRIVERS = ("sd", "nvme")


def conf_paths(driver: str = "sd") -> Tuple[str, ...]:
    """Every place on the module path of ``driver``'s .conf, in order."""
    return tuple("%s/drv/%s.conf" % (d, driver) for d in MODULE_PATH)


CONF_PATHS = conf_paths("sd")
# What the boot archive and boot environments keep: every driver's.
ALL_CONF_PATHS = tuple(p for drv in CONF_DRIVERS for p in conf_paths(drv))
_ANCHOR = 0xfffffe0bc4b1e9c0
_ARRAY = 0xfffffe0bd0a1c000
_UN = 0xfffffe0bd8a76000
_XBUF = 0xfffffe0bd88fa480
_SDEV = 0xfffffe0bd8731d40
_INQ = 0xfffffe0be1c04000
_ARENA = 0xfffffe0c10000000


# ---------------------------------------------------------------- state

def new_state(s: Dict, directory: str) -> Dict:
    return {"format": 1, "dir": os.path.abspath(directory),
            "scenario": s, "flavour": s["flavour"], "boot": 0, "seq": 0,
            "module_gen": -1, "grow": 0, "loaded": None, "next_conf": 1,
            "confs": {}, "n_items": 32, "units": {},
            "busy": {}, "present": {d["name"]: bool(d["present"])
                                    for d in s["disks"]},
            "uid": s.get("uid", 0), "drv_lock": False,
            "nvme": {"loaded": [], "loaded_from": None, "controllers": {}}}


def load(directory: str) -> Dict:
    with open(os.path.join(directory, STATE_FILE), encoding="utf-8") as f:
        return json.load(f)


def save(state: Dict) -> None:
    path = os.path.join(state["dir"], STATE_FILE)
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, separators=(",", ":"))
    os.replace(tmp, path)
    root = os.path.join(state["dir"], "root")
    s = state["scenario"]
    solid = {u["disk"]: u["fields"]["un_f_is_solid_state"]
             for u in state["units"].values()}
    tsv = rootfs.diskmgt_tsv(
        dict(s, disks=[dict(d, present=state["present"][d["name"]])
                       for d in s["disks"]]), solid)
    # Per process, as for state.json: fake commands run concurrently.
    tmp = os.path.join(state["dir"], "diskmgt.tsv.tmp.%d" % os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(tsv)
    os.replace(tmp, os.path.join(state["dir"], "diskmgt.tsv"))
    del root


def root_of(state: Dict) -> str:
    return os.path.join(state["dir"], "root")


def disk(state: Dict, name: str) -> Dict:
    d = scn.disk_by_name(state["scenario"], name)
    if d is None:
        raise KeyError("no disk %s in this scenario" % name)
    return d


# ---------------------------------------------------------------- messages

def log(state: Dict, lines: List[str]) -> None:
    """Append console messages to /var/adm/messages."""
    if not lines:
        return
    stamp = time.strftime("%b %e %H:%M:%S")
    host = state["scenario"]["hostname"]
    with open(root_of(state) + "/var/adm/messages", "a",
              encoding="latin-1") as f:
        for line in lines:
            f.write("%s %s %s\n" % (stamp, host, line))


# ---------------------------------------------------------------- conf

def effective_conf(root: str,
                   archive: Optional[Dict[str, Optional[str]]] = None,
                   driver: str = "sd") -> Optional[str]:
    """The driver's .conf the kernel reads: the first that exists on the
    module path, under ``root`` or (booting) in the boot archive's
    copies."""
    for path in conf_paths(driver):
        if archive is not None:
            if archive.get(path) is not None:
                return path
        elif os.path.isfile(root + path):
            return path
    return None


def parse_conf(state: Dict, driver: str,
               archive: Optional[Dict[str, Optional[str]]] = None
               ) -> Tuple[Optional[str], driverconf.ConfParse]:
    """(path, parse) of the driver's .conf the kernel reads now: none
    found is an empty parse."""
    path = effective_conf(root_of(state), archive, driver)
    if path is None:
        parsed = driverconf.ConfParse()
    elif archive is not None:
        parsed = driverconf.parse(archive[path].encode("latin-1"), path)
    else:
        with open(root_of(state) + path, "rb") as f:
            parsed = driverconf.parse(f.read(), path)
    return path, parsed


def read_conf(state: Dict,
              archive: Optional[Dict[str, Optional[str]]] = None) -> str:
    """Parse sd.conf now (boot, update_drv) and record it; returns the
    id of the new property list.  ``archive``: boot from the boot
    archive's copies (path -> text or None) instead of the root."""
    _, parsed = parse_conf(state, "sd", archive)
    props: List[list] = []
    for spec in parsed.specs:
        # A spec without a unit address is a wildcard node whose
        # properties are merged into every hardware sd node (inferred).
        names = {p[0] for p in spec["props"]}
        if spec["name"] == "sd" and not names & {"target", "lun", "reg"}:
            props.extend(p for p in spec["props"] if p[0] != "class")
    props.extend(parsed.globals)
    conf_id = str(state["next_conf"])
    state["next_conf"] += 1
    state["confs"][conf_id] = {"props": props,
                               "warnings": parsed.warnings}
    log(state, ["genunix: [ID 469209 kern.warning] WARNING: " + w
                for w in parsed.warnings])
    return conf_id


def _prune_confs(state: Dict) -> None:
    used = {u["conf"] for u in state["units"].values()}
    used.add(state["loaded"])
    for cid in list(state["confs"]):
        if cid not in used:
            del state["confs"][cid]


# ---------------------------------------------------------------- units

def addresses(state: Dict, unit: Dict, instance: int) -> Dict[str, int]:
    seq = unit["seq"]
    return {"un": _UN + seq * 0x4000, "xbuf": _XBUF + seq * 0x1000,
            "sd": _SDEV + instance * 0x1140, "inq": _INQ + instance * 0x100,
            "arena": _ARENA + seq * 0x100000}


def sd_state_addrs(state: Dict) -> Tuple[int, int]:
    gen = state["module_gen"]
    return (_ANCHOR + gen * 0x40,
            _ARRAY + gen * 0x200000 + state["grow"] * 0x8000)


def attach_unit(state: Dict, name: str, conf_id: str) -> None:
    d = disk(state, name)
    inst = d["instance"]
    while inst >= state["n_items"]:
        state["n_items"] *= 2
        state["grow"] += 1
    fields, warnings = att.attach(d, state["confs"][conf_id]["props"],
                                  state["flavour"])
    state["units"][str(inst)] = {"disk": name, "conf": conf_id,
                                 "seq": state["seq"], "fields": fields}
    state["seq"] += 1
    log(state, ["scsi: [ID 243001 kern.warning] WARNING: %s (sd%d):\n\t%s"
                % (d["phys_path"], inst, w) for w in warnings])


def _present_disks(state: Dict) -> List[Dict]:
    return sorted((d for d in state["scenario"]["disks"]
                   if state["present"][d["name"]]),
                  key=lambda d: d["instance"])


def is_sd(d: Dict) -> bool:
    """Whether sd drives this disk: a disk under blkdev (NVMe, virtio)
    never becomes an sd unit, never reads sd.conf and is never busy for
    update_drv; its instance number is blkdev's own and may equal an sd
    unit's."""
    return d.get("driver", "sd") == "sd"


def boot(state: Dict,
         archive: Optional[Dict[str, Optional[str]]] = None) -> None:
    """(Re)boot: a fresh sd module reads sd.conf (from the boot archive's
    copies when given: platform.reboot() decides) and attaches every
    present disk with that list."""
    state["boot"] += 1
    state["module_gen"] += 1
    state["units"] = {}
    state["n_items"] = 32
    state["grow"] = 0
    state["loaded"] = read_conf(state, archive)
    for d in _present_disks(state):
        if is_sd(d):
            attach_unit(state, d["name"], state["loaded"])
    _prune_confs(state)
    from . import nvme      # nvme.py uses this module's helpers
    nvme.boot(state, archive)


def is_busy(state: Dict, name: str) -> bool:
    """Open by ZFS (imported pool, not an available spare), mounted,
    swap or dump -- unless the scenario or set_busy() says otherwise."""
    if name in state["busy"]:
        return state["busy"][name]
    d = disk(state, name)
    if d["busy"] is not None:
        return bool(d["busy"])
    s = state["scenario"]
    for role in scn.pool_roles(s).get(name, []):
        if role["kind"] in ("pool", "log", "l2cache"):
            return True
    devs = [m["device"] for m in s["mounts"]] + s["swap"] + \
        ([s["dump"]] if s["dump"] else [])
    return any(scn.base_name(dev) == name for dev in devs)


def update_drv(state: Dict, force: bool, verbose: bool) -> Tuple[str, int]:
    """update_drv [-v] [-f] sd (facts §11.1): stderr text, exit status."""
    if state["uid"] != 0:
        return "You must be root to run this program.\n", 1
    if state["drv_lock"]:
        return "add_drv/rem_drv currently busy; try later\n", 1
    err = []
    attached = [u["disk"] for u in state["units"].values()]
    busy = [n for n in attached if is_busy(state, n)]
    kept = {k: v for k, v in state["units"].items()}
    # The unload attempt detaches every idle instance first.
    if busy:
        err.append("Cannot unload module: sd\nWill be unloaded upon "
                   "reboot.\n")
        idle = [k for k, u in kept.items() if u["disk"] not in busy]
        for k in idle:
            del state["units"][k]
        if not force:
            if verbose:
                err.append("sd.conf not updated in the kernel\n")
            # The detached idle units attach again on their next open,
            # with the list they had.
            for k in sorted(idle, key=int):
                attach_unit(state, kept[k]["disk"], kept[k]["conf"])
            return "".join(err), 1
        err.append("Forcing update of sd.conf.\n")
    else:
        state["units"] = {}
        state["module_gen"] += 1
        state["n_items"] = 32
        state["grow"] = 0
        idle = list(kept)
    state["loaded"] = read_conf(state)
    if verbose:
        err.append("sd.conf updated in the kernel.\n")
    # devfsadm -i sd attaches the detached instances again; their nodes
    # were never uninitialised, so they keep their old list (§1.4).
    for k in sorted(idle, key=int):
        attach_unit(state, kept[k]["disk"], kept[k]["conf"])
    _prune_confs(state)
    return "".join(err), 0


def hotplug(state: Dict, name: str) -> None:
    """Remove and re-insert one disk: a new node, the loaded list (a
    blkdev disk comes back without any sd unit)."""
    d = disk(state, name)
    for k, u in list(state["units"].items()):
        if u["disk"] == name:
            del state["units"][k]
    if not state["present"][name]:
        state["present"][name] = True
        root = root_of(state)
        rootfs.device_nodes(root, d)
        rootfs.path_to_inst(root, _present_disks(state))
    if is_sd(d):
        attach_unit(state, name, state["loaded"])
    elif d.get("model"):
        from . import nvme
        nvme.hotplug(state, d)
    _prune_confs(state)


def set_busy(state: Dict, name: str, busy: bool) -> None:
    disk(state, name)
    state["busy"][name] = bool(busy)


# ---------------------------------------------------------------- truth

def unit_of(state: Dict, name: str) -> Optional[Dict]:
    for u in state["units"].values():
        if u["disk"] == name:
            return u
    return None


def _ashift_of_top(state: Dict, pool: Dict, vdev: Dict) -> int:
    if vdev["ashift"] is not None:
        return vdev["ashift"]
    best = 9
    for dev in vdev["disks"]:
        d = disk(state, scn.base_name(dev))
        pb = d["logical_block"] if d["rc16"] is None else \
            d["logical_block"] << d["rc16"]
        if d.get("model"):
            # An NVMe namespace: what blkdev reported when the pool was
            # created, with no nvme.conf (the pool's ashift is fixed).
            from . import nvme
            pb = nvme.best_block_size(d, nvme.DEFAULT_MIN_BLOCK)
        best = max(best, max(pb, d["logical_block"], 512).bit_length() - 1)
    if state["flavour"] == "nexenta":
        best = max(best, 12)
    return best


def top_ashifts(state: Dict, pool: Dict) -> List[int]:
    """ashift of each top-level vdev, in scn.top_level_vdevs() order."""
    return [_ashift_of_top(state, pool, v)
            for v, _ in scn.top_level_vdevs(pool)]


def expected_disks(state: Dict) -> List[Dict]:
    """The simulator's own truth for every present disk (see
    appliance.Appliance.expected_disks)."""
    s = state["scenario"]
    roles = scn.pool_roles(s)
    pools = {p["name"]: p for p in s["pools"]}
    out = []
    for d in s["disks"]:
        name = d["name"]
        if d["dtype"] != "disk" or not state["present"][name]:
            continue
        sd = is_sd(d)
        u = unit_of(state, name) if sd else None
        f = u["fields"] if u else {}
        in_use: List[Dict] = []
        pool = None
        ashift = None
        for r in roles.get(name, []):
            in_use.append({"kind": r["kind"], "detail": r["pool"]})
            if r["kind"] != "exported_pool" and pool is None:
                pool = r["pool"]
                if r["top"] is not None:
                    ashift = top_ashifts(state, pools[r["pool"]])[r["top"]]
        for m in s["mounts"]:
            if scn.base_name(m["device"]) == name:
                in_use.append({"kind": "mount", "detail": m["mountpoint"]})
        for m in s["vfstab"]:
            if scn.base_name(m["device"]) == name:
                in_use.append({"kind": "vfstab",
                               "detail": m["mountpoint"]})
        for dev in s["swap"]:
            if scn.base_name(dev) == name:
                in_use.append({"kind": "swap", "detail": ""})
        if s["dump"] and scn.base_name(s["dump"]) == name:
            in_use.append({"kind": "dump", "detail": ""})
        if d["inuse_unknown"]:
            in_use = [{"kind": "unknown", "detail": ""}]
        if sd:
            values = {"suppress_cache_flush":
                      bool(f.get("un_f_suppress_cache_flush")),
                      "throttle_max": f.get("un_saved_throttle"),
                      "throttle_min": f.get("un_min_throttle"),
                      "disksort": not f.get("un_f_disksort_disabled", 0)}
        else:
            # No sd unit: no INQUIRY key, no sd.conf values; blkdev's
            # firmware and solid-state flag are the media's own.
            values = {"suppress_cache_flush": None, "throttle_max": None,
                      "throttle_min": None, "disksort": None}
        from . import nvme
        pblk = f.get("un_phy_blocksize") if sd else \
            1 << nvme.blkshifts(state, d)[1]
        out.append({
            "name": name, "instance": d["instance"],
            "driver": d.get("driver", "sd"),
            "key": d["vid"] + d["pid"] if sd else None,
            "serial": d["serial"],
            "firmware": d["rev"] if sd else d["firmware"],
            "size_bytes": d["blocks"] * d["logical_block"],
            "logical_block_bytes": d["logical_block"],
            "physical_block_bytes": pblk,
            "nvme": nvme.disk_info(state, d),
            "ssd": bool(f.get("un_f_is_solid_state")) if sd
            else bool(d["solid_state"]),
            "in_use": in_use, "pool": pool, "vdev_ashift": ashift,
            "busy": is_busy(state, name),
            "sd": values,
            "attached_with_loaded_list": bool(u) and
            u["conf"] == state["loaded"]})
    return out
