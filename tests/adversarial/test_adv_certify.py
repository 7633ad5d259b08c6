# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Adversarial regressions of `sdtune certify` and `sdtune results`:
T8 (results of a file target's record), D6 (certify destroyed the
target before finding that its record could not be stored), U4 (the
in-use check looked at another path than the one written), W4 (absurd
--logical-block values) and F9 (a target named twice).

certify runs against a fake sdio (FAKE_SDIO) that logs every call, and
writes into the target like the real engine, so a test sees both whether
any I/O reached a target and whether its bytes changed, in a fraction of
a second; only the in-use queries (`sdio diskmgt`, which measure
nothing) go to the compiled engine.
"""

import hashlib
import json
import os
import re
import sys

import pytest

from tests.adversarial import support

FREE_DISK = "c0t58CE38EE2001A3B5d0"     # TOSHIBA PX04SMB040, not in use
ENGINE = os.path.join(support.REPO, "plugin", "engine", "sdio")

FAKE_SDIO = r'''#!%(python)s
"""sdio for the tests: logs its arguments; "scsi" queries get no answer
(a file is no SCSI device); every I/O run writes its block size at its
offset into the target, as a measurement would, and reports steady
intervals; `paired` does so for every arm, in the arm's stretch of the
region, and reports steady rounds."""
import json
import os
import sys

args = sys.argv[1:]
if args[:1] == ["diskmgt"]:
    # libdiskmgt's in-use answers: the real engine, not an I/O.
    os.execv(%(engine)r, [%(engine)r] + args)
with open(%(log)r, "a") as log:
    log.write(json.dumps(args) + "\n")
if args[:1] == ["scsi"]:
    sys.stderr.write("sdio: %%s: not a SCSI device\n" %% args[-1])
    sys.exit(4)
opt = {a: b for a, b in zip(args, args[1:]) if a.startswith("--")}
if args[:1] == ["paired"]:
    arms = [dict(kv.split("=") for kv in b.split(","))
            for a, b in zip(args, args[1:]) if a == "--arm"]
    sub = int(opt["--region"]) // len(arms)
    sub -= sub %% (1 << 20)
    with open(args[-1], "r+b") as target:
        for i, arm in enumerate(arms):
            target.seek(i * sub + int(arm["offset"]))
            target.write(b"\xa5" * int(arm["bs"]))
    cost = [40000.0 + 10.0 * int(a["bs"]) +
            (300000.0 if a["flush"] == "each" else 0.0) for a in arms]
    rounds = [{"index": r, "order": list(range(len(arms))),
               "slices": [{"arm": i, "ios": 8, "settle": 1,
                           "median_ns": c, "mean_ns": c}
                          for i, c in enumerate(cost)]}
              for r in range(int(opt["--rounds"]))]
    print(json.dumps({
        "version": 1, "mode": "paired",
        "arms": [{"index": i, "name": a["name"]}
                 for i, a in enumerate(arms)],
        "rounds": rounds, "errors": [], "elapsed_ns": 100000000,
        "stopped": "rounds"}))
    sys.exit(0)
bs, offset = int(opt["--bs"]), int(opt["--offset"])
with open(args[-1], "r+b") as target:
    target.seek(offset)
    target.write(b"\xa5" * bs)
lat = 40000.0 + 10.0 * bs
iv = {"ios": 100, "iops": 1e9 / lat, "lat_ns": {"mean": lat}}
print(json.dumps({
    "version": 1,
    "options": {"bs": bs, "qd": int(opt["--qd"]), "offset": offset,
                "flush": opt["--flush"], "pattern": opt["--pattern"]},
    "summary": {"ios": 600, "elapsed_ns": 600000000, "iops": 1e9 / lat,
                "lat_ns": {"mean": lat, "p99": int(lat)}},
    "intervals": [dict(iv, index=i) for i in range(6)],
    "errors": [], "stopped": "time"}))
'''


class Lab:
    """A simulated appliance whose sdtune.conf uses FAKE_SDIO and short
    certification steps, a scratch file target and the sdio log."""

    def __init__(self, tmp_path):
        self.app = support.build(tmp_path)
        self.log = str(tmp_path / "sdio.log")
        sdio = support.script(str(tmp_path / "sdio"), "")
        with open(sdio, "w") as f:
            f.write(FAKE_SDIO % {"python": sys.executable, "log": self.log,
                                 "engine": ENGINE})
        self.config = support.config_with(self.app, str(tmp_path / "c.conf"),
                                          sdio=sdio)
        with open(self.config, "a") as f:
            f.write("\n[certify]\ninterval_s = 0.01\nstep_max_s = 0.1\n"
                    "min_intervals = 2\nphases = sector,cache\n")
        self.target = str(tmp_path / "scratch.img")
        with open(self.target, "wb") as f:
            f.write(bytes(range(256)) * 256)          # not zeros
            f.truncate(64 << 20)                      # the smallest target
        self.state = os.path.join(self.app.root, "var", "sdtune")

    def sdtune(self, *args):
        return support.run(self.app, *args, config=self.config)

    def certify(self, *targets, extra=()):
        return self.sdtune("certify", *targets, "--confirm", *targets,
                           *extra)

    def sdio_calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def io_runs(self):
        """The engine runs that do I/O: not its SCSI queries, nor the
        version a record's origin names."""
        return [c for c in self.sdio_calls()
                if c[:1] not in (["scsi"], ["--version"])]

    def md5(self, path=None):
        with open(path or self.target, "rb") as f:
            return hashlib.md5(f.read()).hexdigest()

    def record_path(self, target):
        """Where certify stores the record of a file target (the file
        name rule of records/storage.py)."""
        safe = re.sub(r"[^A-Za-z0-9.-]+", "_", target.strip())
        return os.path.join(self.state, "certify", "path--%s.json" % safe)


