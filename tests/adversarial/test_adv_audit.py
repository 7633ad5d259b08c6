# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Unknown is unsafe, for audit and verify (adversarial report W2, F4).

A source audit needs that failed -- zdb or zpool refusing to open
/dev/zfs, mdb, diskinfo or iostat failing, a [commands] path that is
missing, a directory or not executable -- must not end in the all-clear
and exit 0: audit exits 4, still prints what it could establish, and names
each unread source and what its loss means (stderr, and "unreadable" in
-o json).  verify says which disks it could not read and exits 4.  `audit
-x -o json` holds only the problems, as `audit -x` text does.

The scenario is U1's: two INTEL SSDSC2BA400G3 SSDs, one of them the only
vdev of pool `fast` with ashift 9, so that a healthy run finds SDT-1001.
"""

import copy
import json
import os

import pytest

from support import Appliance, config_with, no_traceback, run, script
from tests.sim.testing import INTEL, INTEL_KEY, facts_host

INTEL2 = dict(copy.deepcopy(INTEL), name="c0t55CD2E404C0D8D0Fd0",
              instance=2, phys_path="/scsi_vhci/disk@g55cd2e404c0d8d0f",
              serial="BTTV5095012Z400HGX")
INTEL2.pop("location")
FAST = {"name": "fast", "vdevs": [{"type": "disk", "ashift": 9,
                                   "disks": [INTEL["name"]]}]}
DISKS = sorted([INTEL["name"], INTEL2["name"]])
# The inventory commands audit and verify run, and each one's source names
# (Inventory.failed) when it cannot be run.  zdb runs only once zpool has
# listed pools.
COMMANDS = ("mdb", "diskinfo", "iostat", "zpool", "zdb")
SOURCES = {"mdb": {"mdb ::sd_state", "mdb inquiry"},
           "diskinfo": {"diskinfo"}, "iostat": {"iostat -En"},
           "zpool": {"zpool status"}, "zdb": {"zdb -C"}}
DENIED = "internal error: cannot open /dev/zfs: Permission denied"


def ashift9(tmp_path, pairs=()) -> Appliance:
    scenario = facts_host([INTEL, INTEL2], pools=[FAST], pairs=pairs)
    return Appliance.build(scenario, str(tmp_path / "app"))


def fail_cmd(tmp_path, name: str) -> str:
    """A command that fails as in U1.  It reads its stdin first, so that a
    failing mdb cannot kill sdtune with SIGPIPE (W1, not tested here)."""
    return script(str(tmp_path / ("fail-" + name)),
                  "cat >/dev/null\necho '%s' >&2\nexit 1" % DENIED)


def conf_failing(app, tmp_path, *names: str) -> str:
    return config_with(app, str(tmp_path / ("fail-%s.conf" % "-".join(names))),
                       **{n: fail_cmd(tmp_path, n) for n in names})


def audit_json(app, *args, config=None):
    proc = run(app, "audit", "-o", "json", *args, config=config)
    no_traceback(proc)
    return proc, json.loads(proc.stdout)


def unread(doc) -> dict:
    return {u["source"]: u for u in doc["unreadable"]}


def assert_incomplete(proc, sources) -> None:
    """Exit 4, no all-clear, and stderr names every source."""
    no_traceback(proc)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert "no problems found" not in proc.stdout, proc.stdout
    assert "no findings" not in proc.stdout, proc.stdout
    for source in sources:
        assert "could not read %s" % source in proc.stderr, proc.stderr


def test_W2_every_source_read_audit_exits_as_before(tmp_path):
    app = ashift9(tmp_path)
    proc, doc = audit_json(app)
    assert proc.returncode == 1, proc.stderr
    assert "SDT-1001" in {f["id"] for f in doc["findings"]}
    assert doc["unreadable"] == []
    assert "could not read" not in proc.stderr
    text = run(app, "audit", "-x")
    assert text.returncode == 1 and "SDT-1001" in text.stdout
    assert "audit incomplete" not in text.stdout


@pytest.mark.parametrize("names", [("zdb",), ("zpool",), ("zdb", "zpool")])
def test_W2_zfs_failing_audit_exits_4_not_all_clear(tmp_path, names):
    app = ashift9(tmp_path)
    conf = conf_failing(app, tmp_path, *names)
    # zdb runs only after zpool listed the pools: with zpool failing, zpool
    # is what could not be read.
    source = "zpool status" if "zpool" in names else "zdb -C"
    for args in (("audit", "-x"), ("audit",)):
        proc = run(app, *args, config=conf)
        assert_incomplete(proc, [source])
        assert "ashift unknown" in proc.stderr, proc.stderr
        assert DENIED in proc.stderr
        assert "audit incomplete: could not read %s" % source in proc.stdout
    proc, doc = audit_json(app, "-x", config=conf)
    assert proc.returncode == 4
    assert set(unread(doc)) == {source}
    entry = unread(doc)[source]
    assert DENIED in entry["reason"] and "vdev checks" in entry["effect"]
    assert list(entry) == ["source", "reason", "effect"]
    # The SDT-1001 it cannot see is not replaced by a false all-clear, and
    # the findings it could make are still there.
    assert "SDT-1001" not in {f["id"] for f in doc["findings"]}
    assert all(list(f) == ["id", "severity", "subject", "status", "action",
                           "see"] for f in doc["findings"])


@pytest.mark.parametrize("name", ["mdb", "diskinfo", "iostat"])
def test_W2_disk_source_failing_audit_exits_4(tmp_path, name):
    app = ashift9(tmp_path)
    conf = conf_failing(app, tmp_path, name)
    proc = run(app, "audit", "-x", config=conf)
    assert_incomplete(proc, sorted(SOURCES[name]))
    # Said once, as an error with its effect, not also as a warning.
    assert "warning: %s" % sorted(SOURCES[name])[0] not in proc.stderr
    proc, doc = audit_json(app, config=conf)
    assert proc.returncode == 4 and set(unread(doc)) == SOURCES[name]
    # zdb still worked: the ashift-9 vdev is still found.
    assert "SDT-1001" in {f["id"] for f in doc["findings"]}


def test_W2_failed_source_exit_4_wins_over_problems(tmp_path):
    app = ashift9(tmp_path, pairs=[(INTEL_KEY, "cache-nonvolatile:true")])
    conf = conf_failing(app, tmp_path, "zdb")
    proc = run(app, "audit", config=conf)
    assert_incomplete(proc, ["zdb -C"])
    assert "SDT-5001" in proc.stdout      # the problem it could establish
    proc, doc = audit_json(app, "-x", config=conf)
    assert proc.returncode == 4
    assert "SDT-5001" in {f["id"] for f in doc["findings"]}


@pytest.mark.parametrize("kind", ["missing", "directory", "not-executable"])
def test_W2_unrunnable_command_path_audit_exits_4(tmp_path, kind):
    app = ashift9(tmp_path)
    if kind == "missing":
        path = "/nonexistent/zpool"
    elif kind == "directory":
        path = str(tmp_path / "zpool.d")
        os.mkdir(path)
    else:
        path = str(tmp_path / "zpool.txt")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o644)
    conf = config_with(app, str(tmp_path / "z.conf"), zpool=path)
    proc, doc = audit_json(app, "-x", config=conf)
    assert_incomplete(proc, ["zpool status"])
    assert path in unread(doc)["zpool status"]["reason"]


def test_W2_every_command_missing_audit_exits_4(tmp_path):
    app = ashift9(tmp_path)
    conf = config_with(app, str(tmp_path / "none.conf"),
                       **{n: "/nonexistent" for n in COMMANDS})
    proc = run(app, "audit", "-x", config=conf)
    expected = set().union(*(SOURCES[n] for n in COMMANDS if n != "zdb"))
    assert_incomplete(proc, sorted(expected))
    proc, doc = audit_json(app, config=conf)
    assert proc.returncode == 4
    assert set(unread(doc)) == expected
    assert all("/nonexistent" in u["reason"] for u in doc["unreadable"])
    # Without any identity, "this pair matches no disk" would be a guess.
    assert "SDT-3001" not in {f["id"] for f in doc["findings"]}


def test_F4_audit_x_json_holds_only_problems(tmp_path):
    app = ashift9(tmp_path)
    _, full = audit_json(app)
    # The shipped VMware pair matches no disk here: an info finding.
    assert "info" in {f["severity"] for f in full["findings"]}
    proc, only = audit_json(app, "-x")
    assert proc.returncode == 1
    assert only["findings"] == [f for f in full["findings"]
                                if f["severity"] != "info"]
    assert only["findings"]


def test_F4_x_all_clear_only_when_nothing_failed(tmp_path):
    # No pool "fast": nothing but the info finding of the VMware pair.
    app = Appliance.build(facts_host([INTEL, INTEL2]), str(tmp_path / "app"))
    proc = run(app, "audit", "-x")
    assert proc.returncode == 0 and proc.stdout == "no problems found\n"
    proc, doc = audit_json(app, "-x")
    assert proc.returncode == 0 and doc == {"findings": [],
                                            "unreadable": []}
    conf = conf_failing(app, tmp_path, "zpool")
    proc = run(app, "audit", "-x", config=conf)
    assert_incomplete(proc, ["zpool status"])
    assert proc.stdout == "audit incomplete: could not read zpool status\n"


def verify_json(app, config=None):
    proc = run(app, "verify", "-o", "json", config=config)
    no_traceback(proc)
    return proc, {d["name"]: d for d in json.loads(proc.stdout)["disks"]}


def test_W2_verify_mdb_failing_names_the_disks_and_exits_4(tmp_path):
    app = ashift9(tmp_path)
    proc, disks = verify_json(app)
    assert proc.returncode == 0, proc.stderr
    assert sorted(disks) == DISKS
    healthy = {"applied", "not matched", "pending reboot"}
    assert {d["state"] for d in disks.values()} <= healthy
    conf = conf_failing(app, tmp_path, "mdb")
    proc, disks = verify_json(app, config=conf)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert sorted(disks) == DISKS
    for d in disks.values():
        assert d["state"] == "unknown", d
        assert d["details"].startswith("mdb ::sd_state failed: ")
        assert DENIED in d["details"]
    line = [s for s in proc.stderr.splitlines() if "cannot verify" in s]
    assert line and all(name in line[0] for name in DISKS), proc.stderr
    text = run(app, "verify", config=conf)
    assert text.returncode == 4
    assert text.stdout.count("unknown") == 2


def test_W2_verify_every_command_missing_exits_4(tmp_path):
    app = ashift9(tmp_path)
    conf = config_with(app, str(tmp_path / "none.conf"),
                       **{n: "/nonexistent" for n in COMMANDS})
    proc, disks = verify_json(app, config=conf)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert sorted(disks) == DISKS
    for d in disks.values():
        assert d["state"] == "unknown", d
        assert "mdb ::sd_state failed" in d["details"]
        assert "vendor and product unknown" in d["details"]
        assert "/nonexistent" in d["details"]
    assert "cannot verify" in proc.stderr


def test_W2_no_disk_names_verify_and_audit_exit_4(tmp_path):
    # Without /etc/path_to_inst no sd instance has a name: verify has no
    # disk to show, which must not read as "all fine".
    app = ashift9(tmp_path)
    os.unlink(os.path.join(app.root, "etc", "path_to_inst"))
    proc, disks = verify_json(app)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert disks == {}
    assert "cannot verify: device links failed: " in proc.stderr
    assert "path_to_inst" in proc.stderr
    proc, doc = audit_json(app, "-x")
    assert proc.returncode == 4
    assert set(unread(doc)) == {"device links"}
    assert "could not read device links" in proc.stderr
