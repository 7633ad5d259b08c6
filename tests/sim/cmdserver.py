"""A fork server for the simulated appliance's commands.

Every fake command (mdb, diskinfo, iostat, zpool, ...) used to start a
Python of its own and import the simulator: about 50 ms, a dozen times
per sdtune command, most of what the end-to-end tests cost.  This server
imports the simulator once; each command is then a fork of it.

    bin/<cmd>  exec cmdclient SOCKET PYTHON fakecmd.py --state DIR ...

cmdclient (cmdclient.c) hands the server its standard descriptors, its
working directory and fakecmd's arguments.  The server forks the
worker: it takes the client's descriptors as its own 0, 1 and 2, changes
to its directory and runs fakecmd.main (or execs the engine, for the
fake sdio) exactly as the script would.  The server's loop waits for the
worker or for the client to go away (sdtune killed it: then the worker
is killed too) and answers with the worker's status, which the client
exits with.  So sdtune still
runs one process per command, with the same input, output, status and
kill; only Python's start is saved.

Without a server (none started, the client cannot be built, or a user
other than the server's: its socket lives in a directory only the
owner may enter) the client execs the script: the old way, slower.

A process starts one server for its appliances (ensure_started(), from
Appliance): it ends when that process closes its end of the server's
standard input, so a killed test run leaves no server behind.
SDTUNE_SIM_CMDSERVER=0 in the environment turns it off.

Linux only (pidfd_open, SCM_RIGHTS); Python 3.9 or later.
"""

import atexit
import hashlib
import importlib
import io
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
from typing import List, Optional

from . import fakecmd

# Every command's module, loaded once here so that no worker imports it
# (fakecmd imports them as each command needs them).
PRELOADED = [importlib.import_module("." + name, __package__) for name in (
    "diskinfo", "drv", "iostat", "mdb", "nvme", "platform", "sdio", "zfs")]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLIENT_SOURCE = os.path.join(HERE, "cmdclient.c")
CACHE = os.path.join(HERE, ".build")
CFLAGS = ["-O2", "-Wall", "-Werror"]
START_TIMEOUT_S = 30.0
# A client sends its whole request at once; one that stalls is dropped
# rather than stall every other command.
REQUEST_TIMEOUT_S = 5.0
HEAD = struct.Struct("<I")
STATUS = struct.Struct("<i")


# ---------------------------------------------------------------- serving

