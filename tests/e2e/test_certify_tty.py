# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""certify's terminal view (issue 29): on a terminal the verdict is
followed by the record's text charts, as `results DISK` draws them; a
pipe gets the verdict alone.  The terminal is a real pseudo-terminal,
the launcher unchanged, the disk a scratch file behind the simulated
appliance."""

import os
import pty
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.e2e.test_records_travel import FREE, appliance  # noqa: E402

CHART = "cost per I/O by transfer size (median of the rounds):"


def run_on_a_terminal(app, *args):
    """The launcher with its standard output on a pseudo-terminal: what
    it wrote there, and its exit status."""
    master, slave = pty.openpty()
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    proc = subprocess.Popen(
        [os.path.join(REPO, "bin", "sdtune"), "-R", app.root, "--config",
         app.config, *args], env=env, stdin=subprocess.DEVNULL,
        stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:         # EIO: the last writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.stderr.close()
    return b"".join(chunks).decode().replace("\r\n", "\n"), proc.wait(60)


def test_the_verdict_has_its_charts_on_a_terminal_only(tmp_path):
    scratch = tmp_path / "scratch"
    with open(scratch, "wb") as f:
        f.truncate(128 << 20)
    app = appliance(tmp_path, "fs01", str(scratch))
    shown, status = run_on_a_terminal(app, "certify", FREE, "--confirm",
                                      FREE)
    assert status == 0, shown
    assert "  native sector:" in shown and CHART in shown
    assert shown.index("  native sector:") < shown.index(CHART)
    piped = app.sdtune("certify", FREE, "--confirm", FREE)
    assert piped.returncode == 0, piped.stderr
    assert "  native sector:" in piped.stdout and CHART not in piped.stdout
