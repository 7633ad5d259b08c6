# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fault injection for the transactions that write several files and run
the platforms' steps (issue 15; `make faults`, called from
run_faults.main).

Two simulated appliances (tests/sim), each with a certification record
for its idle spare's key so that `plan --save` has a change:

* SmartOS booted from a USB key (scenario smartos-usb): a change writes
  the ramdisk's /kernel/drv/sd.conf, the boot module on the key
  (/mnt/usbkey/boot/bootfs/kernel/drv/sd.conf, absent before the first
  apply) and the loader lines (/mnt/usbkey/boot/loader.conf.local,
  absent before), then runs `update_drv -vf sd`; rolling it back
  rewrites sd.conf and removes the other two.
* OmniOS (scenario omnios): /kernel/drv/sd.conf, then `bootadm
  update-archive`, then `update_drv -vf sd`.
* The same two for nvme.conf (issue 18; scenarios nvme-4k-smartos and
  nvme-4k, a certification record of the NVMe model, `plan --driver
  nvme`): /kernel/drv/nvme.conf, its boot module and the loader lines on
  the key, then `update_drv -vf nvme`; on OmniOS nvme.conf, `bootadm
  update-archive`, `update_drv -vf nvme`.  These take the --quick
  sample always: the transaction, journal and recovery code is the one
  the sd.conf campaigns fault at every step; what differs is the files
  and the driver, whose renames and removals the quick sample covers
  (and bootadm failing), in a third of the time CI would otherwise add.

For `apply` and for `rollback --last` (after a clean apply) the
transaction is first run once under strace to list its write, fsync,
rename and unlink calls with the paths they name; then it is run once
per sampled call and fault, strace making that call fail with EIO or
ENOSPC, killing sdtune there (SIGKILL) or interrupting it (SIGINT,
SIGTERM).  The sample (every position would take too long for CI):
every rename of a tracked file or of the journal entry and every
removal of a tracked file, with SIGKILL and EIO; the directory sync
right after each tracked file's rename, with EIO and Ctrl-C; SIGTERM at
the first tracked file's rename; the first, middle and last write with
ENOSPC and the middle one with SIGKILL.  --quick: the tracked files'
renames and removals only (and the SIGTERM).

After every faulted run, each tracked file is its old or its new
contents (absent counts as a side), every journal entry is readable, and
the run exited as it must (SIGKILL: killed; SIGINT/SIGTERM: 130/143 or
finished, with the line run_faults checks; an error at a file's or the
journal's rename, removal or sync: exit 4; at a write: 0, 4, or 3 (a
refusal) with every file old).  Then `sdtune recover`
exits 0 and leaves no entry open, and EITHER every file is old (no new
entry, or the new one is undone/failed) OR every file is new (done or
recovered).  On OmniOS the boot archive's copy of /kernel/drv/sd.conf
then equals the root's file: the archive never keeps the other side.
Files, the simulator's state.json (the archive, the kernel's lists) and
the state directory are put back between runs.

