# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Models and certified drives that share one sd-config-list key (the
16-byte product id cuts long ATA models), and disks sd does not attach:
what plan proposes, holds and says, and what audit finds.  Pure: Disk
objects, records and tables built here; the appliance versions are in
tests/e2e/test_tune_cli.py and test_audit_cli.py."""

import os

import pytest

from sdtune.audit import AuditedConf, Auditor
from sdtune.inventory.disks import Inventory
from sdtune.inventory.zdb import TopVdev
from sdtune.knowndrives import parse_table
from sdtune.driverconf.parser import parse
from sdtune.drivers.planning import Evidence, Overrides
from sdtune.tune.plan import make_plan, render_plan
from tests import builders

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY = "ATA     INTEL SSDSC2KB48"
G7, G8 = "INTEL SSDSC2KB480G7", "INTEL SSDSC2KB480G8"
MX500 = "ATA     CT500MX500SSD1  "
CONF = 'name="sd" class="scsi" target=0 lun=0;\n'
HEAD = ("match\tpattern\tphysical_block_bytes\tnonvolatile_cache\tvendor\t"
        "source\n")


def shipped():
    with open(os.path.join(REPO, "conf", "known-drives.tsv"),
              encoding="utf-8") as f:
        return parse_table(f.read())


def disk(name, model, serial, key=None, driver="sd", pool=None, ashift=None):
    return builders.disk(name, key, model=model, serial=serial,
                         driver=driver, pool=pool, ashift=ashift)


def record(serial, key=KEY, native=None, nv_sup=False, cache=None,
           when=1.0, **recommended):
    rec = {k.replace("_", "-"): v for k, v in recommended.items()}
    if native and native > 512:
        rec["physical-block-size"] = native
    return builders.cert_record(
        key, serial, when=when, native=native, cache=cache, nv_sup=nv_sup,
        recommended=rec, time_iso="2026-11-2%dT00:00:00Z" % int(when),
        source=None, logical_block_bytes=None, cache_confidence=None)


def plan(disks, records, table=(), **flags):
    inv = Inventory(list(disks))
    return make_plan("sd", CONF, "/kernel/drv/sd.conf", "upstream",
                     Evidence(inv, list(records), list(table)),
                     Overrides(**flags), 0.0)


def held(p, tunable):
    return [h for h in p.held if h.tunable == tunable]


def both():
    return [disk("c1t0d0", G7, "G7SERIAL"), disk("c1t1d0", G8, "G8SERIAL")]


# ------------------------------------------------------------ plan

def test_sector_sizes_that_disagree_are_held_naming_each():
    p = plan(both(), [record("G7SERIAL", native=8192),
                      record("G8SERIAL", native=4096, when=2.0)])
    assert p.changes == []
    (h,) = held(p, "physical-block-size")
    assert h.key == KEY and h.value == "8192"
    assert "serial G7SERIAL (%s) 8192" % G7 in h.reason
    assert "serial G8SERIAL (%s) 4096" % G8 in h.reason
    assert '--allow-key-collision "%s" writes the largest' % KEY in h.reason
    assert "held back" in render_plan(p)


def test_override_writes_the_largest_sector_and_the_smallest_throttle():
    recs = [record("G7SERIAL", native=8192, throttle_max=64),
            record("G8SERIAL", native=512, throttle_max=16, when=2.0)]
    assert {h.tunable for h in plan(both(), recs).held} == {
        "physical-block-size", "throttle-max"}
    p = plan(both(), recs, allow_key_collision=(KEY,))
    (change,) = p.changes
    assert change.set == {"physical-block-size": "8192",
                          "throttle-max": "16"}
    assert change.disks == ["c1t0d0", "c1t1d0"]
    why = {w.tunable: w.evidence for w in change.why}
    assert why["physical-block-size"].startswith(
        "--allow-key-collision: the largest of")
    assert why["throttle-max"].startswith(
        "--allow-key-collision: the smallest of")
    assert '"%s" physical-block-size=8192' % KEY in p.new_text or \
        "physical-block-size:8192" in p.new_text


def test_override_for_another_key_changes_nothing_and_says_so():
    recs = [record("G7SERIAL", native=8192),
            record("G8SERIAL", native=4096, when=2.0)]
    other = "ATA     SOMETHING ELSE  "
    p = plan(both(), recs, allow_key_collision=(other,))
    assert held(p, "physical-block-size") and p.changes == []
    assert any(other in w and "no key collision" in w for w in p.warnings)


def test_agreeing_members_are_no_collision():
    p = plan(both(), [record("G7SERIAL", native=4096),
                      record("G8SERIAL", native=4096, when=2.0)])
    (change,) = p.changes
    assert change.set == {"physical-block-size": "4096"} and p.held == []


def test_unmeasured_model_gets_the_value_and_a_warning():
    p = plan(both(), [record("G7SERIAL", native=4096)])
    (change,) = p.changes
    assert change.set == {"physical-block-size": "4096"}
    assert any("model %s" % G8 in w and "no certification" in w
               for w in p.warnings)


def test_two_serials_of_one_model_that_disagree_are_a_collision():
    disks = [disk("c1t0d0", G7, "A"), disk("c1t1d0", G7, "B")]
    p = plan(disks, [record("A", throttle_max=32),
                     record("B", throttle_max=8, when=2.0)])
    (h,) = held(p, "throttle-max")
    assert "serial A (%s) 32" % G7 in h.reason and "smallest" in h.reason


def test_nonvolatile_never_written_over_an_unknown_model():
    recs = [record("G7SERIAL", nv_sup=True, cache="nonvolatile",
                   cache_nonvolatile=True)]
    for flags in ({}, {"allow_key_collision": (KEY,),
                       "allow_no_nv_evidence": True}):
        p = plan(both(), recs, shipped(), **flags)
        (h,) = held(p, "cache-nonvolatile")
        assert "model %s" % G8 in h.reason and "unknown" in h.reason
        assert "no override" in h.reason
        assert all("cache-nonvolatile" not in c.set for c in p.changes)


def test_nonvolatile_never_written_over_a_measured_volatile_serial():
    recs = [record("G7SERIAL", nv_sup=True, cache="nonvolatile",
                   cache_nonvolatile=True),
            record("G8SERIAL", cache="volatile", when=2.0)]
    p = plan(both(), recs, allow_key_collision=(KEY,))
    (h,) = held(p, "cache-nonvolatile")
    assert "serial G8SERIAL" in h.reason and "volatile" in h.reason
    assert h.reason.startswith("key collision") and "no override" in h.reason


def test_nonvolatile_goes_in_when_every_member_has_evidence():
    recs = [record("G7SERIAL", nv_sup=True, cache="nonvolatile",
                   cache_nonvolatile=True),
            record("G8SERIAL", nv_sup=True, cache="nonvolatile",
                   cache_nonvolatile=True, when=2.0)]
    (change,) = plan(both(), recs).changes
    assert change.set == {"cache-nonvolatile": "true"}


def test_known_drives_rows_that_disagree_are_a_collision():
    table = parse_table(HEAD + "ata-glob\t%s\t8192\t-\tIntel\tone\n" % G7 +
                        "ata-glob\t%s\t4096\t-\tIntel\tother\n" % G8)
    p = plan(both(), [], table)
    (h,) = held(p, "physical-block-size")
    assert "model %s 8192" % G7 in h.reason
    assert "model %s 4096" % G8 in h.reason


# ------------------------------------------------------- data at rest

@pytest.mark.parametrize("flags", [{}, {"allow_no_nv_evidence": True},
                                   {"allow_key_collision": (MX500,)}])
def test_data_at_rest_model_never_gets_nonvolatile(flags):
    """Timing says the flush is free and the drive even claims NV_SUP:
    the vendor's data-at-rest statement still wins."""
    d = disk("c2t0d0", "CT500MX500SSD1", "MX1")
    rec = record("MX1", key=MX500, nv_sup=True, cache="nonvolatile",
                 cache_nonvolatile=True, throttle_max=32)
    p = plan([d], [rec], shipped(), **flags)
    (h,) = held(p, "cache-nonvolatile")
    assert "data at rest only" in h.reason and "techpowerup" in h.reason
    assert "no override" in h.reason
    (change,) = p.changes                 # the rest of the record goes in
    assert change.set == {"throttle-max": "32"}


