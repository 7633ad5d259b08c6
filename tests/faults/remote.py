# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The SSH connection killed at every step of a remote apply and rollback
(`make faults`; run by run_faults.py, which passes its checks in).

`sdtune --host appliance CMD` drives the simulated appliance over one
real OpenSSH session (tests/ssh/sshd.py, 127.0.0.1 only), in which the
engine (`sdio serve`, plugin/engine/serve_*.c) does every file access, the
lock, sd.conf's replace and every command.  The appliance's `[commands]
sdio` is a wrapper script that runs `sdio serve` under strace as the run
at hand asks (without -f: the engine alone, not the commands it runs)
and writes the pid of that strace to a file; every other use of sdio
runs the engine plainly.  ssh itself is the real client and server.

Steps: one traced run of the transaction lists, in order, the engine's
write calls to fd 1 (its responses, one or more calls each) and its
fsync and rename calls.  Then the transaction runs once per chosen step
and way of dying:

* ssh server killed: strace gives the engine SIGKILL at that call, on
  its entry (the call is not made); sshd sees its command die and the
  client its connection close.
* ssh client killed: strace stops the engine at that call (SIGSTOP; a
  response write first fails with EINTR, which the engine retries, so
  that response is not sent yet; an fsync or rename is made first); once
  strace's log says so, the local /usr/bin/ssh, the child of the sdtune
  process, gets SIGKILL; when it is gone the engine is let go on
  (SIGCONT): it finishes what it was doing and finds its client gone.

strace's log of each run must show the injection at a call of the kind
counted (a response write to fd 1, or the fsync or rename), or the run
counts as failed: the engine's calls are the same in every run, so a
miss is a harness error.  Every wait is bounded; an engine still running
GONE_S after its run is killed and counted as a failure.

After each run: a command that failed said exactly one `sdtune: cannot
...` line naming the host, without traceback; then the checks of the
local campaign (run_faults.check): sd.conf is the old or the new file
byte for byte, every journal entry is readable, and the next command,
`sdtune recover`, leaves no open transaction and a journal that agrees
with the file.  That next command runs on the appliance itself after
every other step and over ssh after the others, the other way round for
the other way of dying, so that each step is followed by both.

