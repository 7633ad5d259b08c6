# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Records that travel (certify/travel.py), pure: the digests, the
export document and every way an import refuses one (each message names
what is wrong and, for a record, its number, key and serial), what an
import does with each record, and the firmware hold of plan."""

import hashlib
import json

import pytest

from sdtune.certify import travel
from sdtune.records.record import CertRecord, QueueDepth
from sdtune.certify.travel import BadExport, check_export
from sdtune.inventory.disks import Inventory
from sdtune.drivers.planning import Evidence, Overrides
from sdtune.tune.plan import make_plan
from tests import builders

KEY = "ATA     INTEL SSDSC2KB96"
OTHER = "ATA     SAMSUNG MZ7LM480"
BY = {"host": "fs01", "platform": "omnios", "sdtune_version": "0.1.0",
      "time": 1795000000.0, "time_iso": "2026-11-18T09:46:40Z"}


def record(serial="PHYF0000", key=KEY, firmware="0132", t=1795000000.5,
           **more) -> CertRecord:
    """A stored record, read back as results and import read it."""
    doc = builders.cert_record(
        key, serial, firmware=firmware, when=t, target="c1t1d0",
        device="/dev/rdsk/c1t1d0p0", time_iso="2026-11-18T09:46:40Z",
        native=4096, sector_reason="measured", cache="volatile",
        cache_confidence=0.97, cache_reason="measured",
        queue_depth=QueueDepth(32, {}, 32, None, 0.9, "knee"),
        evidence={"device": {"nv_sup": False},
                  "sector": {"rounds": 24, "ratio": 3.25}}).to_json()
    doc.update(more)
    return CertRecord.from_json(doc)


def export_bytes(recs=None) -> bytes:
    recs = recs if recs is not None else [
        record("PHYF000%d" % i) for i in range(1, 6)]
    return travel.render_export(travel.build_export(recs, dict(BY)))


def refusal(data: bytes) -> str:
    with pytest.raises(BadExport) as e:
        check_export(data)
    return e.value.why


def edited(data: bytes, edit) -> bytes:
    doc = json.loads(data)
    edit(doc)
    return json.dumps(doc, indent=2).encode()


# ------------------------------------------------------------- digests

def test_canonical_json_is_sorted_compact_ascii():
    assert travel.canonical({"b": 1, "a": "é", "c": [1.5]}) == \
        b'{"a":"\\u00e9","b":1,"c":[1.5]}'
    with pytest.raises(ValueError):
        travel.canonical({"x": float("nan")})


def test_digest_leaves_out_its_own_field():
    doc = {"a": 1, "sha256": "whatever"}
    assert travel.digest(doc) == hashlib.sha256(b'{"a":1}').hexdigest()
    assert travel.digest(doc) == travel.digest({"a": 1})


def test_export_document_shape_and_digests():
    doc = travel.build_export([record(), record("X2")], dict(BY))
    assert list(doc) == ["format", "version", "exported_by", "count",
                         "records", "sha256"]
    assert (doc["format"], doc["version"], doc["count"]) == \
        ("sdtune-records", 1, 2)
    assert doc["sha256"] == travel.digest(doc)
    for entry in doc["records"]:
        assert entry["sha256"] == travel.digest(entry)
        assert set(entry) == {"sha256", "origin", "record"}
    # A record made before origins were recorded is said to come from
    # the exporting host, its versions unknown.
    assert doc["records"][0]["origin"] == {
        "host": "fs01", "platform": "omnios", "sdtune_version": None,
        "engine_version": None}
    # A record's own origin is kept.
    mine = {"host": "fs07", "platform": "smartos", "sdtune_version": "0.1.0",
            "engine_version": "0.1.0"}
    doc = travel.build_export([record(origin=mine)], dict(BY))
    assert doc["records"][0]["origin"] == mine


def test_an_intact_export_is_read_back_exactly():
    data = export_bytes()
    got = check_export(data)
    assert [e.index for e in got.entries] == [1, 2, 3, 4, 5]
    assert got.entries[2].record.serial == "PHYF0003"
    assert got.entries[2].record.as_stored() == record("PHYF0003").to_json()
    assert got.exported_by == BY
    assert got.sha256 == json.loads(data)["sha256"]


def test_file_targets_are_not_exportable():
    assert not travel.exportable(record(key=None))
    assert travel.exportable(record(key=None, driver="blkdev", model="M"))
    assert travel.exportable(record())


# ------------------------------------------------------------- refusals

def test_one_digit_of_the_evidence_changed_names_the_record():
    data = export_bytes()
    text = data.decode()
    assert text.count('"ratio": 3.25') == 5
    # Change the second record's only: after the first occurrence.
    first = text.index('"ratio": 3.25')
    second = text.index('"ratio": 3.25', first + 1)
    bad = text[:second] + '"ratio": 3.26' + text[second + 13:]
    assert refusal(bad.encode()) == (
        'record 2 (key "%s", serial PHYF0002): content does not match its '
        "sha256" % KEY)


def test_an_edited_origin_is_refused_too():
    def edit(doc):
        doc["records"][0]["origin"]["host"] = "fs99"
    assert "record 1 (" in refusal(edited(export_bytes(), edit))


@pytest.mark.parametrize("cut, where", [
    (0.5, "truncated in record 3 of 5"),
    (0.01, "truncated before its records"),
])
def test_a_truncated_file_says_where(cut, where):
    data = export_bytes()
    assert refusal(data[:int(len(data) * cut)]) == where


def test_a_file_cut_between_records_and_after_them():
    data = export_bytes()
    text = data.decode()
    end2 = text.index('"sha256"', text.index('"PHYF0003"') - 3000)
    # Just after record 2's closing brace and its comma.
    cut = text.rindex("}", 0, text.index('"PHYF0003"'))
    cut = text.rindex("},", 0, cut) + 2
    assert end2 > 0
    assert refusal(text[:cut].encode()) in (
        "truncated after record 2 of 5", "truncated in record 3 of 5")
    tail = text.rindex("]")
    assert refusal(text[:tail + 1].encode()) == (
        "truncated after its records (the document's sha256 is missing)")


def test_a_removed_record_is_refused():
    def drop(doc):
        del doc["records"][1]
    assert refusal(edited(export_bytes(), drop)) == (
        "holds 4 records where its header says 5 (records removed or added)")

    def drop_and_count(doc):
        del doc["records"][1]
        doc["count"] = 4
    assert refusal(edited(export_bytes(), drop_and_count)) == (
        "the document does not match its sha256 (records removed, "
        "reordered or edited)")


def test_reordered_records_are_refused():
    def swap(doc):
        doc["records"].reverse()
    assert "does not match its sha256" in \
        refusal(edited(export_bytes(), swap))


@pytest.mark.parametrize("edit, why", [
    (lambda d: d.update(format="fio"), 'not an sdtune records export '
     '(format "fio", not "sdtune-records")'),
    (lambda d: d.pop("format"), 'not an sdtune records export (no '
     '"format")'),
    (lambda d: d.update(version=2), "export version 2: this sdtune reads "
     "version 1 only"),
    (lambda d: d.update(version=True), "export version true: this sdtune "
     "reads version 1 only"),
    (lambda d: d.update(records={}), "field 'records' must be a list"),
    (lambda d: d.update(exported_by=[]), "field 'exported_by' must be an "
     "object with a host"),
    (lambda d: d.pop("sha256"), "no sha256 of the document"),
    (lambda d: d["records"].__setitem__(0, 5), "record 1: not a JSON "
     "object"),
    (lambda d: d["records"][0].pop("sha256"), 'record 1 (key "%s", serial '
     'PHYF0001): no sha256 of its content' % KEY),
    (lambda d: d["records"][0].update(record=[]), "record 1: field "
     "'record' must be an object"),
])
def test_each_document_problem_has_its_message(edit, why):
    assert refusal(edited(export_bytes(), edit)) == why


def test_a_record_that_is_not_a_record_with_a_matching_sha256():
    """A tool that writes a good digest over a bad record is still
    refused, by records.record_problem's words."""
    def bad(doc):
        entry = doc["records"][1]
        entry["record"]["recommended"] = {"physical-block-size": 4000}
        entry["sha256"] = travel.digest(entry)
        doc["sha256"] = travel.digest(doc)
    why = refusal(edited(export_bytes(), bad))
    assert why.startswith('record 2 (key "%s", serial PHYF0002): not a '
                          "certification record: field "
                          "'recommended.physical-block-size'" % KEY), why

    def origin(doc):
        entry = doc["records"][0]
        entry["origin"]["host"] = 7
        entry["sha256"] = travel.digest(entry)
        doc["sha256"] = travel.digest(doc)
    assert refusal(edited(export_bytes(), origin)).endswith(
        "field 'origin.host' must be text or null")


