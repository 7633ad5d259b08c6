# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The Host contract (plugin/sdtune/host/base.py, the Host class and its
methods), one rule a test, each run identically against both hosts:

    local   RealHost on this machine, with its root a temporary directory
    engine  SshHost talking to a real `sdio serve --root ROOT` over a
            pipe (SshHost's transport=(): the engine runs here, no ssh)

Where a rule refuses, the test checks the kind of error both hosts raise
(HostError or LockedError, and its exit code: 3 a refusal, 4 a failure)
and the words of the reason that say why; the engine's messages name
DEST:PATH and may say more, the rule is the same.  The tests of either
implementation's details (the framing, a write failing half-way, the
engine's policy) stay beside the implementation: tests/engine,
tests/unit/test_host.py, tests/unit/host.

No sshd and no emulated drive: the engine started over a pipe costs what
the engine tests of the quick tier cost (tests/marks.py).
"""

import errno
import os
import stat
import subprocess
import sys
import threading
import time

import pytest

from sdtune.errors import EXIT_FAILED, EXIT_REFUSED, HostError, LockedError
from sdtune.host import RealHost
from tests.procs import ended
from sdtune.host.ssh import SshHost

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine"))
from engine_run import build_engine  # noqa: E402

COMMANDS = {
    "sh": "/bin/sh",
    "cat": "/bin/cat",
    "env": "/usr/bin/env",
    "sleep": "/bin/sleep",
    "relative": "sleep",
    "missing": "/nonexistent/sdtune-no-such-command",
}
MIB = 1 << 20
# Held by a process other than the test's (a POSIX lock of the test
# process itself would not exclude RealHost, which runs in it): prints
# "held" once it holds the lock, lets it go when its stdin closes.
HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""
# Whether a process other than the test's can take the lock sdtune takes.
PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("locked")
else:
    print("free")
"""


@pytest.fixture(scope="module")
def sdio():
    return build_engine()


@pytest.fixture(params=["local", "engine"])
def host(request, tmp_path, sdio):
    """Each host, with its root a fresh directory (host.root)."""
    root = str(tmp_path / "root")
    os.mkdir(root)
    commands = dict(COMMANDS, sdio=sdio)
    if request.param == "local":
        h = RealHost(root=root, commands=commands, timeout_s=30)
    else:
        h = SshHost("engine", root, commands, timeout_s=30,
                    connect_timeout_s=30, transport=())
    yield h
    h.close()


def at(h, *names):
    return os.path.join(h.root, *names)


def put(path, data=b"", mode=None):
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)


def get(path):
    with open(path, "rb") as f:
        return f.read()


def error(call, kind=HostError):
    """The error call raises: a LockedError exactly when kind is one."""
    with pytest.raises(kind) as info:
        call()
    assert isinstance(info.value, LockedError) == (kind is LockedError), \
        info.value
    return info.value


def refused(call, words):
    """call is refused (exit 3, nothing done), the reason saying words."""
    e = error(call)
    assert e.exit_code == EXIT_REFUSED, e
    assert words in e.reason, e
    return e


def fails(call, words):
    """call fails (exit 4), the reason saying words."""
    e = error(call)
    assert e.exit_code == EXIT_FAILED, e
    assert words in e.reason, e
    return e


def temp_files(directory):
    return [n for n in os.listdir(directory) if ".sdtune." in n]


