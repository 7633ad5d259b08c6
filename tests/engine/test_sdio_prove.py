# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdio prove`: usage, a target that refuses the ioctls (a regular file
on Linux answers ENOTTY: exit 4, the JSON still printed), a target that
cannot be opened (exit 2), and the ioctls as the simulated sd answers
them (tests/sim/dkioshim.c preloaded): the engine's request numbers and
struct layout are illumos', so the shim, written from the facts, fills
the fields the engine reads; a flush the shim passes on is an
fdatasync() of the target, one it suppresses is not.  Nothing is
written to the target."""

import hashlib
import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.engine.engine_run import EXIT_OK, EXIT_SCSI, EXIT_SETUP, \
    EXIT_USAGE, run  # noqa: E402
from tests.sim import sdio as simsdio  # noqa: E402


def test_usage(sdio):
    for args in ([], ["--flushes"], ["--flushes", "0", "/x"],
                 ["--flushes", "x", "/x"], ["-v", "/x"], ["/x", "/y"]):
        proc = run(sdio, "prove", *args, expect=EXIT_USAGE)
        assert "usage: sdio prove" in proc.stderr


def test_missing_target(sdio, tmp_path):
    proc = run(sdio, "prove", tmp_path / "nothing", expect=EXIT_SETUP)
    assert "cannot open" in proc.stderr and proc.stdout == ""


def test_a_file_refuses_both_ioctls(sdio, tmp_path):
    target = tmp_path / "file"
    target.write_bytes(b"\0" * 4096)
    doc = json.loads(run(sdio, "prove", target, expect=EXIT_SCSI).stdout)
    assert doc["media"] is None and doc["flush"] is None
    assert doc["media_error"] == doc["flush_error"] == \
        "Inappropriate ioctl for device"
    assert doc["flush_calls_done"] == 0


def shimmed(sdio, target, answer, flushes=16):
    env = dict(os.environ, LD_PRELOAD=simsdio.shim())
    env[simsdio.SHIM_ENV] = answer
    proc = subprocess.run([sdio, "prove", "--flushes", str(flushes),
                           str(target)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == EXIT_OK, proc.stderr
    return json.loads(proc.stdout)


def test_the_simulated_sd_answers(sdio, tmp_path):
    target = tmp_path / "disk"
    target.write_bytes(os.urandom(1 << 16))
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    doc = shimmed(sdio, target, "512 4096 123456789012 none", 16)
    assert doc["media"] == {"lbsize_bytes": 512, "pbsize_bytes": 4096,
                            "capacity_blocks": 123456789012}
    flush = doc["flush"]
    assert flush["calls"] == doc["flush_calls_done"] == 16
    assert flush["min_ns"] <= flush["median_ns"] <= flush["p99_ns"] <= \
        flush["max_ns"]
    doc = shimmed(sdio, target, "4096 4096 7 drive", 8)
    assert doc["media"]["lbsize_bytes"] == 4096
    assert doc["flush"]["calls"] == 8
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_a_passed_on_flush_is_an_fdatasync(sdio, tmp_path):
    """strace shows the shim's fdatasync() for "drive" and none for
    "none": which answer reaches the drive is the shim's decision, made
    on the real descriptor."""
    strace = "/usr/bin/strace"
    if not os.access(strace, os.X_OK):
        import pytest
        pytest.skip("no strace")
    target = tmp_path / "disk"
    target.write_bytes(b"\0" * 4096)
    counts = {}
    for how in ("drive", "none"):
        env = dict(os.environ, LD_PRELOAD=simsdio.shim())
        env[simsdio.SHIM_ENV] = "512 512 8 %s" % how
        proc = subprocess.run([strace, "-f", "-e", "trace=fdatasync,write,"
                               "pwrite64", sdio, "prove", "--flushes", "5",
                               str(target)], env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == EXIT_OK, proc.stderr
        counts[how] = proc.stderr.count("fdatasync(")
        # The only write is the JSON on standard output.
        assert all(line.startswith(("write(1,", "+++", "fdatasync("))
                   for line in proc.stderr.splitlines()
                   if "(" in line and not line.startswith("---")), \
            proc.stderr
    assert counts == {"drive": 5, "none": 0}
