# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The power-cut check for real (issue 30): `sdtune --host DEST powercut`
through a real OpenSSH server on 127.0.0.1 to the simulated appliance,
whose disk is an emulated drive with a durable image (sdemu.c
durability=).  The witness (sdtune, the controller) logs every write and
flush the engine reports; the test cuts the appliance's power at a
random moment, as a PDU would:

* every process of the appliance's sessions (sshd's, the engine's
  server, the engine) is frozen at once (SIGSTOP), so that none of them
  says anything more;
* the drive loses its power (its volatile cache is gone);
* the appliance boots (a new boot time) and the drive comes back with
  what was durable;
* the frozen processes are killed: the link drops.

sdtune sees the link drop, waits for the boot, reads the blocks back
and says the verdict, which must be the right one for the drive's kind
and for what the log holds at the cut, every time:

    nonvolatile     honest capacitors: nothing lost, both claims pass
    volatile        honest flushes: the flush check passes, the
                    non-volatile claim fails with lost writes
    lie_flush       flushes that make nothing durable: the flush check
                    fails
    lie_nv          NV_SUP and a "non-volatile" cache that is not: the
                    non-volatile claim fails, and plan then holds
                    cache-nonvolatile back even with
                    --allow-no-nv-evidence

A claim the cut did not test (no flush logged yet; every write flushed
when it came) is "nothing to check", never a pass.  Then: a cut before
any write; the controller killed and started again mid-run, its log
intact and the run resumed; the refusal without --host."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "plugin"))

from sdtune.certify.powercut import parse_log, split_lines  # noqa: E402
from tests.builders import cert_record, store_record  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

pytestmark = [pytest.mark.emu, pytest.mark.sshd]

CUTS = 10
SEED = 3030
SIZE = 64 << 20
DISK = "c5t0d0"
# Per kind: the drive's cache and sdemu parameters, and NV_SUP.  The
# liars' caches hold the whole region, so nothing is written back.
KINDS = {
    "nonvolatile": ("nonvolatile", {}, True),
    "volatile": ("volatile", {}, False),
    "lie_flush": ("volatile", {"durability": "lie_flush",
                               "cache_pages": 8192}, False),
    "lie_nv": ("nonvolatile", {"durability": "lie_nv",
                               "cache_pages": 8192}, True),
}
# How long a step may take before the test says so.
STEP_S = 60.0


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """One real sshd on 127.0.0.1 for the module (tests/ssh/sshd.py)."""
    from tests.ssh.sshd import Sshd
    with Sshd(str(tmp_path_factory.mktemp("sshd"))) as server:
        yield server


def scenario_disk(path, nv_sup, serial):
    return {"name": DISK, "instance": 0,
            "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@0,0",
            "ctype": "sata", "ata_model": "EMU SSD %s" % serial,
            "rev": "1.00", "serial": serial, "blocks": SIZE // 512,
            "logical_block": 512, "lbppbe": 3, "rotation_rate": 1,
            "nv_sup": nv_sup, "device_file": path}


class Lab:
    """The appliance, its drive and sshd, and the witness's directory."""

    def __init__(self, tmp_path, sshd, drive, nv_sup, serial):
        self.sshd = sshd
        self.drive = drive
        self.app = Appliance.build(
            {"name": "emulated", "flavour": "nexenta", "hostname": "lab",
             "sd_conf": "nexenta", "pools": [],
             "disks": [scenario_disk(drive.path, nv_sup, serial)]},
            str(tmp_path / "app"))
        self.witness = str(tmp_path / "witness")
        self.config = sshd.sdtune_config(self.app.config,
                                         str(tmp_path / "remote.conf"))
        with open(self.config, "a") as f:
            f.write("\n[powercut]\nwitness_dir = %s\nseconds = 120\n"
                    "wait = 60\nflush_every_ms = 50\nnotice_ms = 250\n"
                    % self.witness)

    def start(self, *extra):
        # The logs of the cycles before: a new cycle's is the one more.
        self.before = set(self.logs())
        argv, env = self.app.sdtune_argv(
            "--host", self.sshd.alias, "powercut", DISK, "--confirm", DISK,
            "-o", "json", *extra, config=self.config)
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def sdtune(self, *args):
        return self.app.sdtune("--host", self.sshd.alias, *args,
                               config=self.config)

    def logs(self):
        if not os.path.isdir(self.witness):
            return []
        return sorted(os.path.join(self.witness, n)
                      for n in os.listdir(self.witness)
                      if n.endswith(".log"))

    def log_lines(self, path):
        with open(path, "rb") as f:
            lines, _ = split_lines(b"", f.read())
        return lines

    def wait_for_writes(self, proc, n, log=None):
        """Until the witness has logged at least n writes in LOG (by
        default the log of the cycle started last); its path."""
        deadline = time.monotonic() + STEP_S
        while True:
            logs = [log] if log else sorted(set(self.logs()) - self.before)
            if logs and sum(1 for ln in self.log_lines(logs[0])
                            if ln.startswith("w ")) >= n:
                return logs[0]
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no %d writes logged" % n
            time.sleep(0.002)

    def engine_pids(self):
        """The engine's writer: the process whose command line is
        `sdio powercut write`."""
        pids = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % name, "rb") as f:
                    words = f.read().split(b"\0")
            except OSError:
                continue
            if words[1:3] == [b"powercut", b"write"]:
                pids.append(int(name))
        return pids

    def cut(self):
        """The appliance's power cut (see the module docstring)."""
        frozen = self.engine_pids()
        sessions = self.sshd.session_pids()
        for pid in frozen + sessions:
            os.kill(pid, signal.SIGSTOP)
        self.at_cut = self.drive.cut_power()
        # A boot takes longer than a second: its boot time is new.
        boot = int(time.time())
        while int(time.time()) == boot:
            time.sleep(0.01)
        self.app.reboot(clean=False)
        self.drive.power_on()
        for pid in frozen:
            os.kill(pid, signal.SIGKILL)
        self.sshd.kill_sessions(signal.SIGKILL, sessions)