Sampling (deterministic, printed): about 80 steps per transaction and
two ways of dying do not fit the time of `make faults`, and most of them
are alike (answers to reads between two replaces change nothing on the
appliance).  The steps run are, per replace, its rename and, for the
server, the answer after it (the file changed, the client never hears
it) or, for the client, the fsync before it (the client is gone before
the engine renames); and the first answer, the last one before the
first rename and the last one.  --quick: the renames and those three answers;
--every-step: every step, each followed by both recoveries (slow).
"""

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tests.ssh.sshd import (SSH, SSH_KEYGEN, SSHD, Sshd,  # noqa: E402
                            kill_quietly, proc_stat, wait_gone)

STRACE = "/usr/bin/strace"
# Calls listed by the counting run; write only to fd 1.
COUNTED = ("write", "fsync", "fdatasync", "rename", "renameat", "renameat2")
RUN_S = 180.0           # one sdtune command
STOP_S = 60.0           # the engine reaching the step of a client kill
GONE_S = 20.0           # a killed process, or the engine after its run
POLL_S = 0.02
KINDS = ("ssh server killed", "ssh client killed")
RECOVERIES = ("local", "remote")


def missing() -> str:
    """Why the campaign cannot run here, '' when it can."""
    gone = [p for p in (SSHD, SSH, SSH_KEYGEN, STRACE)
            if not os.access(p, os.X_OK)]
    return "missing %s (tests/deps.sh installs them)" % ", ".join(gone) \
        if gone else ""


# -- processes ------------------------------------------------------------

def _children(pid: int) -> List[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st[0] != "Z" and int(st[1]) == pid:
                out.append(int(name))
    return out


def _argv0(pid: int) -> str:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def _kill_tree(pid: int) -> None:
    """SIGKILL pid and its descendants (children first found, bounded)."""
    todo, seen = [pid], set()
    while todo and len(seen) < 1000:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(_children(p))
    for p in seen:
        kill_quietly(p, signal.SIGKILL)
    wait_gone(list(seen), GONE_S, POLL_S)


# -- the appliance over ssh ------------------------------------------------

class Remote:
    """The appliance's sdtune.conf for --host, with its engine wrapped."""

    def __init__(self, app, sshd: Sshd, work: str,
                 env: Callable[[], Dict[str, str]]) -> None:
        self.app = app
        self.sshd = sshd
        self.env = env
        self.wrapper = os.path.join(work, "sdio-wrapper")
        self.pidfile = os.path.join(work, "serve.pid")
        self.log = os.path.join(work, "serve.strace")
        with open(app.config) as f:
            text = f.read()
        self.engine = re.search(r"(?m)^sdio = (.*)$", text).group(1).strip()
        self.config = os.path.join(work, "remote.conf")
        with open(self.config, "w") as f:
            f.write(re.sub(r"(?m)^sdio = .*$", "sdio = " + self.wrapper,
                           text))
            f.write("\n[ssh]\noptions = -F %s\n" % sshd.config_path)
        self.trace(None)

    def trace(self, strace_args: Optional[Sequence[str]]) -> None:
        """`sdio serve` from now on runs under strace with these
        arguments (None: plainly)."""
        q = shlex.quote
        run = q(self.engine)
        if strace_args is not None:
            run = " ".join([STRACE] + [q(a) for a in strace_args] + [run])
        text = ("#!/bin/sh\n"
                "# The engine of the simulated appliance, for faults.\n"
                "if [ \"$1\" = serve ]; then\n"
                "\techo $$ > %s\n"
                "\texec %s \"$@\"\n"
                "fi\n"
                "exec %s \"$@\"\n" % (q(self.pidfile), run, q(self.engine)))
        tmp = self.wrapper + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, self.wrapper)
        for path in (self.log, self.pidfile):
            if os.path.exists(path):
                os.unlink(path)

    def start(self, args: Sequence[str]) -> subprocess.Popen:
        cmd = [os.path.join(REPO, "bin", "sdtune"), "--host",
               self.sshd.alias, "-R", self.app.root, "--config",
               self.config, *args]
        return subprocess.Popen(cmd, env=self.env(), text=True,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def finish(self, proc: subprocess.Popen) -> Tuple[str, str, str]:
        """(stdout, stderr, problem) once proc ended (bounded), and the
        engine of its session is gone (bounded)."""
        problem = ""
        try:
            out, err = proc.communicate(timeout=RUN_S)
        except subprocess.TimeoutExpired:
            _kill_tree(proc.pid)
            out, err = proc.communicate(timeout=GONE_S)
            problem = "sdtune did not end within %.0f s" % RUN_S
        return out, err, problem or self.engine_gone()

    def engine_gone(self) -> str:
        """'' once the last session's engine (and its strace) ended;
        after GONE_S it is killed and that is the problem returned."""
        try:
            with open(self.pidfile) as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            return ""
        os.unlink(self.pidfile)
        if not pid or wait_gone([pid], GONE_S, POLL_S):
            return ""
        _kill_tree(pid)
        return "the engine still ran %.0f s after its session" % GONE_S

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess:
        proc = self.start(args)
        out, err, problem = self.finish(proc)
        if problem:
            err += "\n" + problem
        return subprocess.CompletedProcess(proc.args, proc.returncode, out,
                                           err)

    def strace_log(self) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def engine_pid(self) -> Optional[int]:
        """The engine under the strace the wrapper started."""
        try:
            with open(self.pidfile) as f:
                tracer = int(f.read().strip() or 0)
        except (OSError, ValueError):
            return None
        kids = _children(tracer) if tracer else []
        return kids[0] if kids else None


# -- steps ----------------------------------------------------------------

def count_steps(remote: Remote, args: Sequence[str]) -> List[Tuple[str, int]]:
    """(call, N): the N-th call of that name by the engine, for each
    response write to fd 1 and each fsync and rename, in order."""
    remote.trace(["-qq", "-o", remote.log, "-e",
                  "trace=" + ",".join(COUNTED)])
    proc = remote.run(args)
    log = remote.strace_log()
    remote.trace(None)
    if proc.returncode != 0:
        raise RuntimeError("the counting run of %s failed: %s"
                           % (" ".join(args), proc.stderr.strip()))
    if not log.strip():
        # A campaign of no step would pass without trying anything.
        raise RuntimeError("the counting run of %s traced no engine call "
                           "(is sdio serve the wrapper's own process?)"
                           % " ".join(args))
    seen: Dict[str, int] = {}
    steps = []
    for line in log.splitlines():
        m = re.match(r"^([a-z0-9_]+)\((\d*)", line)
        if not m or m.group(1) not in COUNTED:
            continue
        call = m.group(1)
        seen[call] = seen.get(call, 0) + 1
        if call != "write" or m.group(2) == "1":
            steps.append((call, seen[call]))
    return steps


def choose(steps: Sequence[Tuple[str, int]], mode: str,
           kind: int) -> List[int]:
    """Indices of the steps to run for KINDS[kind] (see the module
    docstring)."""
    if mode == "every":
        return list(range(len(steps)))
    writes = [i for i, (call, _) in enumerate(steps) if call == "write"]
    renames = [i for i, (call, _) in enumerate(steps)
               if call.startswith("rename")]
    pick = set(writes[:1] + writes[-1:])
    if renames:
        # The last answer before anything is written.
        pick.update([i for i in writes if i < renames[0]][-1:])
    for r in renames:
        after = [i for i in writes if i > r][:1]
        before = [r - 1] if r and steps[r - 1][0].endswith("sync") else []
        if mode == "quick":
            pick.add(r)
        elif kind == 0:
            pick.update([r] + after)
        else:
            pick.update(before + [r])
    return sorted(pick)


def describe(steps: Sequence[Tuple[str, int]]) -> str:
    names = {}
    for call, _ in steps:
        name = "write(1)" if call == "write" else call
        names[name] = names.get(name, 0) + 1
    return ", ".join("%s %d" % kv for kv in names.items())


# -- one run ---------------------------------------------------------------

def fired(log: str, call: str, how: str) -> str:
    """'' when strace's log shows the injection at a call of the chosen
    kind (a write to fd 1 for a write step)."""
    lines = log.splitlines()
    mark = "+++ killed by SIGKILL" if how == "kill" else "--- SIGSTOP"
    for i, line in enumerate(lines):
        if line.startswith(mark):
            calls = [ln for ln in lines[:i] if ln.startswith(call + "(")]
            if not calls:
                return "no %s before the injected signal" % call
            if call == "write" and not calls[-1].startswith("write(1,"):
                return "the injection hit another write: " + calls[-1][:60]
            return ""
    return "the engine never reached the step (strace injected nothing)"


def kill_server(remote: Remote, args: Sequence[str], call: str,
                n: int) -> Tuple[subprocess.CompletedProcess, str]:
    remote.trace(["-q", "-o", remote.log, "-e", "trace=" + call, "-e",
                  "inject=%s:signal=KILL:when=%d" % (call, n)])
    proc = remote.start(args)
    out, err, problem = remote.finish(proc)
    problem = problem or fired(remote.strace_log(), call, "kill")
    remote.trace(None)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out,
                                       err), problem