def lock_state(path):
    return subprocess.run([sys.executable, "-c", PROBE, path],
                          capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


# -- paths ------------------------------------------------------------------


def test_sys_path_resolves_under_the_root_and_never_above(host):
    assert host.sys_path("/kernel/./drv/../drv//sd.conf") == at(
        host, "kernel", "drv", "sd.conf")
    assert host.sys_path("/") == host.root
    with pytest.raises(HostError, match="outside the root"):
        host.sys_path("/kernel/../../etc")
    with pytest.raises(HostError, match="not an absolute path"):
        host.sys_path("kernel/drv/sd.conf")


# -- reading ----------------------------------------------------------------


def test_read_bytes_returns_the_whole_file(host):
    data = bytes(range(256)) * 1000
    put(at(host, "f"), data)
    assert host.read_bytes(at(host, "f")) == data
    put(at(host, "empty"))
    assert host.read_bytes(at(host, "empty")) == b""


def test_read_bytes_over_the_limit_is_an_error_not_a_longer_wait(host):
    put(at(host, "f"), b"x" * (MIB + 1))
    assert host.read_bytes(at(host, "f"), limit=MIB + 1) == b"x" * (MIB + 1)
    e = fails(lambda: host.read_bytes(at(host, "f"), limit=MIB),
              "larger than 1 MiB")
    assert e.verb == "read"
    fails(lambda: host.read_bytes("/dev/zero", limit=MIB), "larger than")


def test_read_bytes_of_a_missing_file_fails(host):
    e = fails(lambda: host.read_bytes(at(host, "none")),
              os.strerror(errno.ENOENT))
    assert e.verb == "read"


def test_read_bytes_of_a_fifo_never_waits(host):
    fifo = at(host, "fifo")
    os.mkfifo(fifo)
    # No writer: empty at once.
    assert host.read_bytes(fifo) == b""
    # A writer that sends nothing: a failure at once.
    writer = os.open(fifo, os.O_RDWR)
    try:
        fails(lambda: host.read_bytes(fifo), "")
    finally:
        os.close(writer)


def test_exists_is_false_only_when_there_is_no_such_file(host):
    put(at(host, "f"))
    os.symlink("none", at(host, "dangling"))
    assert host.exists(at(host, "f"))
    assert host.exists(host.root)
    assert not host.exists(at(host, "none"))            # ENOENT
    assert not host.exists(at(host, "f", "below"))      # ENOTDIR
    assert not host.exists(at(host, "dangling"))        # ENOENT, followed
    os.symlink("loop", at(host, "loop"))
    e = fails(lambda: host.exists(at(host, "loop")),
              os.strerror(errno.ELOOP))
    assert e.verb == "stat"
    fails(lambda: host.exists(at(host, "n" * 300)),
          os.strerror(errno.ENAMETOOLONG))


def test_is_dir_follows_links_and_fails_as_exists_does(host):
    os.mkdir(at(host, "d"))
    put(at(host, "f"))
    os.symlink("d", at(host, "to-d"))
    assert host.is_dir(at(host, "d")) and host.is_dir(at(host, "to-d"))
    assert not host.is_dir(at(host, "f"))
    assert not host.is_dir(at(host, "none"))
    assert not host.is_dir(at(host, "f", "below"))
    os.symlink("loop", at(host, "loop"))
    fails(lambda: host.is_dir(at(host, "loop")), os.strerror(errno.ELOOP))


def test_stat_follows_links_and_gives_every_field(host):
    put(at(host, "f"), b"abc", 0o640)
    os.utime(at(host, "f"), ns=(1500000000250000000, 1600000000750000000))
    os.symlink("f", at(host, "l"))
    mine = os.stat(at(host, "f"))
    for path in (at(host, "f"), at(host, "l")):
        st = host.stat(path)
        assert (st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                st.st_gid, st.st_size) == (
            mine.st_mode, mine.st_ino, mine.st_dev, mine.st_nlink,
            mine.st_uid, mine.st_gid, 3)
        assert st[stat.ST_MTIME] == 1600000000
        assert st.st_mtime == pytest.approx(1600000000.75)
        assert st.st_atime == pytest.approx(1500000000.25)
        assert st.st_mtime_ns == 1600000000750000000
    e = fails(lambda: host.stat(at(host, "none")), os.strerror(errno.ENOENT))
    assert e.verb == "stat"


def test_same_file_through_links_and_spellings(host):
    put(at(host, "a"))
    put(at(host, "c"))
    os.link(at(host, "a"), at(host, "b"))
    os.symlink("a", at(host, "s"))
    assert host.same_file(at(host, "a"), at(host, "b"))
    assert host.same_file(at(host, "a"), at(host, "s"))
    assert host.same_file(at(host, "a"), host.root + "/./a")
    assert not host.same_file(at(host, "a"), at(host, "c"))
    # A missing file is the same as nothing: False, not an error.
    assert not host.same_file(at(host, "a"), at(host, "none"))
    assert not host.same_file(at(host, "none"), at(host, "none"))


def test_listdir_is_every_name_sorted_as_bytes(host):
    names = [b"b", b"a", b"B", b"a b", b"-", b".hidden", b"\xff",
             "\U0001f600".encode(), "\u00e9".encode(), b"z" * 200]
    for n in names:
        put(os.path.join(host.root.encode(), n))
    os.mkdir(at(host, "dir"))
    got = host.listdir(host.root)
    assert [os.fsencode(n) for n in got] == sorted(names + [b"dir"])
    assert host.listdir(at(host, "dir")) == []
    fails(lambda: host.listdir(at(host, "none")), os.strerror(errno.ENOENT))
    fails(lambda: host.listdir(at(host, "a")), os.strerror(errno.ENOTDIR))


def test_readlink_and_read_links(host):
    os.mkdir(at(host, "rdsk"))
    links = {"c0t%dd0s0" % i: "../../devices/disk@%d:a,raw" % i
             for i in range(50)}
    for name, target in links.items():
        os.symlink(target, at(host, "rdsk", name))
    put(at(host, "rdsk", "regular"))
    os.mkdir(at(host, "rdsk", "subdir"))
    assert host.readlink(at(host, "rdsk", "c0t7d0s0")) == links["c0t7d0s0"]
    assert host.read_links(at(host, "rdsk")) == links
    fails(lambda: host.readlink(at(host, "rdsk", "regular")),
          os.strerror(errno.EINVAL))
    fails(lambda: host.readlink(at(host, "none")), os.strerror(errno.ENOENT))


# -- creating and replacing files -------------------------------------------


def test_create_new_writes_a_file_that_did_not_exist(host):
    path = at(host, "new")
    data = os.urandom(100000)
    host.create_new(path, data, mode=0o640)
    assert get(path) == data
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 & ~umask
    assert sorted(os.listdir(host.root)) == ["new"]


def test_create_new_refuses_anything_already_there(host):
    put(at(host, "f"), b"old")
    os.mkdir(at(host, "d"))
    os.mkfifo(at(host, "fifo"))
    for name in ("f", "d", "fifo"):
        e = refused(lambda: host.create_new(at(host, name), b"x"),
                    "it already exists")
        assert e.verb == "create"
    assert get(at(host, "f")) == b"old"
    # A link, even one to nothing, is refused as a link on the way.
    os.symlink("none", at(host, "dangling"))
    refused(lambda: host.create_new(at(host, "dangling"), b"x"),
            "is a symbolic link")
    assert not os.path.lexists(at(host, "none"))


@pytest.mark.parametrize("bits", [0o4000, 0o2000, 0o1000])
def test_nothing_is_made_with_set_id_or_sticky_bits(host, bits):
    calls = [lambda: host.create_new(at(host, "g"), b"x", mode=0o600 | bits),
             lambda: host.write_atomic(at(host, "g"), b"x",
                                       mode=0o644 | bits),
             lambda: host.mkdirs(at(host, "g"), 0o755 | bits)]
    for call in calls:
        refused(call, "set-id or sticky bits")
    assert os.listdir(host.root) == []


@pytest.mark.parametrize("bits", [0o4000, 0o2000, 0o1000])
def test_a_file_with_set_id_or_sticky_bits_is_never_replaced(host, bits):
    target = at(host, "f")
    put(target, b"old\n", 0o644 | bits)
    for call in (lambda: host.write_atomic(target, b"new\n"),
                 lambda: host.check_replaceable(target)):
        refused(call, "set-id or sticky bits")
    assert get(target) == b"old\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644 | bits
    assert os.listdir(host.root) == ["f"]


def test_write_atomic_makes_a_new_file_with_its_mode(host):
    host.write_atomic(at(host, "a"), b"a\n")
    host.write_atomic(at(host, "b"), b"b\n", mode=0o600)
    assert get(at(host, "a")) == b"a\n" and get(at(host, "b")) == b"b\n"
    # The mode asked for (0644 by default), whatever the umask.
    assert stat.S_IMODE(os.stat(at(host, "a")).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(at(host, "b")).st_mode) == 0o600
    assert temp_files(host.root) == []


def test_write_atomic_replaces_the_file_keeping_mode_and_owner(host):
    target = at(host, "sd.conf")
    put(target, b"old contents, longer than the new ones\n", 0o640)
    if os.geteuid() == 0:
        os.chown(target, 1234, 5678)
    before = os.stat(target)
    host.write_atomic(target, b"new\n", mode=0o600)
    after = os.stat(target)
    assert get(target) == b"new\n"
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_ino != before.st_ino      # a new file renamed over it
    assert temp_files(host.root) == []


def test_write_atomic_readers_see_the_old_file_or_the_new(host):
    target = at(host, "sd.conf")
    versions = [bytes([65 + i]) * (256 * 1024 + i) for i in range(12)]
    put(target, versions[0])
    seen = set()
    done = threading.Event()

    def reader():
        while not done.is_set():
            data = get(target)
            assert data in versions, len(data)
            seen.add(data[:1])
    t = threading.Thread(target=reader)
    t.start()
    try:
        for data in versions[1:]:
            host.write_atomic(target, data)
    finally:
        done.set()
        t.join(60)
    assert get(target) == versions[-1]
    assert temp_files(host.root) == []


def test_write_atomic_refuses_what_is_not_a_regular_file(host):
    os.mkdir(at(host, "d"))
    os.mkfifo(at(host, "fifo"))
    for name in ("d", "fifo"):
        for call in (lambda: host.write_atomic(at(host, name), b"x"),
                     lambda: host.check_replaceable(at(host, name))):
            e = refused(call, "not a regular file")
            assert e.verb == "write"
    assert sorted(os.listdir(host.root)) == ["d", "fifo"]


def test_write_into_a_missing_directory_fails(host):
    for call in (lambda: host.write_atomic(at(host, "no", "f"), b"x"),
                 lambda: host.create_new(at(host, "no", "f"), b"x")):
        e = fails(call, os.strerror(errno.ENOENT))
        assert e.verb == "write"
    assert os.listdir(host.root) == []


def test_check_replaceable_passes_what_write_atomic_would_replace(host):
    host.check_replaceable(at(host, "new"))
    put(at(host, "f"), b"x", 0o600)
    host.check_replaceable(at(host, "f"))
    assert os.listdir(host.root) == ["f"]


# -- symbolic links on the way of a write ----------------------------------


@pytest.fixture
def links(host):
    """real/ with f in it, via -> real, real/lf -> f, real/ld -> ."""
    real = at(host, "real")
    os.mkdir(real)
    put(os.path.join(real, "f"), b"old")
    os.mkdir(os.path.join(real, "d"))
    os.symlink("real", at(host, "via"))
    os.symlink("f", os.path.join(real, "lf"))
    os.symlink("d", os.path.join(real, "ld"))
    return real


WRITES = {
    "create_new": lambda h, p: h.create_new(p, b"x"),
    "write_atomic": lambda h, p: h.write_atomic(p, b"x"),
    "check_replaceable": lambda h, p: h.check_replaceable(p),
    "mkdirs": lambda h, p: h.mkdirs(p),
    "remove": lambda h, p: h.remove(p),
    "remove_dir": lambda h, p: h.remove_dir(p),
    "lock": lambda h, p: h.lock(p).__enter__(),
}


@pytest.mark.parametrize("op", sorted(WRITES))
def test_no_write_goes_through_a_symbolic_link_below_the_root(host, links,
                                                              op):
    """A link in the path, its last component included, could lead a
    root-owned write anywhere: refused, nothing done."""
    before = sorted(os.walk(host.root))
    for path in (at(host, "via", "f"), at(host, "via", "d"),
                 at(host, "via", "new", "g"), at(host, "real", "lf"),
                 at(host, "real", "ld")):
        refused(lambda: WRITES[op](host, path), "is a symbolic link")
    assert sorted(os.walk(host.root)) == before
    assert get(os.path.join(links, "f")) == b"old"


def test_links_above_the_root_are_not_on_the_way(host, tmp_path):
    """Only components below the root are checked: the root itself may
    be reached through a link (a mounted image, /var -> /data/var)."""
    os.mkdir(str(tmp_path / "real"))
    os.symlink("real", str(tmp_path / "rootlink"))
    path = str(tmp_path / "rootlink" / "f")
    other = type(host)(*_args(host, str(tmp_path / "rootlink")))
    try:
        other.create_new(path, b"x")
        other.write_atomic(path, b"y")
        assert get(str(tmp_path / "real" / "f")) == b"y"
    finally:
        other.close()


def _args(host, root):
    """The constructor's arguments for a host like host on root."""
    if isinstance(host, RealHost):
        return (root, host.commands)
    return (host.dest, root, host.commands, host.ssh, host.ssh_options,
            host.timeout_s, host.connect_timeout_s, host.libraries,
            host.transport)


# -- directories and removal -------------------------------------------------


def test_mkdirs_makes_the_parents_and_the_leaf_with_its_mode(host):
    deep = at(host, "a", "b", "c")
    host.mkdirs(deep, 0o700)
    assert os.path.isdir(deep)
    assert stat.S_IMODE(os.stat(deep).st_mode) == 0o700
    host.mkdirs(deep)          # already there: nothing to do
    host.mkdirs(host.root)
    put(at(host, "f"))
    e = fails(lambda: host.mkdirs(at(host, "f")), os.strerror(errno.EEXIST))
    assert e.verb == "create"
    fails(lambda: host.mkdirs(at(host, "f", "x")),
          os.strerror(errno.ENOTDIR))


def test_remove_unlinks_a_file_and_nothing_else(host):
    put(at(host, "f"))
    host.remove(at(host, "f"))
    assert not os.path.lexists(at(host, "f"))
    e = fails(lambda: host.remove(at(host, "f")), os.strerror(errno.ENOENT))
    assert e.verb == "remove"
    os.mkdir(at(host, "d"))
    fails(lambda: host.remove(at(host, "d")), "")
    assert os.path.isdir(at(host, "d"))


def test_remove_dir_removes_an_empty_directory_never_the_root(host):
    os.makedirs(at(host, "a", "b"))
    e = fails(lambda: host.remove_dir(at(host, "a")),
              os.strerror(errno.ENOTEMPTY))
    assert e.verb == "remove"
    host.remove_dir(at(host, "a", "b"))
    assert not os.path.exists(at(host, "a", "b"))
    fails(lambda: host.remove_dir(at(host, "a", "b")),
          os.strerror(errno.ENOENT))
    put(at(host, "f"))
    fails(lambda: host.remove_dir(at(host, "f")), os.strerror(errno.ENOTDIR))
    refused(lambda: host.remove_dir(host.root), "root")
    refused(lambda: host.remove_dir(host.root + "/a/.."), "root")
    assert os.path.isdir(host.root)


# -- locks ------------------------------------------------------------------


def test_lock_excludes_other_processes_until_released(host):
    path = at(host, "lock")
    with host.lock(path):
        assert lock_state(path) == "locked"
        # The holder's pid, for the operator looking for a stuck one.
        assert int(get(path)) > 0
    assert lock_state(path) == "free"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_lock_held_elsewhere_is_refused_as_locked(host):
    path = at(host, "lock")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, path],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        e = error(lambda: host.lock(path).__enter__(), LockedError)
        assert e.exit_code == EXIT_REFUSED
        assert e.reason == "locked by another sdtune process"
    finally:
        holder.stdin.close()
        holder.wait(60)
    with host.lock(path):
        pass


