"""Fixtures of the engine tests: sdio built once per session, and files
on tmpfs."""

import os
import re
import subprocess

import pytest

from engine_run import ROOT, SDIO, SHM


@pytest.fixture(scope="session")
def sdio():
    proc = subprocess.run(
        ["make", "-s", "-C", ROOT, "-f", "plugin/engine/Makefile.inc",
         "engine"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.access(SDIO, os.X_OK)
    return SDIO


@pytest.fixture
def shm_file(request):
    """A file on tmpfs (the fast, RAM-backed target), removed afterwards."""
    path = os.path.join(SHM, "sdio-test-%d-%s" % (
        os.getpid(), re.sub(r"\W", "_", request.node.name)))

    def make(size):
        with open(path, "wb") as f:
            f.truncate(size)
        return path
    yield make
    if os.path.exists(path):
        os.unlink(path)
