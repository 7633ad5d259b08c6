# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What a test needs, as pytest markers: the tiers of `make check`.

    emu      emulated drives (nbdkit, nbdfuse, FUSE) with timed real I/O
    sshd     a real sshd on 127.0.0.1 (tests/ssh/sshd.py)
    ansible  a real ansible-playbook or ansible-test run
    browser  a real headless browser (Debian's chromium) opens a page

`make check` runs every test; `make check-quick` runs those that need
none of these (the Makefile's QUICK, a marker expression), for the
edit-test loop.  A
test module says what it needs with ``pytestmark``, and the helpers that
start such a thing call needs() first: under pytest, a test that starts
one without its marker fails at once, naming the marker to add, rather
than slipping into the quick tier.  Outside pytest (make demo, bench,
faults) needs() does nothing.
"""

import os

MARKERS = {
    "emu": "starts emulated drives (nbdkit, nbdfuse) and times real I/O",
    "sshd": "starts a real sshd on 127.0.0.1",
    "ansible": "runs a real ansible-playbook or ansible-test",
    "browser": "opens a page in a real headless chromium",
}

# The markers of the running test, set by tests/conftest.py before each
# test (pytest-xdist: in each worker process).
ENV = "SDTUNE_TEST_MARKS"


def needs(marker: str, what: str) -> None:
    """Fail the running test unless it carries ``marker``."""
    assert marker in MARKERS, marker
    test = os.environ.get("PYTEST_CURRENT_TEST")
    if test is None:
        return
    if marker not in os.environ.get(ENV, "").split(","):
        raise AssertionError(
            "%s starts %s but is not marked '%s': add pytestmark = "
            "pytest.mark.%s to its module (tests/marks.py), so that make "
            "check-quick leaves it out" % (test.split(" ")[0], what,
                                           marker, marker))
