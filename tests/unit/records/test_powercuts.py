# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""records/powercuts.py: a record's witnessed power cuts, kept and
checked with the record, and what plan makes of them: a failed check
holds back cache-nonvolatile:true with no override (not even
--allow-no-nv-evidence, not even over NV_SUP), a passed non-volatile
claim stands in for NV_SUP."""

import pytest

from sdtune.certify.powercut import parse_log, parse_slots, record_entry, \
    verdict
from sdtune.records.powercuts import (TRUSTED, UNTRUSTED, cache_evidence,
                                      powercuts_problem)
from sdtune.records.record import CertRecord, record_problem
from tests.unit.test_collisions import (CONF, KEY, audit, disk, found,
                                        held, pair, plan, record)

RUN = "0123456789abcdef"
FIRMWARE = "0100"          # the firmware of builders.disk()


def cut(kind, firmware=FIRMWARE, when="2026-11-27T23:00:00Z"):
    """One cut of a drive of ``kind``: 2 writes flushed, 1 not."""
    log = parse_log(["run %s 4 4096" % RUN, "w 1 0", "w 2 1", "f 2",
                     "w 3 2"], "log")
    held_by = {"nonvolatile": ["0 %s 1" % RUN, "1 %s 2" % RUN,
                               "2 %s 3" % RUN, "3 zero"],
               "volatile": ["0 %s 1" % RUN, "1 %s 2" % RUN, "2 zero",
                            "3 zero"],
               "lie_flush": ["0 zero", "1 zero", "2 zero", "3 zero"]}[kind]
    out = verdict(log, parse_slots(held_by, "read", 4))
    return record_entry(out, 1795820000.0, when, firmware)


def cut_record(*kinds, nv_sup=True, firmware=FIRMWARE):
    rec = record("G7SERIAL", nv_sup=nv_sup, cache="nonvolatile",
                 cache_nonvolatile=True)
    rec.firmware = firmware
    rec.cache_confidence = 0.99     # as certify stores it
    rec.power_cuts = [cut(k) for k in kinds]
    return rec


def test_the_record_keeps_its_cuts_through_its_document():
    rec = cut_record("nonvolatile", "volatile")
    doc = rec.to_json()
    assert [c["nonvolatile"]["status"] for c in doc["power_cuts"]] == \
        ["passed", "failed"]
    assert record_problem(doc) is None
    again = CertRecord.from_json(doc)
    assert again.power_cuts == rec.power_cuts
    # A record without cuts keeps the document it always had.
    assert "power_cuts" not in cut_record().to_json()


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(power_cuts={}), "'power_cuts' must be a list"),
    (lambda d: d["power_cuts"][0].update(time="x"), "power_cuts[0].time"),
    (lambda d: d["power_cuts"][0]["flush"].update(lost=-1),
     "power_cuts[0].flush.lost"),
    (lambda d: d["power_cuts"][0]["nonvolatile"].update(status="fine"),
     "power_cuts[0].nonvolatile.status"),
    (lambda d: d["power_cuts"][0].update(firmware="G\x1b[2J"),
     "power_cuts[0].firmware' holds a control character"),
])
def test_a_bad_cut_in_a_record_is_named(change, words):
    doc = cut_record("nonvolatile").to_json()
    change(doc)
    assert words in record_problem(doc)


def test_what_the_cuts_say_of_the_cache():
    assert cache_evidence([], FIRMWARE) is None
    trusted = cache_evidence([cut("nonvolatile"), cut("nonvolatile")],
                             FIRMWARE)
    assert trusted[0] == TRUSTED and "passed 2 times" in trusted[1]
    lied = cache_evidence([cut("nonvolatile"), cut("lie_flush")], FIRMWARE)
    assert lied[0] == UNTRUSTED and "its flushes lie" in lied[1]
    assert "2 of 2 writes a completed flush acknowledged lost" in lied[1]
    volatile = cache_evidence([cut("volatile")], FIRMWARE)
    assert volatile[0] == UNTRUSTED and "1 of 3 completed writes" in \
        volatile[1]
    # Another firmware's cuts say nothing of this one.
    assert cache_evidence([cut("lie_flush", firmware="OTHER")],
                          FIRMWARE) is None
    assert powercuts_problem([cut("volatile").to_json()]) is None


@pytest.mark.parametrize("flags", [{}, {"allow_no_nv_evidence": True}])
def test_a_failed_cut_holds_back_cache_nonvolatile_whatever_else_says(
        flags):
    """NV_SUP set, flushes free, a record recommending the pair: the
    witnessed cut lost completed writes, and nothing overrides it."""
    rec = cut_record("nonvolatile", "volatile")
    p = plan([disk("c1t0d0", "INTEL SSDSC2KB480G7", "G7SERIAL")], [rec],
             **flags)
    (h,) = held(p, "cache-nonvolatile")
    assert "power-cut check failed" in h.reason
    assert "1 of 3 completed writes lost" in h.reason
    assert "no override" in h.reason
    assert all("cache-nonvolatile" not in c.set for c in p.changes)


def test_a_passed_cut_stands_in_for_nv_sup():
    without = plan([disk("c1t0d0", "INTEL SSDSC2KB480G7", "G7SERIAL")],
                   [cut_record(nv_sup=False)])
    (h,) = held(without, "cache-nonvolatile")
    assert "no device evidence" in h.reason
    p = plan([disk("c1t0d0", "INTEL SSDSC2KB480G7", "G7SERIAL")],
             [cut_record("nonvolatile", nv_sup=False)])
    assert held(p, "cache-nonvolatile") == []
    (change,) = p.changes
    assert change.set.get("cache-nonvolatile") == "true"


def test_audit_names_the_lost_writes_under_the_pair():
    rec = cut_record("volatile")
    findings = audit([disk("c1t0d0", "INTEL SSDSC2KB480G7", "G7SERIAL")],
                     [rec], pair(KEY, "cache-nonvolatile:true"))
    (f,) = found(findings, "SDT-5002")
    assert f.severity == "high"
    assert "power-cut check failed" in f.status
    assert "1 of 3 completed writes lost" in f.status


@pytest.mark.parametrize("role, kind, expected", [
    ("log", "lie_flush", True), ("special", "lie_flush", True),
    ("data", "lie_flush", False), ("log", "volatile", False),
    ("log", "nonvolatile", False)])
def test_audit_finds_lying_flushes_under_a_log_or_special_vdev(
        role, kind, expected):
    """Flushes that lie are a danger in the intent log and metadata
    whatever sd.conf says; a volatile cache whose flushes hold is not."""
    d = disk("c1t0d0", "INTEL SSDSC2KB480G7", "G7SERIAL", pool="tank")
    d.pool_role = role
    findings = found(audit([d], [cut_record(kind)], CONF), "SDT-5003")
    assert bool(findings) == expected
    if expected:
        (f,) = findings
        assert f.severity == "high" and f.subject == "c1t0d0"
        assert "%s device of pool tank" % role in f.status
        assert "2 of 2 writes a completed flush acknowledged lost" in \
            f.status
