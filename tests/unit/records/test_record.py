# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""CertRecord: a record as certify stores it comes back unchanged from
its file, a stored file keeps every key it has for `results -o json`,
optional fields a file leaves out get the readers' defaults, and every
shape problem is named in the words the warnings use."""

import copy
import dataclasses
import json
import os

import pytest

from sdtune.records import storage
from sdtune.certify.certifier import import_benchmark, infer_record
from sdtune.records.record import (RECORD_FIELDS, CertRecord, NotARecord,
                                   QueueDepth, parse_record, record_problem)
from sdtune.host import RealHost

HERE = os.path.dirname(__file__)
VDBENCH = os.path.join(HERE, "..", "..", "fixtures", "bench",
                       "vdbench-two-layouts.txt")
KEY = "ATA     INTEL SSDSC2BA80"


def real_record() -> CertRecord:
    """The record infer makes of real vdbench output, as if a drive's."""
    with open(VDBENCH) as f:
        imported = import_benchmark("/in", f.read(), None)
    rec = infer_record("/in", imported)
    return dataclasses.replace(rec, key=KEY, serial="BTWL1234",
                               firmware="0270", time=1795000000.5,
                               recommended={"throttle-max": 32,
                                            "disksort": False})


def stored(tmp_path, rec: CertRecord) -> dict:
    host = RealHost(str(tmp_path))
    path = storage.store(host, "/var/sdtune", rec)
    with open(path, "rb") as f:
        return json.loads(f.read())


def good() -> dict:
    return real_record().to_json()


def test_stored_record_round_trips(tmp_path):
    rec = real_record()
    doc = stored(tmp_path, rec)
    assert list(doc)[0] == "version" and doc["version"] == 1
    assert CertRecord.from_json(doc).to_json() == doc
    assert CertRecord.from_json(doc) == rec
    loaded, problems = storage.load_checked(RealHost(str(tmp_path)),
                                            "/var/sdtune")
    assert problems == [] and len(loaded) == 1
    assert loaded[0].to_json() == doc and loaded[0].as_stored() == doc
    assert loaded[0].nv_sup is None and loaded[0].key == KEY


def test_to_json_keeps_the_order_certify_writes():
    assert list(good()) == [
        "version", "target", "device", "key", "serial", "firmware", "time",
        "time_iso", "source", "logical_block_bytes", "native_sector_bytes",
        "sector_confidence", "sector_reason", "cache", "cache_confidence",
        "cache_reason", "queue_depth", "recommended", "evidence"]
    assert list(good()["queue_depth"]) == [
        "knee", "knees", "throttle_max", "throttle_min", "confidence",
        "reason"]


def test_unknown_keys_are_kept_for_results(tmp_path):
    doc = dict(good(), written_by="sdtune 2")
    rec = CertRecord.from_json(doc)
    assert rec.as_stored() == doc and "written_by" in rec.as_stored()
    assert "written_by" not in rec.to_json()
    made = real_record()
    assert made.stored is None and made.as_stored() == made.to_json()


def test_missing_optional_fields_get_the_readers_defaults():
    rec = CertRecord.from_json({"key": None, "time": 5})
    assert (rec.serial, rec.firmware, rec.target, rec.cache) == \
        (None, None, None, None)
    assert rec.sector_confidence is None and rec.cache_confidence is None
    assert (rec.time_iso, rec.sector_reason, rec.cache_reason) == \
        ("", "", "")
    assert rec.queue_depth == QueueDepth()
    assert rec.queue_depth.confidence is None
    assert rec.queue_depth.reason == ""
    assert rec.recommended == {} and rec.evidence == {}
    assert rec.nv_sup is None
    # An explicit null stays null: readers print what the file says.
    assert CertRecord.from_json({"key": None, "time": 5,
                                 "time_iso": None}).time_iso is None


def test_nv_sup_comes_from_the_device_evidence():
    doc = dict(good(), evidence={"device": {"nv_sup": True}})
    assert CertRecord.from_json(doc).nv_sup is True


# ------------------------------------------------------------- problems

def problem(doc) -> str:
    with pytest.raises(NotARecord) as e:
        CertRecord.from_json(doc)
    assert str(e.value) == e.value.why
    return e.value.why


def with_value(path, value) -> dict:
    doc = copy.deepcopy(good())
    doc["evidence"]["device"] = {"nv_sup": None}
    where = doc
    for part in path[:-1]:
        where = where[part]
    where[path[-1]] = value
    return doc


@pytest.mark.parametrize("f", RECORD_FIELDS,
                         ids=[".".join(f.path) for f in RECORD_FIELDS])
def test_each_field_of_the_wrong_type_is_named(f):
    # A list is none of the types a record holds.
    assert problem(with_value(f.path, [])) == "field '%s' must be %s" % (
        ".".join(f.path), f.expected)


@pytest.mark.parametrize("name", ["key", "time"])
def test_a_required_field_missing_is_named(name):
    doc = good()
    del doc[name]
    assert problem(doc) == "field '%s' is missing" % name


@pytest.mark.parametrize("doc, why", [
    ([], "not a JSON object"),
    ("record", "not a JSON object"),
    (dict(good(), key="ATA"), "field 'key' must be null or a drive key of "
     "exactly 24 characters"),
    (dict(good(), time=True), "field 'time' must be a number (seconds "
     "since 1970)"),
    (dict(good(), version=2), "field 'version' must be 1"),
    (dict(good(), native_sector_bytes=0), "field 'native_sector_bytes' "
     "must be a positive integer or null"),
    (dict(good(), sector_confidence=1.5), "field 'sector_confidence' "
     "must be a number from 0 to 1"),
    (dict(good(), cache_confidence=float("nan")), "field "
     "'cache_confidence' must be a number from 0 to 1"),
    (dict(good(), queue_depth=None), "field 'queue_depth' must be an "
     "object"),
    (dict(good(), queue_depth={"knee": -1}), "field 'queue_depth.knee' "
     "must be a non-negative integer or null"),
    (dict(good(), evidence={"device": {"nv_sup": "yes"}}),
     "field 'evidence.device.nv_sup' must be true, false or null"),
    (dict(good(), recommended={"throttle-max": "77"}),
     "field 'recommended.throttle-max': must be an integer, true or "
     "false"),
    (dict(good(), recommended={"throttle-max": 0}),
     "field 'recommended.throttle-max': must be between 2 and 32767"),
    (dict(good(), recommended={"physical-block-size": 1000}),
     "field 'recommended.physical-block-size': must be 512 times a power "
     "of two (512, 4096, 8192, ...)"),
    (dict(good(), recommended={"no-such": 1}),
     "field 'recommended.no-such': unknown tunable"),
])
def test_problem_texts(doc, why):
    assert problem(doc) == why
    assert record_problem(doc) == why


def test_parse_record_gives_the_record_or_why_not():
    doc = good()
    rec, why = parse_record(json.dumps(doc).encode())
    assert why is None and isinstance(rec, CertRecord)
    assert rec.to_json() == doc
    assert parse_record(b"\xff") == (None, "not UTF-8 text (byte 0)")
    assert parse_record(b'{"key"') == (
        None, "not valid JSON (line 1, column 7)")
    assert parse_record(b"[]") == (None, "not a JSON object")
