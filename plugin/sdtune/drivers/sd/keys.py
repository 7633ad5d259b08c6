# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the sources say for one sd-config-list key: the proposals of a
certification record and of the known-drives table (Proposal), and the
models and certified serials a key covers (Member), with where they
disagree.  A SATA disk's key holds only the first 16 characters of its
ATA model, so different models can share one key (Intel S4500 and
S4510, every Micron 5200, Kingston DC500M and DC500R), and so can drives
certified one by one; one pair sets one value for all of them.  `plan`
holds back what they disagree on and `audit` reports it (SDT-3006,
SDT-5002).  Pure.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ...certify.recommend import justification
from ...inventory.disks import Disk
from ...knowndrives import KnownDrive, lookup
from ...records.group import certified_when, record_model
from ...records.gains import TunableGain
from ...records.powercuts import TRUSTED, cache_evidence
from ...records.record import CONFIDENT, CertRecord
from ...sdconf.match import Identity
from ...sdconf.tunables import value_text


@dataclass
class Proposal:
    tunable: str
    value: str
    source: str
    confidence: Optional[float]
    evidence: Optional[str]     # a stored record's null reason stays null
    # For cache-nonvolatile: whether something beyond timing says so (the
    # drive's NV_SUP, or the known-drives table).
    nv_evidence: bool = False
    # What certify measured it to buy on the drive (a record's gains).
    gain: Optional[TunableGain] = None


def proposals(key: str, record: Optional[CertRecord],
              table_rows: List[KnownDrive]) -> Dict[str, Proposal]:
    """Tunable -> what the table rows, then the record (which wins),
    propose for the key."""
    props: Dict[str, Proposal] = {}
    for row in table_rows:
        if row.physical_block:
            props["physical-block-size"] = Proposal(
                "physical-block-size", str(row.physical_block),
                "known-drives (%s)" % row.source, None,
                "%s pattern %r" % (row.match, row.pattern))
        if row.nonvolatile:
            props["cache-nonvolatile"] = Proposal(
                "cache-nonvolatile", "true", "known-drives (%s)" % row.source,
                None, "listed with a non-volatile cache", nv_evidence=True)
    if record is not None:
        nv_sup = bool(record.nv_sup)
        for tunable, value in record.recommended.items():
            conf, why = justification(tunable, record)
            props[tunable] = Proposal(tunable, value_text(value),
                                      "certification %s"
                                      % certified_when(record),
                                      conf, why, nv_evidence=nv_sup,
                                      gain=record.gains.of(tunable)
                                      if record.gains else None)
    return props


NV, TIMING, VOLATILE, UNKNOWN_CACHE = "nv", "timing", "volatile", "unknown"


@dataclass
class Member:
    """One model, or one certified serial, that a key covers: what it
    proposes, what it was measured or listed to need, and its cache."""

    label: str
    model: Optional[str]
    record: Optional[CertRecord]
    rows: List[KnownDrive]
    props: Dict[str, Proposal]
    needs: Dict[str, str]
    cache: str            # nv, timing (flush timing only), volatile, unknown
    cache_why: str


def _cache_of(rec: Optional[CertRecord], rows: List[KnownDrive],
              proposes_nv: bool) -> Tuple[str, str]:
    """(cache kind, why).  A witnessed power cut wins over everything
    (records/powercuts.py: a failed check makes the cache volatile for
    this firmware whatever else says, a passed non-volatile claim stands
    in for NV_SUP); then a vendor's data-at-rest statement (timing cannot
    see an unprotected cache that happens to flush fast); then device
    evidence, the table, the certification."""
    witnessed = cache_evidence(rec.power_cuts, rec.firmware) \
        if rec is not None else None
    if witnessed is not None:
        return (NV if witnessed[0] == TRUSTED else VOLATILE), witnessed[1]
    for row in rows:
        if row.data_at_rest:
            return VOLATILE, ("power-loss protection for data at rest only, "
                              "the write cache is not protected (%s)"
                              % row.source)
    if rec is not None and rec.nv_sup:
        return NV, "NV_SUP (certified %s)" % certified_when(rec)
    for row in rows:
        if row.nonvolatile:
            return NV, "known-drives (%s)" % row.source
    if rec is not None and rec.cache == "volatile":
        return VOLATILE, "certified %s: a volatile write cache" % \
            certified_when(rec)
    for row in rows:
        if row.nonvolatile is False:
            return VOLATILE, "known-drives: volatile (%s)" % row.source
    if proposes_nv or (rec is not None and rec.cache == "nonvolatile"):
        return TIMING, "flush timing only (certified %s)" % (
            certified_when(rec) if rec is not None else "?")
    return UNKNOWN_CACHE, "not certified, not in the known-drives table" \
        if rec is None else "certified %s: cache %s" % (
            certified_when(rec), rec.cache or "not judged")


