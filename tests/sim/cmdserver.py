# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The fork server of the simulated appliance's commands.

Every fake command (mdb, diskinfo, iostat, zpool, ...) used to start a
Python of its own and import the simulator: about 50 ms, a dozen times
per sdtune command, most of what the end-to-end tests cost.  This server
(tests/harness/forkserver.py) imports the simulator once; sdio is then a
fork of it, every other command runs in the server itself (_inline).

    bin/<cmd>  #!cmdclient --script, then SOCKET PYTHON fakecmd.py
               --state DIR ... one word per line (cmdclient.c)

The worker takes the client's descriptors, directory, umask and
environment and runs fakecmd.main (or execs the engine, for the fake
sdio) exactly as the script would; the server runs fakecmd.run on the
client's descriptors and umask.  Either way sdtune still runs one process
per command (the client), with the same input, output, status and kill;
only Python's start, and for most commands the fork, are saved.

Without a server (none started, the client cannot be built, or a user
other than the server's) the client execs the script: the old way,
slower.  A process starts one server for its appliances
(ensure_started(), from Appliance).  SDTUNE_SIM_CMDSERVER=0 in the
environment turns it off.
"""

import importlib
import io
import os
import select
import sys
import time
import traceback
from typing import Optional, Tuple

from ..harness import forkserver
from . import fakecmd

# Every command's module, loaded once here so that no worker imports it
# (fakecmd imports them as each command needs them).
PRELOADED = [importlib.import_module("." + name, __package__) for name in (
    "diskinfo", "drv", "iostat", "mdb", "nvme", "platform", "sdio", "zfs")]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FAKECMD = os.path.join(HERE, "fakecmd.py")


def _accept(request: forkserver.Request) -> bool:
    """Only fakecmd.py: anything else the client runs itself."""
    return bool(request.args) and request.args[0] == FAKECMD


# Commands a worker runs: sdio, which may exec the engine.  Every other
# is a function of the state directory, its arguments and (mdb) its
# standard input (fakecmd.py), run in the server itself: a fork, its COW
# faults and exit cost about 3 ms of CPU per command, some 15,000 times
# in the quick tier.  The client stays the command's process (its pid,
# status and kill); only where its Python runs differs.
FORKED = frozenset({"sdio"})
# How long standard input may take to end before a worker reads the rest
# (one that never ends, a terminal say, must not hold the server), and
# how long a reader may keep the server waiting on a full pipe.
STDIN_WAIT_S = 0.5
WRITE_TIMEOUT_S = 10.0
# What the server read of a command's standard input before handing it to
# a worker (forked right after _inline() returns None; reset on each
# request).
_read_ahead = b""


def _read_to_end(fd: int) -> Tuple[bytes, bool]:
    """What the client's standard input holds, and whether it ended
    within STDIN_WAIT_S."""
    data = b""
    deadline = time.monotonic() + STDIN_WAIT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return data, False
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            continue
        except OSError:
            return data, True       # as a worker's read error: no more
        if not chunk:
            return data, True
        data += chunk


def _write_all(fd: int, data: bytes) -> None:
    """All of ``data`` to the client's descriptor, or as much as it
    takes before it closes or stalls."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            if not select.select([], [fd], [], WRITE_TIMEOUT_S)[1]:
                return
        except OSError:
            return              # a reader gone: as a worker's EPIPE


def _inline(request: forkserver.Request) -> Optional[int]:
    """Run a command of no FORKED kind here: its exit status, or None
    for a worker to run it."""
    global _read_ahead
    _read_ahead = b""
    parsed = fakecmd.parse(request.args[1:])
    if parsed is None or parsed[2] in FORKED:
        return None
    state_dir, argv0, cmd, args = parsed
    stdin = None
    if cmd in fakecmd.READS_STDIN:
        data, ended = _read_to_end(request.fds[0])
        if not ended:
            _read_ahead = data
            return None
        stdin = _text_stdin(io.BytesIO(data))
    umask = os.umask(request.umask)     # for the files it writes
    try:
        out, err, status = fakecmd.run(state_dir, argv0, cmd, args, stdin)
    except Exception:           # what a worker's traceback would say
        out, err, status = "", traceback.format_exc(), 1
    finally:
        os.umask(umask)
    _write_all(request.fds[1], out.encode("latin-1", "replace"))
    _write_all(request.fds[2], err.encode("latin-1", "replace"))
    return status & 0xFF


def _text_stdin(buffer) -> io.TextIOWrapper:
    """Standard input over ``buffer`` as a worker's sys.stdin reads it
    (forkserver.python_stdio: this server's encoding and errors, "\n"
    newlines)."""
    return io.TextIOWrapper(buffer, sys.stdin.encoding, sys.stdin.errors,
                            "\n")


class _ReadAhead(io.RawIOBase):
    """Standard input for a worker: what the server read of it first,
    then the rest from descriptor 0."""

    def __init__(self, first: bytes) -> None:
        super().__init__()
        self.first = first

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self.first:
            n = min(len(buf), len(self.first))
            buf[:n] = self.first[:n]
            self.first = self.first[n:]
            return n
        return os.readv(0, [buf])


def _work(request: forkserver.Request) -> None:
    """The worker: the command, on the client's descriptors.  Never
    returns."""
    status = 1
    try:
        forkserver.take_request(request)
        forkserver.python_stdio()
        if _read_ahead:
            sys.stdin = _text_stdin(io.BufferedReader(
                _ReadAhead(_read_ahead)))
        try:
            status = fakecmd.main(request.args[1:])
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


_SERVER = forkserver.PerProcess(
    "SDTUNE_SIM_CMDSERVER", lambda: forkserver.Server(
        [sys.executable, "-m", "tests.sim.cmdserver"], cwd=REPO))


def ensure_started() -> Optional[forkserver.Server]:
    """This process's server, started on first use; None when turned off
    (SDTUNE_SIM_CMDSERVER=0) or when it cannot start (the wrappers then
    run the script)."""
    return _SERVER.get()


if __name__ == "__main__":
    forkserver.serve(sys.argv[1], _accept, _work, _inline)