def test_a_second_lock_of_the_same_file_is_refused_and_keeps_the_first(
        host):
    path = at(host, "lock")
    with host.lock(path):
        for spelling in (path, host.root + "/./lock"):
            error(lambda: host.lock(spelling).__enter__(), LockedError)
        # The refusal did not drop the lock (closing a descriptor would).
        assert lock_state(path) == "locked"
    assert lock_state(path) == "free"


def test_locks_of_different_files_are_independent(host):
    paths = [at(host, "lock%d" % i) for i in range(5)]
    with host.lock(paths[0]), host.lock(paths[1]):
        assert [lock_state(p) for p in paths[:2]] == ["locked"] * 2
    assert [lock_state(p) for p in paths[:2]] == ["free"] * 2


def test_lock_in_a_missing_directory_fails(host):
    fails(lambda: host.lock(at(host, "no", "lock")).__enter__(),
          os.strerror(errno.ENOENT))


# -- commands ---------------------------------------------------------------


def test_run_returns_status_and_output_as_data(host):
    result = host.run("sh", ["-c", "echo out; echo err >&2; exit 3"])
    assert result.argv == ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]
    assert (result.returncode, result.stdout, result.stderr) == (
        3, "out\n", "err\n")
    assert result.elapsed_ns > 0
    # Killed by a signal: minus its number, as subprocess says it.
    assert host.run("sh", ["-c", "kill -9 $$"]).returncode == -9
    # Arguments are words, never a shell's.
    assert host.run("sh", ["-c", 'echo "$0|$1"', "a b", "$HOME"]
                    ).stdout == "a b|$HOME\n"
    assert host.run("sh", ["-c", r"printf 'a\377b'"]).stdout == "a\ufffdb"