@pytest.mark.parametrize("data, why", [
    (b"", "empty file"),
    (b"\xff\xfe", "not UTF-8 text (byte 0)"),
    (b"[1, 2] x", "not valid JSON (line 1, column 8)"),
    (b"[1, 2]", "not an sdtune records export (not a JSON object)"),
    (b'{"a": NaN}', "not valid JSON (NaN is not JSON)"),
])
def test_what_is_not_json_or_not_an_export(data, why):
    assert refusal(data) == why


# ------------------------------------------------------------- importing

DIR = "/r/var/sdtune/certify"


def steps(data: bytes, local=(), existing=None):
    export = check_export(data)
    return travel.plan_import(export, list(local), existing or {}, DIR,
                              "/tmp/x.json", 1795100000.0)


def test_new_records_are_imported_under_their_own_names():
    got = steps(export_bytes([record("A1"), record("A2")]))
    assert [s.action for s in got] == ["imported", "imported"]
    assert got[0].path == DIR + "/imported+fs01+ATA_INTEL_SSDSC2KB96--A1--" \
        "0132.json"
    doc = json.loads(got[0].data)
    assert doc["imported"] == {
        "from_host": "fs01", "exported_by": "fs01", "file": "/tmp/x.json",
        "time": 1795100000.0, "sha256": got[0].entry.sha256}
    assert doc["origin"]["host"] == "fs01"
    back = CertRecord.from_json(doc)
    assert back.origin_host == "fs01"
    assert back.to_json() == doc


