# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The pure logic of the sdtune.illumos collection
(plugin/ansible/plugins/module_utils/sdtune.py): argv building, reading
sdtune's documents and error lines, and mapping them to module results,
including check mode, and the idempotent choice of the entry to roll
back; options that begin with "-" never becoming sdtune options and a
bounded read of the export (adversarial 2026-11-27 F11, H2).  No Ansible
and no sdtune needed: the file is loaded by its path, and commands run
through a fake runner."""

import importlib.util
import json
import os
import threading

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UTILS = os.path.join(REPO, "plugin", "ansible", "plugins", "module_utils",
                     "sdtune.py")


def _load():
    spec = importlib.util.spec_from_file_location("sdtune_module_utils",
                                                  UTILS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


su = _load()


# -- argv ---------------------------------------------------------------

def test_base_argv_defaults_to_the_installed_launcher():
    assert su.base_argv({"sdtune": None, "root": None, "config": None,
                         "host": None}) == ["/usr/sbin/sdtune"]


def test_base_argv_global_options_in_order():
    params = {"sdtune": "/opt/sdtune", "root": "/a", "config": "/c.conf",
              "host": "root@fs01"}
    assert su.base_argv(params) == ["/opt/sdtune", "--host", "root@fs01",
                                    "-R", "/a", "--config", "/c.conf"]


def test_apply_argv_yes_only_outside_check_mode_and_flags():
    base = ["sdtune"]
    params = {"allow_firmware_mismatch": True,
              "allow_ashift_mismatch": False, "allow_no_nv_evidence": True}
    assert su.apply_argv(base, params, False) == [
        "sdtune", "apply", "-o", "json", "--yes",
        "--allow-firmware-mismatch", "--allow-no-nv-evidence"]
    assert su.apply_argv(base, {}, True) == ["sdtune", "apply", "-o",
                                             "json"]


def test_rollback_and_import_argv():
    assert su.rollback_argv(["s"], "000002", False) == [
        "s", "rollback", "000002", "-o", "json", "--yes"]
    assert su.rollback_argv(["s"], "000002", True) == [
        "s", "rollback", "000002", "-o", "json"]
    assert su.import_argv(["s"], "/tmp/r.json", False) == [
        "s", "results", "--import", "/tmp/r.json", "-o", "json"]
    # Over --host the file is read here and given on standard input.
    assert su.import_argv(["s"], "/tmp/r.json", True) == [
        "s", "results", "--import", "-", "-o", "json"]
    # Check mode: sdtune's own dry run.
    assert su.import_argv(["s"], "/tmp/r.json", False, True) == [
        "s", "results", "--import", "/tmp/r.json", "-o", "json",
        "--dry-run"]
    assert [a for _, a in su.info_argvs(["s"])] == [
        ["s", "disks", "-o", "json"], ["s", "verify", "-o", "json"],
        ["s", "audit", "-o", "json"], ["s", "results", "-o", "json"]]


# -- output ---------------------------------------------------------------

def test_error_line_is_sdtunes_own_line_not_its_warnings():
    stderr = ("sdtune: warning: c1t0d0: no serial\n"
              "sdtune: cannot apply 'plan': sd.conf changed\n"
              "sdtune: note: nothing written\n")
    assert su.error_line(stderr, 4, ["sdtune"]) == (
        "sdtune: cannot apply 'plan': sd.conf changed")
    assert su.error_line("", 4, ["/usr/sbin/sdtune", "apply"]) == (
        "cannot run '/usr/sbin/sdtune': exit 4 without a message")
    assert su.warnings_of(stderr) == ["warning: c1t0d0: no serial",
                                      "note: nothing written"]


def runner(rc, stdout, stderr=""):
    calls = []

    def run(argv, data=None):
        calls.append((argv, data))
        return rc, stdout, stderr
    return run, calls


def test_run_json_returns_the_document_and_warnings():
    run, calls = runner(1, '{"findings": []}', "sdtune: warning: w\n")
    rc, doc, warnings = su.run_json(run, ["s", "audit"], (0, 1))
    assert (rc, doc, warnings) == (1, {"findings": []}, ["warning: w"])
    assert calls == [(["s", "audit"], None)]
    su.run_json(run, ["s", "results"], (0, 1), data="{}")
    assert calls[-1] == (["s", "results"], "{}")


def test_run_json_failure_carries_sdtunes_message_and_rc():
    run, _ = runner(3, "", "sdtune: cannot apply 'x': refused\n")
    with pytest.raises(su.SdtuneFailure) as e:
        su.run_json(run, ["s", "apply"])
    args = e.value.fail_args()
    assert args["msg"] == "sdtune: cannot apply 'x': refused"
    assert args["rc"] == 3 and args["cmd"] == ["s", "apply"]


@pytest.mark.parametrize("stdout", ["", "not json", "[1]", '"x"'])
def test_run_json_refuses_output_that_is_not_one_object(stdout):
    run, _ = runner(0, stdout)
    with pytest.raises(su.SdtuneFailure) as e:
        su.run_json(run, ["s", "results", "-o", "json"])
    assert e.value.msg == ("cannot read the output of 's results -o json':"
                           " not a JSON object")
    assert e.value.rc == 0


def test_info_result_maps_the_four_documents():
    argvs = su.info_argvs(["s"])
    docs = {"disks": {"disks": [{"name": "c1t0d0"}]},
            "verify": {"disks": [{"name": "c1t0d0", "state": "applied"}]},
            "audit": {"findings": [{"id": "SDT-1"}]},
            "results": {"results": [{"serial": "S1"}]}}
    assert su.info_result(docs, argvs) == {
        "changed": False, "disks": [{"name": "c1t0d0"}],
        "verify": [{"name": "c1t0d0", "state": "applied"}],
        "findings": [{"id": "SDT-1"}], "records": [{"serial": "S1"}]}
    docs["audit"] = {"problems": []}
    with pytest.raises(su.SdtuneFailure) as e:
        su.info_result(docs, argvs)
    assert "no 'findings' list" in e.value.msg


# -- sdtune_tune ------------------------------------------------------------

CHANGE = {"changed": True, "dry_run": False, "diff": "--- a\n+++ b\n",
          "files": [{"path": "/kernel/drv/sd.conf", "role": "sd.conf",
                     "before_sha256": "a", "after_sha256": "b"}],
          "reboot_required": True, "journal_entry": "000001",
          "result": "applied", "plan": {}}


def test_tune_result_of_a_real_run():
    got = su.tune_result(CHANGE, check_mode=False, diff_mode=True)
    assert got["changed"] is True and got["reboot_required"] is True
    assert got["journal_entry"] == "000001" and got["result"] == "applied"
    assert got["diff"] == {"prepared": "--- a\n+++ b\n"}
    assert got["files"] == CHANGE["files"]
    assert "diff" not in su.tune_result(CHANGE, False, diff_mode=False)


def test_tune_result_in_check_mode_reports_what_a_real_run_would():
    dry = dict(CHANGE, changed=False, dry_run=True, journal_entry=None,
               result=None)
    got = su.tune_result(dry, check_mode=True, diff_mode=True)
    assert got["changed"] is True and got["dry_run"] is True
    assert got["reboot_required"] is True
    nothing = dict(dry, diff="", reboot_required=False)
    got = su.tune_result(nothing, check_mode=True, diff_mode=True)
    assert got["changed"] is False and "diff" not in got


def test_tune_result_passes_rolled_back():
    doc = dict(CHANGE, rolled_back="000001", journal_entry="000002")
    assert su.tune_result(doc, False, False)["rolled_back"] == "000001"


def entry(id_, state="done", rollback_of=None):
    return {"id": id_, "state": state, "rollback_of": rollback_of}


def test_rollback_target_last_is_idempotent():
    assert su.rollback_target([], None) == (
        None, "the journal has no finished change")
    applied = [entry("000001"), entry("000002", state="failed")]
    assert su.rollback_target(applied, None) == ("000001", None)
    rolled = applied + [entry("000003", rollback_of="000001")]
    target, why = su.rollback_target(rolled, None)
    assert target is None
    assert why == "the last change, 000003, is a rollback of 000001"


def test_rollback_target_by_id():
    entries = [entry("000001"), entry("000002")]
    assert su.rollback_target(entries, "1") == ("000001", None)
    assert su.rollback_target(entries, "000002") == ("000002", None)
    entries.append(entry("000003", rollback_of="000001"))
    assert su.rollback_target(entries, "1") == (
        None, "entry 000001 was rolled back by 000003")
    # An unknown id is sdtune's to refuse, with its own message; what is
    # not an id at all is refused here (adversarial 2026-11-27 F11).
    assert su.rollback_target(entries, "999") == ("000999", None)
    with pytest.raises(su.SdtuneFailure):
        su.rollback_target(entries, "abc")


# -- sdtune_records ---------------------------------------------------------

def test_records_result_maps_the_import_document():
    doc = {"changed": True, "imported": [{"key": "K"}], "unchanged": [],
           "skipped": [{"key": "L", "reason": "r"}], "diff": ""}
    assert su.records_result(doc) == {
        "changed": True, "imported": [{"key": "K"}], "unchanged": [],
        "skipped_records": [{"key": "L", "reason": "r"}]}


def test_check_mode_reports_what_the_dry_run_would_store():
    # sdtune's dry run stores nothing (changed false): the module says
    # what a real import would do.
    doc = {"changed": False, "dry_run": True, "imported": [{"key": "K"}],
           "unchanged": [], "skipped": []}
    assert su.records_result(doc, check_mode=True)["changed"] is True
    doc["imported"] = []
    assert su.records_result(doc, check_mode=True)["changed"] is False


def test_documents_are_json_roundtrip_safe():
    # The module returns these to Ansible, which serialises them.
    json.dumps(su.tune_result(CHANGE, False, True))
    json.dumps(su.unchanged_rollback("why"))


# ------------- adversarial 2026-11-27: F11 (options that begin with '-') and
# H2 (the export read on the controller: a regular file, with a bound)
BASE = ["/usr/sbin/sdtune"]


@pytest.mark.parametrize("src", ["--dry-run", "-", "relative.json", ""])
def test_F11_src_must_be_an_absolute_path(src):
    for remote in (False, True):
        with pytest.raises(su.SdtuneFailure) as e:
            su.import_argv(BASE, src, remote)
        assert "src must be an absolute path" in e.value.msg
    assert su.import_argv(BASE, "/var/tmp/x.json", False) == \
        BASE + ["results", "--import", "/var/tmp/x.json", "-o", "json"]


@pytest.mark.parametrize("entry", ["--yes", "-1", "1; rm", "000001x",
                                   " 1"])
def test_F11_journal_entry_is_digits_or_last(entry):
    with pytest.raises(su.SdtuneFailure) as e:
        su.rollback_target([], entry)
    assert "an entry id (digits" in e.value.msg
    with pytest.raises(su.SdtuneFailure):
        su.rollback_argv(BASE, entry, False)


def test_F11_last_is_the_newest_finished_entry():
    entries = [{"id": "000001", "state": "done"},
               {"id": "000002", "state": "done"}]
    assert su.rollback_target(entries, "last") == ("000002", None)
    assert su.rollback_target(entries, "1") == ("000001", None)


def test_H2_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    box = {}

    def read():
        try:
            su.read_export(fifo)
        except su.SdtuneFailure as e:
            box["msg"] = e.msg
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        # Let the blocked open return, so that the test run ends.
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("read_export waited on a FIFO")
    assert box["msg"] == "cannot import '%s': not a regular file" % fifo


def test_H2_a_device_and_a_large_file_are_refused(tmp_path):
    with pytest.raises(su.SdtuneFailure) as e:
        su.read_export("/dev/zero")
    assert e.value.msg == "cannot import '/dev/zero': not a regular file"
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(su.READ_LIMIT + 1)
    with pytest.raises(su.SdtuneFailure) as e:
        su.read_export(str(big))
    assert "larger than 64 MiB" in e.value.msg
    small = tmp_path / "small.json"
    small.write_bytes(b"{}\n")
    assert su.read_export(str(small)) == b"{}\n"
