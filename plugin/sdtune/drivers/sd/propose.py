# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.


"""sd's proposals for `sdtune plan`: sd-config-list changes, one pair
per drive model key, with the reason for every tunable.

Sources, strongest first: certification records (sdtune certify/infer),
then the known-drives table.  Each proposal is merged into the existing
pair for its key (sdconf.edit keeps every unrelated byte).  The records
of a suspect unit, one whose numbers stand out among three or more
units of its key (records/crosscheck.py), are left out, and the reasons
of the key's proposals name it.  Refused or held back, each with the
reason in the plan:

* a physical-block-size above 2^ashift of a top-level vdev the model
  sits in, or stands by as a spare for (ashift 9 holds back 4096,
  ashift 12 holds back 8192): `zpool replace` and `attach` would then
  fail (drivers/ashift.py; facts §6.1, §15.13) —
  `--allow-ashift-mismatch` overrides;
* cache-nonvolatile:true without device evidence (NV_SUP or the table) —
  `--allow-no-nv-evidence` overrides;
* a key that would also match disks of another model;
* a tunable the models or certified serials sharing one key disagree on
  (the 16-byte product id cuts long ATA models: Intel S4500 and S4510
  share a key) — `--allow-key-collision KEY` writes the largest
  physical-block-size and the smallest throttles;
* cache-nonvolatile:true for a key that covers any model or serial whose
  cache is volatile (measured, or in the known-drives table, including
  a vendor's "data at rest" protection) or unknown: no override;
* a value that differs from what the operator already wrote for the key:
  kept, and said;
* every proposal of a certification whose firmware differs from that of
  every installed disk of its key (a firmware update can change what a
  drive needs; a record imported from another appliance may be of
  another firmware) — `--allow-firmware-mismatch` overrides.

A record imported from another appliance (`results --import`) is used
like a local one, except that one whose export carried no signature
this appliance trusts is never evidence of a non-volatile cache
(CertRecord.as_evidence; no override); every reason that rests on it
names where it was certified.

Disks sd does not attach (NVMe and virtio through blkdev) get nothing,
with the reason (Proposed.not_sd); NVMe namespaces are planned in
nvme.conf by `plan --driver nvme` (drivers/nvme/propose.py).

Pure: works on the inventory, the records, the table and the text.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ...inventory.disks import Disk, Inventory
from ...knowndrives import KnownDrive
from ...records.crosscheck import Suspect, consensus
from ...records.group import certified_when, latest_by_serial
from ...records.record import CertRecord
from ...driverconf.edit import EditError
from ...driverconf.parser import parse
from ...sdconf.edit import Setting, set_tunables
from ...sdconf.match import Identity, key_matches
from ...sdconf.model import evaluate
from ...sdconf.tunables import canonical_value, value_text
from ..ashift import ashift_bound, pools_smallest_ashift
from ..planning import Change, Held, NotSd, Overrides, Proposed, Reason
from ..screens import ashift_hold, firmware_screen, operator_value
from .keys import (NV, UNKNOWN_CACHE, VOLATILE, Member, Proposal, by_value,
                   collision_pick, disputes, key_members)


def _not_sd(d: Disk, records: List[CertRecord]) -> NotSd:
    """Why plan leaves a disk of another driver alone; its certification,
    found by serial (such records have no key), is named for audit."""
    if d.nvme is not None:
        reason = "an NVMe namespace (%s), not under sd: sd.conf has no " \
            "effect on it; nvme.conf sets what blkdev reports for its " \
            "model: sdtune plan --driver nvme" % d.driver
    else:
        reason = "attached through %s, not sd: sd.conf has no effect on " \
            "it (nothing to plan; audit still checks its vdev ashift " \
            "against its native sector)" % d.driver
    serial = (d.serial or "").strip()
    recs = [r for r in records if r.key is None and serial and
            r.unit_serial == serial]
    if recs:
        rec = max(recs, key=lambda r: r.time)
        if rec.native_sector_bytes:
            reason += "; certified %s: native sector %d B" % (
                certified_when(rec), rec.native_sector_bytes)
    return NotSd(d.name, d.driver, reason)


def _key_proposals(key: str, members: List[Member], options: Overrides,
                   proposed: Proposed) -> Tuple[List[Proposal], bool]:
    """One proposal per tunable for the whole key, and whether the
    members disagreed on any; disputed ones are held (or, with
    --allow-key-collision KEY, settled by collision_pick)."""
    tunables: List[str] = []
    for m in members:
        tunables += [t for t in m.props if t not in tunables]
    allowed = key in options.allow_key_collision
    disputed = disputes(members, tunables)
    out = []
    for t in tunables:
        proposing = [m for m in members if t in m.props]
        first = proposing[0].props[t]
        if t == "cache-nonvolatile":
            p = _nv_proposal(key, members, proposing, proposed)
            if p is not None:
                out.append(p)
            continue
        if t not in disputed:
            out.append(first)
            continue
        pick = collision_pick(t, list(by_value(members, t)))
        if not allowed or pick is None:
            how = "--allow-key-collision \"%s\" writes the %s" % (
                key, "largest" if t == "physical-block-size" else
                "smallest") if pick is not None else \
                "no override: no one value suits both"
            proposed.held.append(Held(
                key, t, pick or first.value,
                "key collision: the key covers models or certified serials "
                "that disagree (%s); %s" % (disputed[t], how)))
            continue
        chosen = next((m.props[t] for m in proposing
                       if m.props[t].value == pick), None)
        if chosen is None:
            continue        # the pick is a measured default: nothing to set
        out.append(Proposal(t, pick, chosen.source, chosen.confidence,
                            "--allow-key-collision: the %s of %s" % (
                                "largest" if t == "physical-block-size"
                                else "smallest", disputed[t]),
                            chosen.nv_evidence))
    return out, bool(disputed)


def _nv_proposal(key: str, members: List[Member], proposing: List[Member],
                 proposed: Proposed) -> Optional[Proposal]:
    """cache-nonvolatile:true only when every member's cache is
    non-volatile: no flag overrides a volatile or unknown one, since sd
    then stops flushing a cache whose content a power loss destroys."""
    first = proposing[0].props["cache-nonvolatile"]
    if first.value != "true":
        return first
    volatile = [m for m in members if m.cache == VOLATILE]
    unknown = [m for m in members if m.cache == UNKNOWN_CACHE]
    if volatile:
        proposed.held.append(Held(
            key, "cache-nonvolatile", "true",
            "%s%s: %s; cache-nonvolatile:true would stop sd flushing a "
            "cache a power loss empties (acknowledged writes lost, pool "
            "corrupted); no override" % (
                "key collision: " if len(members) > 1 else "",
                "; ".join("%s: %s" % (m.label, m.cache_why)
                          for m in volatile),
                "volatile cache" if len(volatile) == 1
                else "volatile caches")))
        return None
    if unknown:
        proposed.held.append(Held(
            key, "cache-nonvolatile", "true",
            "key collision: the key also covers %s, whose cache is unknown "
            "(%s); cache-nonvolatile:true is never written for a key that "
            "covers a cache not known to be non-volatile: no override "
            "(certify it)" % (", ".join(m.label for m in unknown),
                              "; ".join(m.cache_why for m in unknown))))
        return None
    evidence = all(m.cache == NV for m in members)
    return Proposal(first.tunable, first.value, first.source,
                    first.confidence, first.evidence, nv_evidence=evidence)


def propose(text: str, flavour: str, inv: Inventory,
            records: List[CertRecord], table: List[KnownDrive],
            options: Overrides) -> Proposed:
    """sd's proposals for sd.conf `text`: see the module docstring."""
    proposed = Proposed(flavour, text)
    present: Dict[str, List[Disk]] = {}
    for d in inv.disks:
        if d.driver != "sd":
            proposed.not_sd.append(_not_sd(d, records))
        elif d.key:
            present.setdefault(d.key, []).append(d)
    current = _firmware_screen(records, present, options, proposed)
    # An imported record without a signature this appliance trusts is
    # shown, never evidence of a non-volatile cache (no override).
    for rec in current:
        if not rec.authenticated and \
                rec.recommended.get("cache-nonvolatile") is True:
            proposed.held.append(Held(
                rec.key or "-", "cache-nonvolatile", "true",
                "certification %s: an unsigned import is not evidence of "
                "a non-volatile cache; no override" % certified_when(rec)))
    current = [rec.as_evidence() for rec in current]
    # A unit whose numbers stand out among the units of its key is left
    # out: the model's consensus, not the outlier, becomes the pair.
    used, suspects = consensus(current)
    by_key = latest_by_serial(used)
    smallest = pools_smallest_ashift(inv)
    bounds = {key: ashift_bound(disks, smallest)
              for key, disks in present.items()}
    unknown = Unknowns(inv.pools_unknown(), _ids_unknown(inv))
    keys = sorted(set(by_key) | set(present))
    disputed_keys = set()
    new_text = text
    for key in keys:
        disks = present.get(key, [])
        members = key_members(key, disks, by_key.get(key, []), table)
        props, disputed = _key_proposals(key, members, options, proposed)
        left_out = [s for s in suspects if s.key == key]
        if left_out:
            props = [_with_consensus(p, len(by_key.get(key, [])), left_out)
                     for p in props]
        if disputed:
            disputed_keys.add(key)
        if not props:
            continue
        settings, why = _screen(key, props, _written(new_text, key, flavour),
                                _also_matched(inv, key), bounds.get(key),
                                unknown, options, proposed)
        if not settings:
            continue
        new_text, settings = _merge(new_text, key, settings, flavour, proposed)
        if not settings:
            continue
        names = {s.name for s in settings}
        proposed.changes.append(Change(key, [d.name for d in disks],
                                       {s.name: s.value for s in settings},
                                       [w for w in why if w.tunable in names]))
        blind = [m.label for m in members if m.record is None and
                 not m.needs and m.cache == UNKNOWN_CACHE]
        if blind and len(members) > 1:
            proposed.warnings.append(
                "%s: the pair also applies to %s, which has no "
                "certification or known-drives entry: the values of the "
                "other models or serials apply to it too" % (
                    key, ", ".join(blind)))
    for key in options.allow_key_collision:
        if key not in disputed_keys:
            proposed.warnings.append("--allow-key-collision \"%s\": no key "
                                     "collision for this key, nothing "
                                     "overridden" % key)
    proposed.new_text = new_text
    return proposed


