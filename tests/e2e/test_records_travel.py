# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

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
from sdtune.records.record import QueueDepth  # noqa: E402
from tests import builders  # noqa: E402

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
    # The queue verdict that gives a throttle-max: imports re-derive
    # recommendations from the verdicts (adversarial U2).
    knee = recommended.get("throttle-max", 32)
    rec = builders.cert_record(
        key, serial, firmware=firmware, when=1795300000.0, target="c9t9d9",
        device="/dev/rdsk/x", time_iso="2026-11-22T00:00:00Z",
        source="test", native=512, sector_reason="injected",
        cache="nonvolatile", cache_reason="injected", nv_sup=True,
        queue_depth=QueueDepth(knee, {}, knee, None, 0.99, "injected"),
        recommended=recommended).to_json()
    rec.update(more)
    return builders.store_record(app.root, rec, "%s--%s.json" % (
        key.replace(" ", "_").replace("/", "_"), serial))


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


# ------------------------------------------- round 3 (adversarial 11-27)

import copy  # noqa: E402
import hashlib  # noqa: E402
import subprocess  # noqa: E402


def _digest(obj: dict) -> str:
    rest = {k: v for k, v in obj.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(
        rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
        allow_nan=False).encode()).hexdigest()


def forge(src: str, dst: str, edit) -> str:
    """adversarial-2026-11-27 Appendix A: edit an export, then recompute
    every sha256 as anyone can."""
    with open(src) as f:
        doc = json.load(f)
    doc = edit(doc) or doc
    for e in doc["records"]:
        e["sha256"] = _digest(e)
    doc["count"] = len(doc["records"])
    # The signature, if any, is left as it was and out of the digest.
    doc["sha256"] = _digest({k: v for k, v in doc.items()
                             if k != "signature"})
    with open(dst, "w") as f:
        f.write(json.dumps(doc, indent=2) + "\n")
    return dst


@pytest.fixture
def fs01_export(tmp_path):
    """A genuine export of fs01 holding one TOSHIBA PX04SMB040 record
    (512 native, volatile cache, nv_sup false), and a fresh fs09."""
    fs01 = appliance(tmp_path, "fs01")
    inject_record(fs01, TOSHIBA, {}, serial="X5R0A01ETBD1",
                  firmware="AM04", cache="volatile",
                  evidence={"device": {"nv_sup": False}})
    export = str(tmp_path / "fs01.json")
    ok(fs01.sdtune("results", "--export", export))
    return export, appliance(tmp_path, "fs09")


def _records(doc, *edits):
    base = doc["records"][0]
    out = []
    for edit in edits:
        e = copy.deepcopy(base)
        edit(e)
        out.append(e)
    doc["records"] = out


def test_U2_an_inconsistent_record_is_refused_and_nothing_stored(
        fs01_export, tmp_path):
    export, fs09 = fs01_export

    def big(doc):
        r = doc["records"][0]["record"]
        r["serial"] = "BIG01"
        r["recommended"] = {"physical-block-size": 65536}
    proc = fs09.sdtune("results", "--import",
                       forge(export, str(tmp_path / "big.json"), big))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert ("record 1 (key \"%s\", serial BIG01): recommends what its "
            "verdicts do not: field 'recommended.physical-block-size' is "
            "65536" % TOSHIBA) in proc.stderr
    assert snapshot(fs09) == {}


def test_U2_a_forged_nonvolatile_claim_never_reaches_sd_conf(
        fs01_export, tmp_path):
    export, fs09 = fs01_export

    def nv(doc):
        def unit(serial):
            def edit(e):
                r = e["record"]
                r["serial"], r["cache"] = serial, "nonvolatile"
                r["evidence"] = {"device": {"nv_sup": True}}
                r["recommended"] = {"cache-nonvolatile": True}
            return edit
        _records(doc, unit("NV01"), unit("NV02"), unit("NV03"))
    forged = forge(export, str(tmp_path / "nv.json"), nv)
    ok(fs09.sdtune("results", "--import", forged))
    assert len(snapshot(fs09)) == 3         # stored, and shown
    for extra in ((), ("--allow-no-nv-evidence",)):
        proc = ok(fs09.sdtune("plan", "-o", "json", *extra))
        plan = json.loads(proc.stdout)
        assert "cache-nonvolatile" not in json.dumps(plan.get("changes")), \
            proc.stdout
        assert "cache-nonvolatile:true" not in plan.get("diff", "")
        assert any("unsigned import" in h["reason"]
                   for h in plan["held"]), plan["held"]


