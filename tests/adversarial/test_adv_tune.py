# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Adversarial regressions for plan, apply, the journal, history, rollback
and recover (issue 10: U1, U2/D2, D1, D3, D5, D7, T7, T10, T12, F6, F7,
F10, F11, W3, W6).  Every test failed on 8c0221c; those named for the
report of 2026-11-27 (issue 27: D1 undo, F6 beadm, F7 a killed step,
W1 in D7 and T7, D4 at the end) failed on bba15c0."""

import contextlib
import copy
import errno
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.adversarial.support import (INTEL, INTEL_DISK, LAUNCHER, build,
                                       config_with, failing, inject_record,
                                       journal_dir, mode_of, no_traceback,
                                       run, script, sd_conf_bytes)
from sdtune.cli import main
from sdtune.config import commands_for
from sdtune.errors import HostError
from sdtune.host import RealHost
from tests.sim.appliance import Appliance
from tests.sim.testing import INTEL as INTEL_SPEC, as_foreground, facts_host
from tests.sim.testing import platform_appliance, spare_disk
from tests.sim.testing import open_to_others


def ashift9_app(tmp_path) -> Appliance:
    """Two INTEL SSDSC2BA400G3, one the only vdev of pool `fast` with
    ashift 9 (the report's a9.json)."""
    second = copy.deepcopy(INTEL_SPEC)
    second.update(name="c0t55CD2E404C0D8D0Fd0", instance=4,
                  phys_path="/scsi_vhci/disk@g55cd2e404c0d8d0f",
                  serial="BTTV5095012Z400HGM")
    second.pop("location", None)
    pools = [{"name": "fast", "vdevs": [{"type": "disk", "ashift": 9,
                                         "disks": [INTEL_SPEC["name"]]}]}]
    scenario = facts_host([INTEL_SPEC, second], pools=pools)
    app = Appliance.build(scenario, str(tmp_path / "a9"))
    inject_record(app, INTEL, {"physical-block-size": 4096})
    return app


def saved_plan(app, tmp_path, name="plan.json", *flags):
    path = str(tmp_path / name)
    proc = run(app, "plan", "--save", path, *flags)
    assert proc.returncode == 0, proc.stderr
    return path


def tamper(path, fn):
    """Edit a saved plan and recompute its checksum, as an attacker who
    can write the file would."""
    doc = json.load(open(path))
    fn(doc)
    doc["new_sha256"] = hashlib.sha256(
        doc["new_text"].encode("latin-1")).hexdigest()
    with open(path, "w") as f:
        json.dump(doc, f)


# ---------------------------------------------------------------- U1

def test_U1_baseline_holds_back_ashift9(tmp_path):
    app = ashift9_app(tmp_path)
    proc = run(app, "plan")
    assert proc.returncode == 0, proc.stderr
    assert "held back" in proc.stdout and "ashift=9" in proc.stdout


HGST_KEY = "HGST    HUS724040ALS640 "


def hgst_mirror_app(tmp_path, ashift, record_block, spare=True,
                    log_ashift=None) -> Appliance:
    """Adversarial report 2026-11-27, U1: the HGST HUS724040ALS640 as
    the two sides of an ashift-``ashift`` mirror of pool tank (and its
    spare), with a record saying its native block is ``record_block``;
    ``log_ashift``: the pool also has a log vdev (the Intel SSD) of that
    ashift."""
    from tests.sim.testing import HGST_6F8D, hgst
    disks = [HGST_6F8D, hgst("7A11", 3), INTEL_SPEC]
    pool = {"name": "tank", "vdevs": [
        {"type": "mirror", "ashift": ashift,
         "disks": [HGST_6F8D["name"], "c0t5000CCA0496E7A11d0"]}]}
    if spare:
        disks.append(hgst("8D14", 6))
        pool["spares"] = ["c0t5000CCA0496E8D14d0"]
    if log_ashift is not None:
        pool["logs"] = [{"type": "disk", "ashift": log_ashift,
                         "disks": [INTEL_SPEC["name"]]}]
    app = Appliance.build(facts_host(disks, pools=[pool]),
                          str(tmp_path / "mirror"))
    inject_record(app, HGST_KEY,
                  {"physical-block-size": record_block}, serial="A12X")
    return app


@pytest.mark.parametrize("ashift, block, held", [
    (12, 8192, True),       # the report's case: 8192 above ashift 12
    (12, 16384, True),
    (12, 4096, False),      # fits: no hold
    (13, 8192, False),
    (9, 4096, True),        # the rule that held before
])
def test_U1_block_above_any_vdev_ashift_is_held_back(tmp_path, ashift,
                                                     block, held):
    """Never above the ashift of any vdev the model serves or could be
    replaced into, whatever the numbers (it held for ashift 9 only)."""
    app = hgst_mirror_app(tmp_path, ashift, block)
    proc = run(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    planned = [c["set"] for c in doc["changes"] if c["key"] == HGST_KEY]
    holds = [h["reason"] for h in doc["held"] if h["key"] == HGST_KEY]
    if held:
        assert not planned, planned
        assert any("ashift=%d vdev of pool tank" % ashift in r
                   for r in holds), holds
    else:
        assert planned == [{"physical-block-size": str(block)}], doc


def test_U1_spare_must_fit_the_smallest_vdev_of_its_pool(tmp_path):
    """A spare stands by for every vdev of its pool: an ashift-13 mirror
    with an ashift-12 log holds 8192 back for the model's spare (only the
    spare is then of this model outside the mirror)."""
    app = hgst_mirror_app(tmp_path, 13, 8192, log_ashift=12)
    proc = run(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert not [c for c in doc["changes"] if c["key"] == HGST_KEY], doc
    assert any("is a spare of pool tank, which has an ashift=12 vdev"
               in h["reason"] for h in doc["held"]), doc["held"]


@pytest.mark.parametrize("broken", ["zdb", "zpool"])
def test_U1_failing_zfs_command_holds_back_sector_change(tmp_path, broken):
    app = ashift9_app(tmp_path)
    before = sd_conf_bytes(app)
    cfg = config_with(app, str(tmp_path / "fail.conf"),
                      **{broken: failing(tmp_path, broken)})
    proc = run(app, "plan", config=cfg)
    no_traceback(proc)
    assert "physical-block-size:4096  from" not in proc.stdout
    assert "held back" in proc.stdout and "unknown" in proc.stdout
    assert "failed" in proc.stdout
    proc = run(app, "apply", "--yes", config=cfg)
    no_traceback(proc)
    assert b"physical-block-size" not in sd_conf_bytes(app)
    assert sd_conf_bytes(app) == before


# ---------------------------------------------------------------- U2 / D2

@pytest.mark.parametrize("claimed", [False, True])
def test_U2_injected_cache_nonvolatile_is_refused(tmp_path, claimed):
    """cache-nonvolatile:true added to the text (and, with `claimed`, to
    the plan's changes too) of a plan whose drive has no NV evidence:
    the text disagrees with the claims, or the claim is screened again
    and held back."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096}, nv_sup=False)
    path = saved_plan(app, tmp_path)
    before = sd_conf_bytes(app)

    def inject(doc):
        doc["new_text"] = doc["new_text"].replace(
            '"physical-block-size:4096"',
            '"physical-block-size:4096, cache-nonvolatile:true"')
        assert "cache-nonvolatile" in doc["new_text"]
        if claimed:
            doc["changes"][0]["set"]["cache-nonvolatile"] = "true"
    tamper(path, inject)
    proc = run(app, "apply", path, "--yes")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert ('"%s" cache-nonvolatile:true: not proposed now' % INTEL
            if claimed else "does something its recorded changes do not "
            "say") in proc.stderr
    assert sd_conf_bytes(app) == before
    assert not os.path.exists(journal_dir(app))


def test_U2_empty_new_text_is_refused(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    path = saved_plan(app, tmp_path)
    before = sd_conf_bytes(app)
    tamper(path, lambda doc: doc.update(new_text=""))
    proc = run(app, "apply", path, "--yes")
    assert proc.returncode == 3, proc.stderr
    assert sd_conf_bytes(app) == before


def test_U2_apply_shows_and_journals_the_real_change(tmp_path):
    """The stored diff and reasons are not shown: apply computes its own,
    and the journal describes the bytes written."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096,
                               "disksort": False})
    path = saved_plan(app, tmp_path)

    def lie(doc):
        doc["diff"] = "--- harmless\n+++ harmless\n"
        doc["changes"][0]["why"] = []
        doc["held"] = [{"key": "x", "tunable": "y", "value": "z",
                        "reason": "FAKE REASON"}]
    tamper(path, lie)
    proc = run(app, "apply", path, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "harmless" not in proc.stdout and "FAKE" not in proc.stdout
    assert "+sd-config-list" in proc.stdout or \
        "physical-block-size:4096" in proc.stdout
    entry = json.load(open(os.path.join(journal_dir(app), "000001.json")))
    assert "harmless" not in entry["diff"]
    assert entry["new_sha256"] == hashlib.sha256(
        sd_conf_bytes(app)).hexdigest()
    assert any("physical-block-size:4096" in s for s in entry["summary"])


def test_U2_override_must_be_given_to_apply_again(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"cache-nonvolatile": True}, nv_sup=False)
    path = saved_plan(app, tmp_path, "plan.json", "--allow-no-nv-evidence")
    assert "cache-nonvolatile" in json.load(open(path))["new_text"]
    before = sd_conf_bytes(app)
    proc = run(app, "apply", path, "--yes")
    assert proc.returncode == 3, proc.stderr
    assert "no device evidence" in proc.stderr
    assert sd_conf_bytes(app) == before
    proc = run(app, "apply", path, "--yes", "--allow-no-nv-evidence")
    assert proc.returncode == 0, proc.stderr
    assert b"cache-nonvolatile:true" in sd_conf_bytes(app)


# ---------------------------------------------------------------- D1 / D3

def test_D1_plan_save_never_replaces_a_file(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    before = sd_conf_bytes(app)
    proc = run(app, "plan", "--save", app.sd_conf)
    assert proc.returncode == 3, proc.stderr
    assert "already exists" in proc.stderr
    assert sd_conf_bytes(app) == before
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    assert run(app, "plan", "--save", str(other)).returncode == 3
    assert other.read_text() == "mine\n"


def test_D1_plan_o_is_only_the_output_format(tmp_path):
    app = build(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = run(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["version"] == 1 and "new_text" in doc
    assert not (cwd / "json").exists()
    assert run(app, "plan", "-o", str(tmp_path / "x")).returncode == 2


def test_D3_planted_plan_file_is_refused(tmp_path):
    """The hijack: a file an ordinary user made in a sticky directory is
    not written into, so it cannot stay theirs and be edited."""
    app = build(tmp_path)
    vartmp = tmp_path / "vartmp"
    vartmp.mkdir()
    os.chmod(str(vartmp), 0o1777)
    planted = vartmp / "sdtune.plan"
    planted.write_text("")
    os.chown(str(planted), 65534, 65534)
    os.chmod(str(planted), 0o666)
    proc = run(app, "plan", "--save", str(planted))
    assert proc.returncode == 3
    assert planted.read_text() == ""
    fresh = vartmp / "mine.plan"
    assert run(app, "plan", "--save", str(fresh)).returncode == 0
    st = os.stat(str(fresh))
    assert st.st_uid == 0 and mode_of(str(fresh)) == 0o600


def as_nobody(argv, **kw):
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                           "--clear-groups"] + argv, capture_output=True,
                          text=True, check=False, cwd="/", **kw)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv")
def test_D3_ordinary_user_cannot_take_over_a_root_file(tmp_path):
    open_to_others(tmp_path)
    edits = tmp_path / "edits"
    edits.mkdir()
    os.chmod(str(edits), 0o777)
    conf = edits / "rootowned.conf"
    conf.write_text('sd-config-list = "ATA     X               ", '
                    '"disksort:false";\n')
    os.chmod(str(conf), 0o644)
    before = conf.read_bytes()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.path.join(
        os.path.dirname(__file__), "..", "..", "plugin")}
    proc = as_nobody(["/usr/bin/python3", "-B", "-m", "sdtune", "sdconf",
                      "set", str(conf), "--vid", "ATA", "--pid", "X",
                      "throttle-max=32", "--write"], env=env)
    assert proc.returncode in (3, 4), proc.stderr
    assert "Traceback" not in proc.stderr
    st = os.stat(str(conf))
    assert st.st_uid == 0 and conf.read_bytes() == before


# ---------------------------------------------------------------- D5

def test_D5_journal_update_failing_after_rename_restores(tmp_path):
    """The state directory fills up between the write of sd.conf and the
    journal update: the old file is put back and the error says so (the
    entry stays "prepared", which the old file matches)."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    before = sd_conf_bytes(app)
    # A host whose second journal save fails: RealHost with one write
    # refused, driven in-process.
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "plugin"))
    from sdtune import cli
    from sdtune.host import RealHost
    from sdtune.errors import HostError
    from sdtune.config import commands_for

    class FullAfterRename(RealHost):
        saves = 0

        def write_atomic(self, path, data, mode=None):
            if path.endswith(".json") and "/journal/" in path:
                FullAfterRename.saves += 1
                if FullAfterRename.saves == 2:
                    raise HostError("write", path,
                                    "No space left on device")
            return super().write_atomic(path, data, mode)

    def factory(root, cfg):
        return FullAfterRename(root=root, commands=commands_for(cfg),
                               libraries=dict(cfg.libraries))
    import io
    out, err = io.StringIO(), io.StringIO()
    old_err = sys.stderr
    sys.stderr = err
    try:
        code = cli.main(["-R", app.root, "--config", app.config, "apply",
                         "--yes"], out, factory)
    finally:
        sys.stderr = old_err
    assert code == 4
    assert "sd.conf was restored" in err.getvalue()
    assert sd_conf_bytes(app) == before
    proc = run(app, "history", "-o", "json")
    assert proc.returncode == 0
    proc = run(app, "verify")
    assert "marked undone" in proc.stderr
    assert sd_conf_bytes(app) == before


# ------------------------------------------- F3 (adversarial 2026-11-27)

@pytest.mark.parametrize("firmware", [None, "", "   "])
def test_F3_record_naming_no_firmware_is_held(tmp_path, firmware):
    """A record without a firmware is of an unknown one: held like a
    record of another firmware (it bypassed the screen), unless
    --allow-firmware-mismatch."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096,
                               "throttle-max": 32}, firmware=firmware)
    proc = run(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert not [c for c in doc["changes"] if c["key"] == INTEL
                and "throttle-max" in c["set"]], doc["changes"]
    assert any(h["key"] == INTEL and h["tunable"] == "throttle-max" and
               "a firmware it does not name" in h["reason"]
               for h in doc["held"]), doc["held"]
    proc = run(app, "plan", "-o", "json", "--allow-firmware-mismatch")
    doc = json.loads(proc.stdout)
    assert [c["set"]["throttle-max"] for c in doc["changes"]
            if c["key"] == INTEL] == ["32"]


# ------------------------------------------- F6 (adversarial 2026-11-27)

@pytest.mark.parametrize("listing, said", [
    ("", "beadm list -H listed none"),
    ("a;u1;NR;/;1;static;1700000000\nb;u2;R;-;1;static;1700000001\n",
     "beadm list -H marks a, b as booting next"),
    ("a;u1;R;/;1;static;1700000000\n",
     "beadm list -H marks no boot environment as running"),
])
def test_F6_beadm_oddities_are_said(tmp_path, listing, said):
    """An empty boot environment list, or two flagged to boot next, left
    unsaid which sd.conf the next boot reads."""
    from tests.sim.testing import platform_appliance
    app = platform_appliance(str(tmp_path / "omnios"), "omnios")
    listing_file = tmp_path / "beadm.out"
    listing_file.write_text(listing)
    beadm = script(str(tmp_path / "beadm"), "cat %s" % listing_file)
    cfg = config_with(app, str(tmp_path / "beadm.conf"), beadm=beadm)
    proc = run(app, "verify", config=cfg)
    no_traceback(proc)
    assert said in proc.stderr, (proc.stdout, proc.stderr)
    assert "which sd.conf the next boot reads is unknown" in proc.stderr \
        or "boot environments unknown" in proc.stderr


# ------------------------------------------- D1 (adversarial 2026-11-27)

def _blocks(app):
    proc = run(app, "disks", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    return {d["name"]: d["physical_block_bytes"]
            for d in json.loads(proc.stdout)["disks"]}


def _acts_then_fails(app, tmp_path, step):
    """A config whose ``step`` command, the first time, does its work,
    then exits 1 (a late failure, or the timeout killing it after it
    wrote); later runs succeed."""
    real = os.path.join(app.bin, step)
    mark = str(tmp_path / ("late-%s.ran" % step))
    wrapper = script(str(tmp_path / ("late-" + step)),
                     '[ -e %s ] && exec %s "$@"\ntouch %s\n%s "$@"\n'
                     'echo "%s: failed late" >&2\nexit 1'
                     % (mark, real, mark, real, step))
    return config_with(app, str(tmp_path / ("late-%s.conf" % step)),
                       **{step: wrapper})


def test_D1_bootadm_that_acts_then_fails_is_run_again_on_undo(tmp_path):
    """bootadm rebuilt the archive from the new sd.conf, then exited 1:
    undo restores sd.conf AND rebuilds the archive from it, so a crash
    reboot boots the old values the journal says are in force."""
    from tests.sim.testing import platform_appliance
    app = platform_appliance(str(tmp_path / "omnios"), "omnios")
    before = _blocks(app)
    plan = json.loads(run(app, "plan", "-o", "json").stdout)
    assert plan["changes"], "the scenario must plan something"
    proc = run(app, "apply", "--yes",
               config=_acts_then_fails(app, tmp_path, "bootadm"))
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "bootadm: failed late" in proc.stderr
    assert "sd.conf was restored" in proc.stderr
    assert "boot archive still" not in proc.stderr   # rebuilt again: fine
    app.reboot(clean=False)                          # power loss
    assert _blocks(app) == before


def test_D1_update_drv_that_acts_then_fails_is_run_again_on_undo(tmp_path):
    """update_drv loaded the new sd.conf, then exited 1: undo reloads
    the restored file, so a disk that attaches afterwards gets the old
    values, as the journal (undone) says."""
    from tests.sim.testing import platform_appliance
    app = platform_appliance(str(tmp_path / "omnios"), "omnios")
    before = _blocks(app)
    plan = json.loads(run(app, "plan", "-o", "json").stdout)
    disk = plan["changes"][0]["disks"][0]
    proc = run(app, "apply", "--yes",
               config=_acts_then_fails(app, tmp_path, "update_drv"))
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "update_drv: failed late" in proc.stderr
    assert "may use the new values" not in proc.stderr
    app.set_busy(disk, False)
    app.hotplug(disk)
    assert _blocks(app)[disk] == before[disk]


def test_D1_a_step_that_fails_again_on_undo_says_what_to_run(tmp_path):
    """update_drv fails on every run: the message says the driver may
    still use the new values and what to run."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    cfg = config_with(app, str(tmp_path / "fail.conf"),
                      update_drv=failing(tmp_path, "update_drv"))
    proc = run(app, "apply", "--yes", config=cfg)
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "but the sd driver still may use the new values: run " \
        "'update_drv -vf sd'" in proc.stderr, proc.stderr


def test_F7_a_step_killed_by_a_signal_says_so(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    killed = script(str(tmp_path / "killed-update_drv"), "kill -9 $$")
    cfg = config_with(app, str(tmp_path / "kill.conf"), update_drv=killed)
    proc = run(app, "apply", "--yes", config=cfg)
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "was killed by signal 9" in proc.stderr
    assert "exited -9" not in proc.stderr


# ---------------------------------------------------------------- D7 / T7

def applied(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    assert run(app, "apply", "--yes").returncode == 0
    return app


@pytest.mark.parametrize("bad", ["empty", "directory", "not-json",
                                 "list"])
def test_D7_bad_journal_entry_is_skipped(tmp_path, bad):
    app = applied(tmp_path)
    path = os.path.join(journal_dir(app), "000002.json")
    if bad == "directory":
        os.mkdir(path)
    else:
        with open(path, "w") as f:
            f.write({"empty": "", "not-json": "{", "list": "[1]"}[bad])
    for cmd in (["verify"], ["audit"], ["plan"], ["disks"]):
        proc = run(app, *cmd)
        no_traceback(proc)
        assert proc.returncode in (0, 1), (cmd, proc.stderr)
        if cmd != ["disks"]:
            assert "skipping journal entry" in proc.stderr, cmd
    proc = run(app, "history")
    assert proc.returncode == 1 and "000001" in proc.stdout
    assert "000002.json" in proc.stderr
    # W1: the unreadable entry may be the last change; --last refuses
    # to guess, and the change it names by ID is rolled back.
    proc = run(app, "rollback", "--last", "--yes")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "journal entry 000002 cannot be read" in proc.stderr
    assert "no change" not in proc.stderr
    assert run(app, "rollback", "000001", "--yes").returncode == 0


@pytest.mark.parametrize("field, value", [
    ("time", "yesterday"), ("time", 1e300), ("old_sha256", None),
    ("user", None), ("action", None), ("state", "weird"),
    ("summary", [1])])
def test_T7_wrong_typed_entry_field(tmp_path, field, value):
    app = applied(tmp_path)
    path = os.path.join(journal_dir(app), "000001.json")
    doc = json.load(open(path))
    doc[field] = value
    with open(path, "w") as f:
        json.dump(doc, f)
    proc = run(app, "history")
    no_traceback(proc)
    assert proc.returncode == 1 and "field '%s'" % field in proc.stderr
    # W1: not "no change to roll back": the one entry there may be it.
    proc = run(app, "rollback", "--last", "--yes")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "journal entry 000001 cannot be read" in proc.stderr


# ---------------------------------------------------------------- T10

@pytest.mark.parametrize("edit", [
    {"changes": [1]}, {"changes": None}, {"new_text": 12345},
    {"new_text": "sd-config-list = \"\u20ac\";\n"}, {"version": 2},
    {"changes": [{"key": 1, "set": {}}]}, {"created": "now"}])
def test_T10_plan_fields_of_the_wrong_type(tmp_path, edit):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    path = saved_plan(app, tmp_path)
    doc = json.load(open(path))
    doc.update(edit)
    if isinstance(doc.get("new_text"), str):
        try:
            doc["new_sha256"] = hashlib.sha256(
                doc["new_text"].encode("latin-1")).hexdigest()
        except UnicodeEncodeError:
            pass
    with open(path, "w") as f:
        json.dump(doc, f)
    before = sd_conf_bytes(app)
    proc = run(app, "apply", path, "--yes")
    no_traceback(proc)
    if "created" in edit:       # not a claim about sd.conf: ignored
        assert proc.returncode == 0, proc.stderr
        return
    assert proc.returncode in (3, 4), proc.stderr
    assert sd_conf_bytes(app) == before


def test_T10_fields_outside_the_claims_are_never_shown(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    path = saved_plan(app, tmp_path)
    tamper(path, lambda doc: doc.update(held=[{"key": 1}], warnings=None,
                                        diff=5))
    proc = run(app, "apply", path, "--yes")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- T12

def test_T12_ctrl_d_at_the_prompt_changes_nothing(tmp_path):
    """EOF at the question is "no"; driven in-process with a TTY."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    import io
    from sdtune.commands.base import Env, tune_site
    from sdtune.commands.tune import apply
    from sdtune.drivers.planning import Overrides
    from sdtune.config import load_config, commands_for
    from sdtune.host import RealHost
    cfg = load_config(RealHost(), app.config)
    host = RealHost(app.root, commands_for(cfg), libraries=dict(
        cfg.libraries))
    site = tune_site(host, cfg, "nexenta")
    before = sd_conf_bytes(app)

    def eof(_prompt, _out):
        raise EOFError
    out = io.StringIO()
    env = Env(host, cfg, out, io.StringIO())
    assert apply(site, None, False, True, Overrides(), env, ask=eof) == 0
    assert "nothing changed" in out.getvalue()
    assert sd_conf_bytes(app) == before


# ---------------------------------------------------------------- F6 / F7

def test_F6_applying_the_same_plan_twice(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    path = saved_plan(app, tmp_path)
    assert run(app, "apply", path, "--yes").returncode == 0
    after = sd_conf_bytes(app)
    proc = run(app, "apply", path, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "already" in proc.stdout
    assert sd_conf_bytes(app) == after
    assert len(os.listdir(journal_dir(app))) == 3     # one entry


def test_F7_existing_operator_error_does_not_block_a_change(tmp_path):
    app = build(tmp_path)
    with open(app.sd_conf, "ab") as f:
        f.write(b'sd-config-list = "VMware  Virtual disk    ", '
                b'"throttle-max:4";\n')
    inject_record(app, INTEL, {"physical-block-size": 4096})
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert b"physical-block-size:4096" in sd_conf_bytes(app)


# ---------------------------------------------------------------- F10

def test_F10_rollback_arguments(tmp_path):
    app = applied(tmp_path)
    proc = run(app, "rollback")
    assert proc.returncode == 2
    assert "'--last'" not in proc.stderr and "give a journal ID" in \
        proc.stderr
    proc = run(app, "rollback", "1", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "000002" in proc.stdout


# ---------------------------------------------------------------- F11

def test_F11_symlinked_sd_conf_refused_before_journal(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    real = os.path.join(app.root, "kernel", "drv", "sd.conf.real")
    os.rename(app.sd_conf, real)
    os.symlink("sd.conf.real", app.sd_conf)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 3, proc.stderr
    assert "symbolic link" in proc.stderr
    assert not os.path.exists(journal_dir(app)) or \
        not os.listdir(journal_dir(app))


# ------------------------------------------- W2 (adversarial 2026-11-27)

def _state_dir_linked(app, tmp_path):
    """var/sdtune a symbolic link to another directory (with the records
    moved there): what the link points to must stay untouched."""
    state = os.path.join(app.root, "var", "sdtune")
    elsewhere = str(tmp_path / "elsewhere")
    os.rename(state, elsewhere)
    os.symlink(elsewhere, state)
    return elsewhere


def _tree(top):
    return sorted(os.path.relpath(os.path.join(d, n), top)
                  for d, dirs, files in os.walk(top) for n in dirs + files)


@pytest.mark.parametrize("cmd", [["apply", "--yes"],
                                 ["rollback", "--last", "--yes"],
                                 ["recover"]])
def test_W2_symlinked_state_dir_is_refused_before_anything(tmp_path, cmd):
    """Every command that writes state refuses a symbolic link on the
    way the same way (exit 3) and creates nothing through it: apply
    used to create the lock and journal/ in the link's target, then exit
    4."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    if cmd[0] == "rollback":
        assert run(app, "apply", "--yes").returncode == 0
    elsewhere = _state_dir_linked(app, tmp_path)
    before, tree = sd_conf_bytes(app), _tree(elsewhere)
    proc = run(app, *cmd)
    no_traceback(proc)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert "is a symbolic link" in proc.stderr
    assert _tree(elsewhere) == tree
    assert sd_conf_bytes(app) == before


# ---------------------------------------------------------------- W3 / D4

def test_W3_unwritable_state_dir_is_a_failure_naming_it(tmp_path):
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    state = os.path.join(app.root, "var", "sdtune")
    # The state directory's lock cannot be created: a file where the
    # lock file's directory should be is enough even for root.
    lock = os.path.join(state, "lock")
    os.makedirs(lock)
    before = sd_conf_bytes(app)
    proc = run(app, "apply", "--yes")
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "lock" in proc.stderr and "sd.conf" not in proc.stderr
    assert sd_conf_bytes(app) == before


def wedge(app):
    """An apply interrupted in state "written", then sd.conf edited by
    hand: it matches neither side."""
    entry = os.path.join(journal_dir(app), "000001.json")
    doc = json.load(open(entry))
    doc["state"] = "written"
    with open(entry, "w") as f:
        json.dump(doc, f)
    with open(app.sd_conf, "ab") as f:
        f.write(b"# edited by hand\n")


def test_D4_wedged_journal_reads_still_work_and_can_be_accepted(tmp_path):
    app = applied(tmp_path)
    wedge(app)
    edited = sd_conf_bytes(app)
    for cmd in (["history"], ["verify"], ["audit"], ["plan"]):
        proc = run(app, *cmd)
        no_traceback(proc)
        assert proc.returncode in (0, 1), (cmd, proc.stderr)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 3 and "recover --accept-current" in \
        proc.stderr
    proc = run(app, "recover")
    assert proc.returncode == 3
    proc = run(app, "recover", "--accept-current")
    assert proc.returncode == 0, proc.stderr
    assert "accepted" in proc.stdout
    assert sd_conf_bytes(app) == edited
    hist = json.loads(run(app, "history", "-o", "json").stdout)
    assert hist["entries"][0]["state"] == "accepted"
    assert run(app, "apply", "--yes").returncode == 0


# ---------------------------------------------------------------- W6

@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv")
def test_W6_ordinary_user_reads_after_a_change(tmp_path):
    open_to_others(tmp_path)
    app = applied(tmp_path)
    os.chmod(app.root, 0o755)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugin")}
    # (verify and plan run the simulator's commands, which live where an
    # ordinary user cannot go here; history reads only the journal.)
    for cmd in (["history"], ["history", "-o", "json"]):
        proc = as_nobody(["/usr/bin/python3", "-B", "-m", "sdtune", "-R",
                          app.root, "--config", app.config] + cmd, env=env)
        assert proc.returncode in (0, 1), (cmd, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert INTEL_DISK


# ---------------------------------------------------------------- D4

def test_D4_sdconf_write_on_the_live_file_is_a_transaction(tmp_path):
    app = build(tmp_path)
    proc = run(app, "sdconf", "set", app.sd_conf, "--vid", "ATA", "--pid",
               "INTEL SSDSC2BA40", "disksort=false", "--write")
    assert proc.returncode == 0, proc.stderr
    assert "journal entry 000001" in proc.stdout
    hist = json.loads(run(app, "history", "-o", "json").stdout)
    assert [(e["action"], e["state"]) for e in hist["entries"]] == [
        ("sdconf set", "done")]
    assert hist["entries"][0]["new_sha256"] == hashlib.sha256(
        sd_conf_bytes(app)).hexdigest()
    # ... so it can be rolled back like any change.
    assert run(app, "rollback", "--last", "--yes").returncode == 0
    assert b"disksort:false" not in sd_conf_bytes(app)


def apply_with_update_drv(tmp_path, before_it):
    """An appliance with a plan to apply and a config whose update_drv
    first runs the shell lines ``before_it``, then the simulator's; and
    `apply --yes` started with that config (the process)."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"physical-block-size": 4096})
    real = [line.split("=", 1)[1].strip() for line in open(app.config)
            if line.strip().startswith("update_drv")][0]
    slow = str(tmp_path / "update_drv")
    with open(slow, "w") as f:
        f.write('#!/bin/sh\n%s\nexec %s "$@"\n' % (before_it, real))
    os.chmod(slow, 0o755)
    cfg = config_with(app, str(tmp_path / "slow.conf"), update_drv=slow)
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    proc = subprocess.Popen(as_foreground([LAUNCHER, "-R", app.root,
                                           "--config", cfg, "apply",
                                           "--yes"]), env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True)
    return app, proc


def wait_for_file(path, proc):
    end = time.monotonic() + 30
    while not os.path.exists(path):
        assert time.monotonic() < end and proc.poll() is None
        time.sleep(0.02)


def test_D4_sdconf_write_during_an_apply_is_refused(tmp_path):
    marker = str(tmp_path / "started")
    release = str(tmp_path / "release")
    # update_drv holds the apply (and its lock) until the test has tried
    # its write, however long that takes (at most 60 s), not a fixed 4 s.
    app, p = apply_with_update_drv(
        tmp_path, ': > %s\ni=0\nwhile [ ! -e %s ] && [ $i -lt 1200 ]; do '
        'sleep 0.05; i=$((i+1)); done' % (marker, release))
    wait_for_file(marker, p)
    proc = run(app, "sdconf", "set", app.sd_conf, "--vid", "ATA", "--pid",
               "TEST", "disksort=false", "--write")
    with open(release, "w"):
        pass
    assert proc.returncode == 3, proc.stderr
    assert "locked" in proc.stderr
    assert p.wait(timeout=60) == 0
    p.stderr.close()
    hist = json.loads(run(app, "history", "-o", "json").stdout)
    assert hist["entries"][-1]["new_sha256"] == hashlib.sha256(
        sd_conf_bytes(app)).hexdigest()
    assert run(app, "rollback", "--last", "--yes").returncode == 0


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_apply_kills_its_helper_in_time(tmp_path, signo):
    """sdtune(8): a helper that apply runs (update_drv, here one that
    would wait a minute) is killed within a second of Ctrl-C or SIGTERM,
    and the next command finds the change recovered."""
    pidfile = str(tmp_path / "helper.pid")
    app, p = apply_with_update_drv(
        tmp_path, 'echo $$ > %s.tmp\nmv %s.tmp %s\ni=0\nwhile [ $i -lt '
        '1200 ]; do sleep 0.05; i=$((i+1)); done'
        % (pidfile, pidfile, pidfile))
    try:
        wait_for_file(pidfile, p)
        helper = int(open(pidfile).read())
        p.send_signal(signo)
        sent = time.monotonic()
        while alive(helper):
            assert time.monotonic() - sent < 1.0, "helper alive after 1 s"
            time.sleep(0.01)
        err = p.communicate(timeout=30)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 128 + signo, err
    assert "interrupted by %s" % signo.name in err
    assert "Traceback" not in err
    assert run(app, "recover").returncode == 0


def alive(pid):
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, does
    not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_D4_sdconf_write_on_a_copy_is_not_journalled(tmp_path):
    app = build(tmp_path)
    copy_path = str(tmp_path / "copy.conf")
    shutil.copy(app.sd_conf, copy_path)
    proc = run(app, "sdconf", "set", copy_path, "--vid", "ATA", "--pid",
               "INTEL SSDSC2BA40", "disksort=false", "--write")
    assert proc.returncode == 0, proc.stderr
    assert not os.path.exists(journal_dir(app))


def test_F7_one_bad_tunable_holds_back_only_itself(tmp_path):
    """A record's throttle-max:4 alone is ignored by sd (throttle check):
    it is held back, the record's physical-block-size is not."""
    app = build(tmp_path)
    inject_record(app, INTEL, {"throttle-max": 4,
                               "physical-block-size": 4096})
    proc = run(app, "plan", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    held = [(h["tunable"], h["value"]) for h in doc["held"]
            if h["key"] == INTEL]
    assert ("throttle-max", "4") in held and ("*", "") not in held
    change = next(c for c in doc["changes"] if c["key"] == INTEL)
    assert change["set"] == {"physical-block-size": "4096"}
    assert [w["tunable"] for w in change["why"]] == ["physical-block-size"]
    assert run(app, "apply", "--yes").returncode == 0


# ---------------------------------------------------------------- F5

def test_F5_history_p_prints_exact_times_and_checksums(tmp_path):
    app = applied(tmp_path)
    entry = json.load(open(os.path.join(journal_dir(app), "000001.json")))
    proc = run(app, "history", "-Hp")
    assert proc.returncode == 0, proc.stderr
    fields = proc.stdout.rstrip("\n").split("\t")
    assert fields[0] == "000001" and fields[1] == "%d" % entry["time"]
    assert fields[5:7] == [entry["old_sha256"], entry["new_sha256"]]
    short = run(app, "history", "-H").stdout.rstrip("\n").split("\t")
    assert short[5] == entry["old_sha256"][:12]


# ------------------------------------------------ D4 (report of 2026-11-27)

class FullKeyHost(RealHost):
    """This machine with the USB key full: every write below it fails
    as a full file system does, after the directories were made."""

    def __init__(self, key, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key = key

    def write_atomic(self, path, data, mode=None):
        if path.startswith(self.key + "/"):
            raise HostError("write", path, os.strerror(errno.ENOSPC))
        return super().write_atomic(path, data, mode)


def test_D4_an_undone_apply_leaves_no_directory_on_the_usb_key(tmp_path):
    """smartos-usb with the key full: apply fails (4), the entry is
    undone, sd.conf old, and the key holds exactly what it held."""
    app = platform_appliance(str(tmp_path / "usb"), "smartos-usb")
    inject_record(app, spare_disk(app)["key"], {"throttle-max": 24})
    key = os.path.join(app.root, "mnt", "usbkey")

    def tree():
        return sorted(os.path.relpath(os.path.join(d, n), key)
                      for d, dirs, files in os.walk(key)
                      for n in dirs + files)
    before = tree()
    assert "boot/bootfs" not in before
    err = io.StringIO()

    def factory(root, cfg):
        return FullKeyHost(key, root=root, commands=commands_for(cfg),
                           libraries=dict(cfg.libraries))
    with contextlib.redirect_stderr(err):
        code = main(["-R", app.root, "--config", app.config, "apply",
                     "--yes"], out=io.StringIO(), host_factory=factory)
    assert code == 4, err.getvalue()
    assert "No space left on device" in err.getvalue()
    assert tree() == before
    entry = json.load(open(os.path.join(journal_dir(app), "000001.json")))
    assert entry["state"] == "undone"
