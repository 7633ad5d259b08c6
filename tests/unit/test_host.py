# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.host.RealHost: paths under a root, atomic writes,
allow-listed commands and the apply lock, against the real Linux host."""

import errno
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sdtune.errors import EXIT_FAILED, EXIT_REFUSED, HostError
from sdtune.host import CommandResult, Host, RealHost

PLUGIN_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "plugin")

COMMANDS = {
    "sleep": "/bin/sleep",
    "env": "/usr/bin/env",
    "sh": "/bin/sh",
    "relative": "sleep",
    "missing": "/nonexistent/sdtune-no-such-command",
}


def temp_files(directory):
    return [n for n in os.listdir(directory) if ".sdtune." in n]


# -- sys_path ---------------------------------------------------------------

def test_sys_path_resolves_under_root(tmp_path):
    host = RealHost(root=str(tmp_path))
    assert host.sys_path("/kernel/drv/sd.conf") == str(
        tmp_path / "kernel" / "drv" / "sd.conf")
    assert host.sys_path("/kernel/./drv/../drv//sd.conf") == str(
        tmp_path / "kernel" / "drv" / "sd.conf")
    assert host.sys_path("/") == str(tmp_path)


def test_sys_path_default_root_is_slash():
    assert RealHost().sys_path("/kernel/drv/sd.conf") == "/kernel/drv/sd.conf"


@pytest.mark.parametrize("path", ["/../etc/passwd", "/kernel/../../etc",
                                  "/a/b/../../../x"])
def test_sys_path_refuses_escape(tmp_path, path):
    with pytest.raises(HostError, match="outside the root"):
        RealHost(root=str(tmp_path)).sys_path(path)


def test_sys_path_refuses_relative(tmp_path):
    with pytest.raises(HostError, match="not an absolute path"):
        RealHost(root=str(tmp_path)).sys_path("kernel/drv/sd.conf")


# -- reading ------------------------------------------------------------------

def test_read_exists_stat_listdir(tmp_path):
    host = RealHost()
    (tmp_path / "b").write_bytes(b"bee")
    (tmp_path / "a").write_bytes(b"a")
    assert host.read_bytes(str(tmp_path / "b")) == b"bee"
    assert host.exists(str(tmp_path / "a"))
    assert not host.exists(str(tmp_path / "c"))
    assert host.stat(str(tmp_path / "b")).st_size == 3
    assert host.listdir(str(tmp_path)) == ["a", "b"]


def test_read_of_a_fifo_never_waits(tmp_path):
    """H1's race: a FIFO where a file was stat'ed a moment ago reads as
    empty (no writer) or fails (a writer that sends nothing), at once."""
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    got = []

    def read():
        try:
            got.append(RealHost().read_bytes(fifo))
        except HostError as e:
            got.append(str(e))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    assert got == [b""]
    writer = os.open(fifo, os.O_RDWR)
    try:
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(5)
        assert got[1:] == ["cannot read '%s': nothing to read without "
                           "waiting: not a file" % fifo]
    finally:
        os.close(writer)


def test_a_failed_stat_is_not_a_missing_file(tmp_path):
    """W3's rule on this host too (the remote one: test_fakessh): only
    ENOENT and ENOTDIR make exists() and is_dir() False."""
    host = RealHost()
    (tmp_path / "f").write_bytes(b"")
    assert not host.exists(str(tmp_path / "missing"))
    assert not host.exists(str(tmp_path / "f" / "below-a-file"))
    assert not host.is_dir(str(tmp_path / "f"))
    os.symlink("loop", str(tmp_path / "loop"))
    with pytest.raises(HostError, match="cannot stat"):
        host.exists(str(tmp_path / "loop"))
    with pytest.raises(HostError, match="cannot stat"):
        host.is_dir(str(tmp_path / "loop"))


def test_read_missing_names_path_and_reason(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(HostError) as info:
        RealHost().read_bytes(missing)
    assert str(info.value) == (
        "cannot read '%s': No such file or directory" % missing)
    assert info.value.exit_code == EXIT_FAILED


# -- write_atomic -------------------------------------------------------------

def test_write_atomic_creates_new_file(tmp_path):
    target = tmp_path / "sd.conf"
    RealHost().write_atomic(str(target), b"new\n")
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_mode & 0o7777 == 0o644
    assert temp_files(tmp_path) == []


def test_write_atomic_new_file_mode(tmp_path):
    target = tmp_path / "saved"
    RealHost().write_atomic(str(target), b"x", mode=0o600)
    assert target.stat().st_mode & 0o7777 == 0o600


def test_write_atomic_replaces_and_keeps_mode(tmp_path):
    target = tmp_path / "sd.conf"
    target.write_bytes(b"old contents that are longer\n")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    RealHost().write_atomic(str(target), b"new\n", mode=0o600)
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_mode & 0o7777 == 0o640
    assert target.stat().st_ino != inode    # replaced, not rewritten
    assert temp_files(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_write_atomic_keeps_owner(tmp_path):
    target = tmp_path / "sd.conf"
    target.write_bytes(b"old")
    os.chown(target, 1234, 5678)
    RealHost().write_atomic(str(target), b"new")
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (1234, 5678)


def test_write_atomic_under_root(tmp_path):
    host = RealHost(root=str(tmp_path))
    (tmp_path / "kernel" / "drv").mkdir(parents=True)
    host.write_atomic(host.sys_path("/kernel/drv/sd.conf"), b"x")
    assert (tmp_path / "kernel" / "drv" / "sd.conf").read_bytes() == b"x"


def test_write_atomic_refuses_symlink_target(tmp_path):
    real = tmp_path / "real.conf"
    real.write_bytes(b"precious")
    link = tmp_path / "sd.conf"
    link.symlink_to(real)
    with pytest.raises(HostError, match="is a symbolic link"):
        RealHost(root=str(tmp_path)).write_atomic(str(link), b"evil")
    assert real.read_bytes() == b"precious"
    assert link.is_symlink()
    assert temp_files(tmp_path) == []


def test_write_atomic_refuses_symlinked_parent(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "drv").symlink_to(tmp_path / "elsewhere")
    host = RealHost(root=str(tmp_path))
    with pytest.raises(HostError) as info:
        host.write_atomic(host.sys_path("/kernel/drv/sd.conf"), b"evil")
    assert "'%s' is a symbolic link" % (tmp_path / "kernel" / "drv") in str(
        info.value)
    assert os.listdir(tmp_path / "elsewhere") == []


def test_write_atomic_refuses_non_regular_target(tmp_path):
    (tmp_path / "sd.conf").mkdir()
    with pytest.raises(HostError, match="not a regular file"):
        RealHost().write_atomic(str(tmp_path / "sd.conf"), b"x")
    assert temp_files(tmp_path) == []


def test_write_atomic_missing_directory(tmp_path):
    target = str(tmp_path / "no" / "sd.conf")
    with pytest.raises(HostError) as info:
        RealHost().write_atomic(target, b"x")
    assert str(info.value) == (
        "cannot write '%s': No such file or directory" % target)


class FullDiskHost(RealHost):
    """Writes half of the data, then fails like a full file system."""

    def _write_all(self, fd, data):
        os.write(fd, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class InterruptedHost(RealHost):
    def _write_all(self, fd, data):
        raise KeyboardInterrupt


def test_write_atomic_failure_keeps_old_file(tmp_path):
    target = tmp_path / "sd.conf"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o640)
    with pytest.raises(HostError) as info:
        FullDiskHost().write_atomic(str(target), b"new contents\n" * 100)
    assert str(info.value) == (
        "cannot write '%s': No space left on device" % target)
    assert target.read_bytes() == b"old\n"
    assert target.stat().st_mode & 0o7777 == 0o640
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize("bits", [0o4000, 0o2000, 0o1000])
def test_set_id_and_sticky_files_are_never_written(tmp_path, bits):
    """The engine's rule (serve_files.c op_replace, plain_mode) on this host
    too: a file with set-id or sticky bits is not replaced, and no new
    file gets them."""
    target = tmp_path / "f"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o644 | bits)
    host = RealHost()
    for call in (lambda: host.write_atomic(str(target), b"new\n"),
                 lambda: host.check_replaceable(str(target))):
        with pytest.raises(HostError) as info:
            call()
        assert info.value.exit_code == EXIT_REFUSED
        assert "has set-id or sticky bits (mode %04o)" % (0o644 | bits) \
            in str(info.value)
    assert target.read_bytes() == b"old\n"
    for call in (lambda: host.write_atomic(str(tmp_path / "g"), b"x",
                                           mode=0o644 | bits),
                 lambda: host.create_new(str(tmp_path / "g"), b"x",
                                         mode=0o600 | bits)):
        with pytest.raises(HostError, match="has set-id or sticky bits"):
            call()
    assert not (tmp_path / "g").exists()


def test_write_atomic_interrupt_cleans_up(tmp_path):
    target = tmp_path / "sd.conf"
    target.write_bytes(b"old\n")
    with pytest.raises(KeyboardInterrupt):
        InterruptedHost().write_atomic(str(target), b"new\n")
    assert target.read_bytes() == b"old\n"
    assert temp_files(tmp_path) == []


def test_mkdirs_and_remove(tmp_path):
    host = RealHost()
    directory = tmp_path / "var" / "sdtune"
    host.mkdirs(str(directory))
    host.mkdirs(str(directory))     # already there is fine
    assert directory.is_dir()
    (directory / "f").write_bytes(b"")
    host.remove(str(directory / "f"))
    assert not (directory / "f").exists()
    with pytest.raises(HostError, match="cannot remove"):
        host.remove(str(directory / "f"))
    (directory / "f").write_bytes(b"")
    with pytest.raises(HostError, match="cannot remove"):
        host.remove_dir(str(directory))         # not empty
    host.remove(str(directory / "f"))
    host.remove_dir(str(directory))
    assert not directory.exists() and directory.parent.is_dir()


def test_remove_dir_refuses_the_root_and_links(tmp_path):
    host = RealHost(root=str(tmp_path))
    with pytest.raises(HostError, match="it is the system root"):
        host.remove_dir(str(tmp_path))
    (tmp_path / "elsewhere" / "d").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(HostError, match="is a symbolic link"):
        host.remove_dir(str(tmp_path / "link" / "d"))
    assert (tmp_path / "elsewhere" / "d").is_dir()


# -- run ----------------------------------------------------------------------

def test_run_returns_output_and_argv():
    result = RealHost(commands=COMMANDS).run(
        "sh", ["-c", "echo out; echo err >&2; exit 3"])
    assert isinstance(result, CommandResult)
    assert result.argv == ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]
    assert result.returncode == 3       # non-zero exit is data
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"
    assert result.elapsed_ns > 0


def test_run_environment_is_fixed(monkeypatch):
    monkeypatch.setenv("SDTUNE_LEAK", "1")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    result = RealHost(commands=COMMANDS).run("env", [])
    assert sorted(result.stdout.splitlines()) == [
        "LANG=C", "LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]


def test_run_stdin():
    host = RealHost(commands=COMMANDS)
    assert host.run("sh", ["-c", "cat"], stdin=b"hello").stdout == "hello"
    # Without stdin the command reads end-of-file, never our terminal.
    assert host.run("sh", ["-c", "cat"]).stdout == ""


def test_run_decodes_bad_utf8():
    result = RealHost(commands=COMMANDS).run("sh", ["-c", r"printf 'a\377b'"])
    assert result.stdout == "a\ufffdb"


def test_run_unknown_name_refused():
    with pytest.raises(HostError) as info:
        RealHost(commands=COMMANDS).run("rm", ["-rf", "/"])
    assert str(info.value) == (
        "cannot run 'rm': not in the [commands] allow-list")


def test_run_relative_configured_path_refused():
    with pytest.raises(HostError, match="is not absolute"):
        RealHost(commands=COMMANDS).run("relative", ["1"])


def test_run_missing_executable():
    with pytest.raises(HostError) as info:
        RealHost(commands=COMMANDS).run("missing", [])
    assert str(info.value) == ("cannot run '/nonexistent/sdtune-no-such-"
                               "command': No such file or directory")


def test_run_timeout():
    host = RealHost(commands=COMMANDS, timeout_s=0.3)
    start = time.monotonic()
    with pytest.raises(HostError) as info:
        host.run("sleep", ["10"])
    assert str(info.value) == "cannot run '/bin/sleep': timed out after 0.3 s"
    assert time.monotonic() - start < 5
    with pytest.raises(HostError, match="timed out after 0.2 s"):
        host.run("sleep", ["10"], timeout_s=0.2)


# -- clocks and lock ---------------------------------------------------------

def test_clocks():
    host = RealHost()
    first = host.monotonic_ns()
    assert host.monotonic_ns() >= first
    assert abs(host.now() - time.time()) < 5


def test_lock_excludes_second_holder(tmp_path):
    host = RealHost()
    path = str(tmp_path / "apply.lock")
    with host.lock(path):
        with pytest.raises(HostError) as info:
            with RealHost().lock(path):
                pass
        assert str(info.value) == (
            "cannot lock '%s': locked by another sdtune process" % path)
    # Released on exit: it can be taken again.
    with host.lock(path):
        pass
    assert os.stat(path).st_mode & 0o7777 == 0o644


def test_lock_excludes_other_process(tmp_path):
    path = str(tmp_path / "apply.lock")
    child = textwrap.dedent("""
        import sys
        from sdtune.host import RealHost
        from sdtune.errors import HostError
        try:
            with RealHost().lock(sys.argv[1]):
                print("got it")
        except HostError as e:
            print(e)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PLUGIN_DIR))

    def other_process():
        return subprocess.run([sys.executable, "-c", child, path], env=env,
                              capture_output=True, text=True,
                              check=True).stdout.strip()

    with RealHost().lock(path):
        assert other_process() == (
            "cannot lock '%s': locked by another sdtune process" % path)
    assert other_process() == "got it"


def test_realhost_is_a_host():
    assert isinstance(RealHost(), Host)