OmniOS also runs apply and rollback with `bootadm update-archive`
failing: exit 4, every file and the archive old, the entry "undone".
"""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

from tests import builders
from tests.faults import run_faults as rf
from tests.sim.appliance import Appliance

SYSCALLS = ("write", "fsync", "rename", "unlink")
SD_CONF = "/kernel/drv/sd.conf"
NVME_CONF = "/kernel/drv/nvme.conf"
LOADER = "/mnt/usbkey/boot/loader.conf.local"
# (scenario, driver, the files a change writes (the driver's .conf
# first), whether the platform boots from a boot archive, whether the
# campaign always takes the --quick sample)
PLATFORMS = (
    ("smartos-usb", "sd",
     (SD_CONF, "/mnt/usbkey/boot/bootfs/kernel/drv/sd.conf", LOADER), False,
     False),
    ("omnios", "sd", (SD_CONF,), True, False),
    ("nvme-4k-smartos", "nvme",
     (NVME_CONF, "/mnt/usbkey/boot/bootfs/kernel/drv/nvme.conf", LOADER),
     False, True),
    ("nvme-4k", "nvme", (NVME_CONF,), True, True),
)
FAULT_NAME = {"error=EIO": "EIO", "error=ENOSPC": "ENOSPC",
              "signal=KILL": "SIGKILL", "signal=INT": "Ctrl-C",
              "signal=TERM": "SIGTERM"}
_ENTRY = re.compile(r"/journal/[0-9]{6}\.json$")
SAMPLED = {
    False: "sampled: every rename of a file or of the journal entry and "
           "every removal (SIGKILL, EIO), the directory sync after each "
           "file's rename (EIO, Ctrl-C), SIGTERM at the first file's "
           "rename, the first, middle and last write (ENOSPC; SIGKILL at "
           "the middle)",
    True: "--quick: the files' renames and removals (SIGKILL, EIO), "
          "SIGTERM at the first"}


def read_or_none(path: str) -> Optional[bytes]:
    return rf.read(path) if os.path.lexists(path) else None


class Snapshot:
    """The tracked files (absent ones too), the directories on their way
    that exist, the simulator's state.json and sdtune's state directory,
    saved and put back in place."""

    def __init__(self, app: Appliance, files: Sequence[str]) -> None:
        self.app = app
        self.real = [app.root + p for p in files]
        self.keep = tempfile.mkdtemp(prefix="faults-platform-")
        self.data = [read_or_none(p) for p in self.real]
        for i, (path, data) in enumerate(zip(self.real, self.data)):
            if data is not None:
                shutil.copy2(path, os.path.join(self.keep, "file%d" % i))
        self.dirs = {d for d in self._parents() if os.path.isdir(d)}
        self.sim_state = os.path.join(app.dir, "state.json")
        self.state_dir = os.path.join(app.root, "var", "sdtune")
        shutil.copy2(self.sim_state, os.path.join(self.keep, "state.json"))
        shutil.copytree(self.state_dir, os.path.join(self.keep, "sdtune"))

    def _parents(self) -> List[str]:
        """Every directory between the root and a tracked file, deepest
        first."""
        out = set()
        for path in self.real:
            d = os.path.dirname(path)
            while len(d) > len(self.app.root):
                out.add(d)
                d = os.path.dirname(d)
        return sorted(out, key=len, reverse=True)

    def restore(self) -> None:
        for i, (path, data) in enumerate(zip(self.real, self.data)):
            drv, base = os.path.split(path)
            if os.path.isdir(drv):
                for name in os.listdir(drv):      # leftover temp files
                    if name.startswith("." + base + ".sdtune."):
                        os.unlink(os.path.join(drv, name))
            if data is None:
                if os.path.lexists(path):
                    os.unlink(path)
            else:
                os.makedirs(drv, exist_ok=True)
                shutil.copy2(os.path.join(self.keep, "file%d" % i), path)
        for d in self._parents():           # made by the run: not there
            if d not in self.dirs and os.path.isdir(d):
                shutil.rmtree(d)
        shutil.copy2(os.path.join(self.keep, "state.json"), self.sim_state)
        shutil.rmtree(self.state_dir)
        shutil.copytree(os.path.join(self.keep, "sdtune"), self.state_dir)

    def drop(self) -> None:
        shutil.rmtree(self.keep)


def files_now(app: Appliance, files: Sequence[str]) -> List[Optional[bytes]]:
    return [read_or_none(app.root + p) for p in files]


def entries(app: Appliance) -> Dict[str, dict]:
    """Journal entries by id (ValueError: one is unreadable)."""
    jdir = os.path.join(app.root, "var", "sdtune", "journal")
    out = {}
    for name in sorted(os.listdir(jdir)) if os.path.isdir(jdir) else []:
        if name.endswith(".json"):
            try:
                doc = json.loads(rf.read(os.path.join(jdir, name)))
            except ValueError:
                raise ValueError("journal entry %s unreadable" % name)
            out[doc["id"]] = doc
    return out


# ---------------------------------------------------------------- calls

Call = Tuple[str, int, str]


def trace(app: Appliance, args: Sequence[str]) -> List[Call]:
    """The transaction's calls, in order: (syscall, its position among
    the calls of that kind, the path it names or '')."""
    fd, log = tempfile.mkstemp(prefix="strace-")
    os.close(fd)
    try:
        proc = rf.sdtune(app, args, strace=["-o", log, "-e",
                                            "trace=" + ",".join(SYSCALLS)])
        if proc.returncode != 0:
            raise AssertionError("unfaulted %s failed: %s"
                                 % (" ".join(args), proc.stderr))
        counts = {s: 0 for s in SYSCALLS}
        calls = []
        with open(log, errors="replace") as f:
            for line in f:
                m = re.match(r"^([a-z0-9_]+)\((.*)$", line)
                if not m or m.group(1) not in counts:
                    continue
                counts[m.group(1)] += 1
                paths = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
                path = ""
                if m.group(1) == "rename" and len(paths) >= 2:
                    path = paths[1]
                elif m.group(1) == "unlink" and paths:
                    path = paths[0]
                calls.append((m.group(1), counts[m.group(1)], path))
    finally:
        os.unlink(log)
    return calls


def sample(calls: List[Call], tracked: Sequence[str],
           quick: bool) -> List[Tuple[str, int, str, str]]:
    """(syscall, position, fault, what) to inject, in call order."""
    out = []
    first = True
    for i, (syscall, n, path) in enumerate(calls):
        is_file = path in tracked
        if syscall in ("rename", "unlink") and is_file:
            what = "a file's rename" if syscall == "rename" else \
                "a file's removal"
            out += [(syscall, n, f, what)
                    for f in ("signal=KILL", "error=EIO")]
            if first and syscall == "rename":
                out.append((syscall, n, "signal=TERM", what))
                first = False
            if quick or syscall != "rename":
                continue
            # The sync of the file's directory: failing there leaves the
            # file new although the write "failed".
            nxt = next((c for c in calls[i + 1:] if c[0] == "fsync"), None)
            if nxt is not None:
                out += [("fsync", nxt[1], f, "the sync after a file's "
                         "rename") for f in ("error=EIO", "signal=INT")]
        elif syscall == "rename" and not quick and _ENTRY.search(path):
            out += [(syscall, n, f, "the journal entry's rename")
                    for f in ("signal=KILL", "error=EIO")]
    if not quick:
        writes = [n for s, n, _ in calls if s == "write"]
        if writes:
            picks = sorted({writes[0], writes[len(writes) // 2],
                            writes[-1]})
            out += [("write", n, "error=ENOSPC", "a write") for n in picks]
            out.append(("write", writes[len(writes) // 2], "signal=KILL",
                        "a write"))
    return out


# ---------------------------------------------------------------- checks

def side(cur: List[Optional[bytes]], old: List[Optional[bytes]],
         new: List[Optional[bytes]]) -> str:
    """'old', 'new', 'mixed', or the first file that is neither."""
    if cur == old:
        return "old"
    if cur == new:
        return "new"
    for i, (c, o, n) in enumerate(zip(cur, old, new)):
        if c not in (o, n):
            return "neither:%d" % i
    return "mixed"


def check_run(app: Appliance, files: Sequence[str], old, new, fault: str,
              strict: bool, proc: subprocess.CompletedProcess) -> str:
    """What the faulted run left and said; '' when it was right.
    strict: the fault hit a file's or the journal's rename, removal or
    sync, which the run cannot complete after."""
    if "Traceback" in proc.stderr:
        return "traceback: %s" % proc.stderr.strip().splitlines()[-1]
    cur = files_now(app, files)
    where = side(cur, old, new)
    if where.startswith("neither"):
        return "%s is neither its old nor its new contents" % \
            files[int(where.split(":")[1])]
    try:
        entries(app)
    except ValueError as e:
        return str(e)
    if fault in rf.INTERRUPTED:
        return rf.check_run(app, fault, proc, b"")
    if fault == "signal=KILL":
        return "" if proc.returncode == -9 else \
            "SIGKILL but the run exited %d" % proc.returncode
    # A failed write before the change (the mdb script sdtune pipes to
    # mdb, which the plan is checked with) may be a refusal: exit 3, and
    # then nothing may have changed.
    if proc.returncode not in (0, 3, 4) or \
            (strict and proc.returncode != 4) or \
            (proc.returncode == 3 and where != "old"):
        return "the run exited %d leaving the files %s: %s" % (
            proc.returncode, where, proc.stderr.strip())
    if proc.returncode and where != "old" and \
            "WAS changed" not in proc.stderr and \
            "shows what it changed" not in proc.stderr and \
            not rf.open_entries(app):
        return "the run failed and left the files %s without saying so: " \
            "%s" % (where, proc.stderr.strip())
    return ""


def archive_side(app: Appliance, files: Sequence[str],
                 cur: List[Optional[bytes]]) -> str:
    """'' when the boot archive's copy of the driver's .conf (files[0])
    is the root's; else why."""
    copy = app.archive().get(files[0])
    data = None if copy is None else copy.encode("latin-1")
    return "" if data == cur[0] else \
        "the boot archive's %s is not the root's file" % files[0]