def test_a_local_certification_is_never_replaced():
    local = record("A1", firmware="0100", t=5.0)
    got = steps(export_bytes([record("A1"), record("A2")]), local=[local])
    assert [s.action for s in got] == ["skipped", "imported"]
    assert got[0].reason.startswith("a local certification of this serial "
                                    "exists")
    assert "local records are never replaced" in got[0].reason


def test_an_imported_record_of_the_serial_does_not_block():
    imported = record("A1", imported={"from_host": "fs05",
                                      "sha256": "0" * 64})
    got = steps(export_bytes([record("A1")]), local=[imported])
    assert [s.action for s in got] == ["imported"]


def test_the_same_content_again_is_unchanged():
    data = export_bytes([record("A1")])
    first = steps(data)[0]
    again = steps(data, existing={first.path: first.data})[0]
    assert (again.action, again.reason) == ("unchanged", "already imported")
    # Other content under the same name (a newer export): replaced.
    newer = export_bytes([record("A1", sector_reason="again")])
    step = steps(newer, existing={first.path: first.data})[0]
    assert step.action == "imported" and step.before == first.data


def test_what_cannot_be_imported_is_skipped_with_the_reason():
    got = steps(export_bytes([record("A1"), record("A1"),
                              record(""), record(key=None, driver="blkdev",
                                                 model="M", serial="N1")]))
    assert [s.action for s in got] == ["imported", "skipped", "skipped",
                                       "imported"]
    assert got[1].reason == "record 1 of this file names the same drive " \
        "and firmware"
    assert got[2].reason.startswith("no serial")