def expected(kind, lines):
    """The verdicts the log at the cut allows: a set of (flush,
    nonvolatile) pairs, one unless the cut came in a flush's notice."""
    log = parse_log(lines, "log")
    if log is None or not log.completed:
        return {("nothing to check", "nothing to check")}
    flush = {"nonvolatile": "passed", "volatile": "passed",
             "lie_flush": "failed", "lie_nv": "failed"}[kind]
    if not log.flushed:
        flush = "nothing to check"
    # Writes no flush, completed or only announced, may have covered.
    tested = any(seq > max(log.flushed, log.noticed)
                 for seq in log.completed)
    if kind == "nonvolatile":
        nv = {"passed" if tested else "nothing to check"}
    elif kind == "volatile" and not tested:
        # The announced flush ran (nothing left to lose) or the cut
        # came first (the writes it would have flushed are lost).
        nv = {"nothing to check", "failed"}
    else:
        # Unflushed writes in a volatile cache, or a liar, which loses
        # everything in its cache, flushed or not.
        nv = {"failed"}
    return {(flush, v) for v in nv}


def cut_once(lab, rng, kind):
    """One cycle, cut after a random number of logged writes; the
    verdict checked against the log as it stood at the cut."""
    proc = lab.start()
    log = lab.wait_for_writes(proc, rng.randint(1, 200))
    lab.cut()
    at_cut = lab.log_lines(log)
    out, err = proc.communicate(timeout=STEP_S * 2)
    assert proc.returncode in (0, 1, 4), err
    doc = json.loads(out)
    cut = doc["power_cut"]
    # The log the verdict used is the log at the cut, or longer by the
    # lines that were on their way.
    final = lab.log_lines(log)
    assert final[:len(at_cut)] == at_cut
    want = expected(kind, final)
    got = (cut["flush"]["status"], cut["nonvolatile"]["status"])
    c = lab.at_cut
    assert got in want, (kind, err, cut, final[-12:], "dirty %d lost_pages "
                         "%d writes %d flushes %d" % (
                             c.dirty, c.lost_pages, c.writes, c.flushes))
    if got[1] == "failed" and kind in ("volatile", "lie_nv"):
        assert cut["nonvolatile"]["lost"] > 0
    if "failed" not in got:
        assert cut["flush"]["lost"] == 0 and cut["nonvolatile"]["lost"] == 0
    assert proc.returncode == (1 if "failed" in got else
                               0 if "passed" in got else 4)
    assert "CUT THE POWER" in err and "link dropped" in err
    return got


def certified_nonvolatile(lab, serial):
    """The record certify leaves for a drive that reports NV_SUP and
    flushes cheaply (as lie_nv does): cache-nonvolatile recommended.
    The power-cut check adds its cuts to this record."""
    key = "ATA     " + ("EMU SSD %s" % serial).ljust(16)
    store_record(lab.app.root, cert_record(
        key, serial, firmware="1.00", when=time.time(), target=DISK,
        device="/dev/rdsk/%sp0" % DISK, cache="nonvolatile", nv_sup=True,
        recommended={"cache-nonvolatile": True}))