def check_recovered(app: Appliance, files: Sequence[str], old, new,
                    before: Sequence[str], archive: bool) -> Tuple[str, str]:
    """Run `sdtune recover` and check the result: (problem or '', the
    side the files ended on)."""
    proc = rf.sdtune(app, ["recover"])
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        return "recover exited %d: %s" % (proc.returncode,
                                          proc.stderr.strip()), ""
    try:
        docs = entries(app)
    except ValueError as e:
        return str(e), ""
    cur = files_now(app, files)
    where = side(cur, old, new)
    if where not in ("old", "new"):
        return "after recovery the files are %s" % where, where
    opened = [i for i, d in docs.items() if d["state"] in ("prepared",
                                                           "written")]
    if opened:
        return "entry %s still open after recovery" % opened[0], where
    made = sorted(set(docs) - set(before))
    state = docs[made[-1]]["state"] if made else None
    if state in ("done", "recovered") and where != "new":
        return "entry %s is %s but the files are old" % (made[-1],
                                                         state), where
    if state not in ("done", "recovered") and where != "old":
        return "the files are new but the entry is %s" % state, where
    if state not in (None, "done", "recovered", "undone", "failed"):
        return "entry %s is %s" % (made[-1], state), where
    if archive:
        return archive_side(app, files, cur), where
    return "", where


