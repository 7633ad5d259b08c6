# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The change document (`-o json`) of apply, rollback and sdconf
set|unset on the simulated appliance (issue 17): dry runs change nothing
and say what would change, a change names its journal entry and the
checksums of the files it wrote, "nothing to do" is changed false with
exit 0, and standard output holds the one document or, on an error,
nothing."""

import hashlib
import json
import os
import shutil
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

INTEL = "ATA     INTEL SSDSC2BA40"
INTEL_DISK = "c0t55CD2E404C0D8D0Ed0"
# A model no disk of the appliance is.
ABSENT = "ATA     NOSUCH MODEL 001"
SD_CONF = "/kernel/drv/sd.conf"
KEYS = {"changed", "dry_run", "diff", "files", "reboot_required",
        "journal_entry", "result"}


@pytest.fixture
def app(tmp_path):
    return Appliance.build("small-nexenta", str(tmp_path / "app"))


def live(app) -> str:
    return os.path.join(app.root, SD_CONF.lstrip("/"))


def content(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def change(app, *args) -> dict:
    """Run sdtune with -o json; the whole of stdout must be one JSON
    document with the change document's keys, and the exit status 0."""
    proc = app.sdtune(*args, "-o", "json")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    doc = json.loads(proc.stdout)
    assert KEYS <= set(doc), doc
    return doc


def history(app) -> list:
    proc = app.sdtune("history", "-o", "json")
    return json.loads(proc.stdout)["entries"]


def verify_states(app) -> dict:
    proc = app.sdtune("verify", "-o", "json")
    return {d["name"]: d["state"] for d in json.loads(proc.stdout)["disks"]}


def journal_files(app) -> list:
    d = os.path.join(app.root, "var", "sdtune", "journal")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def file_record(doc: dict, path: str) -> dict:
    (rec,) = [f for f in doc["files"] if f["path"] == path]
    return rec


# -- apply -----------------------------------------------------------------

def test_apply_dry_run_changes_nothing_and_shows_the_change(app):
    original = content(live(app))
    inject_record(app, INTEL, {"physical-block-size": 4096})
    doc = change(app, "apply")
    assert (doc["changed"], doc["dry_run"]) == (False, True)
    assert '"%s", "physical-block-size:4096"' % INTEL in doc["diff"]
    assert doc["diff"].startswith("--- ")
    assert (doc["journal_entry"], doc["result"]) == (None, None)
    rec = file_record(doc, SD_CONF)
    assert rec["before_sha256"] == sha(original)
    assert rec["after_sha256"] == doc["plan"]["new_sha256"]
    assert sha(doc["plan"]["new_text"].encode("latin-1")) == \
        rec["after_sha256"]
    assert [c["key"] for c in doc["plan"]["changes"]].count(INTEL) == 1
    # The Intel SSD is attached (a busy log device) and would get another
    # physical block size: the change needs a reboot.
    assert doc["reboot_required"] is True
    assert content(live(app)) == original
    assert journal_files(app) == []


def test_apply_then_again_then_rollback(app):
    original = content(live(app))
    inject_record(app, INTEL, {"physical-block-size": 4096})
    doc = change(app, "apply", "--yes")
    assert (doc["changed"], doc["dry_run"]) == (True, False)
    entries = history(app)
    assert [e["id"] for e in entries] == [doc["journal_entry"]]
    assert doc["result"] == entries[0]["result"]
    now = content(live(app))
    assert now != original
    rec = file_record(doc, SD_CONF)
    assert (rec["before_sha256"], rec["after_sha256"]) == (sha(original),
                                                           sha(now))
    assert doc["diff"] and '"%s"' % INTEL in doc["diff"]
    # verify says the busy disk keeps its old values until the reboot.
    assert verify_states(app)[INTEL_DISK] == "pending reboot"
    assert doc["reboot_required"] is True

    again = change(app, "apply", "--yes")
    assert (again["changed"], again["diff"]) == (False, "")
    assert again["files"] == []
    assert again["journal_entry"] is None
    assert content(live(app)) == now and len(history(app)) == 1

    dry = change(app, "rollback", "--last")
    assert (dry["changed"], dry["dry_run"]) == (False, True)
    assert dry["rolled_back"] == doc["journal_entry"]
    assert dry["journal_entry"] is None and dry["diff"]
    rec = file_record(dry, SD_CONF)
    assert (rec["before_sha256"], rec["after_sha256"]) == (sha(now),
                                                           sha(original))
    assert content(live(app)) == now and len(history(app)) == 1

    back = change(app, "rollback", "--last", "--yes")
    assert (back["changed"], back["dry_run"]) == (True, False)
    assert back["rolled_back"] == doc["journal_entry"]
    entries = history(app)
    assert [e["id"] for e in entries] == [doc["journal_entry"],
                                          back["journal_entry"]]
    assert entries[1]["rollback_of"] == doc["journal_entry"]
    assert content(live(app)) == original
    rec = file_record(back, SD_CONF)
    assert (rec["before_sha256"], rec["after_sha256"]) == (sha(now),
                                                           sha(original))
    # The disks never took the new values: back to them needs no reboot,
    # and the dry run said so before.
    assert INTEL_DISK not in [n for n, s in verify_states(app).items()
                              if s == "pending reboot"]
    assert back["reboot_required"] is False
    assert dry["reboot_required"] == back["reboot_required"]


