# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune sdconf check|show|set|unset|diff` through the real launcher
bin/sdtune, as an operator runs it: exit codes, messages, and nothing
written without --write or when the write is refused or fails.  The same
commands in-process, in detail, are tests/unit/sdconf/test_tool.py."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAUNCHER = os.path.join(REPO, "bin", "sdtune")
KSH = "/bin/ksh"

sys.path.insert(0, os.path.join(REPO, "tests", "fixtures", "sdconf"))
from sdconf_files import (DIAG_RE, KEY_A, LIST_LINE, NX, Run,  # noqa: E402
                          conf_file, diff_lines, error_re, read_only_dir,
                          snapshot, with_pair)


def launch(*argv, cwd=None):
    """Run the real launcher, as an operator would."""
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent/zonename", "LC_ALL": "C"}
    proc = subprocess.run([KSH, LAUNCHER, *[str(a) for a in argv]],
                          env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)
    return Run(proc.returncode, proc.stdout, proc.stderr)


needs_ksh = pytest.mark.skipif(not os.access(KSH, os.X_OK),
                               reason="%s (ksh93) is not installed" % KSH)


@needs_ksh
def test_launcher_check(tmp_path):
    good = conf_file(tmp_path, NX, "good.conf")
    r = launch("sdconf", "check", good)
    assert r.rc == 0 and r.err == ""
    bad = conf_file(tmp_path, with_pair(KEY_A, "throttle-max:4"), "bad.conf")
    r = launch("sdconf", "check", bad)
    assert r.rc == 1 and r.err == ""
    assert all(DIAG_RE.match(line) for line in r.out.splitlines())
    assert "%s:%d:" % (bad, LIST_LINE + 3) in r.out


@needs_ksh
def test_launcher_show_json(tmp_path):
    path = conf_file(tmp_path)
    r = launch("sdconf", "show", "-o", "json", path)
    assert r.rc == 0
    assert json.loads(r.out)["pairs"][0]["tunables"] == {
        "io-time": "180", "slow-io-threshold": "0"}


@needs_ksh
def test_launcher_set_without_and_with_write(tmp_path):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = launch("sdconf", "set", path, "--vid", "ATA", "--pid",
               "INTEL SSDSC2BA40", "cache-nonvolatile=true")
    assert r.rc == 0 and r.err == ""
    assert '+\t"%s", "cache-nonvolatile:true";' % KEY_A in diff_lines(r.out)
    assert snapshot(path) == before
    r = launch("sdconf", "set", "--write", "sd.conf", KEY_A,
               "cache-nonvolatile=true", cwd=str(tmp_path))
    assert r.rc == 0 and r.out.endswith("sd.conf: written\n")
    assert '"%s", "cache-nonvolatile:true";' % KEY_A in path.read_text()


@needs_ksh
def test_launcher_refusal_and_usage_error(tmp_path):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = launch("sdconf", "set", "--write", path, KEY_A, "throttle-max=4")
    assert r.rc == 3 and r.out == ""
    assert error_re("set tunables in", path).match(r.err), r.err
    r = launch("sdconf", "set", "--write", path, "--vid", "ATA",
               "disksort=false")
    assert r.rc == 2
    assert r.err == "sdtune: cannot set '%s': --vid and --pid go together\n" \
        % path
    r = launch("sdconf", "check", tmp_path / "nothere.conf")
    assert r.rc == 4
    assert error_re("read", tmp_path / "nothere.conf").match(r.err)
    assert snapshot(path) == before


@needs_ksh
def test_launcher_read_only_directory(tmp_path):
    conf_dir = tmp_path / "drv"
    conf_dir.mkdir()
    path = conf_file(conf_dir)
    before = snapshot(path)
    with read_only_dir(conf_dir):
        r = launch("sdconf", "set", "--write", path, KEY_A,
                   "disksort=false")
        assert r.rc == 4
        assert error_re("write", path).match(r.err), r.err
        assert snapshot(path) == before


@needs_ksh
def test_launcher_diff(tmp_path):
    a = conf_file(tmp_path, NX, "a.conf")
    b = conf_file(tmp_path, with_pair(KEY_A, "disksort:false"), "b.conf")
    assert launch("sdconf", "diff", a, a).rc == 0
    r = launch("sdconf", "diff", a, b)
    assert r.rc == 1
    assert "sd-config-list changes:\n  added   \"%s\": disksort:false\n" \
        % KEY_A in r.out
