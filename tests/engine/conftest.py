# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fixtures of the engine tests: sdio built once per session, and files
on tmpfs."""

import os
import re

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