def _firmware_screen(records: List[CertRecord],
                     present: Dict[str, List[Disk]], options: Overrides,
                     proposed: Proposed) -> List[CertRecord]:
    """The records plan may use (screens.firmware_screen, key by key:
    every tunable a stale record recommends is held); records without a
    key (of disks sd does not attach) pass."""
    by_key: Dict[str, List[CertRecord]] = {}
    for rec in records:
        if rec.key is not None:
            by_key.setdefault(rec.key, []).append(rec)
    usable = set()
    for key in sorted(by_key):
        screened = firmware_screen(
            key, by_key[key], present.get(key, []), "disks of this key",
            _recommended, options)
        usable.update(id(r) for r in screened.usable)
        proposed.held.extend(screened.held)
        proposed.warnings.extend(screened.warnings)
    return [r for r in records if r.key is None or id(r) in usable]


def _recommended(rec: CertRecord) -> Dict[str, str]:
    return {t: value_text(v) for t, v in rec.recommended.items()}


def _with_consensus(p: Proposal, units: int,
                    left_out: List[Suspect]) -> Proposal:
    """A certification's proposal, its reason naming the suspect units
    that were left out of the key's records (crosscheck.consensus)."""
    if not p.source.startswith("certification"):
        return p
    note = "consensus of %d unit%s; %s" % (
        units, "" if units == 1 else "s", "; ".join(
            "suspect unit %s left out: %s" % (s.serial, "; ".join(s.reasons))
            for s in left_out))
    evidence = "%s (%s)" % (p.evidence, note) if p.evidence else note
    return Proposal(p.tunable, p.value, p.source, p.confidence, evidence,
                    p.nv_evidence)