def _receive(conn: socket.socket):
    """(working directory, fakecmd arguments, [stdin, stdout, stderr])."""
    fds: List[int] = []
    data = b""
    while len(data) < HEAD.size or \
            len(data) < HEAD.size + HEAD.unpack_from(data)[0]:
        chunk, ancdata, _, _ = conn.recvmsg(
            65536, socket.CMSG_SPACE(3 * 4), socket.MSG_CMSG_CLOEXEC)
        for level, kind, extra in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += list(struct.unpack("%di" % (len(extra) // 4),
                                          extra[:len(extra) // 4 * 4]))
        if not chunk:
            raise EOFError("the client went away")
        data += chunk
    words = [os.fsdecode(w) for w in data[HEAD.size:].split(b"\0")[:-1]]
    if len(fds) != 3 or not words:
        raise EOFError("a request without its descriptors")
    return words[0], words[1:], fds


def _work(cwd: str, args: List[str], fds: List[int]) -> None:
    """The worker: the command, on the client's descriptors.  Never
    returns."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False))
        try:
            status = fakecmd.main(args)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException:
            traceback.print_exc()
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
    finally:
        os._exit(status & 0xFF)


class _Running:
    """One command: its client's connection and its worker."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self.conn = conn
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.killed = False

    def end(self) -> None:
        """The worker has exited: reap it and answer with its status."""
        _, wait_status = os.waitpid(self.pid, 0)
        code = os.waitstatus_to_exitcode(wait_status)
        try:
            self.conn.sendall(STATUS.pack(code))
        except OSError:
            pass
        self.conn.close()
        os.close(self.pidfd)

    def client_spoke(self) -> None:
        """The client sends nothing after its request: readable means it
        went away (a timeout, Ctrl-C killed it), and so goes the command,
        as the script's own process would have."""
        try:
            gone = not self.conn.recv(1)
        except OSError:
            gone = True
        if gone and not self.killed:
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True


def _start(conn: socket.socket, listener: socket.socket,
           running: List[_Running]) -> Optional[_Running]:
    """Read one request and fork its worker; None for a client that went
    away or sent no whole request."""
    conn.settimeout(REQUEST_TIMEOUT_S)
    try:
        cwd, args, fds = _receive(conn)
    except (EOFError, OSError, ValueError):
        conn.close()
        return None
    pid = os.fork()
    if pid == 0:
        listener.close()
        conn.close()
        for other in running:
            other.conn.close()
            os.close(other.pidfd)
        _work(cwd, args, fds)
    for fd in fds:
        os.close(fd)
    return _Running(conn, pid)


def serve(path: str) -> None:
    """Accept until standard input (the starter's lifeline) closes.

    One fork per command: the worker is forked here, and this loop
    watches both its exit (a pidfd) and its client (the connection),
    where a handler process per connection used to (measured: a command
    through the client cost 5.5 ms of CPU with the handler, 3.7 ms
    without; /bin/true alone costs 0.9 ms)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    running: List[_Running] = []
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        watched = [listener, 0] + [r.pidfd for r in running] + \
            [r.conn for r in running if not r.killed]
        ready, _, _ = select.select(watched, [], [])
        if 0 in ready and not os.read(0, 1):
            return
        for r in list(running):
            if r.pidfd in ready:
                r.end()
                running.remove(r)
            elif r.conn in ready:
                r.client_spoke()
        if listener in ready:
            conn, _ = listener.accept()
            started = _start(conn, listener, running)
            if started is not None:
                running.append(started)


# ---------------------------------------------------------------- starting

def build_client() -> str:
    """cmdclient, compiled once per source (cached in tests/sim/.build,
    written under a temporary name and renamed)."""
    with open(CLIENT_SOURCE, "rb") as f:
        key = hashlib.sha256(f.read() + " ".join(CFLAGS).encode()
                             ).hexdigest()[:16]
    out = os.path.join(CACHE, "cmdclient-%s" % key)
    if os.path.exists(out):
        return out
    os.makedirs(CACHE, exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())
    try:
        proc = subprocess.run(["cc"] + CFLAGS + ["-o", tmp, CLIENT_SOURCE],
                              capture_output=True, text=True, timeout=120,
                              check=False)
        if proc.returncode != 0:
            raise RuntimeError("cc failed: %s" % proc.stderr)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for name in os.listdir(CACHE):
        if name.startswith("cmdclient-") and \
                os.path.join(CACHE, name) != out and \
                not name.endswith(".tmp"):
            os.unlink(os.path.join(CACHE, name))
    return out


class Server:
    """A running server: its socket and the client that talks to it."""

    def __init__(self) -> None:
        self.client = build_client()
        # Only this user may enter: another user's command (sdtune run as
        # nobody) cannot connect and runs the script itself.
        self.dir = tempfile.mkdtemp(prefix="simcmd-")
        self.socket = os.path.join(self.dir, "s")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.sim.cmdserver", self.socket],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [],
                                    START_TIMEOUT_S)
        if not ready or self.proc.stdout.readline() != b"ready\n":
            self.stop()
            raise RuntimeError("the command server did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_SERVER: Optional[Server] = None
_SERVER_PID: Optional[int] = None


def ensure_started() -> Optional[Server]:
    """This process's server, started on first use; None when turned off
    (SDTUNE_SIM_CMDSERVER=0) or when it cannot start (the wrappers then
    run the script)."""
    global _SERVER, _SERVER_PID
    if os.environ.get("SDTUNE_SIM_CMDSERVER") == "0":
        return None
    if _SERVER is not None and _SERVER_PID == os.getpid() and \
            _SERVER.proc.poll() is None:
        return _SERVER
    try:
        _SERVER = Server()
    except (OSError, RuntimeError, subprocess.SubprocessError):
        _SERVER = None
        return None
    _SERVER_PID = os.getpid()
    atexit.register(_SERVER.stop)
    return _SERVER


if __name__ == "__main__":
    serve(sys.argv[1])