def _ssh_client(pid: int) -> Optional[int]:
    for kid in _children(pid):
        if _argv0(kid) == SSH:
            return kid
    return None


def kill_client(remote: Remote, args: Sequence[str], call: str,
                n: int) -> Tuple[subprocess.CompletedProcess, str]:
    how = "error=EINTR:signal=STOP" if call == "write" else "signal=STOP"
    remote.trace(["-q", "-o", remote.log, "-e", "trace=" + call, "-e",
                  "inject=%s:%s:when=%d" % (call, how, n)])
    proc = remote.start(args)
    problem = ""
    deadline = time.monotonic() + STOP_S
    while "--- stopped by SIGSTOP" not in remote.strace_log():
        if proc.poll() is not None:
            problem = "sdtune ended before the engine reached the step"
            break
        if time.monotonic() > deadline:
            problem = "the engine did not reach the step in %.0f s" % STOP_S
            break
        time.sleep(POLL_S)
    if not problem:
        client = _ssh_client(proc.pid)
        engine = remote.engine_pid()
        if client is None or engine is None:
            problem = "no %s to kill" % ("ssh client" if client is None
                                         else "engine")
        else:
            kill_quietly(client, signal.SIGKILL)
            if not wait_gone([client], GONE_S, POLL_S):
                problem = "the ssh client survived SIGKILL"
        if engine is not None:
            kill_quietly(engine, signal.SIGCONT)
    out, err, late = remote.finish(proc)
    problem = problem or late or fired(remote.strace_log(), call, "stop")
    remote.trace(None)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out,
                                       err), problem


