# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Build the simulated appliance's root directory: sd.conf in the shape
NexentaStor or upstream illumos ships (facts §2.3, our own text),
nvme.conf as illumos ships it (every setting commented out),
/etc/path_to_inst, /devices nodes and the /dev/dsk and /dev/rdsk links
(facts §8.4; sd and blkdev disks), /etc/vfstab, /etc/mnttab,
/etc/dumpadm.conf, and the record file DIR/diskmgt.tsv read by the fake
libdiskmgt.  Runs no commands.
"""

import os
from typing import Dict, List

from . import scenario as scn

SLICES = ["s%d" % i for i in range(7)]
_MINOR = {("s%d" % i): chr(ord("a") + i) for i in range(7)}
_MINOR["p0"] = "q"
# cmlb's minors for an EFI-labelled disk: slices a-g, no h (slice 7),
# and "wd" for the whole disk; blkdev disks are EFI-labelled (a pool's
# whole disk, or a fresh namespace: CMLB_FAKE_LABEL_ONE_PARTITION).
# x86 cmlb adds the fdisk minors, of which p0 ("q") is modelled.
_BLKDEV_MINOR = dict(_MINOR, wd="wd")
_HEADER = """#
# sd.conf: configuration for the sd (SCSI disk) driver.
# Built by the sdtune simulator in the shape %s ships.
#
"""


# The SmartOS platform image's own sd.conf (smartos-live overlay, as of
# dd25937d): the "" retry pair, the PERC and Samsung 830/840/850 pairs.
SMARTOS_SD_CONF = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
    "realworld", "sdconf",
    "smartos-live-2016-06-29-dd25937d-overlay-sd.conf")


def _smartos_sd_conf(pairs: List) -> str:
    """The SmartOS file with ``pairs`` appended to its one list."""
    with open(SMARTOS_SD_CONF, encoding="latin-1") as f:
        text = f.read()
    if not pairs:
        return text
    end = text.index(";", text.index("sd-config-list="))
    extra = "".join(',\n\t"%s", "%s"' % tuple(p) for p in pairs)
    return text[:end] + extra + text[end:]


def sd_conf_text(conf: Dict, flavour: str) -> str:
    """The initial sd.conf of a scenario."""
    if "text" in conf:
        return conf["text"]
    shape = conf["shape"]
    if shape == "smartos":
        return _smartos_sd_conf(conf["pairs"])
    lines = [_HEADER % ("NexentaStor 5" if shape == "nexenta"
                        else "illumos")]
    for target in range(16):
        lines.append('name="sd" class="scsi" target=%d lun=0;\n' % target)
    lines.append("\n")
    lines.append('name="sd" class="scsi-self-identifying";\n')
    lines.append("\n")
    if shape == "nexenta":
        lines.append("ddi-forceattach=1;\n")
    lines.append("ddi-devid-registrant=1;\n")
    pairs = [tuple(p) for p in conf["pairs"]]
    if shape == "nexenta":
        pairs.insert(0, ("VMware  Virtual disk",
                         "io-time:180,slow-io-threshold:0"))
    if pairs:
        lines.append("\nsd-config-list=\n")
        if shape == "nexenta":
            lines.append("\t# virtual disks: longer timeout, no slow-io "
                         "detector\n")
        for i, (ident, tunables) in enumerate(pairs):
            end = ";" if i == len(pairs) - 1 else ","
            lines.append('\t"%s", "%s"%s\n' % (ident, tunables, end))
    return "".join(lines)


# The upstream nvme.conf (illumos-gate usr/src/uts/common/io/nvme/
# nvme.conf), its comments in our own words: every setting is commented
# out, so the driver runs with its defaults.
NVME_CONF = """#
# nvme.conf: configuration for the nvme (NVM Express) driver.
# Built by the sdtune simulator in the shape illumos ships.
#

#
# The driver checks the controller's NVMe version; set this to 0 to use
# controllers that claim a newer version than the driver was tested with.
#strict-version=0;

#
# A vendor-specific command status normally faults the device; set this
# to 1 to ignore such statuses instead.
#ignore-unknown-vendor-status=1;

#
# Length of the admin queue (16-4096) and of each I/O submission and
# completion queue (16-65536).
#admin-queue-len=256;
#io-squeue-len=1024;
#io-cqueue-len=2048;

#
# How many I/O submission and completion queues to create at most.
#max-submission-queues=8;
#max-completion-queues=8;

#
# The smallest physical block size reported to blkdev: a power of 2, at
# least 512.  A larger best block size reported by the device wins.
#min-phys-block-size=512;