def test_entry_json_of_each_kind():
    data = export_bytes([record("A1")])
    step = steps(data)[0]
    assert travel.entry_json(step) == {"key": KEY, "serial": "A1",
                                       "firmware": "0132",
                                       "from_host": "fs01"}
    step = steps(data, local=[record("A1")])[0]
    assert set(travel.entry_json(step)) == {"key", "serial", "firmware",
                                            "reason"}


def test_provenance_parsers():
    assert travel.parse_engine_version("sdio 0.1.0\n") == "0.1.0"
    assert travel.parse_engine_version("usage: sdio ...\n") is None
    assert travel.parse_node_name("fs01\n") == "fs01"
    assert travel.parse_node_name("\n") is None


# ------------------------------------------------------------- plan

def disk(name, key, firmware, serial):
    return builders.disk(name, key, serial=serial, firmware=firmware,
                         size_bytes=1 << 40, ata_model=None)


def plan_of(recs, disks, **options):
    inv = Inventory(disks=disks)
    return make_plan("sd", "", "/kernel/drv/sd.conf", "upstream",
                     Evidence(inv, recs, []),
                     Overrides(**options), 0.0)


def test_a_record_of_another_firmware_is_held_back():
    recs = [record("A1", firmware="0100")]
    plan = plan_of(recs, [disk("c1t1d0", KEY, "0132", "A1")])
    assert plan.changes == []
    (held,) = plan.held
    assert (held.key, held.tunable, held.value) == \
        (KEY, "physical-block-size", "4096")
    assert "firmware 0100" in held.reason and "firmware 0132" in held.reason
    assert "--allow-firmware-mismatch" in held.reason
    plan = plan_of(recs, [disk("c1t1d0", KEY, "0132", "A1")],
                   allow_firmware_mismatch=True)
    assert [c.set for c in plan.changes] == [{"physical-block-size": "4096"}]
    assert any("--allow-firmware-mismatch" in w for w in plan.warnings)


def test_the_record_of_the_installed_firmware_wins():
    recs = [record("A1", firmware="0100", t=9.0),
            record("A1", firmware="0132", t=1.0)]
    plan = plan_of(recs, [disk("c1t1d0", KEY, "0132", "A1")])
    assert plan.held == []
    assert [c.set for c in plan.changes] == [{"physical-block-size": "4096"}]


def test_unknown_installed_firmware_holds_nothing():
    recs = [record("A1", firmware="0100")]
    assert plan_of(recs, [disk("c1t1d0", KEY, None, "A1")]).held == []


def test_a_record_naming_no_firmware_is_held():
    """Adversarial 2026-11-27, F3: a record that names no firmware is of
    an unknown one, held like a record of another firmware."""
    plan = plan_of([record("A1", firmware=None)],
                   [disk("c1t1d0", KEY, "0132", "A1")])
    assert plan.changes == []
    assert plan.held and all("a firmware it does not name" in h.reason
                             for h in plan.held)


def test_reasons_of_an_imported_record_name_its_origin():
    rec = record("A1", origin={"host": "fs07"},
                 imported={"from_host": "fs07", "sha256": "1" * 64})
    plan = plan_of([rec], [disk("c1t1d0", KEY, "0132", "A1")])
    (change,) = plan.changes
    assert change.why[0].source == \
        "certification 2026-11-18T09:46:40Z imported from fs07"
    rec = record("A1", firmware="0100", origin={"host": "fs07"},
                 imported={"from_host": "fs07", "sha256": "1" * 64})
    plan = plan_of([rec], [disk("c1t1d0", KEY, "0132", "A1")])
    assert "imported from fs07" in plan.held[0].reason


# ------------------------------------------- round 3 (adversarial 11-27)

def forged(rec: CertRecord) -> bytes:
    """An export of ``rec`` with every digest recomputed, as anyone can
    (adversarial 2026-11-27, Appendix A forge.py)."""
    return export_bytes([rec])


