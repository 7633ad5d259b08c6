# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fault injection for sd.conf and nvme.conf transactions (`make
faults`, issues 5, 10, 15 and 18).

For `apply` and for `rollback` on the simulated appliance, first count the
write, fsync and rename system calls sdtune makes (strace, main process
only: the commands it runs are other programs), then run the same
transaction once per call and per fault, with strace's injection making
exactly that call fail with EIO or ENOSPC, killing the process with
SIGKILL at it, or interrupting it there with SIGINT (Ctrl-C) or SIGTERM
(see SIGNAL_CALLS).
Faults at the calls after sd.conf's rename are counted apart: they are
the state directory filling up (or failing) once sd.conf has changed.
Then helpers that exit without reading their input (SIGPIPE/EPIPE on
their stdin) during the transaction.  After every run:

* sd.conf is byte for byte the old file or the new one;
* every journal entry is readable;
* a run that failed (not killed) left the old file, or said that sd.conf
  WAS changed;
* an interrupted run (SIGINT at every fsync and rename, SIGTERM at
  every rename) exited 130 or 143 with one line that says whether a
  change is half done, as the journal then shows;
* the next sdtune command (`sdtune recover`) recovers: no transaction is
  left open, and the journal agrees with the file (done -> new file,
  undone/failed -> old file).

Then the same transactions over `sdtune --host` through a real sshd on
127.0.0.1, the SSH connection killed at the engine's steps, on the
server side (the engine killed) and on the client side (the local ssh
killed): tests/faults/remote.py.  The failed run must say one `sdtune:
cannot` line naming the host, and the same checks hold, with the next
command run here or over ssh.

Then the transactions that write several files and run the platforms'
steps: SmartOS booted from a USB key (the ramdisk's sd.conf, the boot
module and the loader lines on the key) and OmniOS (sd.conf, `bootadm
update-archive`, whose copy must end on the file's side; and bootadm
failing), and the same two for nvme.conf (`plan --driver nvme`, issue
18): tests/faults/platforms.py, sampled.  The local campaigns
(each transaction on its own appliance) and the platforms' run side by
side, two at a time; the remote ones run alone afterwards, since they
kill processes at moments they wait for.

Prints the counts: faults tried, survived.  Exit 1 on any failure.
Usage: python3 tests/faults/run_faults.py [--quick] [--every-step]
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.faults import platforms, remote  # noqa: E402
from tests import builders  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

SYSCALLS = ("write", "fsync", "rename")
FAULTS = ("error=EIO", "error=ENOSPC", "signal=KILL", "signal=INT",
          "signal=TERM")
INTERRUPTED = {"signal=INT": 130, "signal=TERM": 143}
# Ctrl-C at every fsync and rename, the ends of the transaction's phases
# (each journal update and the write of sd.conf); SIGTERM, which takes
# the same path, at the renames.  Every call between two of them is in
# the same phase.
SIGNAL_CALLS = {"signal=INT": ("fsync", "rename"),
                "signal=TERM": ("rename",)}
KEY = "ATA     INTEL SSDSC2BA40"


def env():
    return {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
            "SDTUNE_ZONENAME_CMD": "/nonexistent"}


def sdtune(app, args, strace=None):
    cmd = [os.path.join(REPO, "bin", "sdtune"), "-R", app.root, "--config",
           app.config, *args]
    if strace:
        cmd = ["strace", "-qq", "-o", "/dev/null", *strace, *cmd]
    return subprocess.run(cmd, env=env(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)


class Snapshot:
    """What a transaction may change, saved and put back in place; `conf`
    is the driver.conf it changes (sd.conf or nvme.conf)."""

    def __init__(self, app, conf="sd.conf"):
        self.app = app
        self.name = conf
        self.conf = os.path.join(app.root, "kernel", "drv", conf)
        self.state_dir = os.path.join(app.root, "var", "sdtune")
        self.sim_state = os.path.join(app.dir, "state.json")
        self.keep = tempfile.mkdtemp(prefix="faults-")
        shutil.copy2(self.conf, os.path.join(self.keep, self.name))
        shutil.copy2(self.sim_state, os.path.join(self.keep, "state.json"))
        shutil.copytree(self.state_dir, os.path.join(self.keep, "sdtune"))

    def restore(self):
        drv = os.path.dirname(self.conf)
        for name in os.listdir(drv):          # leftover temp files
            if name.startswith(".%s.sdtune." % self.name):
                os.unlink(os.path.join(drv, name))
        shutil.copy2(os.path.join(self.keep, self.name), self.conf)
        shutil.copy2(os.path.join(self.keep, "state.json"), self.sim_state)
        shutil.rmtree(self.state_dir)
        shutil.copytree(os.path.join(self.keep, "sdtune"), self.state_dir)

    def drop(self):
        shutil.rmtree(self.keep)


def count_calls(app, args, conf="sd.conf"):
    """Calls per kind, and per kind the first position that comes after
    the rename that replaced `conf`."""
    log = tempfile.mktemp(prefix="strace-")
    cmd = ["strace", "-qq", "-o", log, "-e", "trace=" + ",".join(SYSCALLS),
           os.path.join(REPO, "bin", "sdtune"), "-R", app.root, "--config",
           app.config, *args]
    subprocess.run(cmd, env=env(), capture_output=True,
                   stdin=subprocess.DEVNULL, check=True)
    counts = {s: 0 for s in SYSCALLS}
    after = {}
    renamed = False
    with open(log) as f:
        for line in f:
            m = re.match(r"^([a-z0-9_]+)\(", line)
            if m and m.group(1) in counts:
                counts[m.group(1)] += 1
                if renamed:
                    after.setdefault(m.group(1), counts[m.group(1)])
                if m.group(1) == "rename" and '/%s"' % conf in line:
                    renamed = True
    os.unlink(log)
    return counts, after


def read(path):
    with open(path, "rb") as f:
        return f.read()


def open_entries(app):
    jdir = os.path.join(app.root, "var", "sdtune", "journal")
    out = []
    for name in os.listdir(jdir) if os.path.isdir(jdir) else []:
        if name.endswith(".json"):
            doc = json.loads(read(os.path.join(jdir, name)))
            if doc["state"] in ("prepared", "written"):
                out.append(doc["id"])
    return out


def check_run(app, fault, proc, old, name="sd.conf"):
    """What the faulted run itself said; '' when it was right."""
    if "Traceback" in proc.stderr:
        return "traceback: %s" % proc.stderr.strip().splitlines()[-1]
    conf = read(os.path.join(app.root, "kernel", "drv", name))
    if fault in INTERRUPTED:
        if proc.returncode == 0:
            return ""       # the signal came after the last check point
        if proc.returncode != INTERRUPTED[fault]:
            return "interrupted run exited %d: %s" % (
                proc.returncode, proc.stderr.strip())
        lines = proc.stderr.strip().splitlines()
        said = lines[-1] if lines else ""
        half = open_entries(app)
        if half and not ("half done" in said and half[-1] in said):
            return "entry %s is open but the message says: %s" % (
                half[-1], said)
        if not half and \
                "no change to sd.conf or nvme.conf is half done" not in said:
            return "nothing is open but the message says: %s" % said
        return ""
    if fault.startswith("error=") and proc.returncode != 0 and \
            conf != old and "WAS changed" not in proc.stderr and \
            "shows what it changed" not in proc.stderr and \
            not open_entries(app):
        return "the run failed and left the new file without saying so: " \
            "%s" % proc.stderr.strip()
    return ""


def check(app, old, new, recover=None, name="sd.conf"):
    """The invariants after a faulted run; '' when they hold.  recover:
    runs the next command (default: `sdtune recover` on the appliance
    itself); name: the driver.conf the transaction changes."""
    conf = read(os.path.join(app.root, "kernel", "drv", name))
    if conf not in (old, new):
        return "%s is neither the old nor the new file" % name
    jdir = os.path.join(app.root, "var", "sdtune", "journal")
    for entry in os.listdir(jdir) if os.path.isdir(jdir) else []:
        if entry.endswith(".json"):
            try:
                json.loads(read(os.path.join(jdir, entry)))
            except ValueError:
                return "journal entry %s unreadable" % entry
    proc = recover() if recover else sdtune(app, ["recover"])
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        return "next run failed: %s" % proc.stderr.strip()
    entries = [json.loads(read(os.path.join(jdir, entry)))
               for entry in sorted(os.listdir(jdir))
               if entry.endswith(".json")] if os.path.isdir(jdir) else []
    conf = read(os.path.join(app.root, "kernel", "drv", name))
    if conf not in (old, new):
        return "after recovery %s is neither old nor new" % name
    if any(e["state"] in ("prepared", "written") for e in entries):
        return "a transaction is still open after recovery"
    last = entries[-1] if entries else None
    if last and last["state"] in ("done", "recovered") and \
            last["new_sha256"] != _sha(conf):
        return "journal says %s but %s is not its new file" % (
            last["state"], name)
    if last and last["state"] in ("undone", "failed") and conf != old:
        return "journal says %s but %s is not the old file" % (
            last["state"], name)
    return ""


def _sha(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


class Tally:
    """Faults tried and survived, per kind of fault."""

    def __init__(self):
        self.kinds = {}
        self.failures = []

    def add(self, kind, ok, failure=""):
        t, s = self.kinds.get(kind, (0, 0))
        self.kinds[kind] = (t + 1, s + ok)
        if not ok:
            self.failures.append(failure)

    @property
    def tried(self):
        return sum(t for t, _ in self.kinds.values())

    @property
    def survived(self):
        return sum(s for _, s in self.kinds.values())


def kind_of(syscall, fault, when, after):
    name = {"signal=INT": "Ctrl-C", "signal=TERM": "SIGTERM",
            "signal=KILL": "SIGKILL"}.get(fault, fault[len("error="):])
    if fault.startswith("error=") and syscall in after and \
            when >= after[syscall]:
        name += " after the rename"
    return name


def campaign(app, label, args, old, new, quick, name="sd.conf"):
    """Every fault at every call of one transaction that changes `name`
    (sd.conf or nvme.conf)."""
    snap = Snapshot(app, name)
    counts, after = count_calls(app, args, name)
    snap.restore()
    tally = Tally()
    outcome = {"ended old": 0, "ended new": 0, "run failed": 0}
    for syscall in SYSCALLS:
        n = counts[syscall]
        positions = range(1, n + 1)
        if quick:
            positions = sorted({1, (n + 1) // 2, n} - {0})
        for when in positions:
            for fault in FAULTS:
                if syscall not in SIGNAL_CALLS.get(fault, SYSCALLS):
                    continue
                spec = "inject=%s:%s:when=%d" % (syscall, fault, when)
                proc = sdtune(app, args, strace=["-e", spec])
                problem = check_run(app, fault, proc, old, name) or \
                    check(app, old, new, name=name)
                conf = read(os.path.join(app.root, "kernel", "drv", name))
                outcome["ended new" if conf == new else "ended old"] += 1
                outcome["run failed"] += proc.returncode != 0
                tally.add(kind_of(syscall, fault, when, after), not problem,
                          "%s %s: %s" % (label, spec, problem))
                snap.restore()
    helpers(app, label, args, old, new, snap, tally, name=name)
    snap.drop()
    return counts, tally, outcome


def helpers(app, label, args, old, new, snap, tally, runs=5,
            name="sd.conf"):
    """mdb that exits without reading the script sdtune writes to it
    (EPIPE on its stdin) during the transaction's verify: the helper has
    failed; sdtune must not die of SIGPIPE."""
    work = tempfile.mkdtemp(prefix="faults-helper-")
    try:
        mdb = os.path.join(work, "mdb")
        with open(mdb, "w") as f:
            f.write("#!/bin/sh\nexec 0<&-\necho 'mdb: failed to "
                    "initialize target' >&2\nexit 1\n")
        os.chmod(mdb, 0o755)
        config = os.path.join(work, "sdtune.conf")
        with open(app.config) as src, open(config, "w") as dst:
            for line in src:
                if line.split("=", 1)[0].strip() == "mdb":
                    line = "mdb = %s\n" % mdb
                dst.write(line)
        for _ in range(runs):
            cmd = [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
                   "--config", config, *args]
            proc = subprocess.run(cmd, env=env(), capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL)
            problem = ""
            if proc.returncode < 0 or proc.returncode > 4:
                problem = "exit %d: %s" % (proc.returncode,
                                           proc.stderr.strip())
            elif "Traceback" in proc.stderr:
                problem = "traceback"
            problem = problem or check(app, old, new, name=name)
            tally.add("SIGPIPE from mdb", not problem,
                      "%s helper: %s" % (label, problem))
            snap.restore()
    finally:
        shutil.rmtree(work)


def over_ssh(app, sshd, work, label, args, old, new, mode):
    """The remote campaign of one transaction (tests/faults/remote.py)."""
    return remote.campaign(app, sshd, work, label, args, old, new, mode,
                           env=env, check=check, snapshot=Snapshot,
                           tally=Tally)


def main() -> int:
    # The injected Ctrl-C must reach sdtune, which keeps SIGINT ignored
    # when started so (make faults as a script's background job): a
    # handled signal is reset to its default in every child.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true",
                    help="first, middle and last call of each kind only "
                    "(over ssh: the renames and the response after each)")
    ap.add_argument("--every-step", action="store_true",
                    help="over ssh: every step, each followed by a local "
                    "and a remote recover (slow)")
    a = ap.parse_args()
    mode = "every" if a.every_step else "quick" if a.quick else "default"
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="sdtune-faults-")
    sshd = None
    results, over, plat = [], [], []
    plat_s = 0.0
    not_run = remote.missing()
    try:
        # One appliance per transaction, so that the local campaigns and
        # the platforms' run side by side (the runs are other processes;
        # strace's injections do not depend on timing).
        apps = {label: Appliance.build("small-nexenta",
                                       os.path.join(work, label))
                for label in ("apply", "rollback")}
        for app in apps.values():
            builders.store_record(app.root, builders.cert_record(
                KEY, "S1", firmware="0270", nv_sup=True, recommended={
                    "physical-block-size": 4096, "throttle-max": 32}),
                "intel.json")
        plan = os.path.join(work, "plan.json")
        app = apps["apply"]
        assert sdtune(app, ["plan", "--save", plan]).returncode == 0
        old = read(os.path.join(app.root, "kernel", "drv", "sd.conf"))
        new = json.load(open(plan))["new_text"].encode("latin-1")
        # The rollback starts from the applied state: old and new swap
        # roles.
        assert sdtune(apps["rollback"], ["apply", plan, "--yes"]
                      ).returncode == 0
        transactions = [("apply", ["apply", plan, "--yes"], old, new),
                        ("rollback", ["rollback", "--last", "--yes"], new,
                         old)]
        t1 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            local = [pool.submit(campaign, apps[label], label, args,
                                 before, after, a.quick)
                     for label, args, before, after in transactions]
            on_platforms = pool.submit(platforms.run, work, a.quick, 1)
            results = [f.result() for f in local]
            plat = on_platforms.result()
        plat_s = time.monotonic() - t1
        if not not_run:
            # One real sshd on 127.0.0.1 for the whole remote campaign,
            # which runs alone: it kills processes at moments it waits
            # for.
            sshd = remote.Sshd(os.path.join(work, "sshd"))
            sshd.start()
            for label, args, before, after in transactions:
                over.append(over_ssh(apps[label], sshd, work, label, args,
                                     before, after, mode))
    finally:
        if sshd is not None:
            sshd.stop()
        shutil.rmtree(work)
    tallies = [r[1] for r in results] + [r.tally for r in over] + \
        [c.tally for c in plat]
    tried = sum(t.tried for t in tallies)
    survived = sum(t.survived for t in tallies)
    print("faults: %d injected, %d survived (%.0f s)" % (
        tried, survived, time.monotonic() - t0))
    for i, (label, (counts, tally, outcome)) in enumerate(
            zip(("apply", "rollback"), results)):
        calls = ", ".join("%s %d" % kv for kv in counts.items())
        print("  %-8s calls %s; %d faults, %d survived" % (
            label, calls, tally.tried, tally.survived))
        for kind, (t, s) in sorted(tally.kinds.items()):
            print("           %-28s %4d injected, %4d survived" % (kind, t,
                                                                   s))
        print("           the faulted run failed in %d; after recovery "
              "sd.conf was the old file %d times, the new file %d times"
              % (outcome["run failed"], outcome["ended old"],
                 outcome["ended new"]))
        if i < len(over):
            print("\n".join(over[i].lines()))
    print("  platforms: %d faults, %d survived (beside the local "
          "campaigns above: %.0f s for both)" % (
              sum(c.tally.tried for c in plat),
              sum(c.tally.survived for c in plat), plat_s))
    for c in plat:
        print("\n".join(c.lines()))
    if not_run:
        print("  FAILED over ssh: not run: " + not_run)
    for t in tallies:
        for failure in t.failures:
            print("  FAILED " + failure)
    return 0 if tried == survived and not not_run else 1


if __name__ == "__main__":
    sys.exit(main())