def _merge(text: str, key: str, settings: List[Setting], flavour: str,
           proposed: Proposed) -> Tuple[str, List[Setting]]:
    """The text with the settings merged into KEY's pair, and the ones
    that went in.  When the edit refuses the whole set (say a throttle
    below the pair's other throttle), each setting is tried alone, so
    one bad value holds back only itself."""
    try:
        return set_tunables(text, key, settings, flavour), settings
    except EditError:
        pass
    kept = []
    for s in settings:
        try:
            text = set_tunables(text, key, kept + [s], flavour)
        except EditError as e:
            proposed.held.append(Held(key, s.name, s.value,
                                      "edit refused: %s" % e))
            continue
        kept.append(s)
    return text, kept


@dataclass
class Unknowns:
    """What the inventory could not read, each with why: unknown is
    unsafe, so the proposals that depend on it are held back."""

    pools: Optional[str] = None      # pool membership / vdev ashift
    ids: Optional[str] = None        # which disks a key matches


def _ids_unknown(inv: Inventory) -> Optional[str]:
    for name in ("mdb ::sd_state", "mdb inquiry"):
        if name in inv.failed:
            return "%s failed: %s" % (name, inv.failed[name])
    return None


def _written(text: str, key: str, flavour: str) -> Dict[str, str]:
    """Tunable -> the value sd.conf `text` already gives KEY."""
    current = evaluate(parse(text), Identity.of_key(key), flavour)
    return {r.name.lower(): r.value for e in current.matched
            for r in e.results if r.accepted and r.name}


