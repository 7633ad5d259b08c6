# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.


"""sd's side of `sdtune verify`: does the kernel use what sd.conf says
for one disk?  The sd.conf evaluation (the same sd model `sdconf show`
uses) gives the values sd.conf asks for; mdb gives the values the
kernel uses.  The states are described in tune/verify.py; "ignored by
sd" is sd.conf asking for something the kernel will not do: an invalid
value or name, the throttle reset, disksort on a disk reporting rotation
rate 1 (facts §6.3), a physical block size dropped by a failed READ
CAPACITY(16) or, on upstream kernels, lower than the drive reports
(§6.1).  Pure: works on the inventory and parsed files.
"""

from typing import Dict, List, Mapping, Optional, Tuple

from ...inventory.disks import Disk
from ...sdconf.match import Identity
from ...sdconf.model import Evaluation, evaluate
from ...driverconf.parser import ConfFile
from ..diskstate import DiskState, Elsewhere

# sd.conf tunable -> the sd_lun member mdb shows it in (facts §3.4);
# throttles are checked on un_saved_throttle, not un_throttle (§3.5).
FIELDS = {
    "cache-nonvolatile": "un_f_suppress_cache_flush",
    "throttle-max": "un_saved_throttle",
    "throttle-min": "un_min_throttle",
    "disksort": "un_f_disksort_disabled",
    "physical-block-size": "un_phy_blocksize",
}


def _unread(disk: Disk, failed: Mapping[str, str]) -> List[str]:
    """Why the disk's kernel values or identity are missing, naming the
    failed inventory source; empty when both were read."""
    why = []
    if not disk.kernel_values:
        why.append("mdb ::sd_state failed: %s" % failed["mdb ::sd_state"]
                   if "mdb ::sd_state" in failed else
                   "mdb ::sd_state showed no values for it")
    if disk.vid is None or disk.pid is None:
        sources = ["%s failed: %s" % (name, failed[name])
                   for name in ("mdb inquiry", "iostat -En")
                   if name in failed]
        why.append("vendor and product unknown: %s"
                   % ("; ".join(sources) or "no INQUIRY data for it"))
    return why


def _values(ev: Evaluation) -> Dict[str, Optional[int]]:
    return {m: getattr(ev.state, m) for m in FIELDS.values()}


def _relevant(ev: Evaluation) -> bool:
    """Whether a pair other than the all-devices "" pair matches."""
    return any(e.pair.key != "" for e in ev.matched)


def _differences(a: Evaluation, b: Evaluation) -> str:
    va, vb = _values(a), _values(b)
    return ", ".join("%s %s instead of %s" % (m, vb[m], va[m])
                     for m in sorted(va) if va[m] != vb[m])


def verify_disk(conf: ConfFile, disk: Disk, flavour: str,
                failed: Optional[Mapping[str, str]] = None,
                elsewhere: Optional[Elsewhere] = None) -> DiskState:
    """The disk's state; `failed` is Inventory.failed, to say why a disk
    whose values are missing is "unknown"; `elsewhere`, the copies of
    sd.conf the platform boots from next or shadows."""
    if disk.driver != "sd":
        return DiskState(disk.name, disk.key, "not an sd disk",
                         ["attached by %s: sd.conf has no effect on it"
                          % disk.driver])
    why = _unread(disk, failed or {})
    if why:
        return DiskState(disk.name, disk.key, "unknown", why)
    ident = Identity.of_inquiry(disk.vid, disk.pid, disk.firmware)
    ev = evaluate(conf, ident, flavour)
    state = _kernel_state(ev, disk, flavour)
    if elsewhere is None:
        return state
    if elsewhere.next_newer and elsewhere.next_conf is not None:
        nxt = evaluate(elsewhere.next_conf, ident, flavour)
        if _values(nxt) != _values(ev):
            why = "the next boot reads %s (%s)" % (
                elsewhere.next_where, _differences(ev, nxt))
            return DiskState(disk.name, disk.key, "pending reboot", [why])
    elif state.state != "not matched" and elsewhere.checks_reboot:
        lost = _lost_at_reboot(ev, ident, flavour, elsewhere)
        if lost is not None:
            return DiskState(disk.name, disk.key, "not persistent",
                             [lost] + state.details)
    if state.state in ("applied", "not matched", "ignored by sd"):
        for path, other in elsewhere.shadowed:
            ev2 = evaluate(other, ident, flavour)
            if _relevant(ev2) and _values(ev2) != _values(ev):
                return DiskState(disk.name, disk.key, "shadowed", [
                    "%s asks for %s, but the kernel reads %s"
                    % (path, _differences(ev, ev2), elsewhere.effective)])
    return state


