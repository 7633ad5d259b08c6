# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""nvme's proposals for `sdtune plan --driver nvme`: nvme-config-list
changes, one triplet per NVMe model, with the reason for every tunable.

An NVMe namespace attaches through nvme and blkdev, not sd: sd.conf never
reaches it (the OmniOS installer's "force 4K" trap).  What blkdev reports
as its physical block size, and so the ashift ZFS gives a new vdev, is
the namespace's best LBA format raised to the controller's
min-phys-block-size; nvme.conf sets that minimum per model in
`nvme-config-list` ("<model>", "<fwrev list>", "<name:value,...>").  The
plan writes one triplet per model with an empty firmware list (every
firmware, as an sd.conf key covers every revision), merged into the
operator's file by nvmeconf.edit, which keeps every other byte.

Source: certification records of the model's namespaces (the records of
a disk outside sd name its driver and model).  Proposed:
min-phys-block-size = the measured native sector, when it is larger
than 512 and than what blkdev already reports for some namespace of the
model.  Held back, each with the reason in the plan:

* the certified units of one model disagree on the native sector;
* a namespace of the model sits in, or stands by as a spare for, a
  top-level vdev whose ashift is below log2 of the value, or pool
  membership is unknown: a disk reporting a larger physical block cannot
  replace or be attached to such a vdev (drivers/ashift.py, the same rule
  as sd's physical-block-size) —
  `--allow-ashift-mismatch` overrides;
* nvme.conf already sets another min-phys-block-size for the model: the
  operator's value is kept, and said;
* every certification of a firmware that no installed namespace of the
  model runs — `--allow-firmware-mismatch` overrides.

Where a namespace can be reformatted to an LBA format of the native size
(`nvmeadm format`), the plan says so as an option: it destroys the
namespace's data, so sdtune never does it.  The cache and the queue
depth propose nothing: nvme.conf has no tunable that skips flushes
(volatile-write-cache:off disables the cache) and none for the queue.

Pure: works on the inventory, the records and the text.
"""

from typing import Dict, List, Optional, Tuple

from ...driverconf.edit import EditError
from ...driverconf.parser import parse
from ...inventory.disks import Disk, Inventory
from ...nvmeconf import edit as nvme_edit
from ...nvmeconf.model import best_block_size, config_list
from ...nvmeconf.model import evaluate as nvme_evaluate
from ...records.group import certified_when, latest
from ...records.record import CONFIDENT, CertRecord
from ..ashift import ashift_bound, pools_smallest_ashift
from ..planning import Change, Held, NotSd, Overrides, Proposed, Reason
from ..screens import ashift_hold, firmware_screen, operator_value

TUNABLE = "min-phys-block-size"
# nvmeadm's Relative Performance names, best first (0 to 3).
RELATIVE_PERFORMANCE = ("Best", "Better", "Good", "Degraded")


def model_of(disk: Disk) -> str:
    """The model an nvme-config-list triplet matches: Identify
    Controller's, trailing blanks removed."""
    return (disk.model or "").rstrip(" ")


def firmware_of(disk: Disk) -> str:
    return (disk.firmware or "").rstrip(" ")


def lba_formats(disk: Disk) -> List[Tuple[int, int, int]]:
    """(data bytes, metadata bytes, relative performance 0-3) of each
    LBA format nvmeadm showed for the namespace, in index order."""
    out = []
    for f in sorted(disk.nvme.lba_formats, key=lambda f: f.index):
        rp = f.relative_performance
        rp_int = RELATIVE_PERFORMANCE.index(rp) \
            if rp in RELATIVE_PERFORMANCE else 3
        out.append((f.data_bytes, f.metadata_bytes, rp_int))
    return out


def reported_with(disk: Disk, minimum: int) -> Optional[int]:
    """What blkdev reports as the namespace's physical block size with
    the controller minimum `minimum`; None when its formats are
    unknown."""
    if disk.nvme is None or not disk.nvme.lba_formats:
        return None
    # The format in use has the namespace's logical block size (also
    # when nvmeadm hid it: a format with metadata).
    logical = disk.logical_block_bytes or next(
        (f.data_bytes for f in disk.nvme.lba_formats
         if f.index == disk.nvme.lba_format_in_use), None)
    if not logical:
        return None
    return best_block_size(lba_formats(disk), logical, minimum)


def set_model_tunables(text: str, model: str, settings: Dict[str, str]
                       ) -> str:
    """nvme.conf with the model's triplet setting `settings` (every
    firmware); an edit that cannot be made exactly is an EditError."""
    return nvme_edit.set_tunables(text, model, dict(settings))


def _written(text: str, model: str) -> Optional[str]:
    """The min-phys-block-size the operator's own triplet for `model`
    (any firmware list) writes, or None."""
    clist = config_list(parse(text))
    found = None
    for t in clist.triplets:
        if t.model != model:
            continue
        for item in t.tunables.split(","):
            name, sep, value = item.partition(":")
            if sep and name == TUNABLE:
                found = value
    return found


def _records_by_model(records: List[CertRecord], models: Dict[str, List[Disk]]
                      ) -> Dict[str, List[CertRecord]]:
    """Model -> the records of NVMe namespaces of that model: by the
    model a record names, or by the serial of a namespace present now."""
    by_serial = {(d.serial or "").strip(): m for m, ds in models.items()
                 for d in ds if (d.serial or "").strip()}
    out: Dict[str, List[CertRecord]] = {}
    for rec in records:
        if not rec.outside_sd:
            continue
        model = (rec.model or "").rstrip(" ") or \
            by_serial.get(rec.unit_serial, "")
        if model:
            out.setdefault(model, []).append(rec)
    return out


def _native(rec: CertRecord) -> Dict[str, str]:
    """What a record proposes for nvme.conf: its native sector."""
    return {TUNABLE: str(rec.native_sector_bytes)} \
        if rec.native_sector_bytes else {}


def _format_options(disks: List[Disk], native: int) -> List[str]:
    """The namespaces that could be reformatted to native-size LBAs, as
    options for the operator (never done by sdtune)."""
    out = []
    for d in disks:
        info = d.nvme
        if info is None or info.lba_format_in_use is None:
            continue
        for f in info.lba_formats:
            if f.data_bytes == native and f.metadata_bytes == 0 and \
                    f.index != info.lba_format_in_use:
                member = "; it is in pool %s: take it out of the " \
                    "pool first" % d.pool if d.pool else ""
                out.append("%s (%s/%s) supports %d-byte LBAs "
                           "(LBA format %d): 'nvmeadm format %s/%s %d' "
                           "makes the namespace itself %d-byte, but "
                           "DESTROYS ALL DATA on it%s; sdtune never does "
                           "this" % (d.name, info.controller,
                                     info.namespace, native, f.index,
                                     info.controller, info.namespace,
                                     f.index, native, member))
                break
    return out


def propose(text: str, inv: Inventory, records: List[CertRecord],
            options: Overrides) -> Proposed:
    """The nvme.conf proposals: see the module docstring."""
    proposed = Proposed("nvme", text)
    models: Dict[str, List[Disk]] = {}
    for d in inv.disks:
        if d.driver == "sd":
            continue
        if d.nvme is None or not model_of(d):
            proposed.not_sd.append(NotSd(d.name, d.driver, "not an NVMe "
                                         "namespace: nvme.conf has no effect "
                                         "on it"))
            continue
        models.setdefault(model_of(d), []).append(d)
    by_model = _records_by_model(records, models)
    unknown_pools = inv.pools_unknown()
    smallest = pools_smallest_ashift(inv)
    new_text = text
    for model in sorted(set(models) | set(by_model)):
        disks = models.get(model, [])
        screened = firmware_screen(
            model, by_model.get(model, []), disks,
            "namespaces of this model", _native, options)
        proposed.held.extend(screened.held)
        proposed.warnings.extend(screened.warnings)
        recs = screened.usable
        recs = [r for r in latest(recs) if r.native_sector_bytes
                and (r.sector_confidence or 0.0) >= CONFIDENT]
        if not recs:
            continue
        natives = sorted({r.native_sector_bytes for r in recs})
        if len(natives) > 1:
            proposed.held.append(Held(model, TUNABLE, str(natives[-1]),
                                      "the certified units of this model "
                                      "disagree on the native sector (%s): "
                                      "certify them again" % ", ".join(
                                      "%s %d B" % (r.serial or "?",
                                                   r.native_sector_bytes)
                                      for r in recs)))
            continue
        native = natives[0]
        if native <= 512:
            continue
        rec = recs[-1]
        value = str(native)
        conf = parse(new_text)
        now_reported = [reported_with(d, nvme_evaluate(
            conf, model, firmware_of(d)).min_phys_block_size)
            for d in disks]
        if disks and all(r is not None and r >= native
                         for r in now_reported):
            continue        # blkdev already reports the native size
        written = _written(new_text, model)
        if written is not None and written != value:
            held, warning = operator_value(
                model, TUNABLE, written, value,
                "certification %s" % certified_when(rec), "nvme.conf",
                "model")
            proposed.held.append(held)
            proposed.warnings.append(warning)
            continue
        too_big = ashift_hold(native, "a %s-byte physical block" % value,
                              "a namespace of this model",
                              ashift_bound(disks, smallest), unknown_pools,
                              options)
        if too_big:
            proposed.held.append(Held(model, TUNABLE, value, too_big))
            proposed.options.extend(_format_options(disks, native))
            continue
        try:
            new_text = set_model_tunables(new_text, model, {TUNABLE: value})
        except EditError as e:
            proposed.held.append(Held(model, TUNABLE, value, str(e)))
            continue
        proposed.changes.append(Change(
            model, [d.name for d in disks], {TUNABLE: value},
            [Reason(TUNABLE, value, "certification %s (serial %s)" % (
                certified_when(rec), rec.serial or "?"),
                rec.sector_confidence, rec.sector_reason,
                rec.gains.of(TUNABLE) if rec.gains else None)]))
        proposed.options.extend(_format_options(disks, native))
    proposed.new_text = new_text
    return proposed
