# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for `sdio serve` (plugin/engine/serve_*.c), driven as sdtune drives
it: a client speaking the framed protocol over the server's stdin and
stdout.

Every op is checked against what the test process sees of the same
files (os.stat, os.readlink, fcntl.lockf), and every refusal by its err
code.  The tests run as root; the checks that only refuse an ordinary
user run a server that drops to uid/gid 65534 first.
"""

import errno
import fcntl
import os
import pwd
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from engine_run import MIB

from tests.procs import ended

# A server that has not answered in this long is stuck: the watchdog kills
# it so that a hung test fails instead of hanging the suite.
WATCHDOG_S = 120
NOBODY = 65534


def frame(word, *fields):
    """One framed message: header line, then LEN line and bytes each."""
    parts = [b"%s %d\n" % (word.encode(), len(fields))]
    for f in fields:
        if isinstance(f, int):
            f = str(f)
        if isinstance(f, str):
            f = f.encode()
        parts += [b"%d\n" % len(f), f]
    return b"".join(parts)


class ServeError(Exception):
    def __init__(self, fields):
        super().__init__(fields)
        self.fields = fields
        self.code = fields[0].decode() if fields else ""


class Client:
    """`sdio serve --root ROOT` with pipes on its stdin and stdout."""

    def __init__(self, sdio, root, extra=(), **popen):
        self.proc = subprocess.Popen(
            [sdio, "serve", "--root", root, *extra], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
        self.answered = 0
        self.watchdog = threading.Timer(WATCHDOG_S, self.proc.kill)
        self.watchdog.daemon = True
        self.watchdog.start()

    def send(self, word, *fields):
        self.proc.stdin.write(frame(word, *fields))
        self.proc.stdin.flush()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def recv(self):
        """(word, [field bytes]) of the next response, which must answer
        the next request (its header's third word counts them); a part
        of a stream's answer is of the next request too, and the answer
        still to come."""
        out = self.proc.stdout
        header = out.readline()
        assert header.endswith(b"\n"), header
        word, count, seq = header[:-1].split(b" ")
        if word != b"part":
            self.answered += 1
        assert int(seq) == self.answered + (word == b"part"), (
            header, self.answered)
        fields = []
        for _ in range(int(count)):
            length = out.readline()
            assert length.endswith(b"\n"), length
            data = out.read(int(length))
            assert len(data) == int(length)
            fields.append(data)
        return word.decode(), fields

    def stream(self, *fields):
        """(the parts, the ok fields) of a stream request, or ServeError
        with the err fields."""
        self.send("stream", *fields)
        parts = []
        while True:
            word, got = self.recv()
            if word != "part":
                break
            assert len(got) == 1, got
            parts.append(got[0])
        if word == "err":
            raise ServeError(got)
        assert word == "ok", (word, got)
        return parts, got

    def call(self, op, *fields):
        """The ok fields of op, or ServeError with the err fields."""
        self.send(op, *fields)
        word, got = self.recv()
        if word == "err":
            raise ServeError(got)
        assert word == "ok", (word, got)
        return got

    def err(self, op, *fields):
        """The err fields of op, which must fail."""
        with pytest.raises(ServeError) as info:
            self.call(op, *fields)
        return [f.decode(errors="replace") for f in info.value.fields]

    def finish(self, timeout=60):
        """Close its stdin (EOF) and return its exit status."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        rc = self.proc.wait(timeout)
        self.watchdog.cancel()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(60)
        self.watchdog.cancel()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


@pytest.fixture
def root(tmp_path):
    return str(tmp_path)


@pytest.fixture
def serve(sdio, root):
    """A started server on root; killed afterwards if still running."""
    clients = []

    def start(**popen):
        c = Client(sdio, root, **popen)
        clients.append(c)
        return c
    yield start
    for c in clients:
        c.kill()


@pytest.fixture
def srv(serve):
    return serve()


def errno_fields(e, stage):
    return ["errno", stage, os.strerror(e), str(e)]


def write(path, data, mode=None):
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def lockf_free(path):
    """Whether this process can take the lock sdtune takes on path."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        assert e.errno in (errno.EACCES, errno.EAGAIN)
        return False
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


# -- framing and the loop ---------------------------------------------------


def test_hello_and_eof(srv, root):
    got = srv.call("hello")
    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        user = str(os.geteuid())
    # The zone is illumos's alone: "" elsewhere.
    assert got == [b"3", str(os.geteuid()).encode(), user.encode(),
                   str(srv.proc.pid).encode(), root.encode(), b""]
    assert srv.finish() == 0
    assert srv.proc.stdout.read() == b""


def test_bye(srv):
    assert srv.call("bye") == []
    assert srv.proc.wait(60) == 0
    assert srv.proc.stdout.read() == b""


def test_now(srv):
    before = time.time_ns()
    (got,) = srv.call("now")
    after = time.time_ns()
    assert before - 5 * 10**9 <= int(got) <= after + 5 * 10**9


@pytest.mark.parametrize("data, what", [
    (b"hello x\n", "bad field count"),
    (b"hello -1\n", "bad field count"),
    (b"hello\n", "want 'WORD N'"),
    (b" 0\n", "want 'WORD N'"),
    (b"HELLO 0\n", "bad word"),
    (b"hello 1000001\n", "bad field count"),
    (b"read 1\n83886081\n", "malformed field length"),
    (b"read 1\n99999999999999999999999999\n", "malformed field length"),
    (b"read 1\n1x\n", "malformed field length"),
    (b"read 1\n\n", "malformed field length"),
    (b"read 2\n3\nabc", "end of input within a message"),
    (b"read 1\n10\nabc", "end of input within a field"),
    (b"read 1\n1", "end of input within a message"),
    (b"hel", "end of input within a header"),
    (b"x" * 100 + b" 0\n", "header line too long"),
])
def test_protocol_error(srv, data, what):
    srv.send_raw(data)
    srv.proc.stdin.close()
    word, fields = srv.recv()
    assert word == "err"
    assert fields[0] == b"protocol"
    assert what.encode() in fields[1] and b"\n" not in fields[1]
    assert srv.proc.wait(60) == 1
    assert srv.proc.stdout.read() == b""


def test_protocol_error_after_good_requests(srv):
    """The requests before a malformed one are answered first."""
    srv.send_raw(frame("now") + frame("now") + b"now zero\n")
    assert srv.recv()[0] == "ok"
    assert srv.recv()[0] == "ok"
    assert srv.recv() == ("err", [b"protocol",
                                  b"malformed header: bad field count"])
    assert srv.proc.wait(60) == 1


def test_usage_errors(srv, root):
    assert srv.err("frobnicate")[0] == "usage"
    assert srv.err("read", "/x")[0] == "usage"
    assert srv.err("hello", "extra")[0] == "usage"
    assert srv.err("stat", root + "\0/x")[0] == "usage"
    assert srv.err("read", root, "12x")[0] == "usage"
    assert srv.err("read", root, "-1")[0] == "usage"
    assert srv.err("access", root, "8")[0] == "usage"
    assert srv.err("run", "/bin/true", "0", "0", "", "a\0b")[0] == "usage"
    # The server goes on after a refused request.
    assert srv.call("stat", root)[0]
    assert srv.finish() == 0


def test_pipelined_requests(srv, root):
    for i in range(200):
        os.symlink("target-%d" % i, os.path.join(root, "l%d" % i))
    srv.send_raw(b"".join(frame("readlink", os.path.join(root, "l%d" % i))
                          for i in range(200)))
    for i in range(200):
        assert srv.recv() == ("ok", [b"target-%d" % i])
    assert srv.finish() == 0


def test_sigpipe_is_ignored_and_write_failure_exits(srv):
    """Nobody reading its answers: the server exits 1, not by SIGPIPE."""
    srv.proc.stdout.close()
    try:
        srv.send("now")
        srv.proc.stdin.close()
    except BrokenPipeError:
        pass
    assert srv.proc.wait(60) == 1


# -- reading ----------------------------------------------------------------


def test_read(srv, root):
    path = os.path.join(root, "f")
    data = bytes(range(256)) * 100 + b"\n12\n"
    write(path, data)
    assert srv.call("read", path, len(data)) == [data]
    assert srv.call("read", path, 10 * MIB) == [data]
    assert srv.err("read", path, len(data) - 1) == [
        "toolarge", str(len(data) - 1)]
    write(path, b"")
    assert srv.call("read", path, 0) == [b""]
    write(path, b"x")
    assert srv.err("read", path, 0) == ["toolarge", "0"]
    assert srv.err("read", os.path.join(root, "none"), 10) == \
        errno_fields(errno.ENOENT, "open")


def test_read_of_a_fifo_never_waits(srv, root):
    """A FIFO (one that replaced a file since the client's stat) reads
    as empty without a writer, and fails with EAGAIN with one that sends
    nothing: the server is never held."""
    fifo = os.path.join(root, "fifo")
    os.mkfifo(fifo)
    assert srv.call("read", fifo, 100) == [b""]
    writer = os.open(fifo, os.O_RDWR)
    try:
        assert srv.err("read", fifo, 100) == \
            errno_fields(errno.EAGAIN, "read")
    finally:
        os.close(writer)


def test_read_stops_at_the_limit(srv):
    """/dev/zero never ends: the limit ends the read."""
    assert srv.err("read", "/dev/zero", MIB) == ["toolarge", str(MIB)]


def test_stat_and_lstat(srv, root):
    path = os.path.join(root, "f")
    write(path, b"abc", 0o640)
    os.symlink("f", os.path.join(root, "link"))
    os.utime(path, ns=(1234567890123456789, 1600000000987654321))
    for op, fn, p in [("stat", os.stat, path),
                      ("stat", os.stat, os.path.join(root, "link")),
                      ("lstat", os.lstat, os.path.join(root, "link")),
                      ("stat", os.stat, root)]:
        st = fn(p)
        assert [int(x) for x in srv.call(op, p)] == [
            st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
            st.st_gid, st.st_size, st.st_atime_ns, st.st_mtime_ns,
            st.st_ctime_ns]
    assert int(srv.call("stat", path)[9 - 1]) == 1600000000987654321
    assert srv.err("stat", os.path.join(root, "none")) == \
        errno_fields(errno.ENOENT, "stat")
    os.symlink("none", os.path.join(root, "dangling"))
    assert srv.err("stat", os.path.join(root, "dangling")) == \
        errno_fields(errno.ENOENT, "stat")
    assert stat.S_ISLNK(int(srv.call(
        "lstat", os.path.join(root, "dangling"))[0]))


def test_listdir(srv, root):
    names = [b"b", b"a", b"B", b"a b", b"\xff\xfe", b"line\nbreak", b"-",
             b".hidden", b"z" * 200]
    for n in names:
        write(os.path.join(root.encode(), n), b"")
    os.mkdir(os.path.join(root, "dir"))
    assert srv.call("listdir", root) == sorted(names + [b"dir"])
    assert srv.call("listdir", os.path.join(root, "dir")) == []
    assert srv.err("listdir", os.path.join(root, "none")) == \
        errno_fields(errno.ENOENT, "opendir")
    assert srv.err("listdir", os.path.join(root, "b")) == \
        errno_fields(errno.ENOTDIR, "opendir")


def test_readlink(srv, root):
    link = os.path.join(root, "l")
    target = "../../devices/pci@0,0/disk@" + "x" * 900 + ":a,raw"
    os.symlink(target, link)
    assert srv.call("readlink", link) == [target.encode()]
    write(os.path.join(root, "f"), b"")
    assert srv.err("readlink", os.path.join(root, "f")) == \
        errno_fields(errno.EINVAL, "readlink")
    assert srv.err("readlink", os.path.join(root, "none")) == \
        errno_fields(errno.ENOENT, "readlink")


def test_readlinks(srv, root):
    d = os.path.join(root, "rdsk")
    os.mkdir(d)
    expect = []
    for i in range(1000):
        name = "c%dt%dd0s%d" % (i % 3, i, i % 16)
        target = "../../devices/scsi_vhci/disk@g%032x:%s,raw" % (i, "a")
        os.symlink(target, os.path.join(d, name))
        expect += [(name.encode(), target.encode())]
    write(os.path.join(d, "regular"), b"")
    os.mkdir(os.path.join(d, "subdir"))
    got = srv.call("readlinks", d)
    pairs = list(zip(got[0::2], got[1::2]))
    assert len(got) == 2000
    assert pairs == sorted(expect)
    os.mkdir(os.path.join(root, "empty"))
    assert srv.call("readlinks", os.path.join(root, "empty")) == []
    assert srv.err("readlinks", os.path.join(root, "none")) == \
        errno_fields(errno.ENOENT, "opendir")


def test_samefile(srv, root):
    a, b, c = (os.path.join(root, n) for n in "abc")
    write(a, b"")
    write(c, b"")
    os.link(a, b)
    os.symlink("a", os.path.join(root, "s"))
    assert srv.call("samefile", a, b) == [b"1"]
    assert srv.call("samefile", a, os.path.join(root, "s")) == [b"1"]
    assert srv.call("samefile", a, root + "/./sub/../a") == [b"0"]
    assert srv.call("samefile", a, root + "/./a") == [b"1"]
    assert srv.call("samefile", a, c) == [b"0"]
    assert srv.call("samefile", a, os.path.join(root, "none")) == [b"0"]
    assert srv.call("samefile", os.path.join(root, "none"),
                    os.path.join(root, "none")) == [b"0"]


def test_access_and_can_run(srv, root):
    f = os.path.join(root, "f")
    x = os.path.join(root, "x")
    write(f, b"", 0o644)
    write(x, b"#!/bin/sh\n", 0o755)
    assert srv.call("access", f, os.R_OK | os.W_OK) == [b"1"]
    assert srv.call("access", f, 0) == [b"1"]
    assert srv.call("access", f, os.X_OK) == [b"0"]
    assert srv.call("access", x, os.X_OK) == [b"1"]
    assert srv.call("access", os.path.join(root, "none"), 0) == [b"0"]
    assert srv.call("can_run", x) == [b"1"]
    assert srv.call("can_run", f) == [b"0"]
    assert srv.call("can_run", root) == [b"0"]
    assert srv.call("can_run", os.path.join(root, "none")) == [b"0"]
    rel = os.path.relpath(x)
    assert srv.call("can_run", rel) == [b"0"]


# -- writing ----------------------------------------------------------------


def test_create(srv, root):
    path = os.path.join(root, "new")
    data = os.urandom(100000)
    assert srv.call("create", path, 0o640, data) == []
    assert read(path) == data
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 & ~umask
    assert srv.err("create", path, 0o600, b"other") == ["exists"]
    assert read(path) == data
    assert srv.err("create", os.path.join(root, "no", "f"), 0o600,
                   b"x") == errno_fields(errno.ENOENT, "open")
    assert sorted(os.listdir(root)) == ["new"]


def test_create_and_replace_refuse_symlinks(srv, root):
    real = os.path.join(root, "real")
    os.mkdir(real)
    os.symlink("real", os.path.join(root, "via"))
    write(os.path.join(real, "f"), b"old")
    os.symlink("f", os.path.join(real, "lf"))
    via = os.path.join(root, "via")
    for op, fields in [("create", (0o600, b"x")),
                       ("replace", (0o644, b"x")),
                       ("check_replaceable", ())]:
        assert srv.err(op, os.path.join(via, "f"), *fields) == [
            "symlink", via]
        assert srv.err(op, os.path.join(via, "new", "g"), *fields) == [
            "symlink", via]
        assert srv.err(op, os.path.join(real, "lf"), *fields) == [
            "symlink", os.path.join(real, "lf")]
    assert read(os.path.join(real, "f")) == b"old"
    assert sorted(os.listdir(real)) == ["f", "lf"]


def test_symlink_check_base(serve, sdio, root, tmp_path_factory):
    """Components above the root are not checked; a server rooted
    elsewhere writes nothing outside its root, whatever the links."""
    outer = str(tmp_path_factory.mktemp("outer"))
    os.mkdir(os.path.join(outer, "real"))
    os.symlink("real", os.path.join(outer, "rootlink"))
    c = Client(sdio, os.path.join(outer, "rootlink"))
    try:
        path = os.path.join(outer, "rootlink", "f")
        assert c.call("create", path, 0o600, b"x") == []
        assert read(os.path.join(outer, "real", "f")) == b"x"
        # The same path is refused by a server rooted elsewhere.
        other = serve()
        assert other.err("replace", path, 0o644, b"y") == [
            "denied", "'%s' is outside the root %s" % (path, root)]
    finally:
        c.kill()


def test_replace_new_and_existing(srv, root):
    path = os.path.join(root, "sd.conf")
    assert srv.call("replace", path, 0o604, b"first") == []
    assert read(path) == b"first"
    os.chmod(path, 0o640)
    os.chown(path, 1234, 5678)
    assert srv.call("replace", path, 0o604, b"second\n" * 1000) == []
    st = os.stat(path)
    assert read(path) == b"second\n" * 1000
    assert stat.S_IMODE(st.st_mode) == 0o640
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    # A set-id file keeps its mode in the new copy: new contents of a
    # set-id program are refused (U4), and check_replaceable says so.
    os.chmod(path, 0o4755)
    assert srv.err("replace", path, 0o604, b"") == [
        "denied", "'%s' has set-id or sticky bits" % path]
    assert srv.err("check_replaceable", path) == [
        "denied", "'%s' has set-id or sticky bits" % path]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o4755
    assert read(path) == b"second\n" * 1000
    assert os.listdir(root) == ["sd.conf"]


def test_replace_new_file_mode(serve, root):
    srv = serve(preexec_fn=lambda: os.umask(0o077))
    path = os.path.join(root, "f")
    assert srv.call("replace", path, 0o644, b"x") == []
    # fchmod, not the umask, decides the new file's mode.
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_replace_refusals(srv, root):
    d = os.path.join(root, "dir")
    os.mkdir(d)
    fifo = os.path.join(root, "fifo")
    os.mkfifo(fifo)
    for p in (d, fifo):
        assert srv.err("replace", p, 0o644, b"x") == ["notreg"]
        assert srv.err("check_replaceable", p) == ["notreg"]
    write(os.path.join(root, "file"), b"old")
    # The parent is a regular file: ENOTDIR from the symlink walk.
    under = os.path.join(root, "file", "x")
    assert srv.err("replace", under, 0o644, b"x") == \
        errno_fields(errno.ENOTDIR, "stat")
    assert srv.err("create", under, 0o644, b"x") == \
        errno_fields(errno.ENOTDIR, "stat")
    # A missing directory: the temporary file cannot be created.
    assert srv.err("replace", os.path.join(root, "no", "x"), 0o644,
                   b"x") == errno_fields(errno.ENOENT, "open")
    assert sorted(os.listdir(root)) == ["dir", "fifo", "file"]
    assert read(os.path.join(root, "file")) == b"old"


def test_replace_write_failure_leaves_no_temp(serve, root):
    """EFBIG half-way through writing the temporary file (a file size
    limit, SIGXFSZ ignored): the target is untouched, the temporary file
    removed."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (MIB, MIB))
    srv = serve(preexec_fn=limit)
    path = os.path.join(root, "target")
    write(path, b"old contents")
    assert srv.err("replace", path, 0o644, b"n" * (2 * MIB)) == \
        errno_fields(errno.EFBIG, "write")
    assert srv.err("create", os.path.join(root, "c"), 0o644,
                   b"n" * (2 * MIB)) == errno_fields(errno.EFBIG, "write")
    assert read(path) == b"old contents"
    assert os.listdir(root) == ["target"]
    assert srv.call("replace", path, 0o644, b"small") == []
    assert read(path) == b"small"
    assert os.listdir(root) == ["target"]


def test_check_replaceable(srv, root):
    path = os.path.join(root, "f")
    assert srv.call("check_replaceable", path) == []
    write(path, b"x")
    assert srv.call("check_replaceable", path) == []
    assert os.listdir(root) == ["f"]


@pytest.fixture
def shared_dir():
    """A directory an ordinary user can reach (pytest's are 0700)."""
    d = tempfile.mkdtemp(prefix="sdio-serve-")
    os.chmod(d, 0o777)
    yield d
    shutil.rmtree(d)


def test_ordinary_user_refusals(sdio, shared_dir):
    """perm, owner and dirnotwritable only refuse an ordinary user."""
    if not os.access(sdio, os.X_OK) or os.stat(sdio).st_mode & 0o001 == 0:
        pytest.skip("sdio is not executable by others")

    def drop():
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    c = Client(sdio, shared_dir, preexec_fn=drop, cwd="/")
    try:
        assert c.call("hello")[1] == str(NOBODY).encode()
        ro = os.path.join(shared_dir, "rootfile")
        write(ro, b"x", 0o644)
        assert c.err("check_replaceable", ro) == [
            "perm", os.strerror(errno.EACCES)]
        assert c.err("replace", ro, 0o644, b"y")[0] == "perm"
        writable = os.path.join(shared_dir, "writable")
        write(writable, b"x", 0o666)
        assert c.err("replace", writable, 0o644, b"y") == ["owner", "0"]
        sub = os.path.join(shared_dir, "sub")
        os.mkdir(sub, 0o755)
        mine = os.path.join(sub, "mine")
        write(mine, b"x", 0o644)
        os.chown(mine, NOBODY, NOBODY)
        assert c.err("check_replaceable", mine) == ["dirnotwritable", sub]
        assert c.err("replace", mine, 0o644, b"y") == \
            errno_fields(errno.EACCES, "open")
        own = os.path.join(shared_dir, "own")
        write(own, b"x", 0o600)
        os.chown(own, NOBODY, 0)
        # Its group is root's, which nobody cannot give a file.
        assert c.err("replace", own, 0o644, b"y") == ["group", "0"]
        assert read(own) == b"x"
        os.chown(own, NOBODY, NOBODY)
        assert c.call("check_replaceable", own) == []
        assert c.call("replace", own, 0o644, b"y") == []
        assert read(own) == b"y"
        assert sorted(os.listdir(shared_dir)) == [
            "own", "rootfile", "sub", "writable"]
        assert c.finish() == 0
    finally:
        c.kill()


def test_mkdirs_and_remove(srv, root):
    deep = os.path.join(root, "a", "b", "c")
    assert srv.call("mkdirs", deep, 0o700) == []
    assert os.path.isdir(deep)
    assert stat.S_IMODE(os.stat(deep).st_mode) == 0o700
    assert srv.call("mkdirs", deep, 0o755) == []
    assert srv.call("mkdirs", root, 0o755) == []
    f = os.path.join(root, "f")
    write(f, b"")
    assert srv.err("mkdirs", f, 0o755) == errno_fields(errno.EEXIST, "mkdir")
    assert srv.err("mkdirs", os.path.join(f, "x"), 0o755) == \
        errno_fields(errno.ENOTDIR, "mkdir")
    assert srv.call("remove", f) == []
    assert not os.path.exists(f)
    assert srv.err("remove", f) == errno_fields(errno.ENOENT, "unlink")
    assert srv.err("remove", deep)[:2] == ["errno", "unlink"]
    # rmdir: an empty directory only, never the root.
    assert srv.err("rmdir", os.path.join(root, "a"))[:2] == \
        ["errno", "rmdir"]
    assert srv.call("rmdir", deep) == []
    assert not os.path.exists(deep) and os.path.isdir(os.path.dirname(deep))
    assert srv.err("rmdir", deep) == errno_fields(errno.ENOENT, "rmdir")
    assert srv.err("rmdir", root)[0] == "denied"
    assert os.path.isdir(root)


# -- locks ------------------------------------------------------------------


def test_lock_excludes_lockf(srv, root):
    path = os.path.join(root, "lock")
    assert srv.call("lock", path) == []
    assert read(path) == b"%d\n" % srv.proc.pid
    assert not lockf_free(path)
    # A second lock on the same file by this server is refused, and does
    # not drop the first (closing a descriptor would).
    assert srv.err("lock", path) == ["locked"]
    assert srv.err("lock", root + "/./lock") == ["locked"]
    assert not lockf_free(path)
    assert srv.call("unlock", path) == []
    assert lockf_free(path)
    assert srv.err("unlock", path) == ["notlocked", path]
    # Again, released this time by the server's exit on EOF.
    assert srv.call("lock", path) == []
    assert not lockf_free(path)
    assert srv.finish() == 0
    assert lockf_free(path)


def test_lock_held_by_another_process(srv, root):
    path = os.path.join(root, "lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert srv.err("lock", path) == ["locked"]
        fcntl.lockf(fd, fcntl.LOCK_UN)
        assert srv.call("lock", path) == []
    finally:
        os.close(fd)


def test_many_locks_and_unlock_by_identity(srv, root):
    paths = [os.path.join(root, "lock%d" % i) for i in range(20)]
    for p in paths:
        assert srv.call("lock", p) == []
    assert not any(lockf_free(p) for p in paths)
    # Matched by the file, not only by the spelling of its path.
    assert srv.call("unlock", root + "/./lock3") == []
    assert lockf_free(paths[3])
    for i, p in enumerate(paths):
        if i != 3:
            assert srv.call("unlock", p) == []
    assert all(lockf_free(p) for p in paths)


def test_lock_refuses_symlink(srv, root):
    """The lock file itself a link: a refusal, as for every write."""
    write(os.path.join(root, "real"), b"")
    os.symlink("real", os.path.join(root, "link"))
    assert srv.err("lock", os.path.join(root, "link")) == [
        "symlink", os.path.join(root, "link")]


# -- commands ---------------------------------------------------------------


def sh(script):
    return ["/bin/sh", "0", "0", "", "-c", script]


def test_run_status_and_output(srv):
    got = srv.call("run", *sh("printf 'out\\0put'; echo err >&2; exit 3"))
    assert got[:4] == [b"3", b"0", b"out\0put", b"err\n"]
    assert int(got[4]) > 0
    got = srv.call("run", *sh("echo x; kill -9 $$"))
    assert got[:4] == [b"-1", b"9", b"x\n", b""]
    assert srv.call("run", "/bin/sh", "0", "0", "", "-c", 'echo "$0|$1"',
                    "a b", "$HOME")[2] == b"a b|$HOME\n"


def test_run_environment_and_cwd(srv):
    got = srv.call("run", "/usr/bin/env", "0", "0", "")
    assert sorted(got[2].splitlines()) == [
        b"LANG=C", b"LC_ALL=C", b"PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
    assert srv.call("run", *sh("pwd"))[2] == b"/\n"


def test_run_stdin(srv):
    data = os.urandom(3 * MIB) + b"end"
    got = srv.call("run", "/bin/cat", "0", "1", data)
    assert got[:4] == [b"0", b"0", data, b""]
    # has_stdin 0: /dev/null, whatever the field holds.
    assert srv.call("run", "/bin/cat", "0", "0", b"ignored")[2] == b""
    assert srv.call("run", "/bin/cat", "0", "1", b"")[2] == b""
    # A command that exits without reading its input is no error.
    got = srv.call("run", "/bin/true", "0", "1", b"x" * (8 * MIB))
    assert got[:4] == [b"0", b"0", b"", b""]


def test_run_timeout(srv):
    start = time.monotonic()
    assert srv.err("run", "/bin/sleep", "200", "0", "", "5") == [
        "timeout", "200"]
    assert time.monotonic() - start < 4.5
    # A command that closes its output but goes on running.
    start = time.monotonic()
    assert srv.err("run", *(["/bin/sh", "300"] + sh(
        "exec >&- 2>&-; sleep 5")[2:])) == ["timeout", "300"]
    assert time.monotonic() - start < 4.5
    assert srv.call("run", "/bin/sleep", "60000", "0", "", "0")[0] == b"0"


def test_run_exec_failure(srv, root):
    f = os.path.join(root, "notexec")
    write(f, b"#!/bin/sh\necho hi\n", 0o644)
    assert srv.err("run", f, "0", "0", "") == \
        errno_fields(errno.EACCES, "exec")
    assert srv.err("run", os.path.join(root, "none"), "0", "0", "") == \
        errno_fields(errno.ENOENT, "exec")
    # Never a shell: a bare name is not looked up in PATH.
    assert srv.err("run", "true", "0", "0", "") == \
        errno_fields(errno.ENOENT, "exec")
    assert srv.call("hello")[0] == b"3"


def test_run_output_limit(srv):
    assert srv.err("run", "/bin/cat", "0", "0", "", "/dev/zero") == [
        "toolarge", "stdout"]
    assert srv.err("run", *sh("exec cat /dev/zero >&2")) == [
        "toolarge", "stderr"]
    assert srv.call("hello")[0] == b"3"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                    reason="no /proc/self/fd")
def test_run_inherits_no_lock_fd(srv, root):
    path = os.path.join(root, "lock")
    assert srv.call("lock", path) == []
    got = srv.call("run", *sh(
        'for f in /proc/$$/fd/*; do readlink "$f"; echo; done'))
    assert got[0] == b"0"
    assert path.encode() not in got[2]
    assert not lockf_free(path)


def test_sigterm_kills_the_running_command(srv, root):
    pidfile = os.path.join(root, "pid")
    srv.send("run", *sh("echo $$ > %s; exec sleep 60" % pidfile))
    deadline = time.monotonic() + 30
    while not (os.path.exists(pidfile) and read(pidfile).endswith(b"\n")):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    pid = int(read(pidfile))
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(60) == 128 + signal.SIGTERM
    assert ended(pid)


# -- streams ----------------------------------------------------------------


def waits_for(path, then):
    """A script that prints "first", waits up to 20 s for path, and then
    runs then, or exits 99 when path never came."""
    return ("echo first; i=0; while [ ! -e %s ]; do i=$((i+1)); "
            "[ $i -gt 2000 ] && exit 99; sleep 0.01; done; %s"
            % (path, then))


def test_stream_sends_each_part_while_the_command_runs(srv, root):
    """The first line arrives while the command still waits for a file
    that the test creates only once it has read that line: exit 3 says
    the command saw the file, which came after the part."""
    go = os.path.join(root, "go")
    srv.send("stream", *sh(waits_for(go, "echo second; echo err >&2; "
                                         "exit 3")))
    assert srv.recv() == ("part", [b"first\n"])
    write(go, b"")
    assert srv.recv() == ("part", [b"second\n"])
    word, got = srv.recv()
    assert word == "ok" and got[:4] == [b"3", b"0", b"", b"err\n"]
    assert int(got[4]) > 0
    # The next request is answered as ever, without parts.
    assert srv.call("run", *sh("echo again"))[2] == b"again\n"


def test_stream_status_signal_and_stderr(srv):
    parts, got = srv.stream(*sh("printf 'a\\0b'; echo err >&2; kill -9 $$"))
    assert b"".join(parts) == b"a\0b"
    assert got[:4] == [b"-1", b"9", b"", b"err\n"]
    parts, got = srv.stream(*sh("exit 0"))
    assert parts == [] and got[:4] == [b"0", b"0", b"", b""]
    parts, got = srv.stream("/bin/sh", "0", "1", b"from stdin", "-c", "cat")
    assert b"".join(parts) == b"from stdin" and got[:3] == [b"0", b"0", b""]


def test_stream_output_is_sent_not_held(srv, root):
    """Parts of at most 64 KiB, in order, and more than run's cap in all:
    a stream holds none of its output; its stderr is capped as run's."""
    data = os.urandom(3 * MIB)
    write(os.path.join(root, "data"), data)
    parts, got = srv.stream("/bin/cat", "0", "0", "",
                            os.path.join(root, "data"))
    assert b"".join(parts) == data and got[2] == b""
    assert max(len(p) for p in parts) <= 65536
    parts, got = srv.stream(*sh("head -c %d /dev/zero" % (65 * MIB)))
    assert sum(len(p) for p in parts) == 65 * MIB
    assert got[:4] == [b"0", b"0", b"", b""]
    assert srv.err("stream", *sh("exec cat /dev/zero >&2")) == [
        "toolarge", "stderr"]
    assert srv.call("hello")[0] == b"3"


def test_stream_pipelined_with_other_requests(srv):
    srv.send_raw(frame("stream", *sh("echo a")) + frame("now"))
    assert srv.recv() == ("part", [b"a\n"])
    assert srv.recv()[0] == "ok"
    assert srv.recv()[0] == "ok"
    assert srv.finish() == 0


def test_stream_timeout(srv):
    start = time.monotonic()
    srv.send("stream", "/bin/sh", "300", "0", "", "-c", "echo x; sleep 5")
    assert srv.recv() == ("part", [b"x\n"])
    assert srv.recv() == ("err", [b"timeout", b"300"])
    assert time.monotonic() - start < 4.5
    assert srv.call("hello")[0] == b"3"


def test_stream_refusals_are_runs(srv, root):
    assert srv.err("stream", os.path.join(root, "none"), "0", "0", "") == \
        errno_fields(errno.ENOENT, "exec")
    assert srv.err("stream", "true", "0", "0", "") == \
        errno_fields(errno.ENOENT, "exec")
    assert srv.err("stream", "/bin/true", "0", "0", "", "a\0b")[0] == \
        "usage"
    assert srv.err("stream", "/bin/true", "0", "0")[0] == "usage"
    assert srv.err("stream", "/bin/true", "x", "0", "")[0] == "usage"


def test_stream_is_denied_what_the_policy_does_not_name(sdio, root,
                                                        tmp_path):
    path = str(tmp_path / "policy")
    write(path, b"run /bin/echo\n", 0o600)
    c = Client(sdio, root, ("--allow", path))
    try:
        assert c.err("stream", *sh("echo hi")) == [
            "denied", "'/bin/sh' is not a command this engine runs"]
        parts, got = c.stream("/bin/echo", "0", "0", "", "hi")
        assert parts == [b"hi\n"] and got[:3] == [b"0", b"0", b""]
        assert c.finish() == 0
    finally:
        c.kill()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_killed_server_kills_the_streaming_command(srv, sig):
    srv.send("stream", *sh("echo $$; exec sleep 60"))
    word, got = srv.recv()
    assert word == "part"
    pid = int(got[0])
    srv.proc.send_signal(sig)
    assert srv.proc.wait(60) == 128 + sig
    assert ended(pid)


def test_a_stream_nobody_hears_is_killed(srv):
    """The client gone (its end of the answers closed) while the command
    is silent: the server kills it and ends, as a failed write ends it,
    instead of waiting for the command's own end."""
    srv.send("stream", *sh("echo $$; exec sleep 60"))
    word, got = srv.recv()
    assert word == "part"
    pid = int(got[0])
    srv.proc.stdout.close()
    assert srv.proc.wait(30) == 1
    assert ended(pid, 5)


# -- a server killed during a replace ---------------------------------------


def interrupted_replace(sdio, root, sig, sent_fraction, delay):
    """Start replacing a 50 MiB target, send the request up to
    sent_fraction, wait delay seconds, send sig to the server; the
    target is the old or the new file, byte for byte."""
    path = os.path.join(root, "target")
    old = os.urandom(MIB)
    new = os.urandom(50 * MIB)
    write(path, old, 0o640)
    c = Client(sdio, root)
    try:
        request = frame("replace", path, 0o644, new)
        n = int(len(request) * sent_fraction)

        def send():
            try:
                c.send_raw(request[:n])
            except BrokenPipeError:
                pass
        t = threading.Thread(target=send)
        t.start()
        if sent_fraction == 1:
            t.join(120)
        else:
            # Partly sent: the server is waiting for the rest.
            time.sleep(0.3)
        time.sleep(delay)
        c.proc.send_signal(sig)
        c.proc.wait(60)
        t.join(120)
    finally:
        c.kill()
    data = read(path)
    assert data == old or data == new, len(data)
    if sent_fraction < 1:
        assert data == old
    return data == new


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.999])
def test_sigkill_while_receiving_replace(sdio, root, fraction):
    assert not interrupted_replace(sdio, root, signal.SIGKILL, fraction, 0)
    assert os.listdir(root) == ["target"]


@pytest.mark.parametrize("delay", [0, 0.05, 0.3])
def test_sigkill_after_replace_sent(sdio, root, delay):
    interrupted_replace(sdio, root, signal.SIGKILL, 1, delay)
    # SIGKILL cannot be caught: a temporary file may stay behind.
    for name in os.listdir(root):
        assert name == "target" or name.startswith(".target.sdtune."), name


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP,
                                 signal.SIGINT])
@pytest.mark.parametrize("delay", [0, 0.05, 0.3])
def test_signal_after_replace_sent_leaves_no_temp(sdio, root, sig, delay):
    interrupted_replace(sdio, root, sig, 1, delay)
    assert os.listdir(root) == ["target"]
