# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The sdtune.illumos collection in a real `ansible-playbook` run
(tests/ansible/fleet.yml) against two simulated appliances, fs01 and
fs02 (tests/sim; connection local, each appliance a root and a config):
an idle SSD is certified on fs01 (ansible.builtin.command with an argv,
in the playbook) and its record exported; fs02 imports it
(sdtune_records, check mode first, then for real, then again), is tuned
in check mode (diff shown, sd.conf unchanged byte for byte), for real
(changed), again (ok), and rolled back (sd.conf byte for byte as
before).  The changed/ok counts of every play come from a JSON callback
(tests/ansible/callbacks) and are checked against the PLAY RECAP."""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from marks import needs  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

pytestmark = pytest.mark.ansible

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.join(REPO, "plugin", "ansible")
SCENARIO = os.path.join(REPO, "tests", "sim", "scenarios",
                        "small-nexenta.json")
DISK = "c0t5002538C40A1B2C3d0"            # an idle SAS SSD in the scenario
KEY = "SAMSUNG MZILS480HEGR/007"
# Short measurements: the verdict's quality is tests/emu's business.
CERTIFY = ("\n[certify]\nphases = sector\nmin_rounds = 2\nmax_rounds = 4\n"
           "paired_max_s = 5\nregion_bytes = 67108864\n")
# (ok, changed) of each play of fleet.yml, in the RECAP's sense: ok
# counts the changed tasks too.
EXPECTED = [
    ("Certify and export on fs01", 2, 2),
    ("Import on fs02", 2, 2),
    ("Import on fs02 again", 2, 0),
    ("Tune fs02, check mode", 2, 1),
    ("Tune fs02", 1, 1),
    ("Tune fs02 again", 2, 0),
    ("Roll back fs02", 4, 2),
]


def ansible_playbook():
    needs("ansible", "ansible-playbook")
    path = os.path.join(sysconfig.get_path("scripts"), "ansible-playbook")
    return path if os.path.exists(path) else shutil.which(
        "ansible-playbook")


def appliance(tmp, name, scratch=None):
    with open(SCENARIO) as f:
        s = json.load(f)
    s["hostname"] = name
    if scratch is not None:
        with open(scratch, "wb") as f:
            f.truncate(128 << 20)
        for d in s["disks"]:
            if d["name"] == DISK:
                d["device_file"] = scratch
    app = Appliance.build(s, os.path.join(tmp, name))
    with open(app.config, "a") as f:
        f.write(CERTIFY)
    return app


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Run:
    """One playbook run: its output, the callback's plays, the appliances
    and what fs02's sd.conf held before."""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    playbook = ansible_playbook()
    if playbook is None:
        pytest.skip("ansible-playbook is not installed (tests/deps.sh)")
    tmp = str(tmp_path_factory.mktemp("fleet"))
    fs01 = appliance(tmp, "fs01", os.path.join(tmp, "scratch"))
    fs02 = appliance(tmp, "fs02")
    collections = os.path.join(tmp, "collections")
    shutil.copytree(COLLECTION, os.path.join(
        collections, "ansible_collections", "sdtune", "illumos"),
        ignore=shutil.ignore_patterns("__pycache__", "output"))
    r = Run()
    r.fs01, r.fs02, r.tmp = fs01, fs02, tmp
    r.original = read(fs02.sd_conf)
    r.records = os.path.join(tmp, "fs01-records.json")
    extra = {"sdtune": os.path.join(REPO, "bin", "sdtune"),
             "sdtune_env": {"SDTUNE_PYTHON": sys.executable,
                            "SDTUNE_ZONENAME_CMD": "/nonexistent"},
             "fs01": {"root": fs01.root, "config": fs01.config},
             "fs02": {"root": fs02.root, "config": fs02.config},
             "disk": DISK, "records": r.records}
    extra_file = os.path.join(tmp, "extra.json")
    with open(extra_file, "w") as f:
        json.dump(extra, f)
    cfg = os.path.join(tmp, "ansible.cfg")
    with open(cfg, "w") as f:
        f.write("[defaults]\n")
    r.env = {"PATH": os.path.dirname(playbook) + ":/usr/bin:/bin",
             "HOME": tmp, "LC_ALL": "C.UTF-8",
             "ANSIBLE_CONFIG": cfg,
             "ANSIBLE_COLLECTIONS_PATH": collections,
             "ANSIBLE_CALLBACK_PLUGINS": os.path.join(HERE, "callbacks"),
             "ANSIBLE_CALLBACKS_ENABLED": "plays_json",
             "ANSIBLE_LOCAL_TEMP": os.path.join(tmp, "ansible-local"),
             "ANSIBLE_REMOTE_TEMP": os.path.join(tmp, "ansible-remote"),
             "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}
    r.playbook = playbook
    start = time.monotonic()
    r.proc, r.plays = play(r, os.path.join(HERE, "fleet.yml"),
                           ["-e", "@" + extra_file])
    r.seconds = time.monotonic() - start
    assert r.proc.returncode == 0, (r.proc.stdout[-6000:]
                                    + r.proc.stderr[-3000:])
    r.tasks = {t["name"]: t for p in r.plays for t in p["tasks"]}
    return r


def play(r, path, args=()):
    """Run ansible-playbook on localhost with the test's environment:
    (the process, the plays the callback saw)."""
    events = os.path.join(r.tmp, "events-%s.json"
                          % os.path.basename(path))
    env = dict(r.env, SDTUNE_TEST_EVENTS=events)
    proc = subprocess.run(
        [r.playbook, "-i", "localhost,", "-e",
         "ansible_python_interpreter=%s" % sys.executable] + list(args)
        + [path], env=env, cwd=r.tmp, capture_output=True,
        text=True, timeout=110, check=False)
    plays = []
    if os.path.exists(events):
        with open(events) as f:
            plays = json.load(f)["plays"]
    return proc, plays


def counts(play):
    ok = sum(t["status"] in ("ok", "changed") for t in play["tasks"])
    changed = sum(t["status"] == "changed" for t in play["tasks"])
    return ok, changed


def test_counts_per_play_and_recap(run, request):
    got = [(p["name"],) + counts(p) for p in run.plays]
    # Shown after the run (tests/conftest.py), not captured.
    for name, ok, changed in got:
        request.node.user_properties.append(
            ("show", "ansible play %-28s ok=%d changed=%d"
             % (name, ok, changed)))
    request.node.user_properties.append(
        ("show", "ansible-playbook: %.1f s" % run.seconds))
    assert got == EXPECTED
    recap = re.search(r"^localhost\s+: ok=(\d+)\s+changed=(\d+)\s+"
                      r"unreachable=0\s+failed=0", run.proc.stdout, re.M)
    assert recap, run.proc.stdout[-2000:]
    assert (int(recap.group(1)), int(recap.group(2))) == (
        sum(e[1] for e in EXPECTED), sum(e[2] for e in EXPECTED))


def test_records_travel_and_import_is_idempotent(run):
    with open(run.records) as f:
        export = json.load(f)
    assert export["format"] == "sdtune-records"
    from_host = export["exported_by"]["host"]
    predicted = run.tasks["Import, check mode"]["result"]
    real = run.tasks["Import"]["result"]
    assert [(r["key"], r["serial"]) for r in real["imported"]] == [
        (KEY, "S2BJNWAG300123")]
    assert real["imported"][0]["from_host"] == from_host
    # Check mode stored nothing and told what the import then did.
    for name in ("imported", "unchanged"):
        assert predicted[name] == real[name], name
    assert [s["key"] for s in predicted["skipped_records"]] == [
        s["key"] for s in real["skipped_records"]]
    again = run.tasks["Import again"]["result"]
    assert again["changed"] is False and again["imported"] == []
    assert [r["serial"] for r in again["unchanged"]] == ["S2BJNWAG300123"]
    predicted = run.tasks["Import again, check mode"]["result"]
    assert predicted["changed"] is False
    for name in ("imported", "unchanged"):
        assert predicted[name] == again[name], name


def test_check_mode_shows_the_diff_and_changes_nothing(run):
    check = run.tasks["Tune, check mode"]["result"]
    assert check["changed"] is True and check["dry_run"] is True
    assert check["journal_entry"] is None
    diff = check["diff"]["prepared"]
    # The imported record is what puts the Samsung SSD into sd.conf: its
    # pair, but no cache-nonvolatile, since the export is not signed
    # (an unsigned import is never evidence of a non-volatile cache).
    assert '+\t"%s", "disksort:false' % KEY in diff, diff
    assert "cache-nonvolatile" not in diff, diff
    assert '"%s", "disksort:false' % KEY in run.proc.stdout
    assert "cache-nonvolatile" not in run.proc.stdout
    slurped = run.plays[3]["tasks"][1]["result"]["content"]
    assert base64.b64decode(slurped) == run.original


def test_tune_then_nothing_to_do(run):
    tuned = run.tasks["Tune"]["result"]
    assert tuned["changed"] is True and tuned["dry_run"] is False
    assert tuned["journal_entry"]
    assert isinstance(tuned["reboot_required"], bool)
    again = run.tasks["Tune again"]["result"]
    assert again["changed"] is False and again["journal_entry"] is None
    info = run.tasks["Read what sdtune knows"]["result"]
    assert [(r["key"], r["serial"]) for r in info["records"]] == [
        (KEY, "S2BJNWAG300123")]
    states = {d["name"]: d["state"] for d in info["verify"]}
    assert states[DISK] in ("applied", "pending reboot")
    assert DISK in [d["name"] for d in info["disks"]]
    assert isinstance(info["findings"], list)


def test_rollback_restores_sd_conf_and_is_idempotent(run):
    tuned = run.tasks["Tune"]["result"]
    check = run.tasks["Roll back, check mode"]["result"]
    assert check["changed"] is True and check["dry_run"] is True
    assert check["journal_entry"] is None
    assert check["diff"]["prepared"].startswith("--- ")
    back = run.tasks["Roll back"]["result"]
    assert back["changed"] is True
    assert back["rolled_back"] == tuned["journal_entry"]
    again = run.tasks["Roll back again"]["result"]
    assert again["changed"] is False
    slurped = run.plays[6]["tasks"][3]["result"]["content"]
    assert base64.b64decode(slurped) == run.original
    assert read(run.fs02.sd_conf) == run.original


def test_a_failure_is_sdtunes_own_message(run, tmp_path):
    """A module that fails says what sdtune said, with its exit code."""
    playbook = os.path.join(str(tmp_path), "fail.yml")
    with open(playbook, "w") as f:
        f.write("- hosts: localhost\n  connection: local\n"
                "  gather_facts: false\n  environment: %s\n  tasks:\n"
                "    - sdtune.illumos.sdtune_records:\n"
                "        sdtune: %s\n        root: %s\n        config: %s\n"
                "        src: %s\n"
                % (json.dumps({"SDTUNE_PYTHON": sys.executable,
                               "SDTUNE_ZONENAME_CMD": "/nonexistent"}),
                   os.path.join(REPO, "bin", "sdtune"), run.fs02.root,
                   run.fs02.config, str(tmp_path / "missing.json")))
    proc, plays = play(run, playbook)
    assert proc.returncode == 2, proc.stdout
    task = plays[0]["tasks"][0]
    assert task["status"] == "failed"
    msg = task["result"]["msg"]
    assert msg.startswith("sdtune: cannot "), msg
    assert "'%s'" % (tmp_path / "missing.json") in msg
    assert "\n" not in msg and "Traceback" not in msg
    assert task["result"]["rc"] != 0


WRAPPER = """#!%s
# sdtune over --host, without an appliance across SSH: log the argv and
# the standard input, drop --host DEST and run the launcher here.
import json, os, sys
argv = sys.argv[1:]
data = sys.stdin.read()
with open(%r, "a") as f:
    f.write(json.dumps({"argv": argv, "stdin": data}) + "\\n")
i = argv.index("--host")
del argv[i:i + 2]
r, w = os.pipe()
os.write(w, data.encode())
os.close(w)
os.dup2(r, 0)
os.execv(%r, [%r] + argv)
"""


def test_host_mode_passes_host_and_the_file_on_stdin(run, tmp_path):
    """With `host`, the modules run sdtune --host DEST where the task is
    delegated, and sdtune_records gives the export file it read there on
    sdtune's standard input (files sdtune names are the appliance's)."""
    log = str(tmp_path / "calls.jsonl")
    launcher = os.path.join(REPO, "bin", "sdtune")
    wrapper = str(tmp_path / "sdtune-over-ssh")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % (sys.executable, log, launcher, launcher))
    os.chmod(wrapper, 0o755)
    playbook = str(tmp_path / "host.yml")
    with open(playbook, "w") as f:
        f.write("- hosts: localhost\n  connection: local\n"
                "  gather_facts: false\n  environment: %s\n"
                "  module_defaults:\n    group/sdtune.illumos.sdtune:\n"
                "      sdtune: %s\n      host: root@fs02\n"
                "      root: %s\n      config: %s\n  tasks:\n"
                "    - name: Import over SSH\n"
                "      sdtune.illumos.sdtune_records:\n        src: %s\n"
                "      delegate_to: localhost\n"
                "    - name: Info over SSH\n"
                "      sdtune.illumos.sdtune_info:\n"
                "      delegate_to: localhost\n"
                % (json.dumps({"SDTUNE_PYTHON": sys.executable,
                               "SDTUNE_ZONENAME_CMD": "/nonexistent"}),
                   wrapper, run.fs02.root, run.fs02.config, run.records))
    proc, plays = play(run, playbook)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert counts(plays[0]) == (2, 0)
    imported = plays[0]["tasks"][0]["result"]
    assert [r["serial"] for r in imported["unchanged"]] == ["S2BJNWAG300123"]
    with open(log) as f:
        calls = [json.loads(line) for line in f]
    assert calls[0]["argv"][:2] == ["--host", "root@fs02"]
    assert calls[0]["argv"][-4:] == ["--import", "-", "-o", "json"]
    assert calls[0]["stdin"] == read(run.records).decode()
    assert [c["argv"][6] for c in calls[1:]] == [
        "disks", "verify", "audit", "results"]
    assert all(c["argv"][:2] == ["--host", "root@fs02"] for c in calls)
