# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fixtures of the --host tests: `sshd`, one real OpenSSH server on
127.0.0.1 for the whole session (tests/ssh/sshd.py), and `fresh_sshd`,
a private one for a test that changes the server (its host key, say).

Without /usr/sbin/sshd or /usr/bin/ssh the tests are skipped, except
under CI (the CI variable set), where that is a failure: CI must run
tests/deps.sh, which installs them."""

import os

import pytest

from sshd import SSH, SSH_KEYGEN, SSHD, Sshd


def _require_openssh() -> None:
    missing = [p for p in (SSHD, SSH, SSH_KEYGEN)
               if not os.access(p, os.X_OK)]
    if not missing:
        return
    why = "OpenSSH missing: %s" % ", ".join(missing)
    if os.environ.get("CI"):
        # A skip would let CI pass without a single --host test run.
        pytest.fail("%s; run tests/deps.sh (it installs openssh-server "
                    "and openssh-client)" % why, pytrace=False)
    pytest.skip("%s (tests/deps.sh installs it)" % why)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A started Sshd shared by the session; stopped at its end.  Tests
    must leave it as they found it: fresh_sshd is for the others."""
    _require_openssh()
    server = Sshd(str(tmp_path_factory.mktemp("sshd")))
    try:
        server.start()
        yield server
    finally:
        # Also after a failed start: a half-started sshd is stopped.
        server.stop()


@pytest.fixture
def fresh_sshd(tmp_path):
    """A started Sshd of this test alone, stopped when it ends."""
    _require_openssh()
    server = Sshd(str(tmp_path / "sshd"))
    try:
        server.start()
        yield server
    finally:
        server.stop()