def _member(label: str, model: Optional[str], rec: Optional[CertRecord],
            rows: List[KnownDrive], use_table: bool) -> Member:
    props = proposals("", rec, rows if use_table else [])
    needs = {t: p.value for t, p in props.items()}
    if rec is not None and "physical-block-size" not in needs and \
            rec.native_sector_bytes and \
            (rec.sector_confidence or 0) >= CONFIDENT:
        # Measured, and small enough that it needs no tunable: still a
        # value another member of the key may disagree with.
        needs["physical-block-size"] = str(rec.native_sector_bytes)
    nv = props.get("cache-nonvolatile")
    cache, why = _cache_of(rec, rows, nv is not None and nv.value == "true")
    return Member(label, model, rec, rows, props, needs, cache, why)


def key_members(key: str, disks: List[Disk], recs: List[CertRecord],
                table: List[KnownDrive]) -> List[Member]:
    """The models (present disks) and certified serials (records) one key
    covers, latest record first.  A record's model is the one it names,
    else that of the present disk with its serial, else the only model
    present; a model no record covers is a member of its own."""
    ident = Identity.of_key(key)
    models: List[Optional[str]] = []
    for d in disks:
        if d.ata_model not in models:
            models.append(d.ata_model)
    by_serial = {(d.serial or "").strip(): d.ata_model for d in disks
                 if d.serial}
    members: List[Member] = []
    covered = set()
    for rec in sorted(recs, key=lambda r: r.time, reverse=True):
        model = record_model(rec) or by_serial.get(rec.unit_serial)
        if model is None and len(models) == 1:
            model = models[0]
        covered.add(model)
        label = "serial %s" % (rec.serial or "?")
        if model:
            label += " (%s)" % model
        if rec.origin_host is not None:
            label += " imported from %s" % rec.origin_host
        members.append(_member(label, model, rec,
                               lookup(table, ident, model), bool(disks)))
    for model in models:
        if model in covered:
            continue
        label = "model %s" % (model or ident.pid.strip() or key.strip())
        members.append(_member(label, model, None,
                               lookup(table, ident, model), True))
    if not members:
        # No disk and no record (audit of a pair for an absent model):
        # what the table says of the key itself.
        members.append(_member("model %s" % (ident.pid.strip() or
                                             key.strip()), None, None,
                               lookup(table, ident, None), True))
    return members


def by_value(members: List[Member], tunable: str) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for m in members:
        if tunable in m.needs:
            out.setdefault(m.needs[tunable], []).append(m.label)
    return out


def disputes(members: List[Member], tunables) -> Dict[str, str]:
    """Tunable -> "label value, label value, ..." for each tunable the
    members need different values of (unknown is no value), and for
    cache-nonvolatile when one needs it true while another's cache is
    not known to be non-volatile."""
    out = {}
    for t in tunables:
        if t == "cache-nonvolatile":
            if len(members) > 1 and \
                    any(m.needs.get(t) == "true" for m in members) and \
                    any(m.cache not in (NV, TIMING) for m in members):
                out[t] = "; ".join("%s: cache %s (%s)" % (m.label, m.cache,
                                                          m.cache_why)
                                   for m in members)
            continue
        values = by_value(members, t)
        if len(values) > 1:
            out[t] = "; ".join("%s %s" % (", ".join(labels), v)
                               for v, labels in sorted(values.items()))
    return out


def collision_pick(tunable: str, values: List[str]) -> Optional[str]:
    """The one value --allow-key-collision writes for disagreeing
    members: the largest physical-block-size (too large only costs
    space, too small costs a read-modify-write of every write), the
    smallest throttle (the most a slow member can take); None where no
    rule picks one."""
    if tunable == "physical-block-size":
        return max(values, key=int)
    if tunable in ("throttle-max", "throttle-min"):
        return min(values, key=int)
    return None