# ---------------------------------------------------------------- runs

class Campaign:
    """One transaction's faulted runs on one platform, and what they
    showed."""

    def __init__(self, scenario: str, label: str, quick: bool) -> None:
        self.scenario = scenario
        self.label = label
        self.quick = quick
        self.tally = rf.Tally()
        self.counts = {s: 0 for s in SYSCALLS}
        self.outcome = {"old": 0, "new": 0, "run failed": 0}
        self.extra: List[str] = []

    def lines(self) -> List[str]:
        calls = ", ".join("%s %d" % kv for kv in self.counts.items())
        out = ["  %s %s: calls %s; %s" % (self.scenario, self.label, calls,
                                          SAMPLED[self.quick]),
               "           %d faults, %d survived" % (self.tally.tried,
                                                      self.tally.survived)]
        for kind, (t, s) in sorted(self.tally.kinds.items()):
            out.append("           %-40s %4d injected, %4d survived"
                       % (kind, t, s))
        out.append("           the faulted run failed in %d; after recovery"
                   " every file was old %d times, new %d times"
                   % (self.outcome["run failed"], self.outcome["old"],
                      self.outcome["new"]))
        return out + self.extra


def campaign(app: Appliance, files: Sequence[str], archive: bool,
             label: str, args: Sequence[str], old, new, snap: Snapshot,
             quick: bool) -> Campaign:
    c = Campaign(os.path.basename(app.dir), label, quick)
    before = list(entries(app))
    calls = trace(app, args)
    for s, _, _ in calls:
        c.counts[s] += 1
    # The unfaulted run is the oracle's own check of `new`.
    if files_now(app, files) != new:
        c.tally.add("unfaulted run", False, "%s %s: the unfaulted run did "
                    "not leave the expected files" % (c.scenario, label))
    snap.restore()
    real = [app.root + p for p in files]
    for syscall, n, fault, what in sample(calls, real, quick):
        spec = "inject=%s:%s:when=%d" % (syscall, fault, n)
        proc = rf.sdtune(app, args, strace=["-e", spec])
        strict = what != "a write"
        problem = check_run(app, files, old, new, fault, strict, proc)
        where = ""
        if not problem:
            problem, where = check_recovered(app, files, old, new, before,
                                             archive)
        c.outcome["run failed"] += proc.returncode != 0
        if where in ("old", "new"):
            c.outcome[where] += 1
        c.tally.add("%s at %s" % (FAULT_NAME[fault], what), not problem,
                    "%s %s strace -e %s: %s" % (c.scenario, label, spec,
                                                problem))
        snap.restore()
    return c


