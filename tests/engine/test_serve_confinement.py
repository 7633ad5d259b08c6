# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdio serve` confines what it is asked (adversarial 2026-11-27 U4):
writes stay below --root, set-id and sticky modes are refused, and a
policy file (beside the engine, or --allow FILE) confines reads to the
root and the trees it names and run to the commands it names, so that a
key forced to `sdio serve --root /` is a restricted key."""

import os
import shutil
import stat
import subprocess

import pytest

from test_serve import Client, read, write


@pytest.fixture
def root(tmp_path):
    d = tmp_path / "root"
    d.mkdir(exist_ok=True)
    return str(d)


@pytest.fixture
def srv(sdio, root):
    """A server on root, without a policy (the source tree's engine)."""
    c = Client(sdio, root)
    yield c
    c.kill()


@pytest.fixture
def area(tmp_path):
    """(root, outside): a root and a directory beside it."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir(exist_ok=True)
    outside.mkdir()
    write(str(outside / "secret"), b"secret")
    return str(root), str(outside)


@pytest.fixture
def engine_dir(sdio, tmp_path):
    """A copy of the engine in a directory of its own, as installed
    (PREFIX/lib/sdtune/bin/sdio), where a policy may be put beside it."""
    d = tmp_path / "lib" / "sdtune" / "bin"
    d.mkdir(parents=True)
    shutil.copy2(sdio, str(d / "sdio"))
    return str(d)


def policy(engine_dir, text, mode=0o644):
    path = os.path.join(engine_dir, "sdio-serve.allow")
    write(path, text.encode(), mode)
    return path


def started(engine, root, *extra):
    return Client(engine, root, extra)


def denied(c, op, *fields):
    got = c.err(op, *fields)
    assert got[0] == "denied", got
    return got[1]


def test_writes_stay_below_the_root(srv, root, tmp_path_factory):
    outside = str(tmp_path_factory.mktemp("outside"))
    target = os.path.join(outside, "f")
    climb = os.path.join(root, "..", os.path.basename(outside), "f")
    for path in (target, climb, "/etc/sdtune-u4-test"):
        assert "is outside the root" in denied(srv, "create", path, 0o600,
                                               b"x")
        assert "is outside the root" in denied(srv, "replace", path,
                                               0o644, b"x")
        denied(srv, "check_replaceable", path)
        denied(srv, "mkdirs", os.path.join(path, "d"), 0o755)
        denied(srv, "remove", path)
        denied(srv, "rmdir", path)
        denied(srv, "lock", path)
        denied(srv, "unlock", path)
    assert os.listdir(outside) == []
    assert not os.path.exists("/etc/sdtune-u4-test")
    # Relative paths are the working directory's: outside the root too.
    denied(srv, "create", "relative-u4", 0o600, b"x")


def test_no_write_through_a_link_below_the_root(srv, root,
                                                tmp_path_factory):
    outside = str(tmp_path_factory.mktemp("outside"))
    os.symlink(outside, os.path.join(root, "out"))
    via = os.path.join(root, "out", "f")
    assert srv.err("create", via, 0o600, b"x")[0] == "symlink"
    assert srv.err("mkdirs", os.path.join(via, "d"), 0o755)[0] == "symlink"
    assert srv.err("remove", via)[0] == "symlink"
    os.mkdir(os.path.join(outside, "d"))
    assert srv.err("rmdir", os.path.join(root, "out", "d"))[0] == "symlink"
    os.rmdir(os.path.join(outside, "d"))
    assert srv.err("lock", via)[0] == "symlink"
    assert os.listdir(outside) == []


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o1777, 0o6777, 0o4000])
def test_set_id_and_sticky_modes_are_refused(srv, root, mode):
    path = os.path.join(root, "f")
    assert "set-id or sticky" in denied(srv, "create", path, mode, b"x")
    assert "set-id or sticky" in denied(srv, "replace", path, mode, b"x")
    assert "set-id or sticky" in denied(srv, "mkdirs", path, mode)
    assert os.listdir(root) == []
    write(path, b"old", 0o644)
    os.chmod(path, mode)
    denied(srv, "replace", path, 0o644, b"new")
    assert read(path) == b"old"


def test_without_a_policy_reads_and_commands_are_not_confined(srv, area):
    _, outside = area
    # The operator's scratch files anywhere: the ssh user's own rights.
    assert srv.call("read", os.path.join(outside, "secret"), 100) == [
        b"secret"]
    assert srv.call("run", "/bin/sh", 5000, 0, "", "-c", "echo hi")[2] == \
        b"hi\n"


def test_a_policy_beside_the_engine_confines_reads_and_commands(
        engine_dir, area, tmp_path):
    root, outside = area
    extra = tmp_path / "scratch"
    extra.mkdir()
    write(str(extra / "lab"), b"lab")
    dtrace = tmp_path / "lib" / "sdtune" / "dtrace"
    dtrace.mkdir()
    write(str(dtrace / "x.d"), b"script")
    policy(engine_dir, "# sdtune's commands\nrun /bin/true\n\n"
           "read %s\n" % extra)
    write(os.path.join(root, "f"), b"in root")
    os.symlink(os.path.join(outside, "secret"), os.path.join(root, "leak"))
    os.symlink("f", os.path.join(root, "inner"))
    c = started(os.path.join(engine_dir, "sdio"), root)
    try:
        secret = os.path.join(outside, "secret")
        for path in (secret, os.path.join(root, "..", "outside", "secret"),
                     os.path.join(root, "leak"), "/etc/passwd"):
            assert "outside what this engine may read" in denied(
                c, "read", path, 100)
            denied(c, "stat", path)
            denied(c, "access", path, 4)
        denied(c, "listdir", outside)
        denied(c, "samefile", os.path.join(root, "f"), secret)
        # The link itself is below the root; its target is not read.
        assert c.call("lstat", os.path.join(root, "leak"))
        assert c.call("readlink", os.path.join(root, "leak")) == [
            secret.encode()]
        assert c.call("read", os.path.join(root, "inner"), 100) == [
            b"in root"]
        assert c.call("read", str(extra / "lab"), 100) == [b"lab"]
        assert c.call("read", str(dtrace / "x.d"), 100) == [b"script"]
        # Only the commands the policy names.
        assert "not a command this engine runs" in denied(
            c, "run", "/bin/sh", 5000, 0, "", "-c", "id")
        assert c.call("can_run", "/bin/sh") == [b"0"]
        assert c.call("can_run", "/bin/true") == [b"1"]
        assert c.call("stat", "/bin/true")
        assert c.call("run", "/bin/true", 5000, 0, "")[:2] == [b"0", b"0"]
        assert c.finish() == 0
    finally:
        c.kill()


def test_a_policy_confines_writes_to_its_write_trees(engine_dir, area):
    root, _ = area
    os.mkdir(os.path.join(root, "kernel"))
    policy(engine_dir, "write %s/kernel\n" % root)
    c = started(os.path.join(engine_dir, "sdio"), root)
    try:
        assert c.call("create", os.path.join(root, "kernel", "sd.conf"),
                      0o644, b"x") == []
        assert "outside what this engine may write" in denied(
            c, "create", os.path.join(root, "etc-shadow"), 0o600, b"x")
    finally:
        c.kill()


def test_allow_names_the_policy(engine_dir, area, tmp_path):
    root, _ = area
    path = str(tmp_path / "policy")
    write(path, b"run /bin/true\n", 0o600)
    c = started(os.path.join(engine_dir, "sdio"), root, "--allow", path)
    try:
        denied(c, "run", "/bin/sh", 5000, 0, "", "-c", "id")
        assert c.call("run", "/bin/true", 5000, 0, "")[0] == b"0"
    finally:
        c.kill()


@pytest.mark.parametrize("text, mode, owner, why", [
    ("run /bin/true\n", 0o664, 0, "writable by its group or others"),
    ("run /bin/true\n", 0o646, 0, "writable by its group or others"),
    ("run /bin/true\n", 0o644, 65534, "owned by another user"),
    ("exec /bin/true\n", 0o644, 0, "line 1: a line is not"),
    ("run bin/true\n", 0o644, 0, "not absolute"),
])
def test_an_untrustworthy_policy_stops_the_server(engine_dir, area, text,
                                                  mode, owner, why):
    root, _ = area
    path = policy(engine_dir, text, mode)
    os.chown(path, owner, owner)
    proc = subprocess.run([os.path.join(engine_dir, "sdio"), "serve",
                           "--root", root], input=b"hello 0\n",
                          capture_output=True, timeout=60)
    assert proc.returncode != 0 and proc.stdout == b""
    assert why in proc.stderr.decode(), proc.stderr


def test_a_policy_that_is_a_link_stops_the_server(engine_dir, area,
                                                  tmp_path):
    root, _ = area
    real = str(tmp_path / "real-policy")
    write(real, b"run /bin/true\n", 0o644)
    os.symlink(real, os.path.join(engine_dir, "sdio-serve.allow"))
    proc = subprocess.run([os.path.join(engine_dir, "sdio"), "serve",
                           "--root", root], input=b"hello 0\n",
                          capture_output=True, timeout=60)
    assert proc.returncode != 0 and proc.stdout == b""
    assert stat.S_ISLNK(os.lstat(os.path.join(engine_dir,
                                              "sdio-serve.allow")).st_mode)
