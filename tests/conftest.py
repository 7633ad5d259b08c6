# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Hooks for every test run: what a test asks to have shown after the
run, which pytest would otherwise capture (the Ansible playbook's
ok/changed counts per play, tests/ansible/test_playbook.py).  A test
adds ("show", line) to its node's user_properties; pytest-xdist carries
those to the process that prints the summary.  The markers of
tests/marks.py (what a test needs: emu, sshd, ansible), registered here
and handed to the helpers that check them.  The collected tests are
frozen out of the garbage collector's reach."""

import gc
import os

from marks import ENV, MARKERS


def pytest_terminal_summary(terminalreporter):
    lines = []
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            for name, value in getattr(report, "user_properties", ()):
                if name == "show" and value not in lines:
                    lines.append(value)
    if lines:
        terminalreporter.section("shown by the tests")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_configure(config):
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", "%s: %s" % (name, what))


def pytest_runtest_setup(item):
    # What the helpers' needs() checks (tests/marks.py).
    os.environ[ENV] = ",".join(sorted(
        {m.name for m in item.iter_markers()} & set(MARKERS)))


def pytest_collection_finish(session):
    # Thousands of collected items live until the run ends; without this
    # every full collection walks them all again (measured with perf: the
    # collector took about 4 % of the quick tier's CPU).
    gc.collect()
    gc.freeze()
