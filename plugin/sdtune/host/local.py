# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The machine itself as the Host: sdtune runs on the appliance.

``RealHost`` runs only commands from an allow-list of absolute paths (the
``[commands]`` section of sdtune.conf: mdb, diskinfo, iostat, zpool, zdb,
update_drv, devfsadm, dtrace, sdio), with an argv list, a fixed environment
and a timeout.  System paths are resolved under a root directory, like the
``-R`` option of illumos tools.
"""

import contextlib
import errno
import fcntl
import os
import pwd
import selectors
import stat as statmod
import signal
import subprocess
import threading
import time
from types import MappingProxyType
from typing import (Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Set, Tuple)

from sdtune.errors import EXIT_REFUSED, HostError, LockedError

from .base import COMMAND_ENV, READ_LIMIT, CommandResult, Host, resolve_under

_NO_COMMANDS: Mapping[str, str] = MappingProxyType({})


def guard_standard_fds() -> None:
    """Open /dev/null on any of descriptors 0, 1 and 2 that is closed, so
    that no file sdtune opens later (sd.conf, a journal entry) becomes its
    standard output by accident.  The caller finds out from sys.stdout
    being None that output has nowhere to go."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def discard_stdout() -> None:
    """Point descriptor 1 at /dev/null after standard output failed, so
    that the interpreter's last flush at exit has nowhere to fail."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    os.dup2(null, 1)
    os.close(null)


def operator() -> str:
    """Who runs sdtune on this machine, for the journal: the user behind
    sudo if any."""
    name = os.environ.get("SUDO_USER") or os.environ.get("LOGNAME")
    if name:
        return name
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def allowed(table: Mapping[str, str], section: str, name: str,
            verb: str) -> str:
    """The absolute path configured for `name` in an allow-list section;
    anything else is refused before it is run or loaded."""
    path = table.get(name)
    if path is None:
        raise HostError(verb, name, "not in the [%s] allow-list" % section)
    if not os.path.isabs(path):
        raise HostError(verb, path,
                        "configured path for '%s' is not absolute" % name)
    return path


def os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _plain_mode(verb: str, path: str, mode: int,
                why: str = "mode %04o has set-id or sticky bits") -> None:
    """Refuse (exit 3) a mode with set-uid, set-gid or sticky bits: sdtune
    writes configuration and records, never such a file."""
    if mode & 0o7000:
        raise HostError(verb, path, why % mode, EXIT_REFUSED)


def _exchange(proc: subprocess.Popen, stdin: Optional[bytes],
              timeout: float, path: str,
              on_output: Optional[Callable[[bytes], None]] = None
              ) -> Tuple[bytes, bytes]:
    """What the command proc writes on stdout and stderr, given stdin,
    as Popen.communicate() gives it, but bounded as the engine bounds it
    (RUN_OUT_MAX, serve_cmds.c): more than READ_LIMIT bytes on either
    stream is an error, never memory without end (`cat /dev/zero`).
    With on_output, each piece of stdout goes to it as it is read, and
    none is kept (b"" for stdout).  TimeoutExpired once timeout seconds
    have passed."""
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None and proc.stderr is not None
    out = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    pending = memoryview(stdin or b"")
    with selectors.DefaultSelector() as sel:
        for stream in out:
            sel.register(stream, selectors.EVENT_READ)
        if proc.stdin is not None:
            if pending:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            for key, _ in sel.select(left):
                stream = key.fileobj
                if stream is proc.stdin:
                    try:
                        pending = pending[os.write(proc.stdin.fileno(),
                                                   pending[:65536]):]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        # It exited without reading its input: no error,
                        # its exit status and stderr tell what happened.
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(stream)
                        with contextlib.suppress(OSError):
                            proc.stdin.close()
                    continue
                chunk = os.read(stream.fileno(), 65536)  # type: ignore
                if not chunk:
                    sel.unregister(stream)
                    continue
                if on_output is not None and stream is proc.stdout:
                    on_output(chunk)
                    continue
                out[stream] += chunk     # type: ignore[index]
                if len(out[stream]) > READ_LIMIT:   # type: ignore
                    raise HostError("run", path, "larger than %d MiB: not "
                                    "an input sdtune reads"
                                    % (READ_LIMIT >> 20))
    # Its output is closed; it may still run, up to the deadline.
    proc.wait(max(0.0, deadline - time.monotonic()))
    return bytes(out[proc.stdout]), bytes(out[proc.stderr])


class RealHost(Host):
    """The machine itself, with system paths under ``root``."""

    # POSIX record locks belong to the process: a second lock in the same
    # process would succeed, and closing any descriptor of the file drops
    # the lock.  So the process also remembers which files it has locked.
    _held_locks: Set[Tuple[int, int]] = set()

    def __init__(self, root: str = "/",
                 commands: Mapping[str, str] = _NO_COMMANDS,
                 timeout_s: float = 60.0,
                 libraries: Mapping[str, str] = _NO_COMMANDS) -> None:
        self.root = os.path.abspath(root)
        self.commands = dict(commands)
        self.libraries = dict(libraries)
        self.timeout_s = timeout_s
        # The commands run() has started and not yet reaped, by PID, so
        # that stop_commands() can end them from another thread.
        self._running: Dict[int, subprocess.Popen] = {}
        self._running_lock = threading.Lock()
        self._stopping = False

    # -- paths and reading ------------------------------------------------

    def sys_path(self, path: str) -> str:
        return resolve_under(self.root, path)

    def read_bytes(self, path: str, limit: int = READ_LIMIT) -> bytes:
        try:
            # O_NONBLOCK, as the engine: a FIFO (one that replaced a file
            # since a caller's stat) reads as empty or fails with EAGAIN
            # instead of waiting for ever; files and devices read as usual.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                data = f.read(limit + 1)
            if data is None:
                raise HostError("read", path, "nothing to read without "
                                "waiting: not a file")
        except OSError as e:
            raise HostError("read", path, os_reason(e)) from e
        except MemoryError as e:
            raise HostError("read", path, "not enough memory") from e
        if len(data) > limit:
            raise HostError("read", path, "larger than %d MiB: not an input"
                            " sdtune reads" % (limit >> 20))
        return data

    def exists(self, path: str) -> bool:
        return self._stat_or_none(path) is not None

    def is_dir(self, path: str) -> bool:
        st = self._stat_or_none(path)
        return st is not None and statmod.S_ISDIR(st.st_mode)

    def _stat_or_none(self, path: str) -> Optional[os.stat_result]:
        """As the remote host: None only when there is no such file; a
        stat that fails otherwise (EACCES, ELOOP, EIO) is an error, not
        "missing"."""
        try:
            return os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise HostError("stat", path, os_reason(e)) from e

    def same_file(self, a: str, b: str) -> bool:
        try:
            return os.path.samefile(a, b)
        except OSError:
            return False

    def stat(self, path: str) -> os.stat_result:
        try:
            return os.stat(path)
        except OSError as e:
            raise HostError("stat", path, os_reason(e)) from e

    def listdir(self, path: str) -> List[str]:
        try:
            # By the bytes of the names, as the engine sorts them: the
            # code points of undecodable names (surrogate escapes) sort
            # otherwise.
            return sorted(os.listdir(path), key=os.fsencode)
        except OSError as e:
            raise HostError("list", path, os_reason(e)) from e

    # -- writing ----------------------------------------------------------

    def _check_no_symlinks(self, path: str, op: str = "write") -> None:
        """Refuse if any component below the root (or below / for a path
        outside the root) is a symlink: a link could redirect a root-owned
        write, directory or lock anywhere."""
        base = self.root if (path + "/").startswith(
            self.root.rstrip("/") + "/") else "/"
        rel = os.path.relpath(path, base)
        current = base
        for part in rel.split("/"):
            current = os.path.join(current, part)
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                return  # the open below reports the missing component
            except OSError as e:
                raise HostError(op, path, os_reason(e)) from e
            if statmod.S_ISLNK(st.st_mode):
                # A refusal for safety, not a failure: exit 3.
                raise HostError(op, path,
                                "'%s' is a symbolic link" % current,
                                EXIT_REFUSED)

    def _write_all(self, fd: int, data: bytes) -> None:
        """Write every byte of ``data``; a hook so tests can inject a
        failure half-way through a write."""
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def _existing(self, path: str) -> Optional[os.stat_result]:
        """The regular file at ``path`` that a write would replace (None
        if there is none), refusing what must not be replaced."""
        self._check_no_symlinks(path)
        try:
            old = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise HostError("write", path, os_reason(e)) from e
        if not statmod.S_ISREG(old.st_mode):
            raise HostError("write", path, "not a regular file",
                            EXIT_REFUSED)
        # rename(2) needs only the directory's write permission; without
        # the file's own, replacing it would be a way around its mode.
        if os.geteuid() != 0 and not os.access(path, os.W_OK):
            raise HostError("write", path, "Permission denied")
        if old.st_uid != os.geteuid() and os.geteuid() != 0:
            # An ordinary user cannot give the new copy the old owner:
            # refuse rather than take the file over.
            raise HostError("write", path, "owned by uid %d: only that "
                            "user or root may replace it" % old.st_uid,
                            EXIT_REFUSED)
        # The new copy takes the old one's mode: never a set-id one (the
        # engine's rule too, serve_files.c op_replace).
        _plain_mode("write", path, statmod.S_IMODE(old.st_mode),
                    "it has set-id or sticky bits (mode %04o)")
        return old

    def check_replaceable(self, path: str) -> None:
        path = os.path.abspath(path)
        self._existing(path)
        directory = os.path.dirname(path)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise HostError("write", path, "directory '%s' is not "
                            "writable" % directory)

    def _create_synced(self, path: str, data: bytes, mode: int,
                       target: str,
                       finish: Optional[Callable[[int], None]] = None
                       ) -> None:
        """Create ``path`` (it must not exist) holding ``data``, then
        ``finish(fd)`` and fsync; on any failure, or a signal, the file is
        removed again.  Errors name ``target``, the file the caller is
        writing."""
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY
                         | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        except FileExistsError:
            raise
        except OSError as e:
            raise HostError("write", target, os_reason(e)) from e
        try:
            self._write_all(fd, data)
            if finish is not None:
                finish(fd)
            os.fsync(fd)
        except BaseException as e:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            if isinstance(e, OSError):
                raise HostError("write", target, os_reason(e)) from e
            raise
        os.close(fd)

    def create_new(self, path: str, data: bytes, mode: int = 0o600) -> None:
        path = os.path.abspath(path)
        _plain_mode("create", path, mode)
        self._check_no_symlinks(path)
        try:
            self._create_synced(path, data, mode, path)
        except FileExistsError as e:
            raise HostError("create", path, "it already exists (remove it "
                            "or choose another name)", EXIT_REFUSED) from e
        self._fsync_dir(os.path.dirname(path))

    def append_durable(self, path: str, data: bytes) -> None:
        path = os.path.abspath(path)
        self._check_no_symlinks(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                         | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise HostError("append to", path, os_reason(e)) from e
        try:
            created = os.fstat(fd).st_size == 0
            self._write_all(fd, data)
            os.fsync(fd)
        except OSError as e:
            raise HostError("append to", path, os_reason(e)) from e
        finally:
            os.close(fd)
        if created:
            # The file's name must survive a crash as well as its data.
            self._fsync_dir(os.path.dirname(path))

    def write_atomic(self, path: str, data: bytes,
                     mode: Optional[int] = None) -> None:
        """Readers see the old file or the new one, never a mixture.

        An existing target keeps its mode and owner (an ordinary user may
        replace only files it owns and may write); ``mode`` (default
        0644) applies to a new file.  On any failure up to the rename the
        target is untouched and the temporary file is removed; if only the
        directory sync after the rename fails, the new file is in place and
        HostError("sync", directory) says so.
        """
        path = os.path.abspath(path)
        if mode is not None:
            _plain_mode("write", path, mode)
        old = self._existing(path)

        # Same directory, so the rename cannot cross file systems.
        directory, base = os.path.split(path)
        tmp = os.path.join(directory, ".%s.sdtune.%d.%s" % (
            base, os.getpid(), os.urandom(4).hex()))

        def keep_mode_and_owner(fd: int) -> None:
            if old is None:
                os.fchmod(fd, 0o644 if mode is None else mode)
                return
            try:
                os.fchown(fd, old.st_uid, old.st_gid)
            except PermissionError:
                # The owner is ours (checked above); only a group we are
                # not in can fail, and the group must not change silently
                # either.
                raise HostError("write", path, "cannot keep its group "
                                "(gid %d)" % old.st_gid, EXIT_REFUSED)
            # After the chown, which clears the setuid and setgid bits.
            os.fchmod(fd, statmod.S_IMODE(old.st_mode))
        try:
            self._create_synced(tmp, data, 0o600, path, keep_mode_and_owner)
        except FileExistsError as e:
            raise HostError("write", path, "temporary file '%s' exists"
                            % tmp) from e
        try:
            os.rename(tmp, path)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(e, OSError):
                raise HostError("write", path, os_reason(e)) from e
            raise
        self._fsync_dir(directory)

    def _fsync_dir(self, directory: str) -> None:
        """Make the rename itself durable."""
        try:
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as e:
            # Some file systems cannot sync a directory; the data is there.
            if e.errno != errno.EINVAL:
                raise HostError("sync", directory, os_reason(e)) from e

    def mkdirs(self, path: str, mode: int = 0o755) -> None:
        _plain_mode("create", path, mode)
        # Checked first: makedirs would create the missing directories
        # wherever a link on the way points.
        self._check_no_symlinks(os.path.abspath(path), "create")
        try:
            os.makedirs(path, mode, exist_ok=True)
        except OSError as e:
            raise HostError("create", path, os_reason(e)) from e

    def remove(self, path: str) -> None:
        """Unlink, durably: a rollback that removes a boot module must
        not see it come back after a power loss."""
        # As for every write: no link on the way, nor the file itself a
        # link (the engine's rule).
        self._check_no_symlinks(os.path.abspath(path), "remove")
        try:
            os.unlink(path)
        except OSError as e:
            raise HostError("remove", path, os_reason(e)) from e
        self._fsync_dir(os.path.dirname(os.path.abspath(path)))

    def remove_dir(self, path: str) -> None:
        # As the engine: the root is never removed, and no link on the
        # way may lead the removal elsewhere.
        if os.path.abspath(path) == self.root:
            raise HostError("remove", path, "it is the system root",
                            EXIT_REFUSED)
        self._check_no_symlinks(os.path.abspath(path), "remove")
        try:
            os.rmdir(path)
        except OSError as e:
            raise HostError("remove", path, os_reason(e)) from e
        self._fsync_dir(os.path.dirname(os.path.abspath(path)))

    # -- commands, clocks, locks ------------------------------------------

    def run(self, name: str, args: Sequence[str],
            timeout_s: Optional[float] = None,
            stdin: Optional[bytes] = None) -> CommandResult:
        return self._command(name, args, timeout_s, stdin, None)

    def stream(self, name: str, args: Sequence[str],
               on_output: Callable[[bytes], None],
               timeout_s: Optional[float] = None) -> CommandResult:
        return self._command(name, args, timeout_s, None, on_output)

    def _command(self, name: str, args: Sequence[str],
                 timeout_s: Optional[float], stdin: Optional[bytes],
                 on_output: Optional[Callable[[bytes], None]]
                 ) -> CommandResult:
        """run(), or stream() when on_output is given: one way to run a
        command, as the engine has (serve_cmds.c run_command)."""
        path = allowed(self.commands, "commands", name, "run")
        argv = [path, *args]
        timeout = self.timeout_s if timeout_s is None else timeout_s
        # What on_output raised, which goes to the caller unchanged (an
        # OSError of its own is not the command's failure).
        raised: List[BaseException] = []

        def hand_on(chunk: bytes) -> None:
            assert on_output is not None
            try:
                on_output(chunk)
            except BaseException as e:
                raised.append(e)
                raise
        start = time.monotonic_ns()
        # Started and registered under the lock that stop_commands()
        # holds: no command can start unseen after the stop.
        with self._running_lock:
            if self._stopping:
                raise HostError("run", path, "sdtune is stopping")
            try:
                proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL if stdin is None else
                    subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, env=dict(COMMAND_ENV),
                    cwd="/", close_fds=True)
            except OSError as e:
                raise HostError("run", path, os_reason(e)) from e
            self._running[proc.pid] = proc
        try:
            out, err = _exchange(proc, stdin, timeout, path,
                                 None if on_output is None else hand_on)
        except subprocess.TimeoutExpired as e:
            proc.kill()
            proc.wait()
            raise HostError("run", path,
                            "timed out after %g s" % timeout) from e
        except OSError as e:
            # Writing its input or reading its output failed (EPIPE is
            # not among these: _exchange() ignores it).
            proc.kill()
            proc.wait()
            if raised:
                raise
            raise HostError("run", path, os_reason(e)) from e
        except BaseException:
            # Ctrl-C, SIGTERM, or stream()'s on_output raising: the
            # command must not outlive sdtune, nor stay behind as a
            # zombie for an init that may not reap it.
            proc.kill()
            proc.wait()
            raise
        finally:
            with self._running_lock:
                self._running.pop(proc.pid, None)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        return CommandResult(
            argv=argv, returncode=proc.returncode,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=err.decode("utf-8", errors="replace"),
            elapsed_ns=time.monotonic_ns() - start)

    def stop_commands(self) -> List[int]:
        # Set before waiting for the lock: threads that would start a
        # command see it and let the lock go (no starting crowd can keep
        # a stop waiting).
        self._stopping = True
        with self._running_lock:
            killed = []
            for pid, proc in self._running.items():
                # Not yet reaped (its thread is still in run()), so the
                # PID is still this child's.
                if proc.returncode is None:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
            return killed

    def user(self) -> str:
        return operator()

    def is_root(self) -> bool:
        return os.geteuid() == 0

    def can_run(self, name: str) -> bool:
        path = self.commands.get(name)
        return bool(path) and os.path.isabs(path) and \
            os.access(path, os.X_OK) and os.path.isfile(path)

    def readlink(self, path: str) -> str:
        try:
            return os.readlink(path)
        except OSError as e:
            raise HostError("read link", path, os_reason(e)) from e

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def now(self) -> float:
        return time.time()

    @contextlib.contextmanager
    def lock(self, path: str) -> Iterator[None]:
        # O_NOFOLLOW guards the last component only.
        self._check_no_symlinks(os.path.abspath(path), "lock")
        # Held already: refused before an open, whose close would drop
        # the lock (POSIX locks are the process's, not the descriptor's).
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) in self._held_locks:
                raise LockedError("lock", path,
                                  "locked by another sdtune process")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise HostError("lock", path, os_reason(e)) from e
        try:
            st = os.fstat(fd)
        except OSError as e:
            os.close(fd)
            raise HostError("lock", path, os_reason(e)) from e
        key = (st.st_dev, st.st_ino)
        if key in self._held_locks:
            # A held file renamed here since the lstat: closing fd would
            # drop its lock, so fd is left open (the engine does so too).
            raise LockedError("lock", path,
                              "locked by another sdtune process")
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno in (errno.EACCES, errno.EAGAIN):
                    raise LockedError("lock", path,
                                      "locked by another sdtune process"
                                      ) from e
                raise HostError("lock", path, os_reason(e)) from e
            # The holder's pid helps the operator find a stuck process.
            try:
                os.ftruncate(fd, 0)
                os.write(fd, b"%d\n" % os.getpid())
            except OSError as e:
                raise HostError("lock", path, os_reason(e)) from e
            self._held_locks.add(key)
            try:
                yield
            finally:
                self._held_locks.discard(key)
                fcntl.lockf(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
