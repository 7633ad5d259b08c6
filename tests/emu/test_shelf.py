# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A shelf certified by one command (issue 16): drives measured at once
with every verdict right and each record saying how many drives ran
beside it; one odd unit among six of a model flagged as a suspect unit,
in the output, in `results` and in what `plan` proposes; the host made
the bottleneck on purpose (fast drives) reported, with no verdict
wrong; SIGINT and SIGTERM in the middle of a 24-drive run kill
every engine process (checked by PID) within a second and store no
record of a drive not finished.

The emulated shelf is tests/emu/shelf.py; the drives are real processes
(nbdkit, nbdfuse), the I/O real, through the real sdio engine."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .shelf import Shelf, model_of, sd_key, standard_mix
from tests.sim.testing import as_foreground

pytestmark = pytest.mark.emu

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")


def certify(shelf, *extra):
    names = shelf.names
    return shelf.app.sdtune("certify", *names, "--confirm", *names, *extra)


def stored_results(shelf):
    """`results -o json` of the shelf's appliance: the latest record of
    each unit."""
    res = shelf.app.sdtune("results", "-o", "json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["results"]


def check_verdicts(shelf, results, allow_inconclusive=False):
    """Every result right; with allow_inconclusive, a verdict may also be
    inconclusive (never wrong)."""
    by_target = {r["target"]: r for r in results}
    assert sorted(by_target) == sorted(shelf.names)
    for unit in shelf.units:
        res = by_target[unit.name]
        native = res["native_sector_bytes"]
        cache = res["cache"]
        measured = "cache" in res["evidence"]["phases"]
        if allow_inconclusive:
            assert native in (unit.native, None), (unit, native)
            assert not measured or cache in (unit.cache, "inconclusive"), \
                (unit, cache)
        else:
            assert native == unit.native, (unit, res["evidence"]["sector"])
            assert not measured or cache == unit.cache, \
                (unit, res["evidence"]["cache"])


def test_six_units_one_odd_flagged_and_left_out_of_the_plan():
    """Five 512e drives (4 KiB pages) of one model and a 512-native
    drive sold as that model: all measured at once, right, the odd one
    flagged and left out of the plan's physical-block-size."""
    mix = [("512e", "nonvolatile")] * 5 + [("512n", "nonvolatile")]
    odd = {5: ("512e", "nonvolatile")}
    # The odd unit differs in its pages: the sector phase shows it.
    with Shelf(mix, odd=odd, phases="sector") as shelf:
        proc = certify(shelf)
        assert proc.returncode == 0, proc.stderr
        # Plain progress lines on a pipe, one per phase and per drive.
        for name in shelf.names:
            assert "sdtune: certify: %s: done in" % name in proc.stderr
        assert "\x1b[" not in proc.stderr
        # A sector verdict a loaded machine left inconclusive is no
        # verdict to compare: as an operator would, certify those units
        # again (at most twice).
        said, measured_again = proc.stdout, set()
        for _ in range(2):
            unsure = [r["target"] for r in stored_results(shelf)
                      if r["native_sector_bytes"] is None]
            if not unsure:
                break
            again = shelf.app.sdtune("certify", *unsure, "--confirm",
                                     *unsure)
            assert again.returncode == 0, again.stderr
            said += again.stdout
            measured_again.update(unsure)
        assert "suspect unit SHELF05 (key \"%s\")" % sd_key(
            model_of("512e", "nonvolatile")) in said
        assert "native sector 512 B" in said
        for name in shelf.names[:5]:
            assert "suspect unit %s" % shelf.unit(name).serial not in said

        results = stored_results(shelf)
        check_verdicts(shelf, results)
        suspects = {r["serial"]: r["suspect"] for r in results}
        assert suspects["SHELF05"] and all(
            not suspects["SHELF%02d" % i] for i in range(5))
        for r in results:
            crowd = r["evidence"]["crowd"]
            if r["target"] in measured_again:
                continue    # not among the six any more
            # All six started together: each saw the five others (unless
            # a loaded host set the pace and a phase was measured again
            # with fewer).
            assert crowd["drives_beside"] == 5 or crowd["reruns"], crowd
            assert crowd["solo_probe"]["intervals"] >= 5, crowd
            assert crowd["probes"], crowd

        plan = shelf.app.sdtune("plan")
        assert plan.returncode == 0, plan.stderr
        assert "physical-block-size:4096" in plan.stdout
        assert "suspect unit SHELF05 left out" in plan.stdout


def test_jobs_bounds_the_drives_at_a_time():
    with Shelf(standard_mix(2), phases="sector") as shelf:
        proc = certify(shelf, "--jobs", "1", "-o", "json")
        assert proc.returncode == 0, proc.stderr
        results = json.loads(proc.stdout)["results"]
        check_verdicts(shelf, results)
        for r in results:
            crowd = r["evidence"]["crowd"]
            # One at a time: nobody beside it, so no probe either.
            assert crowd["drives_beside"] == 0
            assert crowd["solo_probe"] is None and not crowd["probes"]
        bad = certify(shelf, "--jobs", "0")
        assert bad.returncode == 2
        assert bad.stderr == ("sdtune: cannot certify '--jobs 0': must be "
                              "at least 1\n")


def test_host_bottleneck_reported_and_no_verdict_wrong():
    """Fast drives (each could do far more than the ~5,500 IOPS the
    machine moves through FUSE in all): five at once on two CPUs cost
    far more per I/O than a drive alone, sdtune says so and measures a
    phase it may have decided again with fewer drives; every verdict is
    right or inconclusive.

    No CPU hogs of the test's own: they ran during the solo probe too,
    which made it slow and noisy (mean 180-750 us, sd up to the mean,
    noise limit up to 2.6x) and left the crowd no slower than the drive
    alone once the machine carried two more hogs.  Five drives, not
    three: under two external hogs three drives measured 1.37-1.69x solo
    against the 1.3x limit, and failed 3 of 10 runs with more load
    beside; five measured 1.8-20x (limit 1.3-1.8x) for 12 s more."""
    # Short queue-depth steps and a short sector phase: the knee (and a
    # sector verdict load left unsure) is measured again, down to one
    # drive at a time, and this test is about the report and verdicts
    # that are never wrong, not about the knee or a confident verdict.
    quick = {"paired_max_s": 12, "step_max_s": 0.4, "interval_s": 0.05,
             "min_intervals": 4}
    with Shelf(standard_mix(5), scale=2, channels=8, phases="sector,qd",
               certify=quick) as shelf:
        proc = certify(shelf, "-o", "json")
        assert proc.returncode == 0, proc.stderr
        assert "sdtune: note: host bottleneck: " in proc.stderr
        results = json.loads(proc.stdout)["results"]
        check_verdicts(shelf, results, allow_inconclusive=True)
        slowed = [r for res in results
                  for r in res["evidence"]["crowd"]["slowed"]]
        # Both rounded to 0.01 in the record: equal there is still over.
        assert slowed and all(r["slowdown"] >= r["limit"] for r in slowed)
        for res in results:
            crowd = res["evidence"]["crowd"]
            # A knee measured while the host set the pace is measured
            # again with fewer drives.
            if any(r["phase"] == "qd" for r in crowd["slowed"]):
                assert any(r["phase"] == "qd" for r in crowd["reruns"])


def engine_pids(devices):
    """PIDs of live sdio processes writing to any of ``devices``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % entry) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv and argv[0].decode(errors="replace") == ENGINE and \
                state != "Z" and any(d.encode() in argv for d in devices):
            pids.append(int(entry))
    return pids


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


SIGKILL_BIT = 1 << (signal.SIGKILL - 1)
PF_EXITING = 0x4    # include/linux/sched.h: the process is in exit


def look(pid):
    """(state, flags, pending signal masks) of ``pid``, None when it
    is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/%d/status" % pid) as f:
            pending = [int(line.split()[1], 16) for line in f
                       if line.startswith(("SigPnd:", "ShdPnd:"))]
    except OSError:
        return None
    return fields[0], int(fields[6]), pending


def killed(pid):
    """Whether ``pid`` is gone, a zombie, exiting, or has SIGKILL
    pending: sdtune has stopped it.  A process killed while in a FUSE
    request dies only once the emulated drive answers, and one whose
    kill is taken but which closes its files in exit (state D, no
    signal pending any more) is held there by FUSE too; on a loaded
    machine either can last longer than sdtune takes to kill them
    all."""
    seen = look(pid)
    if seen is None:
        return True
    state, flags, pending = seen
    return state == "Z" or bool(flags & PF_EXITING) or \
        any(mask & SIGKILL_BIT for mask in pending)


def signal_state(pid):
    """The signals a process blocks and ignores (/proc status masks)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return ", ".join(line.strip() for line in f
                             if line.startswith(("SigBlk", "SigIgn")))
    except OSError:
        return "gone"


def described(pids):
    """What a failure says of each PID: state, flags, signals pending."""
    return "; ".join("%d %s" % (p, look(p)) for p in pids)


@pytest.mark.parametrize("signo,code,drives,crowd", [
    (signal.SIGINT, 130, 24, 12), (signal.SIGTERM, 143, 6, 4)])
def test_signal_mid_shelf_kills_every_engine(signo, code, drives, crowd,
                                             request):
    """SIGINT in the middle of a 24-drive run (and SIGTERM in a 6-drive
    one); the signal goes to sdtune alone (not its process group, as
    Ctrl-C would: sdtune must end the engines itself).  Every engine is
    killed within a second, and none survives."""
    with Shelf(standard_mix(drives)) as shelf:
        # What sdio opens: the appliance's raw device of each disk.
        devices = [os.path.join(shelf.app.root, "dev", "rdsk", n + "p0")
                   for n in shelf.names]
        env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
               "SDTUNE_ZONENAME_CMD": "/nonexistent"}
        names = shelf.names
        # As a terminal's foreground job: SIGINT at its default, even
        # when this test run inherited it ignored.
        proc = subprocess.Popen(as_foreground(
            [os.path.join(REPO, "bin", "sdtune"), "-R", shelf.app.root,
             "--config", shelf.app.config, "certify", *names, "--confirm",
             *names]), env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            seen = set()
            deadline = time.monotonic() + 120
            # In the middle: most drives measuring their phases at once.
            while len(engine_pids(devices)) < crowd:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no crowd formed"
                time.sleep(0.05)
            time.sleep(1.0)
            # Each look and step is an engine process of its own, so how
            # many run at one instant varies: signal at an instant when
            # at least `crowd` do.
            while len(seen) < crowd:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no crowd formed"
                seen = set(engine_pids(devices))
            proc.send_signal(signo)
            sent = time.monotonic()
            # Within a second every engine, those seen and any started
            # since, is killed by sdtune ...
            while True:
                left = [p for p in seen | set(engine_pids(devices))
                        if not killed(p)]
                if not left:
                    killed_s = time.monotonic() - sent
                    break
                assert time.monotonic() - sent < 1.0, (
                    "engines not killed 1 s after the signal "
                    "(pid (state, flags, pending)): %s; sdtune %s" % (
                        described(left), signal_state(proc.pid)))
                time.sleep(0.02)
            # ... and then gone: none survives.
            while True:
                left = [p for p in seen if alive(p)] + engine_pids(devices)
                if not left:
                    break
                assert time.monotonic() - sent < 15.0, (
                    "engines alive 15 s after the signal: %s" % left)
                time.sleep(0.05)
            out, err = proc.communicate(timeout=30)
            # The bound of sdtune(8) and its margin, after the run.
            request.node.user_properties.append((
                "show", "certify of %d drives: %d engines killed %.0f ms "
                "after %s (bound: 1 s)" % (drives, len(seen),
                                           killed_s * 1000, signo.name)))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == code, err
        assert "stopped, no record: " in err
        assert "interrupted by %s" % signo.name in err
        assert "Traceback" not in err
        records = os.path.join(shelf.app.root, "var", "sdtune", "certify")
        stored = sorted(n for n in os.listdir(records)
                        if n.endswith(".json")) \
            if os.path.isdir(records) else []
        finished = err.split("finished: ", 1)[1].split(";")[0]
        finished_names = [] if finished == "none" else finished.split(", ")
        # A record for each drive that finished, for no other.
        assert len(stored) == len(finished_names), (stored, err)
        assert len(finished_names) < drives
