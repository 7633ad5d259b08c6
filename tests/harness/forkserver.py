# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A fork server: one Python, started once with what its commands need
already imported, forks a worker per command instead of a Python start
per command.  Two servers use it: the simulated appliance's commands
(tests/sim/cmdserver.py) and the product's own interpreter
(sdtuneserver.py).

    CLIENT SOCKET PYTHON ARG...     (cmdclient.c)

The client hands the server its standard descriptors (SCM_RIGHTS), its
working directory, umask, environment, the signals it ignores and
blocks, and PYTHON's arguments.  The
server's ``accept`` decides whether the request is one it can run as
that Python would; if not it answers 0 and the client execs PYTHON ARG...
itself.  Otherwise it forks the worker, answers with the worker's pid
(the client forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to it), and when
the worker ends, with its status, which the client exits with (the same
code, or the same signal).  A client that goes away (killed by a timeout
or a signal it does not forward) takes its worker with it: SIGKILL, as
the kernel would not do for a process of its own but sdtune's timeouts
rely on.

The server ends when its standard input (the starter's lifeline) closes,
so a killed test run leaves no server behind.  Standard library only:
sdtuneserver.py runs it under `python -I -S`, where tests/ is not on the
path.  Linux only (pidfd_open, SCM_RIGHTS); Python 3.9 or later.
"""

import atexit
import gc
import hashlib
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
from typing import Callable, Dict, List, NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_SOURCE = os.path.join(HERE, "cmdclient.c")
CACHE = os.path.join(HERE, ".build")
CFLAGS = ["-O2", "-Wall", "-Werror"]
# The longest #! line the kernel reads whole (Linux: 256 bytes with its
# newline, since 5.1; 128 before).
SHEBANG_MAX = 127
START_TIMEOUT_S = 30.0
# A client sends its whole request at once; one that stalls is dropped
# rather than stall every other command.
REQUEST_TIMEOUT_S = 5.0
HEAD = struct.Struct("<I")
ANSWER = struct.Struct("<i")
# The first answer when the server will not run the request: the client
# execs PYTHON ARG... itself.
RUN_IT_YOURSELF = 0
# The first answer when the server ran the request itself, without a
# worker (serve()'s ``inline``): the status follows at once.
RAN_IN_SERVER = -1


class Request(NamedTuple):
    """What a client asks for: PYTHON's arguments, run in ``cwd`` with
    ``umask`` and ``env`` on the descriptors ``fds`` (its 0, 1, 2), the
    signals ``ignored`` and ``blocked`` (bit n - 1 for signal n) as an
    exec would have passed them on."""

    cwd: str
    umask: int
    ignored: int
    blocked: int
    env: Dict[str, str]
    args: List[str]
    fds: List[int]


# ---------------------------------------------------------------- serving

def _receive(conn: socket.socket) -> Request:
    """The request: after the length, NUL-terminated words: the working
    directory, the umask (octal), the ignored and the blocked signals
    (hex masks), the number of environment entries, the entries
    (NAME=VALUE), then the arguments."""
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
    if len(fds) != 3 or len(words) < 5:
        raise EOFError("a request without its descriptors")
    count = int(words[4])
    entries, args = words[5:5 + count], words[5 + count:]
    if len(entries) != count or any("=" not in e for e in entries):
        raise ValueError("a malformed environment")
    env = dict(e.split("=", 1) for e in entries)
    return Request(words[0], int(words[1], 8), int(words[2], 16),
                   int(words[3], 16), env, args, fds)


def _signals(ignored: int, blocked: int) -> None:
    """The dispositions and mask a Python exec'd by the client would
    start with: what the client ignores stays ignored, every other
    signal has its default action, then Python's own start: SIGPIPE and
    SIGXFSZ ignored, SIGINT raising KeyboardInterrupt unless ignored."""
    for sig in range(1, min(signal.NSIG, 65)):
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, signal.SIG_IGN if ignored >> (sig - 1) & 1
                          else signal.SIG_DFL)
        except (OSError, ValueError):
            pass            # the C library's own real-time signals
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)
    if not ignored >> (signal.SIGINT - 1) & 1:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK,
                           {s for s in signal.valid_signals()
                            if 0 < s < 65 and blocked >> (s - 1) & 1})


def take_request(request: Request) -> None:
    """In the worker: the client's descriptors as 0, 1 and 2, its
    directory, umask, environment and signals; every other descriptor
    closed."""
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
    keep = {0, 1, 2}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass            # the directory listing's own descriptor
    os.chdir(request.cwd)
    os.umask(request.umask)
    _signals(request.ignored, request.blocked)
    os.environ.clear()
    os.environ.update(request.env)


def python_stdio() -> None:
    """In the worker, after take_request(): sys.stdin, stdout and stderr
    on descriptors 0, 1 and 2 as Python's start makes them (create_stdio:
    buffered, newline "\\n", line-buffered on a terminal and always for
    stderr), with the encoding and errors of the streams this server's
    own start made, which are what the client's Python would have had."""
    made = []
    for fd, old in enumerate((sys.stdin, sys.stdout, sys.stderr)):
        mode = "rb" if fd == 0 else "wb"
        buf = io.open(fd, mode, -1, closefd=False)
        raw = buf.raw
        raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
        stream = io.TextIOWrapper(
            buf, old.encoding, old.errors, "\n",
            line_buffering=raw.isatty() or fd == 2, write_through=False)
        stream.mode = mode[0]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made