@pytest.fixture
def lab(tmp_path):
    return Lab(tmp_path)


def refused_before_any_io(lab, proc, codes=(2, 3)):
    support.no_traceback(proc)
    assert proc.returncode in codes, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    assert lab.sdio_calls() == []


# ------------------------------------------------------------------ T8

def test_T8_results_with_file_target_record(lab):
    proc = lab.certify(lab.target)
    assert proc.returncode == 0, proc.stderr
    assert lab.io_runs(), "the certification measured nothing"
    with open(lab.record_path(lab.target)) as f:
        assert json.load(f)["key"] is None

    proc = lab.sdtune("results")
    support.no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""            # certify's own record is valid
    header, row = proc.stdout.splitlines()
    assert header.split()[0] == "KEY"
    assert row.split()[0] == "-" and row.split()[-1] == lab.target

    proc = lab.sdtune("results", "-H")
    support.no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    fields = proc.stdout.rstrip("\n").split("\t")
    assert fields[0] == "-" and fields[-1] == lab.target

    proc = lab.sdtune("results", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    (rec,) = json.loads(proc.stdout)["results"]
    assert rec["key"] is None and rec["target"] == lab.target


def test_T8_results_with_injected_keyless_record(tmp_path):
    app = support.build(tmp_path)
    support.inject_record(app, support.INTEL, {"physical-block-size": 4096})
    support.inject_record(app, None, {}, serial=None, firmware=None,
                          target="/lab/drive.img")
    for args in (["results"], ["results", "-H"]):
        proc = support.run(app, *args)
        support.no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert "/lab/drive.img" in proc.stdout
        assert support.INTEL in proc.stdout


# ------------------------------------------------------------------ D6

def test_D6_unstorable_record_refused_before_any_io(lab):
    """<root>/var/sdtune is a file: the records directory cannot exist."""
    os.makedirs(os.path.dirname(lab.state), exist_ok=True)
    if os.path.isdir(lab.state):
        os.rmdir(lab.state)
    with open(lab.state, "w") as f:
        f.write("not a directory\n")
    before = lab.md5()
    proc = lab.certify(lab.target)
    refused_before_any_io(lab, proc, codes=(3, 4))
    assert lab.state in proc.stderr, proc.stderr
    assert "nothing was written" in proc.stderr
    assert lab.md5() == before


def test_D6_unstorable_state_dir_in_config_refused(lab, tmp_path):
    """[paths] state_dir below a regular file (a copy of the config)."""
    blocker = os.path.join(lab.app.root, "blocker")
    with open(blocker, "w") as f:
        f.write("")
    with open(lab.config, "a") as f:
        f.write("\n[paths]\nstate_dir = /blocker/sdtune\n")
    before = lab.md5()
    proc = lab.certify(lab.target)
    refused_before_any_io(lab, proc, codes=(3, 4))
    assert blocker in proc.stderr, proc.stderr
    assert lab.md5() == before


@pytest.mark.parametrize("json_output", [False, True])
def test_D6_verdict_printed_when_storing_fails_after_measuring(
        lab, json_output):
    """The records directory is writable, but the record's own name is
    taken by a directory: storing fails only after the measurement."""
    os.makedirs(lab.record_path(lab.target))
    proc = lab.certify(lab.target,
                       extra=("-o", "json") if json_output else ())
    support.no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert lab.io_runs()
    assert lab.record_path(lab.target) in proc.stderr
    assert "not stored" in proc.stderr
    if json_output:
        (res,) = json.loads(proc.stdout)["results"]
        assert res["target"] == lab.target
    else:
        assert proc.stdout.startswith(lab.target + "\n")
        assert "  native sector: " in proc.stdout


# ------------------------------------------------------------------ U4

def test_U4_dotdot_target_refused_before_any_io(lab):
    proc = lab.certify("/dev/rdsk/../../etc/" + FREE_DISK)
    refused_before_any_io(lab, proc)
    assert "'..'" in proc.stderr
    # "//" and "." are harmless: the normalized /dev/rdsk path is both
    # the one checked and the one written.
    node = os.path.realpath(os.path.join(lab.app.root, "dev", "rdsk",
                                         FREE_DISK + "p0"))
    with open(node, "wb") as f:
        f.write(b"\0" * 65536)
    proc = lab.certify("/dev//rdsk/./%sp0" % FREE_DISK)
    assert proc.returncode == 0, proc.stderr
    written = {c[-1] for c in lab.io_runs()}
    assert written == {os.path.join(lab.app.root, "dev", "rdsk",
                                    FREE_DISK + "p0")}
    proc = lab.sdtune("results", "-o", "json")
    assert proc.stderr == ""            # certify's own record is valid
    (rec,) = json.loads(proc.stdout)["results"]
    assert rec["key"] == "TOSHIBA PX04SMB040      "


def test_U4_disk_name_outside_rdsk_is_not_that_disk(lab):
    """/dev/x/<free disk> is not checked as the free disk."""
    other = os.path.join(lab.app.root, "dev", "x")
    os.makedirs(other)
    with open(os.path.join(other, FREE_DISK), "wb") as f:
        f.write(b"\0" * 65536)
    proc = lab.certify("/dev/x/" + FREE_DISK)
    refused_before_any_io(lab, proc)


# ------------------------------------------------------------------ W4

def test_W4_logical_block_out_of_range(lab):
    """512 to 65536, powers of two; a good size still certifies."""
    before = lab.md5()
    for size in ("0", "-512", "256", "3000", "100000", "131072"):
        proc = lab.certify(lab.target, extra=("--logical-block=" + size,))
        refused_before_any_io(lab, proc, codes=(2,))
        assert "'--logical-block %s'" % size in proc.stderr
        assert lab.md5() == before
    proc = lab.certify(lab.target, extra=("--logical-block", "4096"))
    assert proc.returncode == 0, proc.stderr
    sizes = [int(kv[3:]) for c in lab.io_runs() for a in c
             for kv in a.split(",") if kv.startswith("bs=")]
    assert sizes and min(sizes) == 4096


# ------------------------------------------------------------------ F9

def test_F9_same_target_twice_certified_once(lab):
    proc = lab.sdtune("certify", lab.target, lab.target, "--confirm",
                      lab.target, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["results"]) == 1
    twice = lab.io_runs()
    os.remove(lab.log)
    assert lab.certify(lab.target).returncode == 0
    assert twice == lab.io_runs()


def test_F9_two_names_for_one_disk_refused(lab):
    proc = lab.certify(FREE_DISK, "/dev/rdsk/%ss0" % FREE_DISK)
    refused_before_any_io(lab, proc, codes=(2,))
    assert "same disk" in proc.stderr


def test_F9_two_names_for_one_file_refused(lab, tmp_path):
    link = str(tmp_path / "link.img")
    os.symlink(lab.target, link)
    before = lab.md5()
    proc = lab.certify(lab.target, link)
    refused_before_any_io(lab, proc, codes=(2,))
    assert "same file" in proc.stderr
    assert lab.md5() == before


@pytest.mark.parametrize("name", ["file", "disk"])
def test_F9_a_target_another_certify_holds_is_refused(lab, name):
    """Adversarial 2026-11-27, F9: a second certify of one target, while
    the first measures it, ran to the end and both verdicts came out
    wrong.  While another sdtune holds a target (here this test, through
    the very function certify uses), certify refuses it (exit 3) before
    any I/O, under any name for that disk."""
    from sdtune.certify.certifier import Target, targets_locked
    from sdtune.config import commands_for, load_config
    from sdtune.host import RealHost
    from sdtune.inventory.disks import take_inventory
    cfg = load_config(RealHost(), lab.config)
    host = RealHost(lab.app.root, commands_for(cfg),
                    libraries=dict(cfg.libraries))
    if name == "file":
        held, given = Target(lab.target, lab.target, None), lab.target
    else:
        disk = next(d for d in take_inventory(host).disks
                    if d.name == FREE_DISK)
        held = Target(FREE_DISK, "/dev/rdsk/%sp0" % FREE_DISK, disk)
        given = "/dev/rdsk/%ss0" % FREE_DISK
    with targets_locked(host, "/var/sdtune", [held]):
        proc = lab.certify(given)
    refused_before_any_io(lab, proc, codes=(3,))
    assert "another sdtune process is certifying it" in proc.stderr
    assert lab.certify(lab.target).returncode == 0      # free again


# ---------------------------------------------------- pure functions

def test_W4_logical_block_problem_range():
    from sdtune.certify.workload import logical_block_problem
    assert [n for n in (256, 511, 512, 1024, 3000, 4096, 65536, 131072)
            if logical_block_problem(n) is None] == [512, 1024, 4096, 65536]