def test_D2_a_long_origin_host_is_stored_under_a_name_that_fits(
        fs01_export, tmp_path):
    export, fs09 = fs01_export

    def long_host(doc):
        def e1(e):
            e["record"]["serial"], e["origin"]["host"] = "OK01", "fsok"

        def e2(e):
            e["record"]["serial"], e["origin"]["host"] = "LONG02", "h" * 300
        _records(doc, e1, e2)
    proc = ok(fs09.sdtune("results", "--import", forge(
        export, str(tmp_path / "long.json"), long_host), "-o", "json"))
    doc = json.loads(proc.stdout)
    assert doc["changed"] is True and len(doc["imported"]) == 2
    names = list(snapshot(fs09))
    assert len(names) == 2 and all(len(n) <= 255 for n in names)
    ok(fs09.sdtune("results"))


def test_D2_an_import_that_fails_stores_nothing(fs01_export, tmp_path):
    export, fs09 = fs01_export

    def two(doc):
        def e1(e):
            e["record"]["serial"] = "OK01"

        def e2(e):
            e["record"]["serial"] = "BLOCKED02"
        _records(doc, e1, e2)
    forged = forge(export, str(tmp_path / "two.json"), two)
    # A dangling symbolic link sits at record 2's name: sdtune never
    # writes through one (bba15c0 wrote record 1, then refused record 2
    # and kept record 1).
    os.makedirs(certify_dir(fs09))
    os.symlink(str(tmp_path / "nowhere"), os.path.join(
        certify_dir(fs09), "imported+fs01+TOSHIBA_PX04SMB040--BLOCKED02--"
        "AM04.json"))
    proc = fs09.sdtune("results", "--import", forged, "-o", "json")
    assert proc.returncode == 3, proc.stderr
    assert "symbolic link" in proc.stderr and proc.stdout == ""
    assert not os.path.exists(tmp_path / "nowhere")
    assert list(snapshot_files(fs09)) == [], snapshot_files(fs09)


def snapshot_files(app: Appliance) -> list:
    d = certify_dir(app)
    return [n for n in sorted(os.listdir(d))
            if os.path.isfile(os.path.join(d, n))]


def run_launcher(app: Appliance, *args: str, close_stdin: bool = False,
                 timeout: float = 30) -> subprocess.CompletedProcess:
    """app.sdtune with a timeout (a hang is a failure, not a stuck
    run), and with standard input closed if asked."""
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    argv = [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
            "--config", app.config, *args]
    if close_stdin:
        argv = ["/bin/sh", "-c", 'exec "$@" <&-', "sh"] + argv
    return subprocess.run(argv, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout,
                          check=False)


@pytest.mark.parametrize("command", [("results", "--import"),
                                     ("infer", "--from")])
def test_H1_a_fifo_is_refused_without_waiting(tmp_path, command):
    app = appliance(tmp_path, "fs09")
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    proc = run_launcher(app, *command, fifo, timeout=20)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr == "sdtune: cannot %s '%s': not a regular file (a " \
        "FIFO)\n" % ("import" if command[0] == "results" else "infer from",
                     fifo)
    proc = run_launcher(app, *command, "/dev/zero", timeout=20)
    assert proc.returncode == 4 and "not a regular file (a device)" in \
        proc.stderr


def test_T4_import_from_a_closed_stdin_is_a_clean_error(tmp_path):
    app = appliance(tmp_path, "fs09")
    proc = run_launcher(app, "results", "--import", "-", close_stdin=True)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr == "sdtune: cannot import '-': standard input is " \
        "closed\n"


