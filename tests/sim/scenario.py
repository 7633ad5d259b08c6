# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Read and complete a scenario file: the simulated appliance's hardware,
pools and file systems (see tests/sim/README.md for the schema).

normalize() checks every field, pads the INQUIRY strings exactly, splits
the ATA model the way the SATA framework does for the devinfo
properties, and fills in the defaults, so that the rest of the simulator
works on complete records.  Runs no commands.
"""

import json
import re
from typing import Dict, List, Optional

FLAVOURS = ("nexenta", "upstream")
# sd.conf shapes: each flavour's shipped file, and the SmartOS platform
# image's own (tests/fixtures/realworld/sdconf, smartos-live dd25937d).
SHAPES = FLAVOURS + ("smartos",)
_DISK_KEYS = {
    "name", "instance", "phys_path", "dtype", "ctype", "interconnect",
    "vid", "pid", "rev", "ata_model", "vendor_id", "product_id", "serial",
    "logical_block", "blocks", "size_bytes", "lbppbe", "rc16_fails",
    "rotation_rate", "nv_sup", "wce", "tagged_queueing",
    "untagged_queueing", "removable", "hotpluggable", "busy",
    "device_file", "location", "faulty", "locate", "devid", "inq_vendor",
    "present", "thin", "inuse_unknown", "node_type", "driver", "model",
    "solid_state", "dkio_ignores_sdconf"} | {
    # An NVMe namespace's controller and Identify data (nvme.py).
    "controller", "nsid", "nvme_version", "lba_formats", "lba_format",
    "vwc_present", "vwc_enabled_default"}
_NVME_KEYS = ("controller", "nsid", "nvme_version", "lba_formats",
              "lba_format", "vwc_present", "vwc_enabled_default")
# INQUIRY fields: a disk under blkdev has none.
_SCSI_ONLY = ("vid", "pid", "ata_model", "inq_vendor", "vendor_id",
              "product_id")
_POOL_KEYS = {"name", "guid", "txg", "version", "state", "hostid",
              "hostname", "scan", "exported", "vdevs", "logs", "cache",
              "spares", "errata", "comment"}
_TOP_KEYS = {"name", "description", "flavour", "hostname", "hostid",
             "sd_conf", "disks", "pools", "swap", "dump", "mounts",
             "vfstab", "uid", "platform", "nvme_conf"}
_VDEV_TYPES = ("disk", "mirror", "raidz", "raidz1", "raidz2", "raidz3")
_NAME_RE = re.compile(r"^c\d+(t[0-9A-Fa-f]+)?d\d+$")
_SLICE_RE = re.compile(r"^(c\d+(?:t[0-9A-Fa-f]+)?d\d+)(s\d+|p\d+)?$")


class ScenarioError(ValueError):
    """A scenario that the simulator cannot build."""


def load(source) -> Dict:
    """A scenario from a dict or a JSON file path, normalised."""
    if isinstance(source, dict):
        raw = json.loads(json.dumps(source))
    else:
        with open(source, encoding="utf-8") as f:
            raw = json.load(f)
    return normalize(raw)


def _pad(value: str, width: int, what: str) -> str:
    if len(value) > width:
        raise ScenarioError("%s %r is longer than %d bytes"
                            % (what, value, width))
    return value + " " * (width - len(value))


def split_model(model: str):
    """sata_split_model(): (vendor or None, product) of an ATA model."""
    model = model.rstrip(" \t\0")
    for i, c in enumerate(model):
        if c in " \t":
            if i <= 8:
                return model[:i], model[i + 1:]
            break
    return None, model


def base_name(device: str) -> str:
    """cXtYdZ of a disk or slice name."""
    m = _SLICE_RE.match(device)
    if not m:
        raise ScenarioError("bad device name %r" % device)
    return m.group(1)


def _blkdev(d: Dict, name: str) -> None:
    """A disk under blkdev (blkdev.c, nvme.c, vioblk.c): an NVMe namespace
    when it has a ``model`` (Identify Controller, 40 characters), else a
    virtio disk with ``vendor_id`` / ``product_id``.  There is no INQUIRY:
    the devinfo vendor/product are the model split at its first blank
    (sata_split_model(), "NVMe" when it has none), ``rev`` is the
    firmware (8 characters on NVMe) and ``serial`` up to 20 characters.
    vid/pid/rev are left blank (no INQUIRY): kernel.py attaches no sd
    unit for a blkdev disk."""
    model = d.get("model")
    if model is not None:
        bad = [k for k in _SCSI_ONLY if k in d]
        if bad or not isinstance(model, str) or not model.strip() or \
                len(model) > 40:
            raise ScenarioError("disk %s: an NVMe namespace has a model "
                                "of 1-40 characters and no %s"
                                % (name, "/".join(bad) or "INQUIRY"))
        vendor, product = split_model(model.strip())
        d["model"] = model.strip()
        d["vendor_id"] = vendor if vendor is not None else "NVMe"
        d["product_id"] = product
        d.setdefault("ctype", "nvme")
        d.setdefault("solid_state", True)
    else:
        bad = [k for k in ("vid", "pid", "ata_model", "inq_vendor")
               if k in d] + [k for k in _NVME_KEYS if k in d]
        if bad or not d.get("vendor_id") or not d.get("product_id"):
            raise ScenarioError("disk %s: a virtio disk has vendor_id and "
                                "product_id and no %s"
                                % (name, "/".join(bad) or "INQUIRY"))
        d["model"] = None
        d.setdefault("ctype", None)
        d.setdefault("solid_state", False)
    firmware = d.pop("rev", "")
    serial = d.get("serial", "")
    if len(firmware) > 8 or len(serial) > 20:
        raise ScenarioError("disk %s: firmware is at most 8 characters, "
                            "serial at most 20" % name)
    d["firmware"] = firmware
    d["vid"] = d["pid"] = d["rev"] = ""
    if model is not None:
        _nvme_namespace(d, name)
    # Kept for the scenario's shape; zdb's is_ssd of a blkdev disk comes
    # from solid_state (zfs._ssd).
    d.setdefault("rotation_rate", 1 if d["solid_state"] else None)
    d.setdefault("hotpluggable", False)
    d.setdefault("interconnect", "parallel")
    m = re.search(r"/blkdev@w([0-9A-Fa-f]{16}),", d["phys_path"])
    if m:
        # nvme_bd_devid(): DEVID_SCSI3_WWN of the EUI-64; blkdev nodes
        # with an EUI-64 are DDI_NT_BLOCK_BLKDEV (links cNt<EUI-64>dN).
        d.setdefault("devid", "id1,blkd@w" + m.group(1).lower())
        d.setdefault("node_type", "ddi_block:blkdev")
    else:
        d.setdefault("devid", "id1,blkd@A" + (serial or name))
        d.setdefault("node_type", "ddi_block:channel")


def _nvme_namespace(d: Dict, name: str) -> None:
    """Check and complete an NVMe namespace's controller and Identify
    Namespace fields (the controller number itself is derived by
    _nvme_controllers() when not given)."""
    lb = d.get("logical_block", 512)
    if not isinstance(lb, int) or lb < 512 or lb & (lb - 1):
        raise ScenarioError("disk %s: bad logical_block" % name)
    ctrl = d.setdefault("controller", None)
    if ctrl is not None and (not isinstance(ctrl, int) or
                             isinstance(ctrl, bool) or ctrl < 0):
        raise ScenarioError("disk %s: controller is an nvme instance "
                            "number (0 for nvme0)" % name)
    nsid = d.setdefault("nsid", 1)
    if not isinstance(nsid, int) or isinstance(nsid, bool) or nsid < 1:
        raise ScenarioError("disk %s: nsid is a namespace ID from 1"
                            % name)
    version = d.setdefault("nvme_version", "1.3")
    if not isinstance(version, str) or \
            not re.match(r"^\d+\.\d+$", version):
        raise ScenarioError("disk %s: nvme_version is like \"1.3\"" % name)
    formats = d.setdefault("lba_formats", [{"data": lb, "ms": 0, "rp": 0}])
    if not isinstance(formats, list) or not 1 <= len(formats) <= 16:
        raise ScenarioError("disk %s: lba_formats is a list of 1-16 "
                            "formats" % name)
    checked = []
    for f in formats:
        if not isinstance(f, dict) or set(f) - {"data", "ms", "rp"} or \
                "data" not in f:
            raise ScenarioError("disk %s: an LBA format is {data, ms, rp}"
                                % name)
        f = {"data": f["data"], "ms": f.get("ms", 0), "rp": f.get("rp", 0)}
        data = f["data"]
        if not isinstance(data, int) or (data != 0 and (
                data < 512 or data & (data - 1))):
            raise ScenarioError("disk %s: LBA data size %r is not 0 or a "
                                "power of 2 from 512" % (name, data))
        if not isinstance(f["ms"], int) or not 0 <= f["ms"] <= 65535:
            raise ScenarioError("disk %s: LBA metadata size is 0-65535"
                                % name)
        if f["rp"] not in (0, 1, 2, 3):
            raise ScenarioError("disk %s: LBA relative performance is "
                                "0-3" % name)
        checked.append(f)
    d["lba_formats"] = checked
    in_use = d.get("lba_format")
    if in_use is None:
        in_use = next((i for i, f in enumerate(checked)
                       if f["data"] == lb and f["ms"] == 0), None)
        if in_use is None:
            raise ScenarioError("disk %s: no LBA format of %d bytes "
                                "without metadata" % (name, lb))
    if not isinstance(in_use, int) or isinstance(in_use, bool) or \
            not 0 <= in_use < len(checked) or \
            checked[in_use]["data"] != lb or checked[in_use]["ms"] != 0:
        raise ScenarioError("disk %s: lba_format must index a format of "
                            "logical_block bytes without metadata" % name)
    d["lba_format"] = in_use
    for k in ("vwc_present", "vwc_enabled_default"):
        d.setdefault(k, True)
        if not isinstance(d[k], bool):
            raise ScenarioError("disk %s: %s is true or false" % (name, k))


def _nvme_controllers(disks: List[Dict]) -> None:
    """Give every NVMe namespace its controller: the one given, else the
    one of another namespace of the same drive (nvme node, model, serial
    and firmware), else the lowest unused instance, in scenario order;
    the namespaces of a controller must agree on its node and Identify
    Controller data."""
    nvme = [d for d in disks if d["driver"] == "blkdev" and d["model"]]

    def node(d: Dict) -> tuple:
        # The nvme node and the drive's identity: namespaces of one
        # drive share them.
        return (d["phys_path"].rsplit("/", 1)[0], d["model"], d["serial"],
                d["firmware"])

    parent: Dict[tuple, int] = {}
    for d in nvme:
        p = node(d)
        if d["controller"] is not None:
            if parent.setdefault(p, d["controller"]) != d["controller"]:
                raise ScenarioError("disk %s: the namespaces under %s "
                                    "have one controller"
                                    % (d["name"], p[0]))
    used = set(parent.values())
    for d in nvme:
        p = node(d)
        if p not in parent:
            parent[p] = min(set(range(len(used) + 1)) - used)
            used.add(parent[p])
        d["controller"] = parent[p]
    first: Dict[int, Dict] = {}
    ids = set()
    for d in nvme:
        c = first.setdefault(d["controller"], d)
        for k in ("model", "serial", "firmware", "nvme_version",
                  "vwc_present", "vwc_enabled_default"):
            if d[k] != c[k]:
                raise ScenarioError("disk %s: %s differs from %s's on "
                                    "controller nvme%d" % (
                                        d["name"], k, c["name"],
                                        d["controller"]))
        if d["phys_path"].rsplit("/", 1)[0] != \
                c["phys_path"].rsplit("/", 1)[0]:
            raise ScenarioError("disk %s: the namespaces of nvme%d are "
                                "under one node" % (d["name"],
                                                    d["controller"]))
        if (d["controller"], d["nsid"]) in ids:
            raise ScenarioError("disk %s: duplicate nsid %d on nvme%d" % (
                d["name"], d["nsid"], d["controller"]))
        ids.add((d["controller"], d["nsid"]))


def _disk(raw: Dict) -> Dict:
    unknown = set(raw) - _DISK_KEYS
    if unknown:
        raise ScenarioError("disk %s: unknown keys %s"
                            % (raw.get("name"), sorted(unknown)))
    d = dict(raw)
    name = d.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ScenarioError("disk name %r is not cXtYdZ" % name)
    d.setdefault("driver", "sd")
    if d["driver"] not in ("sd", "blkdev"):
        raise ScenarioError("disk %s: driver must be sd or blkdev" % name)
    if not isinstance(d.get("phys_path"), str):
        raise ScenarioError("disk %s: phys_path must be absolute" % name)
    if d["driver"] == "blkdev":
        if d.get("dtype", "disk") != "disk":
            raise ScenarioError("disk %s: blkdev disks are disks" % name)
        _blkdev(d, name)
    else:
        for k in ("model", "solid_state") + _NVME_KEYS:
            if k in d:
                raise ScenarioError("disk %s: %s is for blkdev disks"
                                    % (name, k))
        d["model"] = None
    if not isinstance(d.get("instance"), int) or d["instance"] < 0:
        raise ScenarioError("disk %s: instance must be an int" % name)
    if not isinstance(d.get("phys_path"), str) or \
            not d["phys_path"].startswith("/"):
        raise ScenarioError("disk %s: phys_path must be absolute" % name)
    d.setdefault("dtype", "disk")
    if d["dtype"] not in ("disk", "cdrom"):
        raise ScenarioError("disk %s: dtype must be disk or cdrom" % name)
    d.setdefault("ctype", "scsi")
    d.setdefault("interconnect",
                 "sata" if d["ctype"] == "sata" else "sas")
    if d["interconnect"] not in ("parallel", "fabric", "fibre", "ssa",
                                 "sata", "sas"):
        raise ScenarioError("disk %s: bad interconnect" % name)
    model = d.get("ata_model")
    if d["driver"] == "blkdev":
        pass        # vendor_id / product_id set by _blkdev()
    elif "vid" not in d:
        if model is None:
            raise ScenarioError("disk %s: vid or ata_model required" % name)
        d["vid"] = "ATA"
    if "pid" not in d:
        if model is None:
            raise ScenarioError("disk %s: pid or ata_model required" % name)
        d["pid"] = model[:16]
    d.setdefault("rev", "")
    d["vid"] = _pad(d["vid"], 8, "vid")
    d["pid"] = _pad(d["pid"], 16, "pid")
    d["rev"] = _pad(d["rev"], 4, "rev")
    d["inq_vendor"] = d.get("inq_vendor", "")
    if d["driver"] == "blkdev":
        pass
    elif model is not None:
        vendor, product = split_model(model)
        d.setdefault("vendor_id", vendor if vendor is not None
                     else d["vid"].rstrip(" \0"))
        d.setdefault("product_id", product)
    else:
        d.setdefault("vendor_id", d["vid"].rstrip(" \0"))
        d.setdefault("product_id", d["pid"].rstrip(" \0"))
    d.setdefault("serial", "")
    d.setdefault("logical_block", 512)
    lb = d["logical_block"]
    if not isinstance(lb, int) or lb < 512 or lb & (lb - 1):
        raise ScenarioError("disk %s: bad logical_block" % name)
    if "blocks" not in d:
        if "size_bytes" in d:
            d["blocks"] = d["size_bytes"] // lb
        elif d["dtype"] == "cdrom":
            d["blocks"] = 0
        else:
            raise ScenarioError("disk %s: blocks required" % name)
    d.pop("size_bytes", None)
    d["rc16"] = None if d.pop("rc16_fails", False) else d.pop("lbppbe", 0)
    d.pop("lbppbe", None)
    if d["rc16"] is not None and not 0 <= d["rc16"] <= 15:
        raise ScenarioError("disk %s: lbppbe is a 4-bit field" % name)
    d.setdefault("rotation_rate", None)
    d.setdefault("nv_sup", None)
    d.setdefault("wce", True)
    d.setdefault("tagged_queueing", True)
    d.setdefault("untagged_queueing", True)
    d.setdefault("removable", False)
    d.setdefault("hotpluggable", d["ctype"] == "sata")
    d.setdefault("busy", None)
    d.setdefault("device_file", None)
    d.setdefault("location", None)
    d.setdefault("faulty", None)
    d.setdefault("locate", None)
    d.setdefault("present", True)
    d.setdefault("thin", False)
    d.setdefault("dkio_ignores_sdconf", False)
    d.setdefault("inuse_unknown", None)
    if d["inuse_unknown"] is True:
        d["inuse_unknown"] = 5
    if "devid" not in d:
        m = re.search(r"@g([0-9a-f]{16,32})", d["phys_path"])
        if m:
            d["devid"] = "id1,sd@n" + m.group(1)
        else:
            model_s = (model or d["vid"].strip() + " " + d["pid"].strip())
            d["devid"] = "id1,sd@S%s_____%s" % (
                re.sub(r"\s+", "_", model_s.strip()), d["serial"])
    if "node_type" not in d:
        if d["dtype"] == "cdrom":
            d["node_type"] = "ddi_block:cdrom"
        elif re.match(r"^c\d+t[0-9A-F]{8,}d\d+$", name):
            d["node_type"] = "ddi_block:channel"
        else:
            d["node_type"] = "ddi_block"
    return d


def _vdev(raw, where: str) -> Dict:
    if isinstance(raw, str):
        raw = {"type": "disk", "disks": [raw]}
    v = dict(raw)
    if "disk" in v:
        v["disks"] = [v.pop("disk")]
    v.setdefault("type", "disk" if len(v.get("disks", [])) == 1
                 else "mirror")
    if v["type"] not in _VDEV_TYPES:
        raise ScenarioError("%s: bad vdev type %r" % (where, v["type"]))
    if v["type"] == "raidz":
        v["type"] = "raidz1"
    if not v.get("disks"):
        raise ScenarioError("%s: vdev without disks" % where)
    if v["type"] == "disk" and len(v["disks"]) != 1:
        raise ScenarioError("%s: a disk vdev has one disk" % where)
    v.setdefault("ashift", None)
    v.setdefault("id", None)
    return v


def _pool(raw: Dict) -> Dict:
    unknown = set(raw) - _POOL_KEYS
    if unknown:
        raise ScenarioError("pool %s: unknown keys %s"
                            % (raw.get("name"), sorted(unknown)))
    p = dict(raw)
    if not isinstance(p.get("name"), str) or not p["name"]:
        raise ScenarioError("pool without a name")
    where = "pool " + p["name"]
    p["vdevs"] = [_vdev(v, where) for v in p.get("vdevs", [])]
    p["logs"] = [_vdev(v, where) for v in p.get("logs", [])]
    if not p["vdevs"]:
        raise ScenarioError("%s: no vdevs" % where)
    p["cache"] = list(p.get("cache", []))
    p["spares"] = list(p.get("spares", []))
    p.setdefault("exported", False)
    p.setdefault("version", 5000)
    p.setdefault("state", "ONLINE")
    p.setdefault("scan", "none requested")
    p.setdefault("txg", 2916407)
    p.setdefault("errata", 0)
    p.setdefault("comment", None)
    return p


def normalize(raw: Dict) -> Dict:
    """The scenario with every default filled in; ScenarioError if not
    buildable."""
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise ScenarioError("unknown top-level keys %s" % sorted(unknown))
    s = dict(raw)
    s.setdefault("name", "unnamed")
    s.setdefault("description", "")
    s.setdefault("flavour", "nexenta")
    if s["flavour"] not in FLAVOURS:
        raise ScenarioError("flavour must be nexenta or upstream")
    s.setdefault("hostname", "nexenta01" if s["flavour"] == "nexenta"
                 else "illumos01")
    s.setdefault("hostid", 1395523420)
    s.setdefault("uid", 0)
    s["sd_conf"] = sd_conf(s.get("sd_conf", s["flavour"]), "sd_conf")
    s["disks"] = [_disk(d) for d in s.get("disks", [])]
    names = [d["name"] for d in s["disks"]]
    if len(set(names)) != len(names):
        raise ScenarioError("duplicate disk names")
    insts = [d["instance"] for d in s["disks"]]
    if len(set(insts)) != len(insts):
        raise ScenarioError("duplicate instance numbers")
    _nvme_controllers(s["disks"])
    conf = s.setdefault("nvme_conf", None)
    if conf is not None and (not isinstance(conf, dict) or
                             set(conf) != {"text"} or
                             not isinstance(conf["text"], str)):
        raise ScenarioError("nvme_conf: {text} (null: the shipped file)")
    s["pools"] = [_pool(p) for p in s.get("pools", [])]
    known = set(names)
    for p in s["pools"]:
        for v in p["vdevs"] + p["logs"]:
            for dev in v["disks"]:
                _check_dev(dev, known, "pool " + p["name"])
        for dev in p["cache"] + p["spares"]:
            _check_dev(dev, known, "pool " + p["name"])
    s["swap"] = list(s.get("swap", []))
    s["dump"] = s.get("dump")
    s["mounts"] = [dict(m) for m in s.get("mounts", [])]
    s["vfstab"] = [dict(m) for m in s.get("vfstab", [])]
    for dev in s["swap"] + ([s["dump"]] if s["dump"] else []):
        _check_dev(dev, known, "swap/dump")
    for m in s["mounts"] + s["vfstab"]:
        if not {"device", "mountpoint"} <= set(m):
            raise ScenarioError("mount entries need device and mountpoint")
        m.setdefault("fstype", "ufs")
        _check_dev(m["device"], known, "mount " + m["mountpoint"])
    # Imported here: platform.py uses this module's checks.
    from . import platform
    s["platform"] = platform.normalize(s.get("platform"), s)
    return s


def sd_conf(conf, where: str) -> Dict:
    """An sd.conf value (shape name, {shape, pairs} or {text}) as
    {shape, pairs} or {text, pairs}; ``where`` names the field."""
    if isinstance(conf, str):
        conf = {"shape": conf}
    if not isinstance(conf, dict) or \
            not ({"shape", "text"} & set(conf)) or \
            set(conf) - {"shape", "text", "pairs"}:
        raise ScenarioError("%s: a shape name, or {shape, pairs} or {text}"
                            % where)
    conf = dict(conf)
    if "shape" in conf and conf["shape"] not in SHAPES:
        raise ScenarioError("%s: shape must be one of %s"
                            % (where, ", ".join(SHAPES)))
    conf.setdefault("pairs", [])
    return conf


def _check_dev(dev: str, known, where: str) -> None:
    if base_name(dev) not in known:
        raise ScenarioError("%s: unknown disk %s" % (where, dev))


def disk_by_name(scenario: Dict, name: str) -> Optional[Dict]:
    for d in scenario["disks"]:
        if d["name"] == name:
            return d
    return None


def pool_roles(scenario: Dict) -> Dict[str, List[Dict]]:
    """For every disk, its roles in pools: dicts with kind (pool, log,
    l2cache, spare, exported_pool), pool, device (as named in the pool),
    top (index of the top-level vdev or None)."""
    roles: Dict[str, List[Dict]] = {}

    def add(dev: str, **kw) -> None:
        roles.setdefault(base_name(dev), []).append(dict(device=dev, **kw))

    for p in scenario["pools"]:
        tops = top_level_vdevs(p)
        for index, (v, is_log) in enumerate(tops):
            for dev in v["disks"]:
                if p["exported"]:
                    kind = "exported_pool"
                else:
                    kind = "log" if is_log else "pool"
                add(dev, kind=kind, pool=p["name"], top=index)
        for dev in p["cache"]:
            add(dev, kind="exported_pool" if p["exported"] else "l2cache",
                pool=p["name"], top=None)
        for dev in p["spares"]:
            add(dev, kind="exported_pool" if p["exported"] else "spare",
                pool=p["name"], top=None)
    return roles


def top_level_vdevs(pool: Dict) -> List:
    """(vdev, is_log) in the order of the root's children: data vdevs,
    then logs, unless the scenario gives ids."""
    tops = [(v, False) for v in pool["vdevs"]] + \
        [(v, True) for v in pool["logs"]]
    if any(v["id"] is not None for v, _ in tops):
        tops.sort(key=lambda t: (t[0]["id"] is None, t[0]["id"] or 0))
    return tops