@pytest.mark.parametrize("more, field", [
    # U2: the sector verdict says 4096, the record recommends 65536.
    ({"recommended": {"physical-block-size": 65536}},
     "recommended.physical-block-size"),
    # 512 native on 512 logical gives no physical-block-size at all.
    ({"native_sector_bytes": 512,
      "recommended": {"physical-block-size": 4096}},
     "recommended.physical-block-size"),
    # a volatile cache verdict never gives cache-nonvolatile.
    ({"recommended": {"physical-block-size": 4096,
                      "cache-nonvolatile": True}},
     "recommended.cache-nonvolatile"),
    # no knee: only a transport's limit sets a throttle.
    ({"queue_depth": QueueDepth(None, {}, 24, None, 0.9, "").to_json(),
      "recommended": {"throttle-max": 24}}, "queue_depth.throttle_max"),
    # a throttle deeper than the knee.
    ({"queue_depth": QueueDepth(8, {}, 64, None, 0.9, "").to_json(),
      "recommended": {"throttle-max": 64}}, "queue_depth.throttle_max"),
    # the queue verdict says 32, the record recommends 20.
    ({"recommended": {"throttle-max": 20}}, "recommended.throttle-max"),
])
def test_U2_a_recommendation_its_verdicts_do_not_give_is_refused(
        more, field):
    why = refusal(forged(record("BIG01", **more)))
    assert why.startswith('record 1 (key "%s", serial BIG01): recommends '
                          "what its verdicts do not: field '%s'"
                          % (KEY, field)), why


def test_U2_what_the_verdicts_give_is_imported():
    rec = record("OK01", cache="nonvolatile",
                 recommended={"physical-block-size": 4096,
                              "cache-nonvolatile": True, "throttle-max": 32,
                              "disksort": False})
    assert check_export(forged(rec)).entries[0].record.serial == "OK01"
    # Less than the verdicts give is never unsafe.
    check_export(forged(record("OK02", recommended={})))


def imported_nv(serial="A1", **imported) -> CertRecord:
    return record(serial, cache="nonvolatile",
                  evidence={"device": {"nv_sup": True}},
                  recommended={"physical-block-size": 4096,
                               "cache-nonvolatile": True},
                  origin={"host": "fs07"},
                  imported=dict({"from_host": "fs07", "sha256": "1" * 64},
                                **imported))


def test_U2_an_unsigned_import_never_makes_plan_write_cache_nonvolatile():
    disks = [disk("c1t1d0", KEY, "0132", "A1")]
    rec = imported_nv()
    assert not rec.authenticated and rec.signed_by is None
    for options in ({}, {"allow_no_nv_evidence": True}):
        plan = plan_of([rec], disks, **options)
        assert [c.set for c in plan.changes] == \
            [{"physical-block-size": "4096"}]
        (held,) = [h for h in plan.held if h.tunable == "cache-nonvolatile"]
        assert "unsigned import" in held.reason and "no override" in \
            held.reason and "imported from fs07" in held.reason
    # A verified signature, and a local record, are evidence.
    signed = imported_nv(signed_by="fs07@example")
    assert signed.authenticated and signed.signed_by == "fs07@example"
    local = record("A1", cache="nonvolatile",
                   evidence={"device": {"nv_sup": True}},
                   recommended={"cache-nonvolatile": True})
    for rec in (signed, local):
        (change,) = plan_of([rec], disks).changes
        assert change.set.get("cache-nonvolatile") == "true"


def test_F4_a_serial_in_another_case_or_padded_is_the_same_unit():
    assert travel.same_unit_serial(" X5R0A01ETBD1\u00a0") == \
        travel.same_unit_serial("x5r0a01etbd1")
    local = record("X5R0A01ETBD1", t=5.0)
    for serial in ("x5r0a01etbd1", "X5r0a01etbd1\u00a0"):
        (step,) = steps(export_bytes([record(serial)]), local=[local])
        assert step.action == "skipped", serial
        assert step.reason.startswith("a local certification of this "
                                      "serial exists")
    # sd matches keys case-insensitively: the same model's key too.
    (step,) = steps(export_bytes([record("x5r0a01etbd1",
                                         key=KEY.lower())]), local=[local])
    assert step.action == "skipped"