def test_data_at_rest_key_holds_even_with_no_disk_present():
    rec = record("MX1", key=MX500, nv_sup=True, cache="nonvolatile",
                 cache_nonvolatile=True)
    p = plan([], [rec], shipped(), allow_no_nv_evidence=True)
    (h,) = held(p, "cache-nonvolatile")
    assert "data at rest only" in h.reason and p.changes == []


# ------------------------------------------------------------ suspects

def measured(serial, native, when):
    """A record as certify makes it (source sdio), with a reason."""
    rec = record(serial, native=native, when=when)
    rec.source, rec.sector_reason = "sdio", "read-modify-write below it"
    return rec


def test_plan_uses_the_consensus_and_names_the_suspect_unit():
    disks = [disk("c1t%dd0" % i, G8, "S%d" % i) for i in range(1, 7)]
    recs = [measured("S%d" % i, 4096, float(i)) for i in range(1, 6)] + \
        [measured("S6", 8192, 6.0)]
    p = plan(disks, recs)
    assert held(p, "physical-block-size") == []
    (change,) = p.changes
    assert change.set == {"physical-block-size": "4096"}
    (why,) = change.why
    assert why.evidence == (
        "read-modify-write below it (consensus of 5 units; suspect unit S6 "
        "left out: native sector 8192 B where 5 siblings measured 4096 B)")
    assert "suspect unit S6 left out" in render_plan(p)


