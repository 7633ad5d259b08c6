"""Certification records that travel (issue 17), end to end on two
simulated appliances built from one scenario, fs01 and fs02: fs01
certifies a drive (its record says where and with which engine) and
exports its records; fs02 imports them, and its plan names fs01 in every
reason that rests on one, holds back a record of another firmware than
its disks run unless --allow-firmware-mismatch, never replaces its own
certification of the same drive, and changes nothing the second time.
A hand-edited or truncated export is refused, naming the record, and
stores nothing."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402

SCENARIO = os.path.join(REPO, "tests", "sim", "scenarios",
                        "small-nexenta.json")
FREE = "c0t58CE38EE2001A3B5d0"          # TOSHIBA PX04SMB040, firmware AM04
TOSHIBA = "TOSHIBA PX04SMB040      "
SAS = "SAMSUNG MZILS480HEGR/007"        # serial S2BJNWAG300123, GXL0
SAS_SERIAL = "S2BJNWAG300123"
INTEL = "ATA     INTEL SSDSC2BA40"      # serial BTTV5095012Z400HGN, 0270
SATA = "ATA     SAMSUNG MZ7LM480"       # serial S2UJNX0J101234
SATA_SERIAL = "S2UJNX0J101234"
# Short measurements: the verdict's quality is tests/emu's business.
CERTIFY = ("\n[certify]\nphases = sector\nmin_rounds = 2\nmax_rounds = 4\n"
           "paired_max_s = 5\nregion_bytes = 67108864\n")


def appliance(tmp, hostname: str, scratch=None) -> Appliance:
    with open(SCENARIO) as f:
        s = json.load(f)
    s["hostname"] = hostname
    if scratch:
        for d in s["disks"]:
            if d["name"] == FREE:
                d["device_file"] = scratch
    app = Appliance.build(s, str(tmp / hostname))
    with open(app.config, "a") as f:
        f.write(CERTIFY)
    return app


def inject_record(app: Appliance, key: str, recommended: dict, serial: str,
                  firmware: str, **more) -> str:
    """A record as `sdtune certify` stores it, under a name of its own
    (tests/adversarial/support.py's keeps the "/" of a key)."""
    rec = {"version": 1, "target": "c9t9d9", "device": "/dev/rdsk/x",
           "key": key, "serial": serial, "firmware": firmware,
           "time": 1795300000.0, "time_iso": "2026-11-22T00:00:00Z",
           "source": "test", "logical_block_bytes": 512,
           "native_sector_bytes": 512, "sector_confidence": 0.99,
           "sector_reason": "injected", "cache": "nonvolatile",
           "cache_confidence": 0.99, "cache_reason": "injected",
           "queue_depth": {"knee": 32, "throttle_max": 32,
                           "throttle_min": None, "confidence": 0.99,
                           "reason": "injected"},
           "recommended": recommended,
           "evidence": {"device": {"nv_sup": True}}}
    rec.update(more)
    os.makedirs(certify_dir(app), exist_ok=True)
    path = os.path.join(certify_dir(app), "%s--%s.json" % (
        key.replace(" ", "_").replace("/", "_"), serial))
    with open(path, "w") as f:
        json.dump(rec, f)
    return path


def certify_dir(app: Appliance) -> str:
    return os.path.join(app.root, "var", "sdtune", "certify")


def snapshot(app: Appliance) -> dict:
    d = certify_dir(app)
    if not os.path.isdir(d):
        return {}
    out = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """fs01 with a certified drive and three more records, exported to
    a file; fs02 with a local certification of one of those drives."""
    tmp = tmp_path_factory.mktemp("travel")
    scratch = tmp / "toshiba-scratch"
    with open(scratch, "wb") as f:
        f.truncate(128 << 20)
    fs01 = appliance(tmp, "fs01", str(scratch))
    ok(fs01.sdtune("certify", FREE, "--confirm", FREE))
    inject_record(fs01, SAS, {"throttle-max": 77}, serial=SAS_SERIAL,
                  firmware="GXL0",
                  evidence={"device": {"nv_sup": True},
                            "sector": {"ratio": 3.25}})
    inject_record(fs01, INTEL, {"throttle-max": 20},
                  serial="BTTV5095012Z400HGN", firmware="0250")
    inject_record(fs01, SATA, {"throttle-max": 11}, serial=SATA_SERIAL,
                  firmware="403Q")
    export = str(tmp / "fs01.json")
    ok(fs01.sdtune("results", "--export", export))
    fs02 = appliance(tmp, "fs02")
    local = inject_record(fs02, SATA, {"throttle-max": 12},
                          serial=SATA_SERIAL, firmware="403Q")
    return fs01, fs02, export, local


@pytest.fixture(scope="module")
def imported(fleet):
    fs01, fs02, export, local = fleet
    with open(local, "rb") as f:
        before = f.read()
    proc = ok(fs02.sdtune("results", "--import", export, "-o", "json"))
    with open(local, "rb") as f:
        assert f.read() == before, "the local record was replaced"
    return json.loads(proc.stdout)


def test_certify_records_its_origin(fleet):
    fs01 = fleet[0]
    proc = ok(fs01.sdtune("results", "-o", "json"))
    (rec,) = [r for r in json.loads(proc.stdout)["results"]
              if r["key"] == TOSHIBA]
    origin = rec["origin"]
    assert origin["host"] == "fs01"
    assert origin["sdtune_version"] and origin["platform"]
    # The engine under the simulator is the real sdio.
    with open(os.path.join(REPO, "plugin", "engine", "sdio.h")) as f:
        assert '"%s"' % origin["engine_version"] in f.read()
    assert "imported" not in rec


def test_the_export_document(fleet):
    with open(fleet[2]) as f:
        doc = json.load(f)
    assert (doc["format"], doc["version"], doc["count"]) == \
        ("sdtune-records", 1, 4)
    assert doc["exported_by"]["host"] == "fs01"
    assert [e["record"]["key"] for e in doc["records"]] == \
        [INTEL, SATA, SAS, TOSHIBA]
    assert {e["origin"]["host"] for e in doc["records"]} == {"fs01"}


def test_import_stores_new_records_and_skips_the_local_one(fleet, imported):
    fs02 = fleet[1]
    doc = imported
    assert doc["changed"] is True and doc["dry_run"] is False
    assert doc["journal_entry"] is None
    assert sorted((r["key"], r["from_host"]) for r in doc["imported"]) == \
        sorted((k, "fs01") for k in (INTEL, SAS, TOSHIBA))
    assert doc["unchanged"] == []
    (skip,) = doc["skipped"]
    assert (skip["key"], skip["serial"]) == (SATA, SATA_SERIAL)
    assert "local certification of this serial exists" in skip["reason"]
    assert len(doc["files"]) == 3
    for f in doc["files"]:
        assert os.path.basename(f["path"]).startswith("imported+fs01+")
        assert f["before_sha256"] is None and len(f["after_sha256"]) == 64
        assert os.path.exists(f["path"])
    proc = ok(fs02.sdtune("results", "-H"))
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    targets = {r[1]: r[-1] for r in rows}
    assert targets[SAS_SERIAL] == "fs01:c9t9d9"
    # The local record is still the one shown for its serial.
    assert [r[-1] for r in rows if r[1] == SATA_SERIAL] == ["c9t9d9"]


def test_importing_the_same_file_again_changes_nothing(fleet, imported):
    fs01, fs02, export, _ = fleet
    before = snapshot(fs02)
    proc = ok(fs02.sdtune("results", "--import", export, "-o", "json"))
    doc = json.loads(proc.stdout)
    assert doc["changed"] is False and doc["imported"] == []
    assert doc["files"] == [] and len(doc["unchanged"]) == 3
    proc = ok(fs02.sdtune("results", "--import", export))
    assert "nothing changed" in proc.stdout.splitlines()[-1]
    assert proc.stdout.count("already imported") == 3
    assert snapshot(fs02) == before


def test_plan_names_the_origin_and_holds_another_firmware(fleet, imported):
    fs02 = fleet[1]
    plan = json.loads(ok(fs02.sdtune("plan", "-o", "json")).stdout)
    changes = {c["key"]: c for c in plan["changes"]}
    (why,) = changes[SAS]["why"]
    assert (why["tunable"], why["value"]) == ("throttle-max", "77")
    assert why["source"] == \
        "certification 2026-11-22T00:00:00Z imported from fs01"
    # The local record of the SATA Samsung wins over fs01's.
    assert changes[SATA]["set"]["throttle-max"] == "12"
    # fs01 certified the Intel with firmware 0250; fs02's runs 0270.
    assert "throttle-max" not in changes.get(INTEL, {}).get("set", {})
    (held,) = [h for h in plan["held"] if h["key"] == INTEL and
               h["tunable"] == "throttle-max"]
    assert "firmware 0250" in held["reason"]
    assert "firmware 0270" in held["reason"]
    assert "imported from fs01" in held["reason"]
    plan = json.loads(ok(fs02.sdtune("plan", "-o", "json",
                                     "--allow-firmware-mismatch")).stdout)
    changes = {c["key"]: c for c in plan["changes"]}
    assert changes[INTEL]["set"]["throttle-max"] == "20"
    assert not [h for h in plan["held"] if h["key"] == INTEL and
                h["tunable"] == "throttle-max"]
    text = ok(fs02.sdtune("plan")).stdout
    assert "throttle-max:77  from certification 2026-11-22T00:00:00Z " \
        "imported from fs01" in text


@pytest.fixture
def fresh(tmp_path):
    return appliance(tmp_path, "fs03")


def test_a_dry_run_says_what_an_import_would_store_and_stores_nothing(
        fleet, fresh):
    before = snapshot(fresh)
    proc = ok(fresh.sdtune("results", "--import", fleet[2], "--dry-run",
                           "-o", "json"))
    doc = json.loads(proc.stdout)
    assert doc["changed"] is False and doc["dry_run"] is True
    assert len(doc["imported"]) == 4 and doc["journal_entry"] is None
    assert snapshot(fresh) == before
    proc = ok(fresh.sdtune("results", "--import", fleet[2], "--dry-run"))
    assert proc.stdout.count("to import ") == 4
    assert proc.stdout.splitlines()[-1].endswith(
        ": 4 imported, 0 unchanged, 0 skipped: dry run, nothing stored")
    assert snapshot(fresh) == before
    # What the dry run said is what the import does.
    real = json.loads(ok(fresh.sdtune("results", "--import", fleet[2],
                                      "-o", "json")).stdout)
    assert real["changed"] is True and real["imported"] == doc["imported"]


def test_a_hand_edited_export_is_refused(fleet, fresh, tmp_path):
    with open(fleet[2]) as f:
        text = f.read()
    assert text.count('"ratio": 3.25') == 1
    bad = tmp_path / "edited.json"
    bad.write_text(text.replace('"ratio": 3.25', '"ratio": 3.26'))
    before = snapshot(fresh)
    for extra in ((), ("-o", "json")):
        proc = fresh.sdtune("results", "--import", str(bad), *extra)
        assert proc.returncode == 4, proc.stderr
        assert proc.stdout == ""
        assert proc.stderr == (
            "sdtune: cannot import '%s': record 3 (key \"%s\", serial "
            "%s): content does not match its sha256\n"
            % (bad, SAS, SAS_SERIAL))
    assert snapshot(fresh) == before


def test_a_truncated_export_is_refused(fleet, fresh, tmp_path):
    with open(fleet[2]) as f:
        text = f.read()
    cut = tmp_path / "cut.json"
    # Inside the third record: its serial is there, its end is not.
    cut.write_text(text[:text.index(SAS_SERIAL) + 5])
    before = snapshot(fresh)
    proc = fresh.sdtune("results", "--import", str(cut))
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr == "sdtune: cannot import '%s': truncated in " \
        "record 3 of 4\n" % cut
    assert snapshot(fresh) == before


def test_the_export_on_standard_output_imports_from_standard_input(
        fleet, fresh):
    fs01 = fleet[0]
    proc = ok(fs01.sdtune("results", "--export", "-", "--key", SAS))
    doc = json.loads(proc.stdout)
    assert [e["record"]["key"] for e in doc["records"]] == [SAS]
    proc = ok(fresh.sdtune("results", "--import", "-", stdin=proc.stdout))
    assert proc.stdout.splitlines()[-1] == \
        "-: 1 imported, 0 unchanged, 0 skipped"


def test_usage_errors(fleet):
    fs01, _, export, _ = fleet
    for args in (("--key", SAS), ("--export", "-", "--key", "SAMSUNG"),
                 ("--export", "-", "--import", export),
                 ("-H", "--import", export), ("--dry-run",),
                 ("--export", "-", "--dry-run")):
        proc = fs01.sdtune("results", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    # An export never replaces a file.
    proc = fs01.sdtune("results", "--export", export)
    assert proc.returncode == 3 and "already exists" in proc.stderr


def test_a_record_json_cannot_carry_is_named_not_exported(tmp_path):
    """A stored record whose evidence holds NaN (Python's json writes and
    reads it; JSON has no such number): the export is refused naming
    the record, and no file is written."""
    app = appliance(tmp_path, "fs04")
    inject_record(app, SAS, {"throttle-max": 77}, serial=SAS_SERIAL,
                  firmware="GXL0",
                  evidence={"device": {"nv_sup": True},
                            "sector": {"ratio": float("nan")}})
    out = str(tmp_path / "nan.json")
    for where in (out, "-"):
        proc = app.sdtune("results", "--export", where)
        assert proc.returncode == 4, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
        assert proc.stderr == (
            "sdtune: cannot export '%s': record 1 (key \"%s\", serial %s) "
            "holds a number JSON cannot carry (NaN or infinity)\n"
            % (where, SAS, SAS_SERIAL))
    assert not os.path.exists(out)
