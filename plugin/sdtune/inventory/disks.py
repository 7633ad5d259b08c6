# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""One Disk record per disk behind sd or blkdev, merged from every
source.

Sources (each a query/parse pair in this package): `mdb -k` (instances,
INQUIRY bytes, the kernel's sd values), /etc/path_to_inst and /dev/rdsk
(names, drivers), `iostat -En` (revision, serial, size, an NVMe model),
`diskinfo -cHp` (full serial, SSD flag), `zpool status` and `zdb -C`
(pool membership, ashift) and libdiskmgt (in-use checks per slice).

A disk under blkdev (an NVMe namespace, a virtio disk) is listed when
diskinfo or libdiskmgt lists it: sd.conf has no effect on it
(platforms.md §1.3), so it has no sd-config-list key (no INQUIRY), no
vendor/product and no kernel sd values; everything else, the in-use
checks included, is read as for an sd disk.  Its physical block size is
blkdev's (the mdb blkdev pipeline).  An NVMe namespace also gets its
controller's model, serial and firmware and its LBA formats and write
cache from nvmeadm (issue 18), found by its disk name in `nvmeadm list`:
one `list`, one `identify` per controller and per listed namespace, one
`get-features` per controller with a cache, none of it on a host
without blkdev disks or without nvmeadm (whose NVMe fields stay None).

Safety rule: a disk is only free for certification when every in-use
source answered for it.  When a source fails, or a disk is missing from
it, the disk gets a `rejected_reasons` entry saying the state is unknown:
when a check cannot decide, assume the disk is in use.
"""

from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, TypeVar

from ..errors import SdtuneError
from ..host import Host
from . import (devlinks, diskinfo, iostat, libdiskmgt, mdb, nvmeadm, zdb,
               zpool)

T = TypeVar("T")


@dataclass
class SdValues:
    """What sd uses for the disk now (from mdb, facts §3.5, §6)."""

    suppress_cache_flush: Optional[bool] = None
    throttle_max: Optional[int] = None     # un_saved_throttle
    throttle_min: Optional[int] = None     # un_min_throttle
    disksort: Optional[bool] = None        # not un_f_disksort_disabled


@dataclass
class Disk:
    name: str
    instance: Optional[int]
    key: Optional[str]                     # INQUIRY vendor (8) + product (16)
    vid: Optional[str]
    pid: Optional[str]
    serial: Optional[str]
    firmware: Optional[str]
    size_bytes: Optional[int]
    logical_block_bytes: Optional[int]
    physical_block_bytes: Optional[int]    # the kernel's un_phy_blocksize
    ssd: Optional[bool]
    in_use: Optional[str]
    rejected_reasons: List[str]
    pool: Optional[str]
    pool_role: Optional[str]
    vdev_ashift: Optional[int]
    sd: SdValues
    kernel_flavour: Optional[str] = None
    # Every integer un_* member mdb showed (for verify), and the full ATA
    # model for SATA disks (for the known-drives table).
    kernel_values: Dict[str, int] = field(default_factory=dict)
    ata_model: Optional[str] = None
    # The driver the disk attaches through: "sd", or another (blkdev for
    # NVMe and virtio) on which sd.conf has no effect.
    driver: str = "sd"
    # The drive's own model string where the driver keeps one (an NVMe
    # namespace's Identify Controller model); sd disks: None.
    model: Optional[str] = None
    # An NVMe namespace's controller, LBA formats and write cache
    # (nvmeadm); None for every other disk, or when nvmeadm is missing.
    nvme: Optional[nvmeadm.NvmeInfo] = None

    @property
    def full_model(self) -> Optional[str]:
        """The drive's whole model string where known: blkdev's (NVMe)
        or a SATA disk's ATA model; None otherwise."""
        return self.model or self.ata_model

    def to_json(self) -> dict:
        """The `disks -o json` shape of DESIGN.md, with "driver",
        "model" (full_model) and "nvme"."""
        return {
            "name": self.name, "driver": self.driver,
            "instance": self.instance, "key": self.key,
            "model": self.full_model,
            "serial": self.serial, "firmware": self.firmware,
            "size_bytes": self.size_bytes,
            "logical_block_bytes": self.logical_block_bytes,
            "physical_block_bytes": self.physical_block_bytes,
            "ssd": self.ssd, "in_use": self.in_use,
            "rejected_reasons": list(self.rejected_reasons),
            "pool": self.pool, "pool_role": self.pool_role,
            "vdev_ashift": self.vdev_ashift, "sd": asdict(self.sd),
            "nvme": self.nvme.to_json() if self.nvme else None,
        }


@dataclass
class Inventory:
    disks: List[Disk]
    notes: List[str] = field(default_factory=list)   # sources that failed
    # Top-level vdevs of every imported pool (zdb -C), for the audit.
    vdevs: List[zdb.TopVdev] = field(default_factory=list)
    pools: Dict[str, zpool.Pool] = field(default_factory=dict)
    # Source name ("zpool status", "zdb -C", "mdb ::sd_state", ...) ->
    # why it failed.  Unknown is unsafe: plan, audit and verify read this
    # to hold back or report what they could not see.
    failed: Dict[str, str] = field(default_factory=dict)

    def pools_unknown(self) -> Optional[str]:
        """Why pool membership or vdev ashift cannot be known, or None."""
        for name in ("zpool status", "zdb -C"):
            if name in self.failed:
                return "%s failed: %s" % (name, self.failed[name])
        return None

    def by_name(self, name: str) -> Optional[Disk]:
        for disk in self.disks:
            if disk.name == name:
                return disk
        return None


_ROLE_TEXT = {"data": "member of pool %s", "log": "log device of pool %s",
              "cache": "cache device of pool %s", "spare": "spare of pool %s",
              "special": "special device of pool %s",
              "dedup": "dedup device of pool %s"}


# libdiskmgt's kinds of use (libdiskmgt.parse_inuse_message) as reasons.
_INUSE_TEXT = {
    "active_pool": "member of pool %s", "exported_pool":
    "member of exported pool %s", "spare": "spare of pool %s",
    "l2cache": "cache device of pool %s", "mount": "mounted on %s",
    "vfstab": "in /etc/vfstab for %s", "fs": "contains a %s filesystem",
    "swap": "swap device", "dump": "dump device",
    "lu": "live upgrade %s", "vxvm": "VxVM volume %s",
}


def inuse_reason(kind: str, detail: str) -> str:
    """A libdiskmgt finding as a short reason."""
    text = _INUSE_TEXT.get(kind)
    if text is None:
        return "in use: %s" % detail
    return text % detail if "%s" in text else text


class _Sources:
    """Runs each query once; a failure becomes a note, not a crash."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.notes: List[str] = []
        self.failed: Dict[str, str] = {}

    def get(self, name: str, query: Callable[[Host], T], empty: T) -> T:
        try:
            return query(self.host)
        except SdtuneError as e:
            self.failed[name] = str(e)
            self.notes.append("%s: %s" % (name, e))
            return empty


def take_inventory(host: Host) -> Inventory:
    src = _Sources(host)
    units = src.get("mdb ::sd_state", mdb.query_sd_state, {})
    inquiries = src.get("mdb inquiry", mdb.query_inquiry, [])
    try:
        inquiry = mdb.units_with_inquiry(units, inquiries) if units else {}
    except SdtuneError as e:
        src.failed["mdb inquiry"] = str(e)
        src.notes.append("mdb inquiry: %s" % e)
        inquiry = {}
    linked = src.get("device links", devlinks.disk_units, {})
    names = {inst: name for name, (driver, inst) in linked.items()
             if driver == "sd"}
    stats = src.get("iostat -En", iostat.query_iostat_en, {})
    infos = src.get("diskinfo", diskinfo.query_diskinfo, {})
    pools = src.get("zpool status", zpool.query_zpool_status, {})
    tops = src.get("zdb -C", zdb.query_zdb_cachefile, {}) if pools else {}
    dm = libdiskmgt.query_libdiskmgt(host)
    if not dm.available:
        src.notes.append("libdiskmgt unavailable (%s): disks enumerated "
                         "with diskinfo; mounts, swap and dump cannot be "
                         "checked" % dm.reason)
    dm_disks = {d.name: d for d in dm.disks}
    membership = {m.disk: (p.name, m.role) for p in pools.values()
                  for m in p.members}
    ashifts = zdb.ashift_by_disk(tops)

    blkdev = _blkdev_names(linked, infos, dm)
    disk_names = _disk_names(units, names, infos, dm, set(blkdev))
    by_name = {v: k for k, v in names.items()}
    # Only with blkdev disks: mdb has no bd_state without blkdev loaded.
    shifts = src.get("mdb blkdev", mdb.query_blkdev, {}) if blkdev else {}
    namespaces = _nvme_namespaces(src, blkdev) if blkdev else {}
    disks = []
    for name in blkdev:
        reasons = _reasons(name, src, dm, dm_disks.get(name), membership)
        disk = _blkdev_disk(
            name, linked[name][1], stats.get(name), infos.get(name),
            dm_disks.get(name), reasons, membership.get(name, (None, None)),
            ashifts[name][1] if name in ashifts else None)
        if disk.instance in shifts:
            disk.physical_block_bytes = 1 << shifts[disk.instance][1]
            if disk.logical_block_bytes is None:
                disk.logical_block_bytes = 1 << shifts[disk.instance][0]
        if name in namespaces:
            _add_nvme(disk, *namespaces[name])
        disks.append(disk)
    for name in disk_names:
        instance = by_name.get(name)
        unit = units.get(instance) if instance is not None else None
        inq = inquiry.get(instance) if instance is not None else None
        stat, info, dmd = stats.get(name), infos.get(name), \
            dm_disks.get(name)
        reasons = _reasons(name, src, dm, dmd, membership)
        pool, role = membership.get(name, (None, None))
        # Without mdb, iostat's vendor and product stand in only when they
        # are the padded INQUIRY bytes (not blkdev's "Virtio"): they are
        # matched against sd.conf keys.
        vid, pid = (inq.vid, inq.pid) if inq else \
            (stat.inquiry if stat and stat.inquiry else (None, None))
        disks.append(Disk(
            name=name, instance=instance,
            key=inq.key if inq else None,
            vid=vid, pid=pid,
            serial=(info.serial if info and info.serial else
                    stat.serial if stat else None),
            firmware=inq.revision if inq else (stat.revision if stat
                                               else None),
            size_bytes=(stat.size_bytes if stat else
                        info.size_bytes if info else None),
            logical_block_bytes=(unit.get("un_tgt_blocksize") if unit else
                                 dmd.block_bytes if dmd else None),
            physical_block_bytes=unit.get("un_phy_blocksize") if unit
            else None,
            ssd=_ssd(unit, info, dmd),
            in_use="; ".join(reasons) if reasons else None,
            rejected_reasons=reasons, pool=pool, pool_role=role,
            vdev_ashift=ashifts[name][1] if name in ashifts else None,
            sd=_sd_values(unit),
            kernel_flavour=unit.flavour if unit else None,
            kernel_values={k: v for k, v in unit.members.items()
                           if isinstance(v, int)} if unit else {},
            ata_model=_ata_model(inq, info, dmd)))
    disks.sort(key=lambda d: d.name)
    return Inventory(disks, src.notes,
                     [t for ts in tops.values() for t in ts], pools,
                     dict(src.failed))


def _disk_names(units, names, infos, dm, blkdev) -> List[str]:
    """Attached sd instances with a /dev/rdsk name; without mdb, every
    linked instance.  Fixed-media lists, when there are any, drop CD-ROMs
    and other non-disk sd instances (and the blkdev disks, listed
    apart)."""
    if units:
        found = {names[i] for i in units if i in names}
    else:
        found = (set(names.values()) | set(infos)) - blkdev
    fixed = set(infos) | {d.name for d in dm.disks}
    if fixed:
        found &= fixed
    return sorted(found)


def _blkdev_names(linked, infos, dm) -> List[str]:
    """The /dev/rdsk names linked to a blkdev instance that diskinfo or
    libdiskmgt lists as a fixed disk (when neither answered, every one:
    each is then in use for lack of an in-use check)."""
    found = {name for name, (driver, _) in linked.items()
             if driver == "blkdev"}
    fixed = set(infos) | {d.name for d in dm.disks}
    return sorted(found & fixed if fixed else found)


def _blkdev_disk(name: str, instance: int, stat, info, dmd,
                 reasons: List[str], member: tuple,
                 ashift: Optional[int]) -> Disk:
    """A disk under blkdev: no INQUIRY (key, vid and pid None) and no sd
    values; serial, firmware and model from what blkdev reports."""
    serial = info.serial if info and info.serial else \
        stat.serial if stat else None
    firmware = stat.revision.strip() or None \
        if stat and stat.revision is not None else None
    return Disk(
        name=name, instance=instance, key=None, vid=None, pid=None,
        serial=serial, firmware=firmware,
        size_bytes=(stat.size_bytes if stat and stat.size_bytes else
                    info.size_bytes if info and info.size_bytes else
                    dmd.size_bytes if dmd else None),
        logical_block_bytes=dmd.block_bytes if dmd else None,
        physical_block_bytes=None,
        ssd=_ssd(None, info, dmd),
        in_use="; ".join(reasons) if reasons else None,
        rejected_reasons=reasons, pool=member[0], pool_role=member[1],
        vdev_ashift=ashift, sd=SdValues(), driver="blkdev",
        model=_blkdev_model(stat, info, dmd))


def _nvme_namespaces(src: _Sources, blkdev: List[str]) -> Dict[str, tuple]:
    """disk name -> (NvmeInfo, the controller's identity or its `list`
    line) for the blkdev disks that are NVMe namespaces.  Without
    nvmeadm (not configured, not installed): none, and no note."""
    if not src.host.can_run("nvmeadm"):
        return {}
    controllers = src.get("nvmeadm list", nvmeadm.query_nvmeadm_list, {})
    by_disk = nvmeadm.namespaces_by_disk(controllers)
    identities: Dict[str, tuple] = {}
    found: Dict[str, tuple] = {}
    for name in blkdev:
        ns = by_disk.get(name)
        if ns is None:
            continue
        ctl = ns.controller
        if ctl not in identities:
            ident = src.get(
                "nvmeadm identify " + ctl,
                lambda h: nvmeadm.query_nvmeadm_identify_controller(h, ctl),
                None)
            # No cache, or get-features failing: enabled unknown (None).
            enabled = src.get(
                "nvmeadm get-features %s cache" % ctl,
                lambda h: nvmeadm.query_nvmeadm_cache(h, ctl), None) \
                if ident is not None and ident.cache_present else None
            identities[ctl] = (ident, enabled)
        ident, enabled = identities[ctl]
        space = src.get(
            "nvmeadm identify " + ns.name,
            lambda h: nvmeadm.query_nvmeadm_identify_namespace(h, ns.name),
            None)
        info = nvmeadm.NvmeInfo(
            controller=ctl, namespace=ns.namespace,
            version=controllers[ctl].version,
            lba_formats=list(space.lba_formats) if space else [],
            lba_format_in_use=space.lba_format_in_use if space else None,
            cache_present=ident.cache_present if ident else None,
            cache_enabled=enabled)
        found[name] = (info, ident or controllers[ctl])
    return found


def _add_nvme(disk: Disk, info: "nvmeadm.NvmeInfo", controller) -> None:
    """An NVMe namespace's model, serial and firmware are its
    controller's, as nvmeadm prints them (trailing blanks removed)."""
    disk.nvme = info
    disk.model = controller.model or disk.model
    disk.serial = controller.serial or disk.serial
    disk.firmware = controller.firmware or disk.firmware


def _blkdev_model(stat, info, dmd) -> Optional[str]:
    """An NVMe namespace's model: iostat's Model (the padded Identify
    Controller field), else rebuilt from the devinfo vendor and product
    that nvme split it into at its first blank ("NVMe" standing for a
    model without one).  A virtio disk has no model: None."""
    if stat is not None and stat.model is not None:
        return stat.model.strip() or None
    for src in (info, dmd):
        if src is None or not src.product_id or \
                (src.ctype or "").lower() != "nvme":
            continue
        vendor = src.vendor_id or ""
        if vendor == "NVMe":
            return src.product_id
        return (vendor + " " + src.product_id).strip()
    return None


def _ata_model(inq, info, dmd) -> Optional[str]:
    """The full ATA model of a SATA disk: its INQUIRY product holds only
    the first 16 characters, the devinfo vendor/product split it at the
    first blank (facts §4.1)."""
    if inq is None or inq.vid.strip() != "ATA":
        return None
    for src in (info, dmd):
        if src is not None and src.product_id:
            vendor = src.vendor_id or ""
            return (vendor + " " + src.product_id).strip()
    return inq.pid.strip()


def _ssd(unit, info, dmd) -> Optional[bool]:
    if unit is not None and unit.get("un_f_is_solid_state") is not None:
        return bool(unit.get("un_f_is_solid_state"))
    if info is not None and info.ssd is not None:
        return info.ssd
    if dmd is not None:
        return dmd.solid_state
    return None


def _sd_values(unit) -> SdValues:
    if unit is None:
        return SdValues()
    disabled = unit.get("un_f_disksort_disabled")
    return SdValues(
        suppress_cache_flush=bool(unit.get("un_f_suppress_cache_flush")),
        throttle_max=unit.get("un_saved_throttle"),
        throttle_min=unit.get("un_min_throttle"),
        disksort=None if disabled is None else not disabled)


def _reasons(name: str, src: _Sources, dm, dmd,
             membership: Dict[str, tuple]) -> List[str]:
    reasons: List[str] = []

    def add(text: str) -> None:
        if text not in reasons:
            reasons.append(text)

    if name in membership:
        pool, role = membership[name]
        add(_ROLE_TEXT.get(role, "member of pool %s") % pool)
    if "zpool status" in src.failed:
        add("in-use state unknown: zpool status failed")
    if not dm.available:
        add("in-use state unknown: libdiskmgt unavailable")
    elif dmd is None:
        add("in-use state unknown: not found by libdiskmgt")
    elif dmd.error:
        # libdiskmgt may fail the same way on every slice: say it once.
        errors = dmd.error.split("; ")
        more = " (and %d more)" % (len(errors) - 1) if len(errors) > 1 else ""
        add("in-use state unknown: %s%s" % (errors[0], more))
    else:
        for use in dmd.inuse:
            kind, detail = libdiskmgt.parse_inuse_message(use.message)
            if kind in ("active_pool", "spare", "l2cache") and \
                    name in membership:
                continue            # already said, with the role
            add(inuse_reason(kind, detail))
    return reasons
