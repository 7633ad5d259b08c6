# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""nvme's side of `sdtune verify`: does blkdev report what nvme.conf
asks for an NVMe namespace?

The nvme driver reads nvme.conf when a controller attaches: the global
min-phys-block-size and volatile-write-cache-enable, then every
nvme-config-list triplet that matches the controller's model and
firmware (nvmeconf.model).  What blkdev reports as a namespace's
physical block size is its best LBA format raised to that minimum
(best_block_size); mdb shows it (bd_t d_pblkshift), and it is what ZFS
takes for a new vdev's ashift.  The write cache state is what nvmeadm
get-features shows.  States, as for sd disks (tune/verify.py):

  applied         blkdev reports the size nvme.conf gives, and a triplet
                  or the global setting asks for something
  pending reboot  blkdev reports another size (or the cache is in
                  another state): nvme reads nvme.conf at attach, and
                  `update_drv -vf nvme` does not re-attach a controller
                  whose namespaces are in use
  not matched     nothing in nvme.conf concerns the namespace: blkdev
                  reports the namespace's own best format
  ignored by nvme nvme.conf asks for something the driver will not do:
                  an invalid value, an unknown name, a malformed tuple
                  (which stops the whole list), a list that is not
                  triplets
  not persistent  the next boot reads an nvme.conf that gives another
                  size, or one that cannot be known
  shadowed        a copy of nvme.conf the kernel does not read asks for
                  another size
  unknown         blkdev's report (mdb) or the namespace's LBA formats
                  (nvmeadm) could not be read

Pure: works on the inventory and parsed files.
"""

from typing import Dict, List, Optional, Tuple

from ...inventory.disks import Disk
from ...nvmeconf.model import APPLIED, GLOBAL_MIN_BLOCK, MIN_BLOCK
from ...nvmeconf.model import NvmeEvaluation
from ...nvmeconf.model import evaluate as nvme_evaluate
from ...driverconf.parser import ConfFile
from ..diskstate import DiskState, Elsewhere
from .propose import firmware_of, model_of, reported_with


def _expected(conf: ConfFile, disk: Disk
              ) -> Tuple[NvmeEvaluation, Optional[int], Optional[bool]]:
    """The evaluation, the physical block size blkdev would report, and
    the write cache state the driver would set (None: no cache)."""
    ev = nvme_evaluate(conf, model_of(disk), firmware_of(disk))
    size = reported_with(disk, ev.min_phys_block_size)
    cache = None
    if disk.nvme.cache_present:
        cache = bool(ev.volatile_write_cache)
    return ev, size, cache


def _asks(ev: NvmeEvaluation) -> List[str]:
    """What the file asks for the controller, as name:value: the tuples
    of matching triplets the driver took, and the driver-wide settings
    the file writes."""
    out = ["%s:%s" % (e.name, e.value) for e in ev.effects
           if e.outcome == APPLIED]
    out += ["%s=%s" % (name, g.value) for name, g in
            sorted(ev.globals.origins.items()) if g.source == "file"]
    return out


def _ignored(ev: NvmeEvaluation) -> List[str]:
    """What the driver will not do as written, each with why."""
    out = ["%s (%s)" % (e.text, e.reason or e.outcome) for e in ev.effects
           if e.outcome != APPLIED]
    if ev.list_ignored:
        out.append(ev.list_ignored)
    out += ["%s: %s" % (name, g.problem) for name, g in
            sorted(ev.globals.origins.items()) if g.problem]
    return out


def asked(conf: ConfFile, disk: Disk) -> Dict[str, str]:
    """For `prove`: when nvme.conf sets a minimum physical block for the
    namespace's controller (a triplet the driver takes, or the global),
    min-phys-block-size -> the size blkdev must then report, which is
    what DKIOCGMEDIAINFOEXT answers; else nothing."""
    if disk.nvme is None:
        return {}
    ev, size, _ = _expected(conf, disk)
    set_here = any(e.name == MIN_BLOCK for e in ev.effects
                   if e.outcome == APPLIED) or any(
        g.source == "file" and name == GLOBAL_MIN_BLOCK
        for name, g in ev.globals.origins.items())
    return {MIN_BLOCK: str(size)} if set_here and size is not None else {}


def verify_nvme_disk(conf: ConfFile, disk: Disk,
                     elsewhere: Optional[Elsewhere] = None) -> DiskState:
    """The state of an NVMe namespace against nvme.conf `conf` (what the
    kernel reads), and with `elsewhere` against the next boot's and the
    shadowed copies."""
    key = model_of(disk)
    if disk.nvme is None:
        return DiskState(disk.name, key or None, "not an sd disk",
                         ["attached by %s: neither sd.conf nor nvme.conf "
                          "has an effect on it" % disk.driver])
    ev, size, cache = _expected(conf, disk)
    actual = disk.physical_block_bytes
    if size is None or actual is None:
        why = []
        if size is None:
            why.append("the namespace's LBA formats are unknown (nvmeadm "
                       "identify)")
        if actual is None:
            why.append("what blkdev reports is unknown (mdb bd_t)")
        return DiskState(disk.name, key, "unknown", why)
    pending = []
    if actual != size:
        pending.append("blkdev reports %d B, nvme.conf gives %d B"
                       % (actual, size))
    enabled = disk.nvme.cache_enabled
    if cache is not None and enabled is not None and enabled != cache:
        pending.append("volatile write cache %s, nvme.conf asks %s" % (
            "enabled" if enabled else "disabled",
            "enabled" if cache else "disabled"))
    ignored, asks = _ignored(ev), _asks(ev)
    if pending:
        state = DiskState(disk.name, key, "pending reboot", pending +
                          ["nvme reads nvme.conf when the controller "
                           "attaches: reboot"])
    elif ignored:
        state = DiskState(disk.name, key, "ignored by nvme", ignored)
    elif not asks:
        state = DiskState(disk.name, key, "not matched",
                          ["blkdev reports the namespace's own best format"
                           ", %d B" % actual])
    else:
        state = DiskState(disk.name, key, "applied", asks + [
            "blkdev reports %d B" % actual])
    if elsewhere is None:
        return state
    if elsewhere.next_conf is not None:
        _, nxt, _ = _expected(elsewhere.next_conf, disk)
        if nxt != size:
            if elsewhere.next_newer:
                return DiskState(disk.name, key, "pending reboot", [
                    "the next boot reads %s (%s B instead of %s B)"
                    % (elsewhere.next_where, nxt, size)])
            return DiskState(disk.name, key, "not persistent", [
                "lost at reboot: the next boot reads %s (%s B instead of "
                "%s B)" % (elsewhere.next_where, nxt, size)]
                + state.details)
    elif elsewhere.next_unknown and asks:
        return DiskState(disk.name, key, "not persistent",
                         ["lost at reboot: %s" % elsewhere.next_unknown]
                         + state.details)
    if state.state in ("applied", "not matched"):
        for path, other in elsewhere.shadowed:
            _, there, _ = _expected(other, disk)
            if there != size:
                return DiskState(disk.name, key, "shadowed", [
                    "%s gives %s B, but the kernel reads %s"
                    % (path, there, elsewhere.effective)])
    return state
