"""Fault injection for sd.conf transactions (`make faults`, issue 5).

For `apply` and for `rollback` on the simulated appliance, first count the
write, fsync and rename system calls sdtune makes (strace, main process
only: the commands it runs are other programs), then run the same
transaction once per call and per fault, with strace's injection making
exactly that call fail with EIO or ENOSPC, or killing the process with
SIGKILL at it.  After every run:

* sd.conf is byte for byte the old file or the new one;
* every journal entry is readable;
* the next sdtune command (`sdtune history`) recovers: no transaction is
  left open, and the journal agrees with the file (done -> new file,
  undone/failed -> old file).

Prints the counts: faults tried, survived.  Exit 1 on any failure.
Usage: python3 tests/faults/run_faults.py [--quick]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402

SYSCALLS = ("write", "fsync", "rename")
FAULTS = ("error=EIO", "error=ENOSPC", "signal=KILL")
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
    """What a transaction may change, saved and put back in place."""

    def __init__(self, app):
        self.app = app
        self.conf = os.path.join(app.root, "kernel", "drv", "sd.conf")
        self.state_dir = os.path.join(app.root, "var", "sdtune")
        self.sim_state = os.path.join(app.dir, "state.json")
        self.keep = tempfile.mkdtemp(prefix="faults-")
        shutil.copy2(self.conf, os.path.join(self.keep, "sd.conf"))
        shutil.copy2(self.sim_state, os.path.join(self.keep, "state.json"))
        shutil.copytree(self.state_dir, os.path.join(self.keep, "sdtune"))

    def restore(self):
        drv = os.path.dirname(self.conf)
        for name in os.listdir(drv):          # leftover temp files
            if name.startswith(".sd.conf.sdtune."):
                os.unlink(os.path.join(drv, name))
        shutil.copy2(os.path.join(self.keep, "sd.conf"), self.conf)
        shutil.copy2(os.path.join(self.keep, "state.json"), self.sim_state)
        shutil.rmtree(self.state_dir)
        shutil.copytree(os.path.join(self.keep, "sdtune"), self.state_dir)

    def drop(self):
        shutil.rmtree(self.keep)


def count_calls(app, args):
    log = tempfile.mktemp(prefix="strace-")
    cmd = ["strace", "-qq", "-o", log, "-e", "trace=" + ",".join(SYSCALLS),
           os.path.join(REPO, "bin", "sdtune"), "-R", app.root, "--config",
           app.config, *args]
    subprocess.run(cmd, env=env(), capture_output=True,
                   stdin=subprocess.DEVNULL, check=True)
    counts = {s: 0 for s in SYSCALLS}
    with open(log) as f:
        for line in f:
            m = re.match(r"^([a-z0-9_]+)\(", line)
            if m and m.group(1) in counts:
                counts[m.group(1)] += 1
    os.unlink(log)
    return counts


def read(path):
    with open(path, "rb") as f:
        return f.read()


def check(app, old, new):
    """The invariants after a faulted run; '' when they hold."""
    conf = read(os.path.join(app.root, "kernel", "drv", "sd.conf"))
    if conf not in (old, new):
        return "sd.conf is neither the old nor the new file"
    jdir = os.path.join(app.root, "var", "sdtune", "journal")
    for name in os.listdir(jdir) if os.path.isdir(jdir) else []:
        if name.endswith(".json"):
            try:
                json.loads(read(os.path.join(jdir, name)))
            except ValueError:
                return "journal entry %s unreadable" % name
    proc = sdtune(app, ["history", "-o", "json"])
    if proc.returncode != 0:
        return "next run failed: %s" % proc.stderr.strip()
    entries = json.loads(proc.stdout)["entries"]
    conf = read(os.path.join(app.root, "kernel", "drv", "sd.conf"))
    if conf not in (old, new):
        return "after recovery sd.conf is neither old nor new"
    if any(e["state"] in ("prepared", "written") for e in entries):
        return "a transaction is still open after recovery"
    last = entries[-1] if entries else None
    if last and last["state"] in ("done", "recovered") and \
            last["new_sha256"] != _sha(conf):
        return "journal says %s but sd.conf is not its new file" % \
            last["state"]
    if last and last["state"] in ("undone", "failed") and conf != old:
        return "journal says %s but sd.conf is not the old file" % \
            last["state"]
    return ""


def _sha(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


def campaign(app, label, args, old, new, quick):
    snap = Snapshot(app)
    counts = count_calls(app, args)
    snap.restore()
    tried = survived = 0
    failures = []
    outcome = {"ended old": 0, "ended new": 0, "run failed": 0}
    for syscall in SYSCALLS:
        n = counts[syscall]
        positions = range(1, n + 1)
        if quick:
            positions = sorted({1, (n + 1) // 2, n} - {0})
        for when in positions:
            for fault in FAULTS:
                spec = "inject=%s:%s:when=%d" % (syscall, fault, when)
                rc = sdtune(app, args, strace=["-e", spec]).returncode
                tried += 1
                problem = check(app, old, new)
                conf = read(os.path.join(app.root, "kernel", "drv",
                                         "sd.conf"))
                outcome["ended new" if conf == new else "ended old"] += 1
                outcome["run failed"] += rc != 0
                if problem:
                    failures.append("%s %s: %s" % (label, spec, problem))
                else:
                    survived += 1
                snap.restore()
    snap.drop()
    return counts, tried, survived, failures, outcome


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true",
                    help="first, middle and last call of each kind only")
    a = ap.parse_args()
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="sdtune-faults-")
    try:
        app = Appliance.build("small-nexenta", os.path.join(work, "app"))
        cert = os.path.join(app.root, "var", "sdtune", "certify")
        os.makedirs(cert)
        with open(os.path.join(cert, "intel.json"), "w") as f:
            json.dump({"key": KEY, "serial": "S1", "firmware": "0270",
                       "time": 1.0, "recommended": {
                           "physical-block-size": 4096,
                           "throttle-max": 32},
                       "evidence": {"device": {"nv_sup": True}}}, f)
        plan = os.path.join(work, "plan.json")
        assert sdtune(app, ["plan", "-o", plan]).returncode == 0
        old = read(os.path.join(app.root, "kernel", "drv", "sd.conf"))
        new = json.load(open(plan))["new_text"].encode("latin-1")
        results = [campaign(app, "apply", ["apply", plan, "--yes"], old, new,
                            a.quick)]
        # Roll back from the applied state: old and new swap roles.
        assert sdtune(app, ["apply", plan, "--yes"]).returncode == 0
        results.append(campaign(app, "rollback",
                                ["rollback", "--last", "--yes"], new, old,
                                a.quick))
    finally:
        shutil.rmtree(work)
    tried = sum(r[1] for r in results)
    survived = sum(r[2] for r in results)
    print("faults: %d injected, %d survived (%.0f s)" % (
        tried, survived, time.monotonic() - t0))
    for label, (counts, t, s, _, outcome) in zip(("apply", "rollback"),
                                                 results):
        calls = ", ".join("%s %d" % kv for kv in counts.items())
        print("  %-8s calls %s; %d faults (EIO, ENOSPC, SIGKILL at each), "
              "%d survived" % (label, calls, t, s))
        print("           the faulted run failed in %d; after recovery "
              "sd.conf was the old file %d times, the new file %d times"
              % (outcome["run failed"], outcome["ended old"],
                 outcome["ended new"]))
    for r in results:
        for failure in r[3]:
            print("  FAILED " + failure)
    return 0 if tried == survived else 1


if __name__ == "__main__":
    sys.exit(main())
