# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""An appliance over SSH as the Host: `sdtune --host DEST`.

The appliance needs no Python: one ssh process runs the engine's file
and command server there (`sdio serve --root ROOT`, plugin/engine/
serve_*.c) for the whole sdtune command, and every Host call is a request
on that one session (host/wire.py).  The checks that keep sd.conf whole
run on the appliance, inside the engine: the temporary file in the same
directory, fsync, rename and directory sync of write_atomic are one
request, and the lock is the engine's POSIX record lock on the
appliance's lock file, so a local sdtune there and a remote one exclude
each other.  A connection that drops at any moment leaves the old or the
new file; the engine then exits and its locks go with it.

ssh runs with BatchMode (never a password prompt) and
StrictHostKeyChecking (an unknown or changed host key is a refusal that
says what to do, never a silent accept); everything else, from the
user's ~/.ssh/config to the [ssh] options of sdtune.conf, is ssh's own.
The allow-listed command paths and -R ROOT describe the appliance.
"""

import contextlib
import io
import os
import posixpath
import re
import shlex
import stat as statmod
import subprocess
import threading
import time
from typing import (Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

from ..errors import (EXIT_FAILED, EXIT_REFUSED, HostError, LockedError)
from . import wire
from .base import READ_LIMIT, CommandResult, Host, resolve_under
from .local import allowed, operator

# Forced before the operator's options: ssh keeps the first value it is
# given for an option, so neither ~/.ssh/config nor [ssh] options can
# turn these off.
FORCED_OPTIONS = ("-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                  "-o", "ClearAllForwardings=yes", "-a", "-x", "-T")
# Extra time for an answer beyond the command's own timeout: the round
# trip and the engine's reaping of a killed command.
ANSWER_MARGIN_S = 30.0
_DEST = re.compile(r"^(ssh://)?[A-Za-z0-9_.@:\[\]%+-]+$")
# The host and port of an ssh:// destination: [IPv6]:PORT or NAME:PORT.
_URL_PORT = re.compile(r"^(?:\[[^\]]*\]|[^:\[\]]*)(?::([^:]*))?$")
# errno values that say "there is no such file" (the same numbers on
# illumos and Linux): only these make a stat answer "missing".
_MISSING = (2, 20)     # ENOENT, ENOTDIR


def check_destination(dest: str) -> str:
    """DEST as ssh takes it, `[user@]host` or `ssh://[user@]host[:port]`
    with a port from 1 to 65535; anything that could be read as an
    option or a second word is refused (HostError, exit 2 is the
    caller's)."""
    if not dest or dest.startswith("-") or not _DEST.match(dest):
        raise HostError("reach", dest, "not an ssh destination "
                        "([user@]host or ssh://[user@]host[:port])")
    if dest.startswith("ssh://"):
        m = _URL_PORT.match(dest[6:].rpartition("@")[2])
        port = m.group(1) if m else ""
        if m is None or (port is not None and not (
                re.match(r"^[0-9]{1,5}$", port) and
                1 <= int(port) <= 65535)):
            raise HostError("reach", dest, "not an ssh destination: the "
                            "port must be a number from 1 to 65535")
    return dest


class SshHost(Host):
    """The appliance at ``dest``, with system paths under ``root`` there
    and the allow-listed ``commands`` at their paths there."""

    def __init__(self, dest: str, root: str = "/",
                 commands: Optional[Mapping[str, str]] = None,
                 ssh: str = "/usr/bin/ssh",
                 ssh_options: Sequence[str] = (),
                 timeout_s: float = 60.0,
                 connect_timeout_s: int = 30,
                 libraries: Optional[Mapping[str, str]] = None,
                 transport: Optional[Sequence[str]] = None) -> None:
        self.dest = check_destination(dest)
        self.root = root
        self.commands = dict(commands or {})
        # Paths on the appliance: its engine loads them there.
        self.libraries = dict(libraries or {})
        self.ssh = ssh
        self.ssh_options = list(ssh_options)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        # None: the session is ssh to DEST.  Otherwise the argv that
        # carries the session instead, the engine's own argv appended as
        # separate words (no shell, nothing quoted); () runs the engine
        # itself over a pipe on this machine, which is how
        # tests/contract holds this host and RealHost to one contract
        # without an sshd.
        self.transport = None if transport is None else list(transport)
        self._proc: Optional[subprocess.Popen] = None
        self._stderr: List[bytes] = []
        self._reader: Optional[threading.Thread] = None
        self._expired = False
        self._broken: Optional[HostError] = None
        self._euid = -1
        # The number of the last answer read (the engine numbers its
        # answers), and the ops of the answers a Ctrl-C left unread.
        self._read = 0
        self._unread: List[str] = []
        # Sessions of worker(): one request stream cannot carry the
        # engines of several drives at once.
        self._workers: List["SshHost"] = []
        # One request stream: one thread's requests and their answers at
        # a time (a shelf stores each drive's record from that drive's
        # thread, through this session).
        self._wire = threading.RLock()

    # -- the session --------------------------------------------------------

    def where(self, path: str) -> str:
        """A path on the appliance as messages name it: DEST:PATH."""
        return "%s:%s" % (self.dest, path)

    def argv(self) -> List[str]:
        """The command line of the session: ssh, or the transport."""
        engine = allowed(self.commands, "commands", "sdio", "run")
        if self.transport is not None:
            return [*self.transport, engine, "serve", "--root", self.root]
        remote = "%s serve --root %s" % (shlex.quote(engine),
                                         shlex.quote(self.root))
        return [self.ssh, *FORCED_OPTIONS, "-o",
                "ConnectTimeout=%d" % self.connect_timeout_s,
                "-o", "ServerAliveInterval=15", "-o",
                "ServerAliveCountMax=4", *self.ssh_options, "--",
                self.dest, remote]

    def _session(self) -> subprocess.Popen:
        with self._wire:
            return self._open_session()

    def _open_session(self) -> subprocess.Popen:
        if self._broken is not None:
            raise self._broken
        if self._proc is not None:
            return self._proc
        argv = self.argv()
        if not os.path.isabs(argv[0]):
            raise HostError("reach", self.dest, "the %s '%s' is not "
                            "absolute" % ("[ssh] ssh path" if self.transport
                                          is None else "transport",
                                          argv[0]))
        try:
            # Its own session: Ctrl-C stops sdtune, which can then still
            # ask the appliance whether a change was left half done.
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, close_fds=True,
                start_new_session=True)
        except OSError as e:
            raise HostError("reach", self.dest, "cannot run %s: %s"
                            % (argv[0], e.strerror or "error")) from e
        self._reader = threading.Thread(target=self._drain_stderr,
                                        daemon=True)
        self._reader.start()
        answer = self._exchange("hello", [],
                                self.connect_timeout_s + ANSWER_MARGIN_S)
        try:
            values = interpret("hello", answer, self.dest, "reach", "/")
        except HostError as e:
            self._fail(e)
        self._euid = values[1]
        refusal = zone_refusal(self.dest, values[5])
        if refusal is not None:
            self._fail(refusal)
        return self._proc

    def _drain_stderr(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        for line in iter(proc.stderr.readline, b""):
            if len(self._stderr) < 200:
                self._stderr.append(line)

    def _expire(self) -> None:
        self._expired = True
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()

    def _exchange(self, op: str, fields: Sequence[wire.Field],
                  timeout_s: float,
                  on_part: Optional[Callable[[bytes], None]] = None
                  ) -> wire.Answer:
        """Send one request and read its answer, checked against the
        protocol (wire.next_answer): an answer out of step or out of
        shape ends the session.  A stream's parts go to on_part as they
        come, the session held for the whole command."""
        with self._wire:
            return self._exchange_now(op, fields, timeout_s, on_part)

    def _next_seq(self, n: int) -> int:
        return n % wire.MAX_SEQ + 1

    def _exchange_now(self, op: str, fields: Sequence[wire.Field],
                      timeout_s: float,
                      on_part: Optional[Callable[[bytes], None]] = None
                      ) -> wire.Answer:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and \
            proc.stdout is not None
        timer = threading.Timer(timeout_s, self._expire)
        timer.daemon = True
        timer.start()
        sent = False
        what = op
        # What on_part raised: the caller's, not the session's failure.
        handed: List[BaseException] = []

        def hand_on(data: bytes) -> None:
            assert on_part is not None
            try:
                on_part(data)
            except BaseException as e:
                handed.append(e)
                raise
        try:
            # Answers a Ctrl-C left unread belong to requests before
            # this one: read past them first.
            while self._unread:
                what = self._unread[0]
                wire.next_answer(proc.stdout, what,
                                 self._next_seq(self._read))
                self._read = self._next_seq(self._read)
                self._unread.pop(0)
            what = op
            try:
                proc.stdin.write(wire.encode(op, fields))
                proc.stdin.flush()
            except OSError:
                pass    # the read below finds out why
            sent = True
            answer = wire.next_answer(
                proc.stdout, op, self._next_seq(self._read),
                None if on_part is None else hand_on)
            self._read = self._next_seq(self._read)
        except BaseException as e:
            if isinstance(e, wire.WireError) and not handed:
                self._fail(self._lost(what, e))
            # Ctrl-C or SIGTERM: the engine still answers what was sent
            # (an interrupted operation is whole on its side), so the
            # session stays usable for saying what was left half done,
            # unless a request went out in part.  A stream's command
            # goes on until it ends: the session cannot wait for it in
            # the middle of an answer, nor be trusted, so it ends, and
            # the engine kills the command (serve_cmds.c stream_lost,
            # or its signal handler).
            if sent and on_part is not None:
                self._broken = HostError("reach", self.dest, "the "
                                         "connection was given up in the "
                                         "middle of a command's output")
                self._stop(hang_up=True)
            elif sent:
                self._unread.append(op)
            else:
                self._broken = HostError("reach", self.dest, "the "
                                         "connection was interrupted")
                self._stop()
            raise
        finally:
            timer.cancel()
        return answer

    def _fail(self, error: HostError) -> None:
        """The session is over: every later call gets the same error."""
        self._broken = error
        self._stop()
        raise error

    def _ssh_said(self) -> str:
        if self._reader is not None:
            self._reader.join(2.0)
        lines = [ln.decode("utf-8", "replace").strip()
                 for ln in self._stderr]
        return "\n".join(ln for ln in lines if ln)

    def _lost(self, what: str, e: wire.WireError) -> HostError:
        """Why the session ended, in the operator's words."""
        if self._expired:
            return HostError("reach", self.dest, "no answer to %s in time:"
                             " the connection was closed" % what)
        if e.old and what == "hello":
            return HostError("reach", self.dest, "the sdio engine there "
                             "speaks another protocol version: install "
                             "the engine of this sdtune")
        if not e.eof:
            return not_in_protocol(self.dest, what, e)
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(5)
        said = self._ssh_said()
        return classify_ssh_failure(self.dest, code, said,
                                    self.commands.get("sdio", "sdio"),
                                    what == "hello")

    def _stop(self, hang_up: bool = False) -> None:
        """End the session: the engine ends at the end of its input,
        when it has answered.  hang_up: at once, by SIGTERM to ssh (or
        to the transport), for an engine streaming a command's output
        reads no more input; it kills the command as it ends."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin,):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        if hang_up:
            with contextlib.suppress(OSError):
                proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]

    def worker(self) -> "SshHost":
        """A second session to the same appliance, with the same
        settings, closed with this one."""
        other = SshHost(self.dest, self.root, self.commands, self.ssh,
                        self.ssh_options, self.timeout_s,
                        self.connect_timeout_s, self.libraries,
                        self.transport)
        self._workers.append(other)
        return other

    def stop_commands(self) -> List[int]:
        """End the worker sessions by killing their ssh processes: the
        engine there then kills the command it runs (sdio serve's
        SIGHUP/SIGTERM handler) or, at the latest, stops when that
        command's own time bound ends.  The ssh PIDs."""
        killed = []
        for other in self._workers:
            proc = other._proc
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.kill()
                    killed.append(proc.pid)
            other._broken = HostError("reach", other.dest,
                                      "sdtune is stopping")
        return killed

    def close(self) -> None:
        for other in self._workers:
            other.close()
        if self._proc is not None and self._broken is None:
            with contextlib.suppress(HostError):
                self._exchange("bye", [], 10.0)
        self._stop()
        if self._broken is None:
            self._broken = HostError("reach", self.dest, "the connection "
                                     "is closed")

    def _call(self, op: str, fields: Sequence[wire.Field], verb: str,
              obj: str, timeout_s: Optional[float] = None) -> object:
        """What the answer to OP means (interpret); an err answer is the
        HostError RealHost raises for the same failure."""
        self._session()
        answer = self._exchange(op, fields, timeout_s or
                                self.timeout_s + ANSWER_MARGIN_S)
        try:
            return interpret(op, answer, self.dest, verb, obj,
                             self.timeout_s)
        except ProtocolError as e:
            # In the framing but not a meaning: the session is over.
            self._fail(e)
            raise
    # -- paths and reading ----------------------------------------------

    def sys_path(self, path: str) -> str:
        return resolve_under(self.root, path)

    def read_bytes(self, path: str, limit: int = READ_LIMIT) -> bytes:
        return self._call("read", [path, limit], "read", path)

    def _stat(self, op: str, path: str) -> Optional[os.stat_result]:
        """The file's status, or None when there is no such file; any
        other failure there is an error, not "missing"."""
        try:
            return self._call(op, [path], "stat", path)
        except MissingError:
            return None

    def exists(self, path: str) -> bool:
        return self._stat("stat", path) is not None

    def is_dir(self, path: str) -> bool:
        st = self._stat("stat", path)
        return st is not None and statmod.S_ISDIR(st.st_mode)

    def same_file(self, a: str, b: str) -> bool:
        return self._call("samefile", [a, b], "compare", a)

    def stat(self, path: str) -> os.stat_result:
        return self._call("stat", [path], "stat", path)

    def listdir(self, path: str) -> List[str]:
        return self._call("listdir", [path], "list", path)

    def readlink(self, path: str) -> str:
        return self._call("readlink", [path], "read link", path)

    def read_links(self, directory: str) -> Dict[str, str]:
        return self._call("readlinks", [directory], "list", directory)

    # -- writing --------------------------------------------------------

    def write_atomic(self, path: str, data: bytes,
                     mode: Optional[int] = None) -> None:
        self._call("replace", [path, 0o644 if mode is None else mode, data],
                   "write", path)

    def create_new(self, path: str, data: bytes, mode: int = 0o600) -> None:
        self._call("create", [path, mode, data], "write", path)

    def check_replaceable(self, path: str) -> None:
        self._call("check_replaceable", [path], "write", path)

    def mkdirs(self, path: str, mode: int = 0o755) -> None:
        self._call("mkdirs", [path, mode], "create", path)

    def remove(self, path: str) -> None:
        self._call("remove", [path], "remove", path)

    def remove_dir(self, path: str) -> None:
        self._call("rmdir", [path], "remove", path)

    # -- commands, clocks, locks ----------------------------------------

    def run(self, name: str, args: Sequence[str],
            timeout_s: Optional[float] = None,
            stdin: Optional[bytes] = None) -> CommandResult:
        path = allowed(self.commands, "commands", name, "run")
        timeout = self.timeout_s if timeout_s is None else timeout_s
        start = time.monotonic_ns()
        returncode, out, err = self._call(
            "run", [path, int(timeout * 1000), stdin is not None,
                    stdin or b"", *args], "run", path,
            timeout + ANSWER_MARGIN_S)
        return CommandResult(
            argv=[path, *args], returncode=returncode,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=err.decode("utf-8", errors="replace"),
            elapsed_ns=time.monotonic_ns() - start)

    def stream(self, name: str, args: Sequence[str],
               on_output: Callable[[bytes], None],
               timeout_s: Optional[float] = None) -> CommandResult:
        path = allowed(self.commands, "commands", name, "run")
        timeout = self.timeout_s if timeout_s is None else timeout_s
        start = time.monotonic_ns()
        self._session()
        # The session is the command's until it ends (_exchange holds
        # it); the bound is the whole stream's.
        answer = self._exchange(
            "stream", [path, int(timeout * 1000), False, b"", *args],
            timeout + ANSWER_MARGIN_S, on_output)
        try:
            returncode, _, err = interpret("stream", answer, self.dest,
                                           "run", path, timeout)
        except ProtocolError as e:
            self._fail(e)
            raise
        return CommandResult(
            argv=[path, *args], returncode=returncode, stdout="",
            stderr=err.decode("utf-8", errors="replace"),
            elapsed_ns=time.monotonic_ns() - start)

    def user(self) -> str:
        return operator()

    def is_root(self) -> bool:
        self._session()
        return self._euid == 0

    def can_run(self, name: str) -> bool:
        path = self.commands.get(name)
        if not path or not path.startswith("/"):
            return False
        return self._call("can_run", [path], "run", path)

    def dtrace_dir(self) -> str:
        # Beside the engine: PREFIX/lib/sdtune/{bin/sdio,dtrace/} as
        # `make install-engine` puts them, or a source tree's
        # plugin/engine/sdio and dtrace/.
        engine = allowed(self.commands, "commands", "sdio", "run")
        lib = posixpath.dirname(posixpath.dirname(engine))
        for top in (lib, posixpath.dirname(lib)):
            if self.is_dir(posixpath.join(top, "dtrace")):
                return posixpath.join(top, "dtrace")
        return posixpath.join(lib, "dtrace")

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def now(self) -> float:
        # The appliance's clock: its journal's times stay in one clock,
        # whoever writes them.  A time the journal cannot hold is an
        # error here (interpret), never an entry nobody can read back.
        return self._call("now", [], "read the clock of", "/")

    @contextlib.contextmanager
    def lock(self, path: str) -> Iterator[None]:
        self._call("lock", [path], "lock", path)
        try:
            yield
        finally:
            if self._broken is None:
                with contextlib.suppress(HostError):
                    self._call("unlock", [path], "unlock", path)


def zone_refusal(dest: str, zone: str) -> Optional[HostError]:
    """The refusal to work on an appliance whose engine runs outside
    the global zone (sd.conf and the disks are the global zone's, as the
    launcher says locally); None in the global zone, or off illumos ("",
    a development machine).  An engine that could not tell ("?") is
    refused: unknown is unsafe."""
    if zone in ("", "global"):
        return None
    return HostError("reach", dest, "the engine there runs in %s: sd.conf "
                     "and the disks belong to the global zone"
                     % ("a zone it cannot name" if zone == "?" else
                        "non-global zone '%s'" % zone), EXIT_REFUSED)


class MissingError(HostError):
    """An err answer saying that there is no such file (ENOENT,
    ENOTDIR): what exists() and is_dir() answer False for."""


class ProtocolError(HostError):
    """An answer the protocol does not allow: the session cannot go
    on."""


def not_in_protocol(dest: str, op: str,
                    e: wire.WireError) -> ProtocolError:
    return ProtocolError("reach", dest, "the engine's answer to %s is not "
                         "in its protocol (%s)" % (op, e.what))


def _stat_result(n: List[int]) -> os.stat_result:
    """As os.stat() gives it: whole seconds in the tuple's positions,
    and st_atime, st_mtime, st_ctime (float) and their _ns by name, which
    os.stat_result leaves None unless given."""
    times = n[7:10]
    extra = {}
    for name, ns in zip(("st_atime", "st_mtime", "st_ctime"), times):
        extra[name] = ns / 1e9
        extra[name + "_ns"] = ns
    return os.stat_result(n[:7] + [t // 1000000000 for t in times], extra)


def _run_result(dest: str,
                values: List[object]) -> Tuple[int, bytes, bytes]:
    status, signo, out, err, _ = values
    # Exit status -1 and a signal, or a status and none (serve_cmds.c
    # run_command).
    if (status < 0) != (signo > 0):  # type: ignore[operator]
        raise not_in_protocol(dest, "run", wire.WireError(
            "exit status %d with signal %d" % (status, signo)))
    # As subprocess reports a child killed by a signal.
    return (-signo if signo else status), out, err   # type: ignore


def _clock(dest: str, values: List[object]) -> float:
    ns = values[0]
    seconds = ns / 1e9  # type: ignore[operator]
    if not wire.is_time(seconds):
        raise HostError("read the clock of", "%s:/" % dest, "it says %d ns "
                        "since 1970, not a time the journal can hold "
                        "(0 to %g s): set the appliance's clock"
                        % (ns, wire.TIME_LIMIT_S))
    return seconds


def _links(values: List[object]) -> Dict[str, str]:
    return dict(zip(values[::2], values[1::2]))  # type: ignore


# What an ok answer means, by op: values (wire.answer_values) in, the
# Host call's result out.  Ops not named here mean their first value, or
# None when they have none.
_MEANING = {
    "hello": lambda dest, v: v,
    "stat": lambda dest, v: _stat_result(v),
    "lstat": lambda dest, v: _stat_result(v),
    "listdir": lambda dest, v: v,
    "readlinks": lambda dest, v: _links(v),
    "run": _run_result,
    "stream": _run_result,
    "now": _clock,
}


def interpret(op: str, answer: wire.Answer, dest: str, verb: str,
              obj: str, timeout_s: float = 60.0) -> object:
    """What a checked answer (wire.next_answer) to OP means for the Host
    call that sent it: its result, or, for an err answer, the HostError
    RealHost raises for the same failure, naming DEST:OBJ."""
    if answer.word == "err":
        raise error_of(dest, answer.fields, verb, obj,  # type: ignore
                       timeout_s)
    mean = _MEANING.get(op)
    if mean is not None:
        return mean(dest, answer.fields)
    return answer.fields[0] if answer.fields else None


def parse_answer(data: bytes, op: str, seq: int = 1,
                 dest: str = "appliance", obj: str = "/") -> object:
    """The client's reading of the engine's answer to one request, pure
    (a fuzz target): DATA must hold exactly the answer to request number
    SEQ, an OP.  What the Host call returns, or HostError: the err
    answer's error, or "not in its protocol" for anything malformed,
    short, out of range, out of step or followed by more bytes."""
    stream = io.BytesIO(data)
    try:
        answer = wire.next_answer(stream, op, seq)
        if stream.read(1):
            raise wire.WireError("more follows the answer")
    except wire.WireError as e:
        raise not_in_protocol(dest, op, e) from None
    return interpret(op, answer, dest, op, obj)


def error_of(dest: str, fields: List[str], verb: str, obj: str,
             timeout_s: float = 60.0) -> HostError:
    """An `err` answer (its fields as text, the code first) as the
    HostError RealHost raises for the same failure, naming DEST:OBJ."""
    code = fields[0]
    detail = fields[1:]
    first = detail[0] if detail else "?"
    where = "%s:%s" % (dest, obj)
    if code == "errno" and len(detail) >= 2:
        number = detail[2] if len(detail) >= 3 else ""
        if re.match(r"^[0-9]{1,5}$", number) and int(number) in _MISSING:
            return MissingError(verb, where, detail[1])
        return HostError(verb, where, detail[1])
    if code == "locked":
        return LockedError("lock", where,
                           "locked by another sdtune process")
    if code == "denied":
        # Outside what the engine's policy lets this key reach: for
        # exists() and is_dir() as good as missing.
        return MissingError(verb, where, "the engine there does not allow"
                            " it (%s)" % first, EXIT_REFUSED)
    refusals = {
        "exists": "it already exists (remove it or choose another "
                  "name)",
        "notreg": "not a regular file",
        "symlink": "'%s' is a symbolic link" % first,
        "owner": "owned by uid %s: only that user or root may replace "
                 "it" % first,
        "group": "cannot keep its group (gid %s)" % first,
    }
    if code in refusals:
        return HostError("create" if code == "exists" else verb, where,
                         refusals[code], EXIT_REFUSED)
    # read's toolarge names the limit it was given; run's, the stream.
    limit = int(first) if re.match(r"^[0-9]{1,12}$", first) else READ_LIMIT
    failures = {
        "toolarge": "larger than %d MiB: not an input sdtune reads"
                    % (limit >> 20),
        "perm": "Permission denied",
        "tmpexists": "temporary file '%s' exists" % first,
        "dirnotwritable": "directory '%s' is not writable" % first,
        "timeout": "timed out after %g s" % (
            int(first) / 1000.0 if re.match(r"^[0-9]{1,12}$", first)
            else timeout_s),
    }
    if code == "sync" and len(detail) >= 2:
        return HostError("sync", "%s:%s" % (dest, detail[0]), detail[1])
    if code in failures:
        return HostError(verb, where, failures[code])
    return HostError(verb, where, "the engine there refused the request"
                     " (%s%s)" % (code, ": " + first if detail else ""))


def classify_ssh_failure(dest: str, code: Optional[int], said: str,
                         engine: str, connecting: bool) -> HostError:
    """One line for why ssh ended: a host key problem is a refusal
    (exit 3) that says how to check and fix it; the rest exit 4."""
    low = said.lower()
    if "remote host identification has changed" in low:
        return HostError("reach", dest, "its host key has changed (another"
                         " machine, a reinstall, or someone in between): "
                         "check the new key, then remove the old one with"
                         " 'ssh-keygen -R HOST'", EXIT_REFUSED)
    if "host key verification failed" in low or \
            "no matching host key" in low:
        return HostError("reach", dest, "its host key is not known here: "
                         "check the fingerprint and add it with "
                         "'ssh DEST' once, or ssh-keyscan into "
                         "known_hosts; sdtune never accepts a key "
                         "unasked", EXIT_REFUSED)
    if "permission denied" in low:
        return HostError("reach", dest, "permission denied: sdtune never "
                         "asks for a password; use a key the appliance "
                         "accepts (ssh-agent or IdentityFile)")
    if code in (126, 127) and connecting:
        return HostError("reach", dest, "the sdio engine is not installed "
                         "at %s there: install it ('make install-engine') "
                         "or set [commands] sdio" % engine)
    if re.search(r"(?m)^usage: ssh\b", said):
        # Its usage text, whose last line is no reason: [ssh] options
        # or DEST held something this ssh does not take.
        return HostError("reach", dest, "ssh refused its command line "
                         "(it printed its usage): check DEST and the "
                         "[ssh] options of sdtune.conf")
    last = said.splitlines()[-1] if said else ""
    if connecting:
        return HostError("reach", dest, "ssh failed%s%s" % (
            " (exit %d)" % code if code is not None else "",
            ": " + last[:200] if last else ""))
    return HostError("reach", dest, "the connection was lost%s; sd.conf "
                     "there is the old or the new file, and the next "
                     "sdtune command completes or undoes an open change"
                     % (": " + last[:200] if last else ""), EXIT_FAILED)