def plan_json(lab):
    proc = lab.sdtune("plan", "--allow-no-nv-evidence", "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("kind", list(KINDS))
def test_ten_random_cuts_each_verdict_right(tmp_path, sshd, emulated_drive,
                                            kind):
    cache, extra, nv_sup = KINDS[kind]
    drive = emulated_drive("512e", cache, durable=True, size=SIZE, **extra)
    serial = "PC%04d" % list(KINDS).index(kind)
    lab = Lab(tmp_path, sshd, drive, nv_sup, serial)
    if kind == "lie_nv":
        certified_nonvolatile(lab, serial)
        assert "cache-nonvolatile:true" in plan_json(lab)["diff"]
    rng = random.Random(SEED + list(KINDS).index(kind))
    seen = [cut_once(lab, rng, kind) for _ in range(CUTS)]
    # The record keeps every cycle.
    listed = json.loads(lab.sdtune("results", "-o", "json").stdout)
    cuts = listed["results"][0]["power_cuts"]
    assert [(c["flush"]["status"], c["nonvolatile"]["status"])
            for c in cuts] == seen
    # Each kind shows what makes it that kind at least once.
    if kind == "volatile":
        assert ("passed", "failed") in seen
    elif kind == "nonvolatile":
        assert ("passed", "passed") in seen
    else:
        assert any("failed" in s for s in seen)
    if kind == "lie_nv":
        # NV_SUP, cheap flushes and a certification say non-volatile;
        # the witnessed cut says otherwise, and no option overrides it.
        plan = plan_json(lab)
        assert "cache-nonvolatile" not in json.dumps(plan["changes"])
        assert "cache-nonvolatile:true" not in plan["diff"]
        held = [h["reason"] for h in plan["held"]]
        assert any("power-cut check failed" in h and "no override" in h
                   for h in held), held


def wait_for(what, ready, timeout=STEP_S):
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_cut_before_any_write_has_nothing_to_check(tmp_path, sshd,
                                                     emulated_drive):
    drive = emulated_drive("512e", "volatile", durable=True, size=SIZE)
    lab = Lab(tmp_path, sshd, drive, False, "PC0100")
    # The engine's writer waits before its first line: the cut comes
    # while the cycle is set up and nothing is written.
    lab.app.hold_powercut(60)
    proc = lab.start()
    wait_for("the cycle begun", lambda: lab.logs())
    time.sleep(0.5)
    lab.cut()
    out, err = proc.communicate(timeout=STEP_S)
    assert proc.returncode == 4, err
    cut = json.loads(out)["power_cut"]
    assert (cut["flush"]["status"], cut["nonvolatile"]["status"]) == (
        "nothing to check", "nothing to check"), cut
    assert cut["flush"]["acknowledged"] == 0
    assert lab.log_lines(lab.logs()[0]) == []
    assert drive.counters().writes == 0


def test_the_log_survives_the_controller_killed_and_the_run_resumes(
        tmp_path, sshd, emulated_drive):
    """The controller is killed mid-run: its log holds every line it
    took, whole (each made durable before the next was read), and the
    same command started again resumes the run (the appliance did not
    boot), numbering its writes above the stopped engine's; the cut
    then gets the verdict of the whole log."""
    drive = emulated_drive("512e", "volatile", durable=True, size=SIZE)
    lab = Lab(tmp_path, sshd, drive, False, "PC0200")
    proc = lab.start()
    log = lab.wait_for_writes(proc, 200)
    proc.kill()
    proc.communicate()
    with open(log, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n")
    before = lab.log_lines(log)
    first = parse_log(before, "log")
    assert len(first.completed) >= 200
    # The killed controller's ssh goes, its session there, the engine.
    wait_for("the engine gone", lambda: not lab.engine_pids())
    wait_for("the session gone", lambda: not lab.sshd.session_pids())
    again = lab.start()
    wait_for("the run resumed", lambda: sum(
        1 for ln in lab.log_lines(log) if ln.startswith("run ")) == 2 and
        lab.log_lines(log)[-1].startswith("w "))
    lab.wait_for_writes(again, len(first.completed) + 50, log)
    lab.cut()
    out, err = again.communicate(timeout=STEP_S * 2)
    assert "resuming" in err, err
    final = lab.log_lines(log)
    assert final[:len(before)] == before
    whole = parse_log(final, "log")
    assert min(s for s in whole.completed if s not in first.completed) > \
        max(first.completed)
    cut = json.loads(out)["power_cut"]
    assert cut["run"] == first.run
    assert (cut["flush"]["status"], cut["nonvolatile"]["status"]) in \
        expected("volatile", final), (err, cut)
    assert cut["nonvolatile"]["acknowledged"] == len(whole.completed)