def _lost_at_reboot(ev: Evaluation, ident: Identity, flavour: str,
                    elsewhere: Elsewhere) -> Optional[str]:
    """Why the disk's values do not survive the next boot, or None."""
    if elsewhere.next_conf is None:
        if not _relevant(ev):
            return None
        return "lost at reboot: %s" % elsewhere.next_unknown
    nxt = evaluate(elsewhere.next_conf, ident, flavour)
    if _values(nxt) == _values(ev):
        return None
    return "lost at reboot: the next boot reads %s (%s)" % (
        elsewhere.next_where, _differences(ev, nxt))


def _asked(ev: Evaluation) -> Tuple[Dict[str, str], List[str]]:
    """The settings sd accepts for the disk (tunable -> value; the last
    matching pair wins) and those it ignores, as "name:value (why)"."""
    asked: Dict[str, str] = {}
    ignored: List[str] = []
    for effect in ev.matched:
        for r in effect.results:
            if r.accepted:
                asked[(r.name or "").lower()] = r.value
            else:
                ignored.append("%s:%s (%s)" % (r.name, r.value, r.reason))
    return asked, ignored


def asked(conf: ConfFile, disk: Disk, flavour: str) -> Dict[str, str]:
    """What sd.conf (`conf`, the file the kernel reads) asks sd to do
    for the disk and sd accepts: the values `prove` checks against the
    kernel's paths."""
    ident = Identity.of_inquiry(disk.vid, disk.pid, disk.firmware)
    return _asked(evaluate(conf, ident, flavour))[0]


def _kernel_state(ev: Evaluation, disk: Disk, flavour: str) -> DiskState:
    """applied, pending reboot, not matched or ignored by sd: the
    kernel's values against `ev`, the effective sd.conf's for the disk
    (whose values were read)."""
    pending: List[str] = []
    asked, ignored = _asked(ev)
    kv = disk.kernel_values
    # Every field sd.conf can set is compared, also when the current file
    # no longer sets it: a disk attached under an earlier sd.conf keeps
    # that file's values until it attaches again.
    for tunable, member in sorted(FIELDS.items()):
        expected, actual = getattr(ev.state, member), kv.get(member)
        if actual is None or expected == actual:
            continue
        override = _kernel_override(tunable, expected, actual, disk, flavour)
        if override is not None:
            if tunable in asked:
                ignored.append(override)
            continue
        if tunable == "physical-block-size" and tunable not in asked and \
                kv.get("un_f_sdconf_phy_blocksize") != 1:
            continue        # the drive's own READ CAPACITY(16) size
        pending.append("%s: kernel %s, sd.conf %s" % (member, actual,
                                                      expected))
    if pending:
        return DiskState(disk.name, disk.key, "pending reboot",
                         pending + ignored)
    if not _relevant(ev):
        return DiskState(disk.name, disk.key, "not matched",
                         [ev.list_problem] if ev.list_problem else [])
    if ignored:
        return DiskState(disk.name, disk.key, "ignored by sd", ignored)
    return DiskState(disk.name, disk.key, "applied",
                     ["%s:%s" % kv for kv in sorted(asked.items())])


def _kernel_override(tunable: str, expected: int, actual: int, disk: Disk,
                     flavour: str) -> Optional[str]:
    """When attach itself replaces the sd.conf value, say how."""
    kv = disk.kernel_values
    if tunable == "disksort" and expected == 0 and actual == 1 and \
            (kv.get("un_f_is_solid_state") == 1 or disk.ssd):
        return "disksort:true (the disk reports rotation rate 1: sd " \
            "disables disksort after reading sd.conf)"
    if tunable == "physical-block-size":
        if flavour == "nexenta" and kv.get("un_f_sdconf_phy_blocksize") == 1 \
                and actual == 512:
            return "physical-block-size:%d (READ CAPACITY(16) failed: sd " \
                "reset it to 512)" % expected
        if flavour == "upstream" and actual > expected:
            return "physical-block-size:%d (upstream sd keeps the larger " \
                "size the drive reports, %d)" % (expected, actual)
    if tunable in ("throttle-max", "throttle-min") and actual <= 3 and \
            kv.get("un_saved_throttle", 256) <= 3:
        return "%s:%d (untagged queueing: sd clamps the throttle to %d)" \
            % (tunable, expected, actual)
    return None