def said(proc: subprocess.CompletedProcess, alias: str) -> str:
    """'' when the killed run said the right thing: nothing wrong when it
    succeeded (the kill came after the last answer it needed), else one
    `sdtune: cannot` line naming the host."""
    if "Traceback" in proc.stderr:
        return "traceback: %s" % proc.stderr.strip().splitlines()[-1]
    if proc.returncode == 0:
        return ""
    lines = proc.stderr.strip().splitlines()
    if proc.returncode < 0 or len(lines) != 1 or \
            not lines[0].startswith("sdtune: cannot ") or \
            alias not in lines[0]:
        return "exit %d, not one 'sdtune: cannot' line naming %s: %r" % (
            proc.returncode, alias, proc.stderr.strip()[:400])
    return ""


# -- the campaign ----------------------------------------------------------

class Result:
    """What campaign() did for one transaction."""

    def __init__(self, label: str, steps: List[Tuple[str, int]],
                 mode: str, tally) -> None:
        self.label = label
        self.steps = steps
        self.mode = mode
        self.tally = tally
        self.runs = {kind: 0 for kind in KINDS}
        self.outcome = {"ended old": 0, "ended new": 0, "run failed": 0,
                        "local": 0, "remote": 0}

    def lines(self) -> List[str]:
        sampled = {
            "every": "every step, each followed by both recoveries",
            "quick": "--quick: the renames, the first and last answer",
            "default": "sampled: each rename, the call before it (fsync, "
                       "client) or the answer after it (server), the "
                       "first answer and the last before and after the "
                       "writes; --every-step runs all"}[self.mode]
        out = ["  %-8s over ssh: engine calls %s (%d steps); %s"
               % (self.label, describe(self.steps), len(self.steps),
                  sampled)]
        for kind in KINDS:
            t, s = self.tally.kinds.get(kind, (0, 0))
            out.append("           %-28s %4d injected, %4d survived"
                       % (kind, t, s))
        o = self.outcome
        out.append("           the killed run failed in %d; next command: "
                   "recover %d times here, %d times over ssh; after it "
                   "sd.conf was the old file %d times, the new file %d "
                   "times" % (o["run failed"], o["local"], o["remote"],
                              o["ended old"], o["ended new"]))
        return out


def one_run(app, remote: Remote, args: Sequence[str], old: bytes,
            new: bytes, kind: int, call: str, n: int, how: str,
            check) -> Tuple[str, int, bytes]:
    """Kill the session at call #n, then check; (problems, exit status of
    the killed run, sd.conf after recovery)."""
    kill = kill_server if kind == 0 else kill_client
    proc, problem = kill(remote, args, call, n)
    problems = [problem, said(proc, remote.sshd.alias)]
    problems.append(check(app, old, new, recover=None if how == "local"
                          else lambda: remote.run(["recover"])))
    problems.append(remote.engine_gone())
    with open(os.path.join(app.root, "kernel", "drv", "sd.conf"),
              "rb") as f:
        conf = f.read()
    return "; ".join(p for p in problems if p), proc.returncode, conf


def campaign(app, sshd: Sshd, work: str, label: str, args: Sequence[str],
             old: bytes, new: bytes, mode: str, *, env, check, snapshot,
             tally) -> Result:
    """Every chosen step of `args` over ssh, killed both ways.  check,
    snapshot, tally: run_faults' check(), Snapshot and Tally."""
    remote = Remote(app, sshd, work, env)
    snap = snapshot(app)
    try:
        steps = count_steps(remote, args)
        snap.restore()
        result = Result(label, steps, mode, tally())
        for k, kind in enumerate(KINDS):
            for j, i in enumerate(choose(steps, mode, k)):
                call, n = steps[i]
                # Each step is followed by a local recover after one kind
                # of kill and by a remote one after the other.
                hows = RECOVERIES if mode == "every" else \
                    (RECOVERIES[(j + k) % 2],)
                for how in hows:
                    problem, code, conf = one_run(app, remote, args, old,
                                                  new, k, call, n, how,
                                                  check)
                    o = result.outcome
                    o["ended new" if conf == new else "ended old"] += 1
                    o["run failed"] += code != 0
                    o[how] += 1
                    result.runs[kind] += 1
                    result.tally.add(
                        kind, not problem, "%s over ssh, %s at %s #%d "
                        "(step %d of %d), then recover %s: %s"
                        % (label, kind, call, n, i + 1, len(steps),
                           "here" if how == "local" else "over ssh",
                           problem))
                    snap.restore()
    finally:
        remote.trace(None)
        remote.engine_gone()
        snap.restore()
        snap.drop()
    return result
