# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the engine's tests share: where sdio is, its exit codes,
building it, and running it as a program (the `sdio` fixture of
conftest.py, and tests/unit/inventory/test_libdiskmgt.py, build it with
build_engine())."""

import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINE_DIR = os.path.join(ROOT, "plugin", "engine")
SDIO = os.path.join(ENGINE_DIR, "sdio")
SHM = "/dev/shm"
MIB = 1 << 20

EXIT_OK, EXIT_USAGE, EXIT_SETUP, EXIT_IO, EXIT_SCSI = 0, 1, 2, 3, 4


def build_engine() -> str:
    """Build sdio (make, a no-op when it is up to date); its path."""
    proc = subprocess.run(
        ["make", "-s", "-C", ROOT, "-f", "plugin/engine/Makefile.inc",
         "engine"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.access(SDIO, os.X_OK)
    return SDIO


def run(sdio, *args, stdin=None, expect=EXIT_OK, prefix=()):
    """sdio ARGS (after an optional wrapper such as strace), asserting
    its exit status."""
    proc = subprocess.run(list(prefix) + [sdio] + [str(a) for a in args],
                          input=stdin, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == expect, (proc.returncode, proc.stdout,
                                       proc.stderr)
    return proc


def run_json(sdio, *args, expect=EXIT_OK, prefix=()):
    """The JSON document of `sdio ARGS --json`."""
    proc = run(sdio, *args, "--json", expect=expect, prefix=prefix)
    return json.loads(proc.stdout)