def test_a_saved_plan_already_applied_is_nothing_to_do(app, tmp_path):
    inject_record(app, INTEL, {"physical-block-size": 4096})
    plan_file = str(tmp_path / "plan.json")
    assert app.sdtune("plan", "--save", plan_file).returncode == 0
    doc = change(app, "apply", plan_file, "--yes")
    assert doc["changed"] is True
    assert doc["plan"]["new_sha256"] == json.load(open(plan_file))[
        "new_sha256"]
    for args in ((plan_file,), (plan_file, "--yes"), ()):
        again = change(app, "apply", *args)
        assert (again["changed"], again["files"], again["diff"]) == (
            False, [], ""), args
        assert again["journal_entry"] is None
    assert again["plan"]["changes"] == []
    assert len(history(app)) == 1


def test_a_failed_apply_prints_no_json(app):
    inject_record(app, INTEL, {"physical-block-size": 4096})
    before = content(live(app))
    app.set_drv_lock(True)
    proc = app.sdtune("apply", "--yes", "-o", "json")
    assert proc.returncode == 4, proc.stdout
    assert proc.stdout == ""
    assert proc.stderr.startswith("sdtune: cannot ")
    assert content(live(app)) == before


def test_rollback_errors_print_no_json(app):
    proc = app.sdtune("rollback", "--last", "-o", "json")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("sdtune: cannot rollback ")
    proc = app.sdtune("rollback", "-o", "json")
    assert (proc.returncode, proc.stdout) == (2, "")


# -- sdconf set|unset --------------------------------------------------------

def test_sdconf_on_a_copy(app, tmp_path):
    copy = str(tmp_path / "sd.conf")
    shutil.copy(live(app), copy)
    original = content(copy)

    dry = change(app, "sdconf", "set", copy, INTEL, "throttle-max=32")
    assert (dry["changed"], dry["dry_run"]) == (False, True)
    assert "throttle-max:32" in dry["diff"]
    assert content(copy) == original
    rec = file_record(dry, copy)
    assert rec["before_sha256"] == sha(original)

    doc = change(app, "sdconf", "set", copy, INTEL, "throttle-max=32",
                 "--write")
    assert (doc["changed"], doc["dry_run"]) == (True, False)
    assert (doc["journal_entry"], doc["reboot_required"]) == (None, False)
    assert doc["diff"] == dry["diff"]
    written = content(copy)
    assert written != original
    rec = file_record(doc, copy)
    assert (rec["before_sha256"], rec["after_sha256"]) == (sha(original),
                                                           sha(written))
    assert file_record(dry, copy)["after_sha256"] == sha(written)
    assert (doc["file"], doc["key"]) == (copy, INTEL)

    same = change(app, "sdconf", "set", copy, INTEL, "throttle-max=32",
                  "--write")
    assert (same["changed"], same["diff"], same["files"]) == (False, "", [])

    undo = change(app, "sdconf", "unset", copy, INTEL, "--write")
    assert undo["changed"] is True and content(copy) == original
    assert journal_files(app) == []
    assert content(live(app)) != written


def test_sdconf_unset_with_nothing_to_remove(app, tmp_path):
    copy = str(tmp_path / "sd.conf")
    shutil.copy(live(app), copy)
    proc = app.sdtune("sdconf", "unset", copy, ABSENT, "--write", "-o",
                      "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["changed"], doc["files"], doc["diff"]) == (False, [], "")
    assert "nothing to unset" in proc.stderr
    assert proc.stderr.startswith("sdtune: note: ")
    # Text mode keeps its exit status 1.
    proc = app.sdtune("sdconf", "unset", copy, ABSENT, "--write")
    assert proc.returncode == 1 and proc.stdout == ""


def test_sdconf_on_the_live_file_is_journalled(app):
    path = live(app)
    original = content(path)
    dry = change(app, "sdconf", "set", path, ABSENT, "throttle-max=32")
    assert (dry["changed"], dry["dry_run"]) == (False, True)
    assert file_record(dry, SD_CONF)["before_sha256"] == sha(original)
    # No attached disk is this model: nothing pending a reboot.
    assert dry["reboot_required"] is False
    assert content(path) == original and journal_files(app) == []

    doc = change(app, "sdconf", "set", path, ABSENT, "throttle-max=32",
                 "--write")
    assert doc["changed"] is True and doc["reboot_required"] is False
    entries = history(app)
    assert [(e["id"], e["action"]) for e in entries] == [
        (doc["journal_entry"], "sdconf set")]
    assert doc["result"] == entries[0]["result"]
    rec = file_record(doc, SD_CONF)
    assert rec == {"path": SD_CONF, "role": rec["role"],
                   "before_sha256": sha(original),
                   "after_sha256": sha(content(path))}
    assert rec["after_sha256"] == file_record(dry, SD_CONF)["after_sha256"]

    same = change(app, "sdconf", "set", path, ABSENT, "throttle-max=32",
                  "--write")
    assert same["changed"] is False and same["journal_entry"] is None
    assert len(history(app)) == 1


def test_sdconf_live_change_for_an_attached_disk_needs_a_reboot(app):
    path = live(app)
    dry = change(app, "sdconf", "set", path, INTEL,
                 "physical-block-size=4096")
    assert dry["reboot_required"] is True
    doc = change(app, "sdconf", "set", path, INTEL,
                 "physical-block-size=4096", "--write")
    assert doc["reboot_required"] is True
    assert verify_states(app)[INTEL_DISK] == "pending reboot"

    undo = change(app, "sdconf", "unset", path, INTEL, "--write")
    assert undo["changed"] is True
    assert undo["journal_entry"] != doc["journal_entry"]
    assert [e["action"] for e in history(app)] == ["sdconf set",
                                                   "sdconf unset"]


def test_sdconf_refusal_prints_no_json(app):
    path = live(app)
    before = content(path)
    proc = app.sdtune("sdconf", "set", path, INTEL, "bogus=1", "--write",
                      "-o", "json")
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr.startswith("sdtune: cannot set tunables in ")
    assert content(path) == before and journal_files(app) == []
