# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune plan`: propose sd-config-list changes, one pair per drive
model key, with the reason for every tunable.

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
  fail (tune/ashift.py; facts §6.1, §15.13) —
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
with the reason (Plan.not_sd); NVMe namespaces are planned in nvme.conf
by `plan --driver nvme` (tune/nvmeplan.py).

Pure apart from reading through the host (records, table, inventory,
sd.conf).
"""

import json
import math
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..records.crosscheck import Suspect, consensus
from ..records.group import (certified_when, latest_by_serial,
                             measured_firmware)
from ..records.record import CertRecord
from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..inventory.disks import Disk, Inventory
from ..knowndrives import KnownDrive
from ..driverconf.edit import EditError, unified_diff
from ..driverconf.parser import parse
from ..sdconf.edit import Setting, set_tunables
from ..sdconf.match import Identity, key_matches
from ..sdconf.model import evaluate
from ..sdconf.tunables import canonical_value
from .ashift import ashift_bound, pools_smallest_ashift, too_large
from .journal import DRIVERS, sha256
from .members import (NV, UNKNOWN_CACHE, VOLATILE, Member, Proposal,
                      by_value, collision_pick, disputes, key_members,
                      value_text)

PLAN_VERSION = 1
# sd.conf twice (old text in the diff, new text) and the reasons.
PLAN_LIMIT = 32 << 20


@dataclass
class Reason:
    """Why a change sets one tunable: the proposal it came from."""

    tunable: str
    value: str
    source: str
    confidence: Optional[float]
    evidence: Optional[str]

    def to_json(self) -> dict:
        return {"tunable": self.tunable, "value": self.value,
                "source": self.source, "confidence": self.confidence,
                "evidence": self.evidence}


@dataclass
class Change:
    """The tunables set in one key's pair, the disks it matches now and
    the reason for each tunable.  A change read from a saved plan has
    only its key and tunables (disks and why are not trusted, so not
    read)."""

    key: str
    disks: List[str] = field(default_factory=list)
    set: Dict[str, str] = field(default_factory=dict)
    why: List[Reason] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"key": self.key, "disks": self.disks, "set": self.set,
                "why": [w.to_json() for w in self.why]}


@dataclass
class Held:
    """A tunable held back for a key, and why."""

    key: str
    tunable: str
    value: str
    reason: str

    def to_json(self) -> dict:
        return {"key": self.key, "tunable": self.tunable,
                "value": self.value, "reason": self.reason}


@dataclass
class NotSd:
    """A disk sd does not attach (NVMe, virtio: blkdev): sd.conf cannot
    tune it, so plan proposes nothing for it and says why."""

    disk: str
    driver: str
    reason: str

    def to_json(self) -> dict:
        return {"disk": self.disk, "driver": self.driver,
                "reason": self.reason}


@dataclass
class Plan:
    conf_path: str           # the .conf's system path (JSON: sd_conf)
    flavour: str
    base_sha256: str
    new_text: str
    diff: str
    changes: List[Change] = field(default_factory=list)
    held: List[Held] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    created: float = 0.0
    not_sd: List[NotSd] = field(default_factory=list)
    # sd: changes are sd-config-list pairs keyed by VID/PID; nvme: they
    # are nvme-config-list triplets keyed by model (tune/nvmeplan.py).
    driver: str = "sd"
    # What the operator could do beyond the plan and sdtune never does
    # (an NVMe namespace's `nvmeadm format` to a larger LBA size).
    options: List[str] = field(default_factory=list)

    @property
    def new_sha256(self) -> str:
        return sha256(self.new_text.encode("latin-1"))

    def to_json(self) -> dict:
        return {"version": PLAN_VERSION, "created": self.created,
                "driver": self.driver,
                "sd_conf": self.conf_path, "flavour": self.flavour,
                "base_sha256": self.base_sha256,
                "new_sha256": self.new_sha256,
                "changes": [c.to_json() for c in self.changes],
                "held": [h.to_json() for h in self.held],
                "not_sd": [n.to_json() for n in self.not_sd],
                "warnings": self.warnings, "options": self.options,
                "diff": self.diff, "new_text": self.new_text}

    @classmethod
    def from_json(cls, doc: object, path: str) -> "Plan":
        """A plan file's claims, each field checked.  Nothing in it is
        trusted: apply recomputes and screens what it would change."""
        def bad(what: str) -> SdtuneError:
            return SdtuneError("read plan", path, "not an sdtune plan: %s"
                               % what)
        if not isinstance(doc, dict):
            raise bad("not a JSON object")
        if doc.get("version") != PLAN_VERSION:
            raise bad("version is not %d" % PLAN_VERSION)
        for name in ("sd_conf", "flavour", "base_sha256", "new_text"):
            if not isinstance(doc.get(name), str):
                raise bad("field '%s' is missing or not a string" % name)
        try:
            doc["new_text"].encode("latin-1")
        except UnicodeEncodeError:
            raise bad("field 'new_text' holds characters sd.conf cannot "
                      "(not latin-1)") from None
        driver = doc.get("driver", "sd")
        if driver not in DRIVERS:
            raise bad("field 'driver' is not one of %s" % ", ".join(DRIVERS))
        changes = doc.get("changes")
        if not isinstance(changes, list):
            raise bad("field 'changes' is missing or not a list")
        for i, c in enumerate(changes):
            key = c.get("key") if isinstance(c, dict) else None
            # sd: the 24 characters of VID and PID; nvme: the model, at
            # most the 40 bytes of Identify Controller's field.
            key_ok = isinstance(key, str) and (
                len(key) == 24 if driver == "sd" else 0 < len(key) <= 40)
            if not key_ok or \
                    not isinstance(c.get("set"), dict) or not c["set"] or \
                    not all(isinstance(k, str) and isinstance(v, str)
                            for k, v in c["set"].items()):
                raise bad("changes[%d] is not a %s with tunables to set"
                          % (i, "24-character key" if driver == "sd" else
                             "model of 1 to 40 characters"))
        created = doc.get("created", 0.0)
        if not isinstance(created, (int, float)) or \
                isinstance(created, bool) or not math.isfinite(created):
            created = 0.0
        plan = cls(doc["sd_conf"], doc["flavour"], doc["base_sha256"],
                   doc["new_text"], "", changes=[
                       Change(c["key"], set=dict(c["set"]))
                       for c in changes], created=float(created),
                   driver=driver)
        if plan.new_sha256 != doc.get("new_sha256"):
            raise SdtuneError("read plan", path, "the plan's new %s.conf "
                              "does not match its checksum (edited?)"
                              % driver)
        return plan


@dataclass
class Overrides:
    allow_ashift_mismatch: bool = False
    allow_no_nv_evidence: bool = False
    # Keys (exactly as in sd.conf, 24 characters) whose models or
    # certified serials disagree and may still get one value each
    # (largest physical-block-size, smallest throttles).  Never
    # cache-nonvolatile: that has no override.
    allow_key_collision: Tuple[str, ...] = ()
    # Use certifications made with a firmware no installed disk of
    # their key runs.
    allow_firmware_mismatch: bool = False

    @classmethod
    def from_args(cls, args) -> "Overrides":
        """The overrides of `plan` and `apply` (commands/tune.py
        _allow_flags)."""
        return cls(args.allow_ashift_mismatch, args.allow_no_nv_evidence,
                   tuple(args.allow_key_collision),
                   args.allow_firmware_mismatch)


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
                   plan: "Plan") -> Tuple[List[Proposal], bool]:
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
            p = _nv_proposal(key, members, proposing, plan)
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
            plan.held.append(Held(key, t, pick or first.value,
                                  "key collision: the key covers models or "
                                  "certified serials that disagree (%s); "
                                  "%s" % (disputed[t], how)))
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
                 plan: "Plan") -> Optional[Proposal]:
    """cache-nonvolatile:true only when every member's cache is
    non-volatile: no flag overrides a volatile or unknown one, since sd
    then stops flushing a cache whose content a power loss destroys."""
    first = proposing[0].props["cache-nonvolatile"]
    if first.value != "true":
        return first
    volatile = [m for m in members if m.cache == VOLATILE]
    unknown = [m for m in members if m.cache == UNKNOWN_CACHE]
    if volatile:
        plan.held.append(Held(key, "cache-nonvolatile", "true", "%s%s: %s; "
                              "cache-nonvolatile:true would stop sd "
                              "flushing a cache a power loss empties "
                              "(acknowledged writes lost, pool corrupted); "
                              "no override" % (
                                  "key collision: " if len(members) > 1
                                  else "",
                                  "; ".join("%s: %s" % (m.label, m.cache_why)
                                            for m in volatile),
                                  "volatile cache" if len(volatile) == 1
                                  else "volatile caches")))
        return None
    if unknown:
        plan.held.append(Held(key, "cache-nonvolatile", "true",
                              "key collision: the key also covers %s, "
                              "whose cache is unknown (%s); "
                              "cache-nonvolatile:true is never written for "
                              "a key that covers a cache not known to be "
                              "non-volatile: no override (certify it)" % (
                                  ", ".join(m.label for m in unknown),
                                  "; ".join(m.cache_why for m in unknown))))
        return None
    evidence = all(m.cache == NV for m in members)
    return Proposal(first.tunable, first.value, first.source,
                    first.confidence, first.evidence, nv_evidence=evidence)


def make_plan(text: str, conf_path: str, flavour: str, inv: Inventory,
              records: List[CertRecord], table: List[KnownDrive],
              options: Overrides, now: float) -> Plan:
    base = sha256(text.encode("latin-1"))
    plan = Plan(conf_path, flavour, base, text, "", created=now)
    present: Dict[str, List[Disk]] = {}
    for d in inv.disks:
        if d.driver != "sd":
            plan.not_sd.append(_not_sd(d, records))
        elif d.key:
            present.setdefault(d.key, []).append(d)
    current = _firmware_screen(records, present, options, plan)
    # An imported record without a signature this appliance trusts is
    # shown, never evidence of a non-volatile cache (no override).
    for rec in current:
        if not rec.authenticated and \
                rec.recommended.get("cache-nonvolatile") is True:
            plan.held.append(Held(
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
        props, disputed = _key_proposals(key, members, options, plan)
        left_out = [s for s in suspects if s.key == key]
        if left_out:
            props = [_with_consensus(p, len(by_key.get(key, [])), left_out)
                     for p in props]
        if disputed:
            disputed_keys.add(key)
        if not props:
            continue
        settings, why = _screen(key, props, inv, bounds.get(key), unknown,
                                parse(new_text), flavour, options, plan)
        if not settings:
            continue
        new_text, settings = _merge(new_text, key, settings, flavour, plan)
        if not settings:
            continue
        names = {s.name for s in settings}
        plan.changes.append(Change(key, [d.name for d in disks],
                                   {s.name: s.value for s in settings},
                                   [w for w in why if w.tunable in names]))
        blind = [m.label for m in members if m.record is None and
                 not m.needs and m.cache == UNKNOWN_CACHE]
        if blind and len(members) > 1:
            plan.warnings.append(
                "%s: the pair also applies to %s, which has no "
                "certification or known-drives entry: the values of the "
                "other models or serials apply to it too" % (
                    key, ", ".join(blind)))
    for key in options.allow_key_collision:
        if key not in disputed_keys:
            plan.warnings.append("--allow-key-collision \"%s\": no key "
                                 "collision for this key, nothing "
                                 "overridden" % key)
    plan.new_text = new_text
    plan.diff = unified_diff(text, new_text, conf_path,
                             conf_path + " (planned)")
    return plan


def _firmware(text: Optional[str]) -> str:
    return (text or "").strip()


def _firmware_screen(records: List[CertRecord],
                     present: Dict[str, List[Disk]], options: Overrides,
                     plan: Plan) -> List[CertRecord]:
    """The records plan may use: not those made with a firmware that no
    installed disk of their key runs, or that name none (when the
    installed firmware is known), since a firmware update can change
    what a drive needs.  Each
    unit certified only with another firmware has the proposals of its
    latest record held, naming both firmwares; --allow-firmware-mismatch
    uses them all, with a warning."""
    usable: List[CertRecord] = []
    stale: Dict[Tuple[str, str], CertRecord] = {}
    installed: Dict[str, List[str]] = {}
    for rec in records:
        if rec.key is None:
            usable.append(rec)
            continue
        running = installed.setdefault(rec.key, sorted({
            _firmware(d.firmware) for d in present.get(rec.key, [])
            if _firmware(d.firmware)}))
        # A record that names no firmware is of an unknown one: held like
        # one of another firmware (adversarial 2026-11-27, F3: an
        # imported record with "firmware": null bypassed the screen).
        if not running or _firmware(rec.firmware) in running:
            usable.append(rec)
            continue
        unit = (rec.key, rec.unit_serial or "#%d" % id(rec))
        if unit not in stale or stale[unit].time < rec.time:
            stale[unit] = rec
    current = {(r.key, r.unit_serial) for r in usable}
    for (key, serial), rec in sorted(stale.items()):
        if (key, serial) in current:
            continue    # the unit also has a record of a firmware in use
        what = "certification %s (serial %s) measured %s; the " \
            "installed disks of this key run firmware %s" % (
                certified_when(rec), rec.serial or "?",
                measured_firmware(rec), ", ".join(installed[key]))
        if options.allow_firmware_mismatch:
            plan.warnings.append("%s: %s: used (--allow-firmware-mismatch)"
                                 % (key, what))
            continue
        for tunable, value in rec.recommended.items():
            plan.held.append(Held(key, tunable, value_text(value),
                                  "%s: a firmware update can change what "
                                  "the drive needs; certify it again, or "
                                  "--allow-firmware-mismatch to use it"
                                  % what))
        if not rec.recommended:
            plan.warnings.append("%s: %s: not used (certify it again, or "
                                 "--allow-firmware-mismatch)" % (key, what))
    if options.allow_firmware_mismatch:
        return list(records)
    return usable


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
           plan: Plan) -> Tuple[str, List[Setting]]:
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
            plan.held.append(Held(key, s.name, s.value,
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


def _screen(key, props, inv, bound, unknown, conf, flavour, options,
            plan) -> tuple:
    """The proposals that may go in, and the reasons for each; ``bound``
    is the ashift the key's disks must fit (ashift.ashift_bound)."""
    settings: List[Setting] = []
    why: List[Reason] = []
    current = evaluate(conf, Identity.of_key(key),
                       flavour)
    written = {r.name.lower(): r.value for e in current.matched
               for r in e.results if r.accepted and r.name}

    def hold(p: Proposal, reason: str) -> None:
        plan.held.append(Held(key, p.tunable, p.value, reason))

    others = [d.name for d in inv.disks if d.key and d.key != key and
              d.vid and key_matches(key, Identity.of_inquiry(d.vid, d.pid,
                                                             None))]
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
            hold(p, "sd.conf already sets %s:%s for this key; the "
                 "operator's value is kept" % (p.tunable,
                                               written[p.tunable]))
            plan.warnings.append("%s: keeping the operator's %s:%s (%s "
                                 "suggests %s)" % (key, p.tunable,
                                                   written[p.tunable],
                                                   p.source, value))
            continue
        if written.get(p.tunable) == value:
            continue
        if p.tunable == "physical-block-size" and int(value) > 512 and \
                unknown.pools and not options.allow_ashift_mismatch:
            hold(p, "pool membership and vdev ashift are unknown (%s): "
                 "a disk of this model may be in an ashift=9 vdev, where "
                 "physical-block-size %s makes zpool replace/attach fail; "
                 "--allow-ashift-mismatch to override" % (unknown.pools,
                                                          value))
            continue
        if p.tunable == "physical-block-size" and \
                too_large(int(value), bound) and \
                not options.allow_ashift_mismatch:
            hold(p, "%s: with physical-block-size %s, zpool replace/attach "
                 "of this model into that vdev fails (EDOM); "
                 "--allow-ashift-mismatch to override" % (bound[1], value))
            continue
        if p.tunable == "cache-nonvolatile" and value == "true" and \
                not p.nv_evidence and not options.allow_no_nv_evidence:
            hold(p, "no device evidence (NV_SUP) of a non-volatile cache "
                 "(only timing): a volatile cache without flushes loses "
                 "data at power loss; --allow-no-nv-evidence to override")
            continue
        settings.append(Setting(p.tunable, value))
        why.append(Reason(p.tunable, value, p.source, p.confidence,
                          p.evidence))
    return settings, why


