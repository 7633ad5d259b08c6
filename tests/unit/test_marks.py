# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The tiers are honest (tests/marks.py): a helper that starts an
emulated drive, an sshd or Ansible fails the running test unless it
carries the marker, and the markers a test carries reach the helpers."""

import os

import pytest

from marks import ENV, MARKERS, needs


def test_this_test_has_no_marker_so_needs_fails(monkeypatch):
    monkeypatch.setenv(ENV, "")
    for marker in MARKERS:
        with pytest.raises(AssertionError) as e:
            needs(marker, "a thing")
        assert "is not marked '%s'" % marker in str(e.value)
        assert "pytestmark = pytest.mark.%s" % marker in str(e.value)
        assert "test_marks.py::" in str(e.value)


@pytest.mark.sshd
def test_a_marked_test_may():
    # Set by tests/conftest.py for this test, from its markers.
    assert os.environ[ENV] == "sshd"
    needs("sshd", "a real sshd")


def test_outside_pytest_needs_nothing(monkeypatch):
    """make demo, bench and faults use the same helpers."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setenv(ENV, "")
    needs("emu", "an emulated drive")
