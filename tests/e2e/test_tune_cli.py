# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""plan -> apply -> verify -> reboot -> verify -> rollback on the simulated
appliance (issue 5), the refusals that must leave sd.conf unchanged, and
concurrent applies."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.e2e.plans import subset_plans  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import open_to_others  # noqa: E402

INTEL = "ATA     INTEL SSDSC2BA40"
INTEL_DISK = "c0t55CD2E404C0D8D0Ed0"


def sdtune(app, *args, config=None):
    return app.sdtune(*args, config=config)


def sd_conf(app):
    with open(os.path.join(app.root, "kernel", "drv", "sd.conf"), "rb") as f:
        return f.read()


def kernel(app, name):
    return {d["name"]: d for d in app.expected_disks()}[name]


@pytest.fixture
def app(tmp_path):
    return Appliance.build("small-nexenta", str(tmp_path / "app"))


def verify_states(app):
    proc = sdtune(app, "verify", "-o", "json")
    return {d["name"]: d["state"] for d in json.loads(proc.stdout)["disks"]}


def test_plan_apply_verify_reboot_rollback(app, tmp_path):
    original = sd_conf(app)
    inject_record(app, INTEL, {"physical-block-size": 4096,
                               "cache-nonvolatile": True, "throttle-max": 32,
                               "disksort": False})
    plan_file = str(tmp_path / "plan.json")
    proc = sdtune(app, "plan", "--save", plan_file)
    assert proc.returncode == 0, proc.stderr
    assert "physical-block-size:4096  from certification" in proc.stdout
    plan = json.load(open(plan_file))
    change = next(c for c in plan["changes"] if c["key"] == INTEL)
    assert change["set"] == {"physical-block-size": "4096",
                             "cache-nonvolatile": "true",
                             "throttle-max": "32", "disksort": "false"}
    assert sd_conf(app) == original                 # planning changes nothing

    proc = sdtune(app, "apply", plan_file)           # no TTY, no --yes
    assert proc.returncode == 0 and "dry run" in proc.stdout
    assert sd_conf(app) == original

    proc = sdtune(app, "apply", plan_file, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "sd.conf updated in the kernel." in proc.stdout
    assert sd_conf(app).decode() == plan["new_text"]
    # The Intel SSD is a busy log device: sd keeps its old values.
    assert verify_states(app)[INTEL_DISK] == "pending reboot"
    assert kernel(app, INTEL_DISK)["physical_block_bytes"] == 512

    app.reboot()
    assert verify_states(app)[INTEL_DISK] == "applied"
    mdb = app.run("mdb", "-k", stdin="::sd_state\n").stdout.decode()
    unit = kernel(app, INTEL_DISK)["instance"]
    block = mdb[mdb.index("un %d: " % unit):]
    block = block[:block.index("\n---\n")]
    assert "    un_phy_blocksize = 0x1000\n" in block
    assert "    un_f_suppress_cache_flush = 0x1\n" in block
    assert "    un_saved_throttle = 0x20\n" in block

    proc = sdtune(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert sd_conf(app) == original
    app.reboot()
    k = kernel(app, INTEL_DISK)
    assert k["physical_block_bytes"] == 512
    assert k["sd"]["suppress_cache_flush"] is False
    assert k["sd"]["throttle_max"] == 256
    assert verify_states(app)[INTEL_DISK] == "not matched"

    hist = json.loads(sdtune(app, "history", "-o", "json").stdout)
    assert [(e["action"], e["state"]) for e in hist["entries"]] == [
        ("apply", "done"), ("rollback", "done")]
    assert hist["entries"][1]["new_sha256"] == \
        hist["entries"][0]["old_sha256"]


def test_cache_nonvolatile_without_device_evidence_is_held(app):
    inject_record(app, INTEL, {"cache-nonvolatile": True}, nv_sup=False)
    proc = sdtune(app, "plan")
    assert "held back" in proc.stdout and "NV_SUP" in proc.stdout
    assert "cache-nonvolatile:true" not in proc.stdout.split("---")[-1]
    proc = sdtune(app, "plan", "--allow-no-nv-evidence")
    assert "cache-nonvolatile:true  from certification" in proc.stdout


def test_ashift9_vdev_model_is_held(tmp_path):
    app = Appliance.build("upstream", str(tmp_path / "up"))
    disks = {d["name"]: d for d in app.expected_disks()}
    member = next(d for d in disks.values() if d["vdev_ashift"] == 9)
    inject_record(app, member["key"], {"physical-block-size": 4096},
                  firmware=member["firmware"])
    proc = sdtune(app, "plan")
    assert "held back" in proc.stdout and "ashift=9" in proc.stdout
    assert "EDOM" in proc.stdout
    proc = sdtune(app, "plan", "--allow-ashift-mismatch")
    assert "physical-block-size:4096  from certification" in proc.stdout


@pytest.mark.parametrize("break_it, words", [
    ("not root", "must be root"),
    ("missing update_drv", "update_drv cannot be run"),
    ("update_drv fails", "update_drv -vf sd exited 1"),
])
def test_refusals_leave_sd_conf_unchanged(app, tmp_path, break_it, words):
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert sdtune(app, "plan", "--save", plan_file).returncode == 0
    before = sd_conf(app)
    config = None
    if break_it == "not root":
        app.set_root(False)
    elif break_it == "missing update_drv":
        config = str(tmp_path / "c.conf")
        with open(config, "w") as f:
            f.write(open(app.config).read().replace(
                "update_drv = %s/update_drv" % app.bin,
                "update_drv = /nonexistent/update_drv"))
    else:
        app.set_drv_lock(True)
    if break_it == "not root":
        # The simulator's commands refuse like the real ones; sdtune
        # itself runs as root here, so it is the first step, bootadm
        # (before update_drv), that says no.
        words = "bootadm: you must be root"
    proc = sdtune(app, "apply", plan_file, "--yes", config=config)
    assert proc.returncode == 4, proc.stdout
    assert proc.stderr.startswith("sdtune: cannot apply ")
    assert words in proc.stderr
    assert sd_conf(app) == before
    hist = json.loads(sdtune(app, "history", "-o", "json",
                             config=config).stdout)
    assert all(e["state"] in ("undone",) for e in hist["entries"])


def test_read_only_root_is_a_clear_error(app, tmp_path):
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert sdtune(app, "plan", "--save", plan_file).returncode == 0
    before = sd_conf(app)
    drv = os.path.join(app.root, "kernel", "drv")
    subprocess.run(["chattr", "+i", drv], check=True)
    try:
        proc = sdtune(app, "apply", plan_file, "--yes")
    finally:
        subprocess.run(["chattr", "-i", drv], check=True)
    assert proc.returncode == 4
    assert "cannot write" in proc.stderr and "sd.conf" in proc.stderr
    assert sd_conf(app) == before


def test_changed_base_is_refused(app, tmp_path):
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert sdtune(app, "plan", "--save", plan_file).returncode == 0
    path = os.path.join(app.root, "kernel", "drv", "sd.conf")
    with open(path, "ab") as f:
        f.write(b"# edited by hand\n")
    before = sd_conf(app)
    proc = sdtune(app, "apply", plan_file, "--yes")
    assert proc.returncode == 3
    assert "changed since the plan was made" in proc.stderr
    assert sd_conf(app) == before


def test_eight_concurrent_applies_one_wins(app, tmp_path):
    inject_record(app, INTEL, {"throttle-max": 32, "throttle-min": 8,
                               "disksort": False, "cache-nonvolatile": True})
    plans = subset_plans(app, tmp_path, 8)
    texts = [json.load(open(p))["new_text"].encode() for p in plans]
    assert len(set(texts)) == 8
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    procs = [subprocess.Popen([os.path.join(REPO, "bin", "sdtune"), "-R",
                               app.root, "--config", app.config, "apply",
                               p, "--yes"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for p in plans]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    codes = [rc for rc, _ in results]
    assert codes.count(0) == 1, results
    assert all(rc == 3 for rc in codes if rc != 0), results
    for rc, err in results:
        if rc:
            assert (err.startswith("sdtune: cannot apply ") and
                    "changed since" in err) or (
                err.startswith("sdtune: cannot lock ") and
                "locked by another sdtune process" in err), err
    winner = codes.index(0)
    assert sd_conf(app) == texts[winner]            # no lost update
    hist = json.loads(sdtune(app, "history", "-o", "json").stdout)
    assert [e["state"] for e in hist["entries"]] == ["done"]


def test_not_root_is_refused_before_anything(app, tmp_path):
    """sdtune run by an ordinary user: a clear error, no lock, no journal,
    sd.conf unchanged."""
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert sdtune(app, "plan", "--save", plan_file).returncode == 0
    os.chmod(plan_file, 0o644)
    before = sd_conf(app)
    # pytest's temporary directories are private to root: let the
    # ordinary user through to read the appliance (it stays read-only).
    open_to_others(tmp_path)
    # The system python: the test's own may live where nobody cannot go.
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": "/usr/bin/python3",
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    # The launcher refuses first (tests/shell/test_launcher.py); run the
    # package itself to check its own refusal too.
    env["PYTHONPATH"] = os.path.join(REPO, "plugin")
    proc = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         "/usr/bin/python3", "-B", "-m", "sdtune", "-R", app.root,
         "--config", app.config, "apply", plan_file, "--yes"], env=env,
        cwd="/", capture_output=True, text=True, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "must be root" in proc.stderr
    assert sd_conf(app) == before
    assert not os.path.exists(os.path.join(app.root, "var", "sdtune",
                                           "lock"))


@pytest.mark.parametrize("state, file_is, said, final", [
    ("written", "new", "completed it", "recovered"),
    ("prepared", "old", "marked undone", "undone")])
def test_next_command_recovers_and_says_which(app, tmp_path, state,
                                              file_is, said, final):
    """A transaction left open by a crash (the journal entry was not
    updated) is completed or undone by the next command, which says so."""
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert sdtune(app, "plan", "--save", plan_file).returncode == 0
    old = sd_conf(app)
    assert sdtune(app, "apply", plan_file, "--yes").returncode == 0
    entry = os.path.join(app.root, "var", "sdtune", "journal",
                         "000001.json")
    doc = json.load(open(entry))
    doc["state"] = state
    with open(entry, "w") as f:
        json.dump(doc, f)
    if file_is == "old":
        with open(os.path.join(app.root, "kernel", "drv", "sd.conf"),
                  "wb") as f:
            f.write(old)
    proc = sdtune(app, "verify")
    assert "sdtune: recovered: transaction 000001 (apply)" in proc.stderr
    assert said in proc.stderr
    hist = json.loads(sdtune(app, "history", "-o", "json").stdout)
    assert hist["entries"][0]["state"] == final


# ------------------------------------------------- keys shared by models

S45 = "ATA     INTEL SSDSC2KB48"


def sata_ssd(name, instance, model, serial, wwn):
    """A SATA SSD behind mpt_sas like the facts' Intel, another model."""
    return {"name": name, "instance": instance,
            "phys_path": "/scsi_vhci/disk@g%s" % wwn.lower(),
            "ata_model": model, "rev": "0100", "serial": serial,
            "blocks": 937703088, "rotation_rate": 1, "nv_sup": False}


def s4500_s4510(tmp_path):
    """An Intel S4500 (…480G7) and an S4510 (…480G8): one key."""
    from tests.sim.testing import facts_host
    disks = [sata_ssd("c0t55CD2E414D0A0001d0", 0, "INTEL SSDSC2KB480G7",
                      "PHYG7SERIAL", "55CD2E414D0A0001"),
             sata_ssd("c0t55CD2E414D0A0002d0", 1, "INTEL SSDSC2KB480G8",
                      "PHYG8SERIAL", "55CD2E414D0A0002")]
    return Appliance.build(facts_host(disks, flavour="upstream"),
                           str(tmp_path / "s45"))


def test_key_collision_is_held_until_overridden(tmp_path):
    app = s4500_s4510(tmp_path)
    assert {d["key"] for d in app.expected_disks()} == {S45}
    # The table lists the G7's cache as protected; nothing shows the G8's.
    inject_record(app, S45, {"physical-block-size": 8192,
                             "throttle-max": 64}, serial="PHYG7SERIAL",
                  nv_sup=False, cache="inconclusive", firmware="0100")
    inject_record(app, S45, {"physical-block-size": 4096,
                             "throttle-max": 16}, serial="PHYG8SERIAL",
                  nv_sup=False, cache="inconclusive", firmware="0100")
    original = sd_conf(app)
    proc = sdtune(app, "plan")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert 'held back "%s" physical-block-size:8192: key collision' % S45 \
        in out
    assert "serial PHYG7SERIAL (INTEL SSDSC2KB480G7) 8192" in out
    assert "serial PHYG8SERIAL (INTEL SSDSC2KB480G8) 4096" in out
    assert 'held back "%s" cache-nonvolatile:true: key collision' % S45 \
        in out
    assert "nothing to change" in out

    plan_file = str(tmp_path / "plan.json")
    proc = sdtune(app, "plan", "--allow-key-collision", S45, "--save",
                  plan_file)
    assert proc.returncode == 0, proc.stderr
    change = json.load(open(plan_file))["changes"][0]
    assert change["set"] == {"physical-block-size": "8192",
                             "throttle-max": "16"}
    # apply screens the plan again: without the flag it is refused.
    proc = sdtune(app, "apply", plan_file, "--yes")
    assert proc.returncode == 3 and "key collision" in proc.stderr
    assert sd_conf(app) == original
    proc = sdtune(app, "apply", plan_file, "--yes",
                  "--allow-key-collision", S45)
    assert proc.returncode == 0, proc.stderr
    assert b"physical-block-size:8192" in sd_conf(app)


def test_key_collision_never_overrides_an_unknown_cache(tmp_path):
    app = s4500_s4510(tmp_path)
    inject_record(app, S45, {"cache-nonvolatile": True}, nv_sup=True,
                  serial="PHYG7SERIAL", firmware="0100")
    proc = sdtune(app, "plan", "-o", "json", "--allow-key-collision", S45,
                  "--allow-no-nv-evidence")
    doc = json.loads(proc.stdout)
    (held,) = [h for h in doc["held"] if h["tunable"] == "cache-nonvolatile"]
    assert "INTEL SSDSC2KB480G8" in held["reason"]
    assert "no override" in held["reason"] and doc["changes"] == []


def test_data_at_rest_drive_never_gets_cache_nonvolatile(tmp_path):
    from tests.sim.testing import facts_host
    mx = sata_ssd("c0t500A0751E1D3A001d0", 0, "CT500MX500SSD1", "MX5001",
                  "500A0751E1D3A001")
    app = Appliance.build(facts_host([mx], flavour="upstream"),
                          str(tmp_path / "mx"))
    key = "ATA     CT500MX500SSD1  "
    inject_record(app, key, {"cache-nonvolatile": True, "throttle-max": 32},
                  nv_sup=True, serial="MX5001", firmware="0100")
    proc = sdtune(app, "plan", "--allow-no-nv-evidence")
    assert proc.returncode == 0, proc.stderr
    assert 'held back "%s" cache-nonvolatile:true' % key in proc.stdout
    assert "data at rest only" in proc.stdout
    assert "throttle-max:32  from certification" in proc.stdout


def test_disks_outside_sd_are_not_planned_and_said(tmp_path):
    app = Appliance.build("nvme-mixed", str(tmp_path / "nvme"))
    proc = sdtune(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    not_sd = {n["disk"]: n for n in json.loads(proc.stdout)["not_sd"]}
    assert set(not_sd) == {"c3t0025385971B0F5A2d0", "c4t0014EE83021EAE80d0",
                           "c5t0d0"}
    assert all(n["driver"] == "blkdev" and "sd.conf has no effect" in
               n["reason"] for n in not_sd.values())
    proc = sdtune(app, "plan")
    assert "not planned c3t0025385971B0F5A2d0 (blkdev)" in proc.stdout


GAINS = {"version": 1, "seconds": 9.2, "tunables": [
    {"tunable": "physical-block-size", "value": 4096, "status": "gain",
     "summary": "ZFS's writes at ashift 12 against ashift 9: 1.47x iops "
     "(95% 1.43-1.52)", "why": None, "baseline": "ashift 9",
     "tuned": "ashift 12", "rounds": 31, "space_ratio": 1.062,
     "metrics": [{"name": "iops", "unit": "IO/s", "better": "higher",
                  "baseline": 395.0, "tuned": 581.0, "ratio": 1.47,
                  "ci95": [1.43, 1.52], "confidence": 1.0}]},
    {"tunable": "disksort", "value": False, "status": "not measured",
     "summary": "", "why": "nothing to measure", "metrics": []}]}


def test_plan_shows_the_expected_gain_under_each_proposal(app):
    """What certify measured each tunable to buy is said under its
    proposal, in text and in the plan's JSON (issue 29)."""
    inject_record(app, INTEL, {"physical-block-size": 4096,
                               "disksort": False}, gains=GAINS)
    proc = sdtune(app, "plan")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines)
              if line.startswith("  physical-block-size:4096  from "))
    assert lines[at + 2] == "      expected: gain: ZFS's writes at ashift " \
        "12 against ashift 9: 1.47x iops (95% 1.43-1.52); space 1.06x"
    at = next(i for i, line in enumerate(lines)
              if line.startswith("  disksort:false  from "))
    assert lines[at + 2:at + 4] == ["      expected: not measured",
                                    "      nothing to measure"]
    doc = json.loads(sdtune(app, "plan", "-o", "json").stdout)
    why = {w["tunable"]: w for c in doc["changes"] if c["key"] == INTEL
           for w in c["why"]}
    assert why["physical-block-size"]["gain"] == GAINS["tunables"][0]
    assert why["disksort"]["gain"]["status"] == "not measured"
