# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests of RealHost's own ways, against the real Linux host: what the
Host contract (tests/contract/test_host_contract.py, which holds RealHost
and the engine to the same rules) does not say, such as its messages, a
write failing or interrupted half-way, and its locks across instances."""

import errno
import os
import threading

import pytest

from sdtune.errors import EXIT_FAILED, HostError
from sdtune.host import Host, RealHost


def temp_files(directory):
    return [n for n in os.listdir(directory) if ".sdtune." in n]


# -- sys_path ---------------------------------------------------------------

def test_sys_path_default_root_is_slash():
    assert RealHost().sys_path("/kernel/drv/sd.conf") == "/kernel/drv/sd.conf"


@pytest.mark.parametrize("path", ["/../etc/passwd", "/kernel/../../etc",
                                  "/a/b/../../../x"])
def test_sys_path_refuses_escape(tmp_path, path):
    with pytest.raises(HostError, match="outside the root"):
        RealHost(root=str(tmp_path)).sys_path(path)


# -- reading ------------------------------------------------------------------

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


def test_read_missing_names_path_and_reason(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(HostError) as info:
        RealHost().read_bytes(missing)
    assert str(info.value) == (
        "cannot read '%s': No such file or directory" % missing)
    assert info.value.exit_code == EXIT_FAILED


# -- write_atomic -------------------------------------------------------------

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


def test_write_atomic_interrupt_cleans_up(tmp_path):
    target = tmp_path / "sd.conf"
    target.write_bytes(b"old\n")
    with pytest.raises(KeyboardInterrupt):
        InterruptedHost().write_atomic(str(target), b"new\n")
    assert target.read_bytes() == b"old\n"
    assert temp_files(tmp_path) == []


# -- lock ---------------------------------------------------------------------

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


def test_realhost_is_a_host():
    assert isinstance(RealHost(), Host)