def test_F1_travelling_text_is_escaped_or_refused(fs01_export, tmp_path):
    export, fs09 = fs01_export

    def refused(name, edit, field):
        proc = fs09.sdtune("results", "--import", forge(
            export, str(tmp_path / name), edit))
        assert proc.returncode == 4
        assert "field '%s' holds a control character" % field in \
            proc.stderr
        assert "\x1b" not in proc.stdout + proc.stderr

    def evil_serial(doc):
        doc["records"][0]["record"]["serial"] = "EV\x1b]0;pwn\x07"
    refused("e1.json", evil_serial, "serial")

    # What may travel is printed as the tables print it.
    def backslash(doc):
        doc["records"][0]["record"]["serial"] = "EV\\01"
    proc = ok(fs09.sdtune("results", "--import", forge(
        export, str(tmp_path / "e3.json"), backslash)))
    assert 'serial EV\\\\01 firmware' in proc.stdout, proc.stdout

    def evil_host(doc):
        doc["records"][0]["record"]["serial"] = "EV02"
        doc["records"][0]["origin"]["host"] = "evil\x1b]0;pwn\x07"
    refused("e2.json", evil_host, "origin.host")


def test_F1_a_record_an_older_import_stored_never_reaches_the_terminal(
        fs01_export, tmp_path):
    """bba15c0 stored an import whose origin held escape sequences, and
    plan then printed them raw.  Such a stored record is now not used:
    plan and results say it is ignored, and print no control
    character."""
    export, fs09 = fs01_export
    ok(fs09.sdtune("results", "--import", export))
    store = os.path.join(fs09.root, "var", "sdtune", "certify")
    [name] = [n for n in os.listdir(store) if n.endswith(".json")]
    path = os.path.join(store, name)
    with open(path) as f:
        doc = json.load(f)
    assert doc["imported"] is not None
    for part, field, value in (("origin", "host", "evil\x1b]0;pwn\x07"),
                               (None, "model", "PX04\x9b31m")):
        (doc[part] if part else doc)[field] = value
        with open(path, "w") as f:
            json.dump(doc, f)
        for args in (("plan",), ("results",), ("audit",)):
            proc = fs09.sdtune(*args)
            assert "Traceback" not in proc.stderr
            out = proc.stdout + proc.stderr
            assert "\x1b" not in out and "\x9b" not in out, args
            assert "%s: not a certification record: field '%s' holds a " \
                "control character (imported by an older sdtune, which " \
                "took it); ignored" % (path, ("%s.%s" % (part, field))
                                       if part else field) in proc.stderr, \
                (args, proc.stderr)
        (doc[part] if part else doc)[field] = "fs01" if part else None


def test_F4_a_local_serial_in_another_case_is_the_same_unit(
        fs01_export, tmp_path):
    export, fs09 = fs01_export
    inject_record(fs09, TOSHIBA, {}, serial="X5R0A01ETBD1",
                  firmware="AM04", cache="volatile",
                  evidence={"device": {"nv_sup": False}})

    def lower(doc):
        doc["records"][0]["record"]["serial"] = "x5r0a01etbd1"
    proc = ok(fs09.sdtune("results", "--import", forge(
        export, str(tmp_path / "lower.json"), lower), "-o", "json"))
    doc = json.loads(proc.stdout)
    assert doc["changed"] is False and doc["imported"] == []
    (skipped,) = doc["skipped"]
    assert skipped["reason"].startswith("a local certification of this "
                                        "serial exists")
    assert len(snapshot(fs09)) == 1


def test_F12_usage_errors_name_a_verb(tmp_path):
    app = appliance(tmp_path, "fs09")
    proc = app.sdtune("results", "--key", TOSHIBA)
    assert proc.returncode == 2
    assert proc.stderr.startswith("sdtune: cannot use '--key %s': applies "
                                  "to --export only" % TOSHIBA)
    proc = app.sdtune("results", "--dry-run")
    assert proc.stderr.startswith("sdtune: cannot use '--dry-run'")


# ------------------------------------------- signing (adversarial U2)

SSH_KEYGEN = "/usr/bin/ssh-keygen"


