# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The power-cut check's steps over a real sshd (tests/emu/test_powercut.py
has the drives that lose data; here the target is a plain file, which
keeps everything): the refusal without a second machine, --verify with
nothing pending or before a boot, a dropped link without a boot (the
wait ends, the next run resumes the same run), and a cut with a boot
verified and recorded."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "plugin"))

from sdtune.certify.powercut import parse_log, split_lines  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

pytestmark = pytest.mark.sshd

STEP_S = 60.0


@pytest.fixture
def lab(tmp_path, sshd):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    target = str(tmp_path / "scratch")
    with open(target, "wb") as f:
        f.truncate(32 << 20)
    witness = str(tmp_path / "witness")
    config = sshd.sdtune_config(app.config, str(tmp_path / "remote.conf"))
    with open(config, "a") as f:
        f.write("\n[powercut]\nwitness_dir = %s\nseconds = 120\nwait = 0\n"
                # No flush in the time a test writes: every write then
                # tests the non-volatile claim, whatever the load.
                "flush_every_ms = 60000\nnotice_ms = 250\n" % witness)
    return app, target, witness, config


def start(lab, sshd, *extra):
    app, target, _, config = lab
    argv, env = app.sdtune_argv("--host", sshd.alias, "powercut", target,
                                "--confirm", target, "-o", "json", *extra,
                                config=config)
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def log_lines(witness):
    names = [n for n in os.listdir(witness) if n.endswith(".log")]
    assert len(names) == 1, names
    with open(os.path.join(witness, names[0]), "rb") as f:
        return split_lines(b"", f.read())[0]


def wait_for_writes(witness, proc, n):
    deadline = time.monotonic() + STEP_S
    while not (os.path.isdir(witness) and any(
            n.endswith(".log") for n in os.listdir(witness)) and
            sum(ln.startswith("w ") for ln in log_lines(witness)) >= n):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.005)


def drop_link(sshd):
    sshd.kill_sessions(signal.SIGKILL)


def test_without_a_second_machine_the_check_refuses(tmp_path):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    proc = app.sdtune("powercut", "c1t0d0", "--confirm", "c1t0d0")
    assert proc.returncode == 3
    assert "witness on the machine that loses power proves nothing" in \
        proc.stderr and "--host" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_verify_with_nothing_pending_is_a_usage_error(lab, sshd):
    app, target, witness, config = lab
    proc = app.sdtune("--host", sshd.alias, "powercut", target, "--verify",
                      config=config)
    assert proc.returncode == 2, proc.stderr
    assert "nothing to verify" in proc.stderr and witness in proc.stderr


def test_a_dropped_link_without_a_boot_resumes_then_a_cut_is_verified(
        lab, sshd):
    app, target, witness, config = lab
    proc = start(lab, sshd)
    wait_for_writes(witness, proc, 50)
    drop_link(sshd)
    out, err = proc.communicate(timeout=STEP_S)
    # The link dropped, the appliance answers with the same boot time:
    # no cut, no verdict, the cycle kept.
    assert proc.returncode == 4, err
    assert "link dropped" in err and "did not come back" in err
    first = parse_log(log_lines(witness), "log")
    verify = app.sdtune("--host", sshd.alias, "powercut", target,
                        "--verify", config=config)
    assert verify.returncode == 3, verify.stderr
    assert "has not booted since the writing began" in verify.stderr
    # The same command goes on writing the same run.
    proc = start(lab, sshd)
    wait_for_writes(witness, proc, len(first.completed) + 50)
    app.reboot(clean=False)
    drop_link(sshd)
    out, err = proc.communicate(timeout=STEP_S)
    assert "resuming" in err, err
    assert proc.returncode == 0, err
    doc = json.loads(out)
    whole = parse_log(log_lines(witness), "log")
    assert doc["power_cut"]["run"] == first.run == whole.run
    # A file loses nothing: the non-volatile claim passed; no flush came.
    assert doc["power_cut"]["nonvolatile"]["status"] == "passed"
    assert doc["power_cut"]["flush"]["status"] == "nothing to check"
    assert doc["power_cut"]["nonvolatile"]["lost"] == 0
    assert doc["power_cut"]["nonvolatile"]["acknowledged"] == \
        len(whole.completed)
    listed = json.loads(app.sdtune("results", "-o", "json").stdout)
    assert [c["run"] for r in listed["results"]
            for c in r.get("power_cuts", [])] == [first.run]
    # Nothing is pending now.
    again = app.sdtune("--host", sshd.alias, "powercut", target,
                       "--verify", config=config)
    assert again.returncode == 2, again.stderr