def bootadm_fails(app: Appliance, files: Sequence[str], c: Campaign,
                  args: Sequence[str], old, snap: Snapshot) -> None:
    """The transaction with `bootadm update-archive` failing: exit 4,
    every file and the archive as before, the new entry "undone"."""
    before = list(entries(app))
    app.set_bootadm_fail(True)
    proc = rf.sdtune(app, args)
    cur = files_now(app, files)
    docs = entries(app)
    made = sorted(set(docs) - set(before))
    problem = ""
    if proc.returncode != 4 or "Traceback" in proc.stderr:
        problem = "exit %d: %s" % (proc.returncode, proc.stderr.strip())
    elif cur != old:
        problem = "the files are %s" % side(cur, old, old)
    elif not made or docs[made[-1]]["state"] != "undone":
        problem = "the entry is %s" % (docs[made[-1]]["state"] if made
                                       else "missing")
    else:
        problem = archive_side(app, files, cur)
    c.tally.add("bootadm fails", not problem, "%s %s with bootadm failing: "
                "%s" % (c.scenario, c.label, problem))
    c.extra.append("           with bootadm update-archive failing: %s"
                   % ("exit 4, files and archive old, entry undone"
                      if not problem else "FAILED"))
    snap.restore()


def inject_record(app: Appliance, driver: str) -> str:
    """A certification record for the scenario's idle disk (what `sdtune
    certify` would store): its key (sd), or its model (nvme: a record
    of an NVMe namespace has no key, it names driver and model)."""
    disk = next(d for d in app.expected_disks()
                if d["driver"] == ("sd" if driver == "sd" else "blkdev")
                and not d["busy"])
    fields: dict = dict(recommended={"physical-block-size": 4096,
                                     "throttle-max": 24})
    model = None
    if driver == "nvme":
        model = next(d["model"] for d in app.state()["scenario"]["disks"]
                     if d["name"] == disk["name"])
        fields = dict(driver="blkdev", model=model, native=4096,
                      recommended={"min-phys-block-size": 4096})
    builders.store_record(app.root, builders.cert_record(
        disk["key"], disk["serial"], firmware=disk["firmware"], nv_sup=True,
        **fields), "spare.json")
    return disk["key"] if driver == "sd" else model


def platform(work: str, scenario: str, driver: str, files: Sequence[str],
             archive: bool, quick: bool) -> List[Campaign]:
    """Both campaigns of one driver's .conf on one platform's
    appliance."""
    app = Appliance.build(scenario, os.path.join(work, scenario))
    key = inject_record(app, driver)
    plan = os.path.join(work, scenario + "-plan.json")
    # tank, on a namespace of the NVMe model, has ashift 9.
    allow = ["--allow-ashift-mismatch"] if driver == "nvme" else []
    proc = rf.sdtune(app, ["plan", "--driver", driver, "--save", plan]
                     + allow)
    with open(plan) as f:
        doc = json.load(f)
    # The record's key is a change (other known drives may be too).
    assert proc.returncode == 0 and key in [c["key"] for c in
                                            doc["changes"]], \
        (proc.stdout, proc.stderr)
    # A saved plan names its driver: apply takes it from there.
    apply_args = ["apply", plan, "--yes"] + allow
    before = files_now(app, files)
    pristine = Snapshot(app, files)
    proc = rf.sdtune(app, apply_args)
    assert proc.returncode == 0, proc.stderr
    after = files_now(app, files)
    assert all(a != b for a, b in zip(before, after)), \
        "%s: the apply did not change every file" % scenario
    applied = Snapshot(app, files)
    out = []
    try:
        pristine.restore()
        c = campaign(app, files, archive, "apply", apply_args,
                     before, after, pristine, quick)
        if archive:
            bootadm_fails(app, files, c, apply_args, before, pristine)
        out.append(c)
        applied.restore()
        # From the applied state: old and new swap roles.
        args = ["rollback", "--last", "--yes"]
        c = campaign(app, files, archive, "rollback", args, after, before,
                     applied, quick)
        if archive:
            bootadm_fails(app, files, c, args, after, applied)
        out.append(c)
    finally:
        pristine.drop()
        applied.drop()
    return out


def run(work: str, quick: bool, jobs: int = 2) -> List[Campaign]:
    """Every platform's campaigns, `jobs` platforms at a time (each on
    its own appliance: the runs are other processes, so threads
    suffice)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(platform, work, name, driver, files,
                               archive, quick or always_quick)
                   for name, driver, files, archive, always_quick
                   in PLATFORMS]
        return [c for f in futures for c in f.result()]