def _signing_pair(tmp_path, fs01: Appliance, fs09: Appliance,
                  trust: bool = True) -> None:
    """fs01 signs its exports with a key of its own ([signing] key, under
    its root); fs09's allowed-signers file trusts it (or, without
    ``trust``, another key only)."""
    etc = os.path.join(fs01.root, "etc", "sdtune")
    os.makedirs(etc, exist_ok=True)
    key = os.path.join(etc, "export_key")
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C",
                    "fs01", "-f", key], check=True)
    with open(fs01.config, "a") as f:
        f.write("\n[signing]\nkey = /etc/sdtune/export_key\n")
    pub = key + ".pub"
    if not trust:
        other = str(tmp_path / "other_key")
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f",
                        other], check=True)
        pub = other + ".pub"
    with open(pub) as f:
        pubkey = f.read().strip()
    allowed = os.path.join(fs09.root, "etc", "sdtune")
    os.makedirs(allowed, exist_ok=True)
    with open(os.path.join(allowed, "allowed_signers"), "w") as f:
        f.write('fs01 namespaces="sdtune-records" %s\n' % pubkey)


def _nv_fs01(tmp_path) -> Appliance:
    fs01 = appliance(tmp_path, "fs01")
    for serial in ("NV01", "NV02", "NV03"):
        inject_record(fs01, TOSHIBA, {"cache-nonvolatile": True},
                      serial=serial, firmware="AM04")
    return fs01


@pytest.mark.skipif(not os.access(SSH_KEYGEN, os.X_OK),
                    reason="needs OpenSSH's ssh-keygen")
def test_U2_a_signed_export_verified_on_import_is_evidence(tmp_path):
    fs01, fs09 = _nv_fs01(tmp_path), appliance(tmp_path, "fs09")
    _signing_pair(tmp_path, fs01, fs09)
    export = str(tmp_path / "signed.json")
    proc = ok(fs01.sdtune("results", "--export", export))
    assert "signed by fs01" in proc.stdout
    with open(export) as f:
        assert set(json.load(f)["signature"]) == {"identity",
                                                  "ssh_signature"}
    proc = ok(fs09.sdtune("results", "--import", export, "-o", "json"))
    assert json.loads(proc.stdout)["signed_by"] == "fs01"
    stored = [json.loads(v) for v in snapshot(fs09).values()]
    assert {d["imported"]["signed_by"] for d in stored} == {"fs01"}
    plan = json.loads(ok(fs09.sdtune("plan", "-o", "json")).stdout)
    assert "cache-nonvolatile:true" in plan["diff"], plan

    # Edited after signing, every digest recomputed: refused whole.
    def edit(doc):
        doc["records"][0]["record"]["firmware"] = "AM05"
    forged = forge(export, str(tmp_path / "edited.json"), edit)
    fresh = appliance(tmp_path, "fs10")
    os.makedirs(os.path.join(fresh.root, "etc", "sdtune"))
    with open(os.path.join(fs09.root, "etc", "sdtune",
                           "allowed_signers")) as f:
        trusted = f.read()
    with open(os.path.join(fresh.root, "etc", "sdtune", "allowed_signers"),
              "w") as f:
        f.write(trusted)
    proc = fresh.sdtune("results", "--import", forged)
    assert proc.returncode == 4, proc.stderr
    assert "the signature of fs01 does not verify" in proc.stderr
    assert snapshot(fresh) == {}

    # The signature stripped: imported, unsigned, not evidence.
    def strip(doc):
        del doc["signature"]
    proc = ok(fresh.sdtune("results", "--import", forge(
        export, str(tmp_path / "stripped.json"), strip)))
    assert "unsigned: never evidence of a non-volatile cache" in proc.stdout
    plan = json.loads(ok(fresh.sdtune("plan", "-o", "json")).stdout)
    assert "cache-nonvolatile:true" not in plan["diff"]


@pytest.mark.skipif(not os.access(SSH_KEYGEN, os.X_OK),
                    reason="needs OpenSSH's ssh-keygen")
def test_U2_a_signer_the_importer_does_not_trust_is_refused(tmp_path):
    fs01, fs09 = _nv_fs01(tmp_path), appliance(tmp_path, "fs09")
    _signing_pair(tmp_path, fs01, fs09, trust=False)
    export = str(tmp_path / "signed.json")
    ok(fs01.sdtune("results", "--export", export))
    proc = fs09.sdtune("results", "--import", export)
    assert proc.returncode == 4
    assert "does not verify" in proc.stderr and snapshot(fs09) == {}