def _also_matched(inv: Inventory, key: str) -> List[str]:
    """The disks of other keys that KEY's pair would match too."""
    return [d.name for d in inv.disks if d.key and d.key != key and
            d.vid and key_matches(key, Identity.of_inquiry(d.vid, d.pid,
                                                           None))]


def _screen(key: str, props: List[Proposal], written: Dict[str, str],
            others: List[str], bound: Optional[Tuple[int, str]],
            unknown: "Unknowns", options: Overrides, proposed: Proposed
            ) -> Tuple[List[Setting], List[Reason]]:
    """The proposals that may go in, and the reasons for each:
    `written` is what sd.conf already sets for the key, `others` the
    disks of other models the key matches, ``bound`` the ashift the
    key's disks must fit (ashift.ashift_bound)."""
    settings: List[Setting] = []
    why: List[Reason] = []

    def hold(p: Proposal, reason: str) -> None:
        proposed.held.append(Held(key, p.tunable, p.value, reason))

    for p in props:
        value, problem = canonical_value(p.tunable, p.value)
        if value is None:
            hold(p, problem)
            continue
        if others:
            hold(p, "key %r also matches %s (another model)" % (
                key, ", ".join(others[:3])))
            continue
        if unknown.ids:
            hold(p, "cannot tell which disks this key matches: %s"
                 % unknown.ids)
            continue
        if written.get(p.tunable) not in (None, value):
            held, warning = operator_value(key, p.tunable,
                                           written[p.tunable], value,
                                           p.source, "sd.conf", "key")
            proposed.held.append(held)
            proposed.warnings.append(warning)
            continue
        if written.get(p.tunable) == value:
            continue
        too_big = ashift_hold(int(value), "physical-block-size %s" % value,
                              "a disk of this model", bound, unknown.pools,
                              options) \
            if p.tunable == "physical-block-size" else None
        if too_big:
            hold(p, too_big)
            continue
        if p.tunable == "cache-nonvolatile" and value == "true" and \
                not p.nv_evidence and not options.allow_no_nv_evidence:
            hold(p, "no device evidence (NV_SUP) of a non-volatile cache "
                 "(only timing): a volatile cache without flushes loses "
                 "data at power loss; --allow-no-nv-evidence to override")
            continue
        settings.append(Setting(p.tunable, value))
        why.append(Reason(p.tunable, value, p.source, p.confidence,
                          p.evidence, p.gain))
    return settings, why