def test_run_has_a_fixed_environment_and_runs_in_slash(host):
    result = host.run("env", [])
    assert sorted(result.stdout.splitlines()) == [
        "LANG=C", "LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
    assert host.run("sh", ["-c", "pwd"]).stdout == "/\n"


def test_run_stdin(host):
    data = os.urandom(2 * MIB)
    got = host.run("sh", ["-c", "od -An -c | wc -l"], stdin=data)
    assert got.returncode == 0
    assert host.run("cat", [], stdin=b"hello").stdout == "hello"
    # Without input the command reads end-of-file at once.
    assert host.run("cat", []).stdout == ""
    # One that exits without reading its input is no error.
    assert host.run("sh", ["-c", "exit 0"], stdin=b"x" * MIB
                    ).returncode == 0


def test_run_only_what_the_allow_list_names_by_absolute_path(host):
    e = fails(lambda: host.run("rm", ["-rf", "/"]),
              "not in the [commands] allow-list")
    assert e.verb == "run"
    fails(lambda: host.run("relative", ["1"]), "is not absolute")
    fails(lambda: host.run("missing", []), os.strerror(errno.ENOENT))


def test_run_timeout_kills_the_command(host):
    start = time.monotonic()
    e = fails(lambda: host.run("sleep", ["20"], timeout_s=0.3),
              "timed out after 0.3 s")
    assert e.verb == "run" and e.obj.endswith("/bin/sleep")
    assert time.monotonic() - start < 10
    # A command that closes its output and goes on running.
    fails(lambda: host.run("sh", ["-c", "exec >&- 2>&-; sleep 20"],
                           timeout_s=0.3), "timed out")
    assert time.monotonic() - start < 20


def test_run_output_is_bounded(host):
    """More than 64 MiB on either stream is an error, never memory
    without end (/dev/zero)."""
    fails(lambda: host.run("cat", ["/dev/zero"]), "larger than 64 MiB")
    fails(lambda: host.run("sh", ["-c", "exec cat /dev/zero >&2"]),
          "larger than 64 MiB")
    assert host.run("sh", ["-c", "head -c %d /dev/zero" % (64 * MIB)]
                    ).stdout == "\0" * (64 * MIB)


def waits_for(path, then):
    """A script that prints "first", waits up to 20 s for path, and then
    runs then, or exits 99 when path never came."""
    return ("echo first; i=0; while [ ! -e %s ]; do i=$((i+1)); "
            "[ $i -gt 2000 ] && exit 99; sleep 0.01; done; %s"
            % (path, then))


def test_stream_hands_on_the_output_while_the_command_runs(host):
    """on_output sees the first line while the command still waits for
    the file on_output then creates: exit 3, not 99, says the command
    saw it."""
    go = at(host, "go")
    seen = []

    def on_output(data):
        seen.append(data)
        if b"".join(seen) == b"first\n":
            put(go)
    script = waits_for(go, "echo second; echo err >&2; exit 3")
    result = host.stream("sh", ["-c", script], on_output, timeout_s=30)
    assert b"".join(seen) == b"first\nsecond\n"
    assert result.argv == ["/bin/sh", "-c", script]
    assert (result.returncode, result.stdout, result.stderr) == (
        3, "", "err\n")
    assert result.elapsed_ns > 0
    seen.clear()
    result = host.stream("sh", ["-c", r"printf 'a\377\0b'; kill -9 $$"],
                         seen.append)
    assert (b"".join(seen), result.returncode) == (b"a\377\0b", -9)
    # Without input, in "/", with the fixed environment, as run.
    seen.clear()
    host.stream("sh", ["-c", "cat; pwd; echo $PATH"], seen.append)
    assert b"".join(seen) == b"/\n/usr/sbin:/usr/bin:/sbin:/bin\n"
    # The host is as usable afterwards as after a run.
    assert host.run("sh", ["-c", "echo after"]).stdout == "after\n"


@pytest.mark.parametrize("error", [RuntimeError, OSError, KeyboardInterrupt])
def test_stream_on_output_raising_kills_the_command(host, error):
    pids = []

    def on_output(data):
        pids.append(int(data))
        raise error("the log is full")
    with pytest.raises(error, match="the log is full"):
        host.stream("sh", ["-c", "echo $$; exec sleep 60"], on_output,
                    timeout_s=30)
    assert len(pids) == 1
    assert ended(pids[0])


def test_stream_timeout_kills_the_command(host):
    seen = []
    start = time.monotonic()
    e = fails(lambda: host.stream("sh", ["-c", "echo x; exec sleep 20"],
                                  seen.append, timeout_s=0.3),
              "timed out after 0.3 s")
    assert e.verb == "run" and e.obj.endswith("/bin/sh")
    assert seen == [b"x\n"]
    assert time.monotonic() - start < 10


def test_stream_only_what_run_would_run(host):
    def never(data):
        raise AssertionError(data)
    e = fails(lambda: host.stream("rm", ["-rf", "/"], never),
              "not in the [commands] allow-list")
    assert e.verb == "run"
    fails(lambda: host.stream("relative", ["1"], never), "is not absolute")
    fails(lambda: host.stream("missing", [], never),
          os.strerror(errno.ENOENT))


def test_stream_stderr_is_bounded_and_stdout_handed_on(host):
    """The output goes on as it comes, none of it held, so more than
    run's bound passes; stderr is held, and bounded as run's."""
    count = [0]

    def on_output(data):
        count[0] += len(data)
    result = host.stream("sh", ["-c", "head -c %d /dev/zero" % (65 * MIB)],
                         on_output)
    assert (count[0], result.returncode, result.stdout) == (65 * MIB, 0, "")
    fails(lambda: host.stream("sh", ["-c", "exec cat /dev/zero >&2"],
                              on_output), "larger than 64 MiB")


def test_can_run(host):
    put(at(host, "plain"), b"", 0o644)
    commands = dict(host.commands, plain=at(host, "plain"),
                    dir=host.root)
    host.commands = commands
    assert host.can_run("sh")
    assert not host.can_run("plain")        # not executable
    assert not host.can_run("dir")          # not a file
    assert not host.can_run("missing")
    assert not host.can_run("relative")
    assert not host.can_run("unlisted")


# -- clocks and who --------------------------------------------------------


def test_clocks_and_who(host):
    first = host.monotonic_ns()
    assert host.monotonic_ns() >= first
    assert abs(host.now() - time.time()) < 5
    assert host.is_root() == (os.geteuid() == 0)
    assert host.user()


# -- the one difference -----------------------------------------------------


def test_only_the_engine_fences_writes_to_its_root(host, tmp_path):
    """Said in the contract: the engine serves an ssh key, perhaps one
    forced to `sdio serve --root /`, and writes nothing outside ROOT;
    on the machine itself ROOT (-R) is where system paths resolve, and a
    file the operator names (plan --save, export) may be anywhere."""
    outside = str(tmp_path / "outside")
    if isinstance(host, RealHost):
        host.create_new(outside, b"x")
        assert get(outside) == b"x"
    else:
        refused(lambda: host.create_new(outside, b"x"),
                "outside the root")
        assert not os.path.exists(outside)


# -- a stream over SSH ------------------------------------------------------


@pytest.fixture
def engine(tmp_path, sdio):
    """SshHost alone, over a pipe to the engine."""
    root = str(tmp_path / "root")
    os.mkdir(root)
    h = SshHost("engine", root, dict(COMMANDS, sdio=sdio), timeout_s=30,
                connect_timeout_s=30, transport=())
    yield h
    h.close()


def test_a_link_lost_in_a_stream_is_a_lost_connection(engine):
    """The engine gone in the middle of a stream (here: killed by the
    command itself, once the test has its first line): the HostError of
    any lost session, and the session over for every later call."""
    go = at(engine, "go")
    seen = []

    def on_output(data):
        seen.append(data)
        put(go)
    e = fails(lambda: engine.stream(
        "sh", ["-c", waits_for(go, "kill -9 $PPID; sleep 0.2; echo late")],
        on_output, timeout_s=30), "the connection was lost")
    assert (e.verb, e.obj) == ("reach", "engine")
    assert seen == [b"first\n"]
    later = fails(engine.now, "the connection was lost")
    assert later is e


def test_a_stream_given_up_ends_the_session(engine):
    """What on_output raises ends the session too: it cannot be trusted
    in the middle of an answer; the engine ends, and so its command."""
    pids = []

    def on_output(data):
        pids.append(int(data))
        raise KeyboardInterrupt()
    engine.now()
    proc = engine._proc
    with pytest.raises(KeyboardInterrupt):
        engine.stream("sh", ["-c", "echo $$; exec sleep 60"], on_output)
    assert ended(pids[0]) and proc.poll() is not None
    e = fails(engine.now, "given up in the middle of a command's output")
    assert (e.verb, e.obj) == ("reach", "engine")
