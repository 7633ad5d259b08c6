# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Certification records of disks outside sd (an NVMe namespace under
blkdev): no key, the driver and model say what was measured, the file
name keeps them apart from key and path records, and records written
before these fields read and round-trip as they did."""

import json

from sdtune.records import storage
from sdtune.certify.certifier import render_verdict, result_json
from sdtune.records.record import CertRecord, parse_record, record_problem
from sdtune.host import RealHost

MODEL = "Samsung SSD 970 EVO 1TB"


def nvme_record(**kw) -> CertRecord:
    rec = CertRecord(key=None, time=1795000000.0,
                     target="c3t0025385971B0F5A2d0",
                     device="/dev/rdsk/c3t0025385971B0F5A2d0p0",
                     serial="S467NX0K612345A", firmware="2B2QEXE7",
                     driver="blkdev", model=MODEL, cache="volatile",
                     cache_confidence=0.99, sector_confidence=0.97,
                     native_sector_bytes=4096, logical_block_bytes=512)
    for k, v in kw.items():
        setattr(rec, k, v)
    return rec


def test_an_nvme_record_has_no_key_and_says_its_driver(tmp_path):
    rec = nvme_record()
    doc = rec.to_json()
    assert doc["key"] is None
    assert (doc["driver"], doc["model"]) == ("blkdev", MODEL)
    assert list(doc)[-2:] == ["driver", "model"]
    back, why = parse_record(json.dumps(doc).encode())
    assert why is None and back.to_json() == doc
    assert (back.driver, back.model, back.key) == ("blkdev", MODEL, None)
    path = storage.store(RealHost(str(tmp_path)), "/var/sdtune", rec)
    assert path.endswith("/certify/blkdev--Samsung_SSD_970_EVO_1TB--"
                         "S467NX0K612345A--2B2QEXE7.json")
    loaded, problems = storage.load_checked(RealHost(str(tmp_path)),
                                            "/var/sdtune")
    assert problems == [] and loaded[0].to_json() == doc


def test_file_and_older_records_keep_their_shape():
    rec = nvme_record(driver=None, model=None, serial=None, firmware=None,
                      target="/scratch/file")
    doc = rec.to_json()
    assert "driver" not in doc and "model" not in doc
    assert storage.record_name(None, None, None, "/scratch/file") == \
        "path--_scratch_file.json"
    # An sd disk keeps its key-based name, whatever its driver field.
    key = "ATA     INTEL SSDSC2KB48"
    assert storage.record_name(key, "PHYF1", "0132", "c1t1d0", "sd",
                               "INTEL SSDSC2KB480G8") == \
        "ATA_INTEL_SSDSC2KB48--PHYF1--0132.json"
    old = dict(doc, key=key)
    back, why = parse_record(json.dumps(old).encode())
    assert why is None and back.driver is None and back.to_json() == old


def test_driver_and_model_must_be_text():
    doc = nvme_record().to_json()
    assert record_problem(dict(doc, driver=3)) == \
        "field 'driver' must be text or null"
    assert record_problem(dict(doc, model=["x"])) == \
        "field 'model' must be text or null"


def test_verdict_and_json_name_the_driver_not_a_key():
    rec = nvme_record()
    first = render_verdict(rec).splitlines()[0]
    assert first == ('c3t0025385971B0F5A2d0 (blkdev, model "%s", serial '
                     'S467NX0K612345A, firmware 2B2QEXE7)' % MODEL)
    res = result_json(rec)
    assert res["key"] is None and res["driver"] == "blkdev"
    assert res["model"] == MODEL
    assert "driver" not in result_json(nvme_record(driver=None))


def test_recommendations_of_a_record_outside_sd_are_checked_by_their_names():
    """A keyless record of a disk outside sd recommends nvme.conf's
    tunables (checked by nvme's rules); sd's names stay readable there
    (a virtio disk's record, an NVMe record stored before nvme.conf was
    tuned).  A record with a key is sd's alone."""
    def problem(recommended, key=None, driver="blkdev"):
        doc = nvme_record().to_json()
        doc.update(recommended=recommended, key=key, driver=driver)
        return record_problem(doc)
    assert problem({"min-phys-block-size": 4096}) is None
    assert problem({"physical-block-size": 4096}) is None
    assert "must be a power of 2" in problem({"min-phys-block-size": 4000})
    assert problem({"volatile-write-cache": False}) is None
    assert "recommended.min-phys-block-size': unknown tunable" in problem(
        {"min-phys-block-size": 4096}, key="ATA     INTEL SSDSC2KB48",
        driver="sd")