#
# A volatile write cache, when the device has one, is enabled by default;
# set this to 0 to disable it (performance may suffer).
#volatile-write-cache-enable=0;

#
# Per-model settings: triplets of the model as Identify Controller gives
# it, a comma-separated list of firmware revisions ("" for all) and a
# comma-separated list of name:value settings.  Every matching triplet
# applies, a later one over an earlier one.  Known settings:
# ignore-unknown-vendor-status (on/off), min-phys-block-size (bytes),
# volatile-write-cache (on/off).
#nvme-config-list =
#	"Example Model Name", "", "min-phys-block-size:4096",
#	"Example Model Name", "FW1,FW2", "volatile-write-cache:off";
"""


def nvme_conf_text(s: Dict) -> str:
    """The initial nvme.conf of a scenario."""
    conf = s.get("nvme_conf")
    return NVME_CONF if conf is None else conf["text"]


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="latin-1") as f:
        f.write(text)


def _link(target: str, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def device_nodes(root: str, disk: Dict) -> None:
    """/devices/<phys>:<minor>[,raw] and the /dev links of one disk."""
    phys = disk["phys_path"]
    minors = _BLKDEV_MINOR if disk.get("driver") == "blkdev" else _MINOR
    for suffix, minor in minors.items():
        block = root + "/devices" + phys + ":" + minor
        raw = block + ",raw"
        os.makedirs(os.path.dirname(block), exist_ok=True)
        if not os.path.lexists(block):
            open(block, "w").close()
        if suffix == "p0" and disk["device_file"]:
            _link(os.path.abspath(disk["device_file"]), raw)
        elif not os.path.lexists(raw):
            open(raw, "w").close()
        rel = "../../devices" + phys + ":" + minor
        # devfsadm names the whole-disk minor cXtYdZ (no slice suffix).
        link = "" if suffix == "wd" else suffix
        _link(rel, "%s/dev/dsk/%s%s" % (root, disk["name"], link))
        _link(rel + ",raw",
              "%s/dev/rdsk/%s%s" % (root, disk["name"], link))


def path_to_inst(root: str, disks: List[Dict]) -> None:
    lines = ["#\n#\tCaution! This file contains critical kernel state\n#\n"]
    parents = []
    for d in disks:
        parent = os.path.dirname(d["phys_path"])
        if parent not in ("/", "") and parent not in parents:
            parents.append(parent)
    hba = {os.path.dirname(d["phys_path"]):
           ("nvme" if d.get("model") else "vioblk")
           for d in disks if d.get("driver") == "blkdev"}
    # An nvme node's instance is its controller number (nvmeN).
    nvme = {os.path.dirname(d["phys_path"]): d["controller"]
            for d in disks if d.get("driver") == "blkdev" and d.get("model")}
    for i, parent in enumerate(parents):
        driver = hba.get(parent) or (
            "scsi_vhci" if parent == "/scsi_vhci" else (
                "ahci" if parent.endswith((",2", ",5")) else "mpt_sas"))
        lines.append('"%s" %d "%s"\n'
                     % (parent, nvme.get(parent, i), driver))
    # Instance numbers are per driver: a blkdev and an sd instance may
    # have the same number.
    for d in sorted(disks, key=lambda d: (d.get("driver", "sd") != "sd",
                                          d["instance"])):
        lines.append('"%s" %d "%s"\n' % (
            d["phys_path"], d["instance"], d.get("driver", "sd")))
    _write(root + "/etc/path_to_inst", "".join(lines))


def etc_files(root: str, s: Dict) -> None:
    """vfstab, mnttab, dumpadm.conf and name_to_major."""
    vfstab = ["#device\t\tdevice\t\tmount\t\tFS\tfsck\tmount\tmount\n",
              "#to mount\tto fsck\t\tpoint\t\ttype\tpass\tat boot\toptions\n",
              "#\n",
              "/devices\t-\t\t/devices\tdevfs\t-\tno\t-\n",
              "/proc\t\t-\t\t/proc\t\tproc\t-\tno\t-\n",
              "swap\t\t-\t\t/tmp\t\ttmpfs\t-\tyes\t-\n"]
    for dev in s["swap"]:
        vfstab.append("/dev/dsk/%s\t-\t\t-\t\tswap\t-\tno\t-\n" % dev)
    for m in s["vfstab"]:
        vfstab.append("/dev/dsk/%s\t/dev/rdsk/%s\t%s\t%s\t2\tyes\t-\n" % (
            m["device"], m["device"], m["mountpoint"], m["fstype"]))
    _write(root + "/etc/vfstab", "".join(vfstab))
    mnttab = []
    for m in s["mounts"]:
        mnttab.append("/dev/dsk/%s\t%s\t%s\trw,intr,largefiles,logging,"
                      "xattr,onerror=panic,dev=%x\t1700000000\n"
                      % (m["device"], m["mountpoint"], m["fstype"], 0x7640000))
    _write(root + "/etc/mnttab", "".join(mnttab))
    if s["dump"]:
        _write(root + "/etc/dumpadm.conf",
               "DUMPADM_DEVICE=/dev/dsk/%s\nDUMPADM_SAVDIR=/var/crash\n"
               "DUMPADM_CONTENT=kernel\nDUMPADM_ENABLE=yes\n" % s["dump"])
    _write(root + "/etc/name_to_major", "sd 32\nscsi_vhci 251\n")


def build(root: str, s: Dict) -> None:
    """Create the whole root tree for scenario ``s`` (present disks)."""
    os.makedirs(root, exist_ok=True)
    _write(root + "/kernel/drv/sd.conf",
           sd_conf_text(s["sd_conf"], s["flavour"]))
    _write(root + "/kernel/drv/nvme.conf", nvme_conf_text(s))
    present = [d for d in s["disks"] if d["present"]]
    path_to_inst(root, present)
    for d in present:
        device_nodes(root, d)
    etc_files(root, s)
    _write(root + "/var/adm/messages", "")
    os.makedirs(root + "/var/sdtune", exist_ok=True)


def inuse_records(s: Dict) -> Dict[str, List[Dict]]:
    """Per slice name: what libdiskmgt's in-use checks find on it
    (facts §10), as {kind, detail} with the TSV kinds."""
    recs: Dict[str, List[Dict]] = {}

    def slice_of(dev: str) -> str:
        return dev if dev != scn.base_name(dev) else dev + "s0"

    kinds = {"pool": "active_pool", "log": "active_pool",
             "l2cache": "l2cache", "spare": "spare",
             "exported_pool": "exported_pool"}
    for disk, roles in scn.pool_roles(s).items():
        for r in roles:
            recs.setdefault(slice_of(r["device"]), []).append(
                {"kind": kinds[r["kind"]], "detail": r["pool"]})
    for m in s["mounts"]:
        recs.setdefault(m["device"], []).append(
            {"kind": "mount", "detail": m["mountpoint"]})
    for m in s["vfstab"]:
        recs.setdefault(m["device"], []).append(
            {"kind": "vfstab", "detail": m["mountpoint"]})
    for dev in s["swap"]:
        recs.setdefault(dev, []).append({"kind": "swap", "detail": ""})
    if s["dump"]:
        recs.setdefault(s["dump"], []).append(
            {"kind": "dump", "detail": "dump"})
    return recs


def diskmgt_tsv(s: Dict, solid_state: Dict[str, int]) -> str:
    """The records of DIR/diskmgt.tsv (see the module docstring of the
    fake libdiskmgt): media, slice, inuse and fail lines."""
    out = []
    recs = inuse_records(s)
    for d in s["disks"]:
        if not d["present"] or d["dtype"] != "disk":
            continue
        name = d["name"]
        rate = d["rotation_rate"]
        if d.get("driver") == "blkdev":
            # DKIOCSOLIDSTATE answers from the media (nvme: always);
            # there is no rotation rate.
            ssd, rate = int(bool(d["solid_state"])), None
        else:
            ssd = solid_state.get(name, 0)
        out.append("\t".join([
            "media", name, "/dev/rdsk/%ss0" % name, str(d["blocks"]),
            str(d["logical_block"]), d["vendor_id"], d["product_id"],
            "1" if d["removable"] else "0",
            str(ssd), d["ctype"] or "-",
            str(rate) if rate and rate > 1 else "-"]))
        for sl in SLICES:
            out.append("slice\t%s\t%s%s" % (name, name, sl))
        if d["inuse_unknown"]:
            out.append("fail\t%s\t%d" % (name, d["inuse_unknown"]))
            for sl in SLICES:
                out.append("fail\t%s%s\t%d" % (name, sl, d["inuse_unknown"]))
            continue
        for sl in SLICES:
            for r in recs.get(name + sl, []):
                out.append("inuse\t%s%s\t%s\t%s" % (name, sl, r["kind"],
                                                    r["detail"]))
    return "".join(line + "\n" for line in out)