def recheck_saved(saved: Plan, fresh: Plan, text: str, path: str) -> Plan:
    """The change a saved plan really makes, screened again.

    A plan file is a claim: it could be stale, or edited by whoever can
    write it.  ``fresh`` is the plan made now from the same sd.conf
    (``text``), the current inventory, records and table, with the
    options of this apply.  Every tunable the saved plan claims to set
    must be one the fresh plan would set to the same value (so the same
    screening held nothing of it back), and applying exactly those claims
    to the current sd.conf must give the saved text byte for byte: a
    text that does anything else is refused.  The result, with its diff
    computed from the real bytes, is what apply shows and journals.
    """
    proposed = {c.key: c for c in fresh.changes}
    held = {(h.key, h.tunable): h.reason for h in fresh.held}
    checked = Plan(saved.conf_path, fresh.flavour, fresh.base_sha256, text, "",
                   created=saved.created, driver=saved.driver)
    new_text = text
    for claim in saved.changes:
        key = claim.key
        now = proposed.get(key, Change(key))
        for tunable, value in claim.set.items():
            if now.set.get(tunable) == value:
                continue
            reason = held.get((key, tunable)) or held.get((key, "*")) or \
                "not proposed now (%s.conf already has it, or no record " \
                "or table entry supports it)" % saved.driver
            raise RefusedError("apply", path, '"%s" %s:%s: %s'
                               % (key, tunable, value, reason))
        try:
            if saved.driver == "nvme":
                from .nvmeplan import set_model_tunables
                new_text = set_model_tunables(new_text, key, claim.set)
            else:
                new_text = set_tunables(new_text, key, [
                    Setting(t, v) for t, v in claim.set.items()],
                    fresh.flavour)
        except EditError as e:
            raise RefusedError("apply", path, '"%s": %s' % (key, e)) from e
        checked.changes.append(Change(
            key, now.disks, dict(claim.set),
            [w for w in now.why if w.tunable in claim.set]))
    if new_text != saved.new_text:
        raise RefusedError("apply", path, "the plan's new %s.conf does "
                           "something its recorded changes do not say; "
                           "make a new plan" % saved.driver)
    checked.new_text = new_text
    checked.diff = unified_diff(text, new_text, saved.conf_path,
                                saved.conf_path + " (planned)")
    return checked


