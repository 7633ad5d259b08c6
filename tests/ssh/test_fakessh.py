# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""SshHost against an engine whose answers are corrupted on the way
(tests/ssh/fakessh.py, the adversarial report's fakessh): every Host
call that sends an op, under every class of corruption, returns what it
returns uncorrupted or raises the HostError that says so (T1-T3); a
repeated answer is never taken for the next one's (F8); the appliance's
clock is held to the journal's rule (D3); a failed stat is not a missing
file, and a failed stat of the root over --host exits 4 (W3).  No sshd:
the stand-in runs the engine here."""

import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from sdtune.errors import EXIT_FAILED, HostError  # noqa: E402
from sdtune.host.ssh import SshHost  # noqa: E402

from fakessh import KINDS  # noqa: E402

ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")


@pytest.fixture
def fake(tmp_path):
    """The stand-in for ssh, as one executable path."""
    path = tmp_path / "fakessh"
    # -S: the stand-in needs no site-packages (nor their .pth files' cost).
    path.write_text("#!/bin/sh\nexec %s -S %s \"$@\"\n" % (
        sys.executable, os.path.join(os.path.dirname(__file__),
                                     "fakessh.py")))
    path.chmod(0o755)
    return str(path)


def make_root(path):
    os.mkdir(path)
    for name, data in (("f", b"data"), ("g", b"other data")):
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    os.mkdir(os.path.join(path, "dir"))
    os.symlink("f", os.path.join(path, "l"))
    return path


@pytest.fixture
def root(tmp_path):
    return make_root(str(tmp_path / "root"))


def host(fake, root):
    return SshHost("fake", root, {"sdio": ENGINE, "true": "/bin/true",
                                  "echo": "/bin/echo"},
                   ssh=fake, timeout_s=20, connect_timeout_s=10)


# Each op's Host call: (op, call(host, root)).
CALLS = {
    "hello": lambda h, r: h.is_root(),
    "read": lambda h, r: h.read_bytes(r + "/f"),
    "stat": lambda h, r: (h.stat(r + "/f").st_mode, h.stat(r + "/f").st_size),
    "listdir": lambda h, r: h.listdir(r),
    "readlink": lambda h, r: h.readlink(r + "/l"),
    "readlinks": lambda h, r: h.read_links(r),
    "samefile": lambda h, r: h.same_file(r + "/f", r + "/f"),
    "can_run": lambda h, r: h.can_run("true"),
    "create": lambda h, r: h.create_new(r + "/new", b"x"),
    "replace": lambda h, r: h.write_atomic(r + "/f", b"data"),
    "check_replaceable": lambda h, r: h.check_replaceable(r + "/f"),
    "mkdirs": lambda h, r: h.mkdirs(r + "/dir/sub"),
    "remove": lambda h, r: h.remove(r + "/g"),
    "rmdir": lambda h, r: h.remove_dir(r + "/dir"),
    "lock": lambda h, r: _locked(h, r + "/lk"),
    "unlock": lambda h, r: _locked(h, r + "/lk"),
    "run": lambda h, r: h.run("true", []).returncode,
    "stream": lambda h, r: _streamed(h),
    "now": lambda h, r: round(h.now()) > 0,
}


# What each call gives uncorrupted (computed once per op).
GOOD = {}
# Ops whose first field is any bytes: a changed one is not seen.
RAW_FIRST = ("read", "readlink", "listdir", "readlinks")


def _locked(h, path):
    with h.lock(path):
        return True


def _streamed(h):
    """The parts of a stream, relayed as they are, and its answer."""
    parts = []
    result = h.stream("echo", ["a", "b"], parts.append)
    return b"".join(parts), result.returncode, result.stdout


def outcome(fake, root, mode, op, monkeypatch):
    """(result, error) of op's call and of one call after it."""
    monkeypatch.setenv("FAKESSH_MODE", mode)
    h = host(fake, root)
    got = []
    try:
        for call in (CALLS[op], lambda h, r: h.is_dir(r + "/dir")):
            try:
                got.append(("ok", call(h, root)))
            except HostError as e:
                got.append(("error", str(e)))
    finally:
        try:
            h.close()
        except HostError:
            pass
    return got


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", sorted(CALLS))
def test_a_corrupted_answer_is_an_error_or_harmless(fake, root, op, kind,
                                                    monkeypatch, tmp_path):
    """T1-T3, F8: nothing but HostError escapes (an IndexError, WireError
    or OverflowError fails this test), and when the answer was changed,
    the call and the one after it either return what they return
    uncorrupted or fail (unless the op's answer is any bytes)."""
    if op not in GOOD:
        GOOD[op] = outcome(fake, make_root(str(tmp_path / "clean")),
                           "pass", op, monkeypatch)
    good = GOOD[op]
    assert [g[0] for g in good] == ["ok", "ok"], good
    got = outcome(fake, root, "corrupt:%s:%s" % (op, kind), op, monkeypatch)
    if op not in RAW_FIRST:
        for (state, value), (_, expected) in zip(got, good):
            assert state == "error" or value == expected, (got, good)
    if kind in ("garbage", "eof", "extra", "err_empty"):
        assert any(state == "error" for state, _ in got), got


def test_a_repeated_answer_is_not_the_next_ones(fake, root, monkeypatch):
    """F8: the answer to stat(f), sent twice, is not taken for the
    answer to stat(dir)."""
    monkeypatch.setenv("FAKESSH_MODE", "corrupt:stat:extra")
    h = host(fake, root)
    try:
        first = h.stat(root + "/f")
        assert first.st_size == 4
        with pytest.raises(HostError) as e:
            h.stat(root + "/dir")
        assert "not in its protocol" in str(e.value)
        assert "out of step" in str(e.value)
    finally:
        h.close()


@pytest.mark.parametrize("kind", ["neg", "bignum"])
def test_a_clock_the_journal_cannot_hold_is_refused(fake, root, kind,
                                                    monkeypatch):
    """D3: now answering -1 or 99999999999999999999 is an error where it
    is read, not a journal entry nobody can read back."""
    monkeypatch.setenv("FAKESSH_MODE", "corrupt:now:" + kind)
    h = host(fake, root)
    try:
        with pytest.raises(HostError) as e:
            h.now()
        assert "clock" in str(e.value) and e.value.exit_code == EXIT_FAILED
        # The stream is whole: the session goes on.
        assert h.stat(root + "/f").st_size == 4
    finally:
        h.close()


def test_a_failed_stat_is_not_a_missing_file(fake, root, monkeypatch):
    """W3: only ENOENT (or ENOTDIR) makes exists() and is_dir() False."""
    h = host(fake, root)
    try:
        assert h.is_dir(root) and not h.is_dir(root + "/missing")
        assert not h.exists(root + "/f/below-a-file")
    finally:
        h.close()
    monkeypatch.setenv("FAKESSH_MODE", "corrupt:stat:err_unknown")
    h = host(fake, root)
    try:
        with pytest.raises(HostError) as e:
            h.is_dir(root)
        assert e.value.exit_code == EXIT_FAILED
        assert "no such" not in str(e.value)
    finally:
        h.close()


def test_a_failed_stat_of_the_root_exits_4(fake, tmp_path, monkeypatch):
    """W3 through the command line: `cannot use root ...: no such
    directory` (exit 2) is for a root that is not there."""
    from tests.sim.appliance import Appliance
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    config = str(tmp_path / "remote.conf")
    with open(app.config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text + "\n[ssh]\nssh = %s\n" % fake)
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent",
           "FAKESSH_MODE": "corrupt:stat:err_unknown"}
    launcher = os.path.join(REPO, "bin", "sdtune")
    proc = subprocess.run([launcher, "--host", "fake", "-R", app.root,
                           "--config", config, "disks"], env=env,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 4, proc.stderr
    assert "no such directory" not in proc.stderr
    env["FAKESSH_MODE"] = "pass"
    proc = subprocess.run([launcher, "--host", "fake", "-R",
                           app.root + "/missing", "--config", config,
                           "disks"], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "no such directory" in proc.stderr, \
        proc.stderr


def test_an_engine_of_another_protocol(tmp_path):
    """An engine of protocol 1 (its answers name no request) is named as
    such, not as a broken stream."""
    old = tmp_path / "oldssh"
    old.write_text("#!/bin/sh\ncat >/dev/null &\n"
                   "printf 'ok 6\\n1\\n11\\n01\\nx1\\n11\\n/0\\n'\n")
    old.chmod(0o755)
    h = SshHost("fake", "/", {"sdio": ENGINE}, ssh=str(old),
                connect_timeout_s=10)
    try:
        with pytest.raises(HostError) as e:
            h.is_root()
        assert "another protocol version" in str(e.value)
    finally:
        h.close()