def test_D2_a_long_host_or_serial_gives_a_name_that_fits():
    rec = record("S" * 300)
    names = {travel.imported_name(h, rec) for h in ("h" * 300, "h" * 301)}
    assert len(names) == 2
    for name in names | {travel.imported_name("fs01", rec)}:
        assert len(name.encode()) <= travel.NAME_LIMIT < 255
        assert name.endswith(".json")
        assert name.startswith("imported+")
    short = travel.imported_name("fs01", record("A1"))
    assert short == "imported+fs01+ATA_INTEL_SSDSC2KB96--A1--0132.json"


class FailingHost:
    """Writes succeed until the ``fail``-th; what was removed or put
    back is recorded."""

    def __init__(self, fail):
        self.fail, self.files, self.calls = fail, {}, 0

    def write_atomic(self, path, data, mode=None):
        from sdtune.errors import HostError
        self.calls += 1
        if self.calls == self.fail:
            raise HostError("write", path, "No space left on device")
        self.files[path] = data

    def remove(self, path):
        del self.files[path]


def test_D2_a_failed_write_removes_what_the_import_wrote():
    data = export_bytes([record("A1"), record("A2"), record("A3")])
    todo = steps(data, existing={DIR + "/imported+fs01+ATA_INTEL_SSDSC2KB96"
                                 "--A2--0132.json": b"older\n"})
    host = FailingHost(fail=3)
    host.files[todo[1].path] = b"older\n"
    with pytest.raises(travel.SdtuneError) as e:
        travel.store_all(host, "/tmp/x.json", todo)
    assert e.value.reason.startswith("record 3: cannot write '%s': No space"
                                     % todo[2].path)
    assert "nothing stored (2 records already written removed)" in \
        e.value.reason
    # record 1 removed, record 2's earlier content put back.
    assert host.files == {todo[1].path: b"older\n"}


def test_F1_control_characters_in_an_origin_are_refused():
    def evil(doc):
        doc["records"][0]["origin"]["host"] = "evil\x1b]0;pwn\x07"
    data = edited(export_bytes([record("A1")]), evil)
    doc = json.loads(data)
    # Recompute the digests, as a forger would.
    entry = doc["records"][0]
    entry["sha256"] = travel.digest(entry)
    doc["sha256"] = travel.digest(doc)
    why = refusal(json.dumps(doc).encode())
    assert why == 'record 1 (key "%s", serial A1): field \'origin.host\' ' \
        "holds a control character" % KEY


ARMOR = ("-----BEGIN SSH SIGNATURE-----\n"
         "U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgFPaN0bo7eoCjkvmpoZuJwq\n"
         "-----END SSH SIGNATURE-----\n")


def test_U2_a_signature_is_out_of_the_digest_and_checked_in_shape():
    data = export_bytes([record("A1")])

    def sign(doc):
        doc["signature"] = {"identity": "fs01", "ssh_signature": ARMOR}
    export = check_export(edited(data, sign))
    assert export.signature == {"identity": "fs01", "ssh_signature": ARMOR}
    assert travel.signed_message(export.sha256) == \
        ("sdtune-records %s\n" % export.sha256).encode()
    for bad in ({"identity": "fs 01", "ssh_signature": ARMOR},
                {"identity": "fs01", "ssh_signature": "x"},
                {"identity": "fs01"}, "sig"):
        def put(doc, bad=bad):
            doc["signature"] = bad
        assert refusal(edited(data, put)).startswith("field 'signature': ")
    assert travel.parse_ssh_signature(ARMOR.replace("\n", "\r\n")) == ARMOR
    assert travel.parse_ssh_signature("Signing data on standard input\n") \
        is None