def render_plan(plan: Plan) -> str:
    lines = []
    for c in plan.changes:
        lines.append('"%s" (%s):' % (c.key, ", ".join(c.disks) or
                                     "no disk present"))
        for w in c.why:
            conf = "" if w.confidence is None else \
                ", confidence %.2f" % w.confidence
            lines.append("  %s:%s  from %s%s"
                         % (w.tunable, w.value, w.source, conf))
            if w.evidence:
                lines.append("      %s" % w.evidence)
    for h in plan.held:
        lines.append('held back "%s" %s:%s: %s'
                     % (h.key, h.tunable, h.value, h.reason))
    for n in plan.not_sd:
        lines.append("not planned %s (%s): %s"
                     % (n.disk, n.driver, n.reason))
    for w in plan.warnings:
        lines.append("warning: %s" % w)
    for o in plan.options:
        lines.append("option: %s" % o)
    if not plan.changes:
        lines.append("nothing to change")
    text = "\n".join(lines) + "\n"
    if plan.diff:
        text += "\n" + plan.diff
    return text


def load_plan(host: Host, path: str) -> Plan:
    try:
        doc = json.loads(host.read_bytes(path, limit=PLAN_LIMIT)
                         .decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SdtuneError("read plan", path, "not an sdtune plan: not "
                          "JSON") from e
    return Plan.from_json(doc, path)


def now_iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
