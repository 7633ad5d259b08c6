# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fixtures of the engine tests: sdio built once per session, files on
tmpfs, and a directory on a disk file system for direct I/O."""

import os
import re
import shutil
import tempfile

import pytest

from engine_run import SHM, build_engine


@pytest.fixture(scope="session")
def sdio():
    return build_engine()


@pytest.fixture
def shm_file(request, tmp_path):
    """A file on tmpfs (the fast, RAM-backed target) when there is one,
    sparse until written; removed afterwards."""
    base = SHM if os.path.isdir(SHM) else str(tmp_path)
    path = os.path.join(base, "sdio-test-%d-%s" % (
        os.getpid(), re.sub(r"\W", "_", request.node.name)))

    def make(size):
        with open(path, "wb") as f:
            f.truncate(size)
        return path
    yield make
    if os.path.exists(path):
        os.unlink(path)


@pytest.fixture
def disk_dir():
    """A directory on a disk file system, for what only such a file
    system does (O_DIRECT's alignment rule: tmpfs takes any offset),
    wherever tmp_path is (the Makefile may put it on tmpfs)."""
    path = tempfile.mkdtemp(prefix="sdio-direct-", dir="/var/tmp")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