class _Running:
    """One command: its client's connection and its worker."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self.conn = conn
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.killed = False

    def end(self) -> None:
        """The worker has exited: reap it and answer with its status (an
        exit code, or minus the signal that ended it)."""
        _, wait_status = os.waitpid(self.pid, 0)
        self._answer(os.waitstatus_to_exitcode(wait_status))
        self.conn.close()
        os.close(self.pidfd)

    def _answer(self, value: int) -> None:
        try:
            self.conn.sendall(ANSWER.pack(value))
        except OSError:
            pass

    def client_spoke(self) -> None:
        """The client sends nothing after its request: readable means it
        went away (a timeout, a SIGKILL), and so goes the command."""
        try:
            gone = not self.conn.recv(1)
        except OSError:
            gone = True
        if gone and not self.killed:
            os.kill(self.pid, 9)
            self.killed = True


def _answer_and_close(conn: socket.socket, request: Request,
                      values: List[int]) -> None:
    """Answer a request no worker runs, and let go of it."""
    try:
        conn.sendall(b"".join(ANSWER.pack(v) for v in values))
    except OSError:
        pass
    conn.close()
    for fd in request.fds:
        os.close(fd)


def _start(conn: socket.socket, listener: socket.socket,
           running: List[_Running], accept: Callable[[Request], bool],
           work: Callable[[Request], None],
           inline: Optional[Callable[[Request], Optional[int]]]
           ) -> Optional[_Running]:
    """Read one request and fork its worker; None for a client that went
    away, sent no whole request, is told to run it itself, or whose
    request ``inline`` ran here."""
    conn.settimeout(REQUEST_TIMEOUT_S)
    try:
        request = _receive(conn)
    except (EOFError, OSError, ValueError):
        conn.close()
        return None
    if not accept(request):
        _answer_and_close(conn, request, [RUN_IT_YOURSELF])
        return None
    status = inline(request) if inline is not None else None
    if status is not None:
        _answer_and_close(conn, request, [RAN_IN_SERVER, status])
        return None
    pid = os.fork()
    if pid == 0:
        try:
            listener.close()
            conn.close()
            for other in running:
                other.conn.close()
                os.close(other.pidfd)
            work(request)           # ends the worker itself
        finally:
            os._exit(1)             # only when work() raised
    for fd in request.fds:
        os.close(fd)
    started = _Running(conn, pid)
    started._answer(pid)
    return started


def serve(path: str, accept: Callable[[Request], bool],
          work: Callable[[Request], None],
          inline: Optional[Callable[[Request], Optional[int]]] = None
          ) -> None:
    """Accept until standard input (the starter's lifeline) closes.

    ``work(request)`` runs in the forked worker and must end it
    (os._exit).  ``inline(request)``, when given, is tried first, here:
    the exit status of a request it ran to the end on the request's
    descriptors without a worker (it must not raise, block for long or
    change this process), None for one to fork as usual.

    One fork per forked command: this loop watches both the worker's
    exit (a pidfd) and its client (the connection), where a handler
    process per connection used to (measured: a command through
    the client cost 5.5 ms of CPU with the handler, 3.7 ms without;
    /bin/true alone costs 0.9 ms)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    running: List[_Running] = []
    # Everything imported so far lives as long as the server: kept out of
    # the collector's reach, so that no worker's collection walks (and
    # copies, page by page, from the server it was forked from) the
    # server's objects.
    gc.collect()
    gc.freeze()
    os.write(1, b"ready\n")
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
            started = _start(conn, listener, running, accept, work,
                             inline)
            if started is not None:
                running.append(started)


# ---------------------------------------------------------------- starting

def build_client() -> str:
    """cmdclient, compiled once per source (cached in tests/harness/.build,
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
    """A running server, started as ``argv + [SOCKET]`` (with ``env`` and
    ``cwd``): its socket and the client that talks to it."""

    def __init__(self, argv: List[str], cwd: str,
                 env: Optional[Dict[str, str]] = None) -> None:
        self.client = build_client()
        # Only this user may enter: another user's command (sdtune run as
        # nobody) cannot connect and runs the script itself.
        self.dir = tempfile.mkdtemp(prefix="simcmd-")
        self.socket = os.path.join(self.dir, "s")
        self.proc = subprocess.Popen(
            argv + [self.socket], cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [],
                                    START_TIMEOUT_S)
        if not ready or self.proc.stdout.readline() != b"ready\n":
            self.stop()
            raise RuntimeError("the fork server %s did not start" % argv)

    def runner(self, python: str) -> List[str]:
        """The words that run PYTHON ARG... through this server."""
        return [self.client, self.socket, python]

    def script(self, python: str, args: List[str]) -> Optional[str]:
        """The text of an executable that runs PYTHON ARGS... "$@"
        through this server with no shell between (cmdclient as its
        interpreter, cmdclient.c), "$0" in ARGS standing for its own
        path; None when the client's path is too long for a #! line or a
        word holds a newline (a shell wrapper around runner() then)."""
        words = [self.socket, python] + list(args)
        line = "#!%s --script" % self.client
        if len(line) >= SHEBANG_MAX or any("\n" in w for w in words):
            return None
        return "\n".join([line] + words) + "\n"

    def running(self) -> bool:
        return self.proc.poll() is None

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


class PerProcess:
    """A process's one server of a kind, started by ``start()`` on first
    use, and again in a forked child or after it died; None when the
    environment sets ``switch`` to 0 or it cannot start (its users then
    run the command themselves, the slow way)."""

    def __init__(self, switch: str, start: Callable[[], Server]) -> None:
        self.switch = switch
        self.start = start
        self.server: Optional[Server] = None
        self.pid: Optional[int] = None

    def get(self) -> Optional[Server]:
        if os.environ.get(self.switch) == "0":
            return None
        if self.server is None or self.pid != os.getpid() or \
                not self.server.running():
            try:
                self.server = self.start()
            except (OSError, RuntimeError, subprocess.SubprocessError):
                self.server = None
                return None
            self.pid = os.getpid()
            atexit.register(self.server.stop)
        return self.server