def test_plan_without_a_consensus_holds_as_before():
    disks = [disk("c1t%dd0" % i, G8, "S%d" % i) for i in range(1, 5)]
    recs = [measured("S1", 4096, 1.0), measured("S2", 4096, 2.0),
            measured("S3", 8192, 3.0), measured("S4", 8192, 4.0)]
    p = plan(disks, recs)
    assert p.changes == []
    (h,) = held(p, "physical-block-size")
    assert "suspect" not in h.reason and "S3" in h.reason


# ------------------------------------------------------------ non-sd

def test_disk_outside_sd_gets_nothing_and_the_reason():
    nvme = disk("c3t0025385971B0F5A2d0", None, "S467NX0K612345A",
                driver="blkdev", pool="fast", ashift=9)
    rec = record("S467NX0K612345A", key=None, native=4096)
    p = plan([nvme], [rec])
    assert p.changes == [] and p.held == []
    (n,) = p.not_sd
    assert n.disk == nvme.name and n.driver == "blkdev"
    assert "sd.conf has no effect" in n.reason
    assert "native sector 4096 B" in n.reason
    assert p.to_json()["not_sd"] == [n.to_json()]
    assert "not planned %s (blkdev)" % nvme.name in render_plan(p)


# ------------------------------------------------------------ audit

def audit(disks, records, conf_text, table=None, vdevs=()):
    inv = Inventory(list(disks), vdevs=list(vdevs))
    return Auditor(inv, list(records),
                   shipped() if table is None else table, "upstream",
                   AuditedConf(parse(conf_text), "/kernel/drv/sd.conf")
                   ).run()


def found(findings, finding_id):
    return [f for f in findings if f.id == finding_id]


def pair(key, tunables):
    return CONF + 'sd-config-list = "%s", "%s";\n' % (key, tunables)


def test_audit_pair_for_models_that_disagree():
    recs = [record("G7SERIAL", native=8192),
            record("G8SERIAL", native=4096, when=2.0)]
    (f,) = found(audit(both(), recs, pair(KEY, "physical-block-size:4096")),
                 "SDT-3006")
    assert f.subject == '"%s"' % KEY
    assert "physical-block-size:4096" in f.status
    assert "8192" in f.status and "G7SERIAL" in f.status
    assert ("'sdtune sdconf set /kernel/drv/sd.conf \"%s\" "
            "physical-block-size=8192 --write'" % KEY) in f.action
    # The pair does not set what they disagree on: nothing to say.
    assert found(audit(both(), recs, pair(KEY, "throttle-max:32")),
                 "SDT-3006") == []


def test_audit_nonvolatile_over_a_data_at_rest_model():
    d = disk("c2t0d0", "CT500MX500SSD1", "MX1")
    findings = audit([d], [], pair(MX500, "cache-nonvolatile:true"))
    (f,) = found(findings, "SDT-5002")
    assert f.severity == "high" and "data at rest only" in f.status
    assert "sdtune sdconf unset /kernel/drv/sd.conf" in f.action
    assert found(findings, "SDT-5001") == []      # said once
    # Even with no MX500 present, the key alone is enough.
    assert found(audit([], [], pair(MX500, "cache-nonvolatile:true")),
                 "SDT-5002")


def test_audit_nonvolatile_over_a_measured_volatile_serial():
    recs = [record("G7SERIAL", nv_sup=True),
            record("G8SERIAL", cache="volatile", when=2.0)]
    (f,) = found(audit(both(), recs, pair(KEY, "cache-nonvolatile:true")),
                 "SDT-5002")
    assert "serial G8SERIAL" in f.status


def test_audit_nonvolatile_over_an_unknown_model_is_a_collision():
    recs = [record("G7SERIAL", nv_sup=True)]
    findings = audit(both(), recs, pair(KEY, "cache-nonvolatile:true"))
    (f,) = found(findings, "SDT-3006")
    assert "cache-nonvolatile:true" in f.status and G8 in f.status
    assert "cache-nonvolatile --write" in f.action
    assert found(findings, "SDT-5001") == found(findings, "SDT-5002") == []
    # Every model with evidence: nothing.
    recs.append(record("G8SERIAL", nv_sup=True, when=2.0))
    assert audit(both(), recs, pair(KEY, "cache-nonvolatile:true")) == []


def test_audit_checks_a_disk_outside_sd_against_its_certification():
    nvme = disk("c3t0025385971B0F5A2d0", None, "S467NX0K612345A",
                driver="blkdev", pool="fast", ashift=9)
    top = TopVdev("fast", 0, "disk", 9, False, [nvme.name])
    assert found(audit([nvme], [], CONF, vdevs=[top]), "SDT-1001") == []
    rec = record("S467NX0K612345A", key=None, native=4096)
    (f,) = found(audit([nvme], [rec], CONF, vdevs=[top]), "SDT-1001")
    assert "4096 B pages (certified" in f.status
