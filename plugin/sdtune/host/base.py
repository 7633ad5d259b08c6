# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The Host interface: everything sdtune may do to the machine it works
on, and what a command run returns.  Two implementations: the machine
itself (local.py) and an appliance over SSH (ssh.py), whose engine
(plugin/engine/serve_files.c, serve_cmds.c) does the work there.

The Host contract.  The rules below, and each method's docstring, are
the one written source both implementations keep;
tests/contract/test_host_contract.py runs each rule against both.  An
error is a HostError: a refusal exits 3 (EXIT_REFUSED: unsafe, nothing
was done), a failure 4 (EXIT_FAILED: the system said no, reason its
strerror); LockedError is the refusal of a lock someone holds.  Paths
are real paths (sys_path); "below the root" means the root or under it.

  Reading (read_bytes, exists, is_dir, stat, same_file, listdir,
  readlink, read_links) changes nothing.  A failure is a failure, not
  an answer: exists() and is_dir() say False only when there is no such
  file (ENOENT, ENOTDIR), never for EACCES, ELOOP or ENAMETOOLONG.
  read_bytes never waits on a FIFO and never reads more than its limit.
  listdir sorts by the names' bytes.

  Writing (create_new, write_atomic, check_replaceable, mkdirs, remove,
  remove_dir, lock) never goes through a symbolic link below the root,
  the last component included: refused, exit 3, "'P' is a symbolic
  link" (links above the root are not on the way).  Nothing is made
  with set-uid, set-gid or sticky bits (refused, exit 3), and a file
  that has them is never replaced.  create_new refuses (exit 3) when
  anything is there already.  write_atomic is all or nothing: a
  temporary file in the same directory, synced, renamed over the
  target, the directory synced; readers see the old file or the new
  one, and on a failure before the rename the target is untouched and
  the temporary file gone.  It replaces only a regular file (else
  refused, exit 3), keeping its mode and owner; an ordinary user only
  one it owns and may write.  Removals are made durable like renames;
  the root is never removed (refused, exit 3).

  Locks are POSIX record locks over the whole lock file (mode 0644,
  holding the holder's pid), so that sdtune on the machine and sdtune
  over SSH exclude each other; a second lock of a held file, in the
  same process too, is refused (LockedError, exit 3) without dropping
  the first.

  Commands (run, stream) are allow-listed names with absolute paths,
  run with an argv (never a shell), the fixed COMMAND_ENV, "/" as
  working directory, stdin or /dev/null, and a time bound ("timed out
  after N s", exit 4, the command killed).  A non-zero exit is data; a
  signal is returncode -SIGNO.  More than READ_LIMIT bytes on stdout or
  stderr is a failure, never memory without end; stream hands its
  stdout on as it comes instead of holding it, so that alone is not
  bounded.

  One difference, by design: the engine writes nothing outside its root
  (refused, exit 3), for it serves an ssh key that may be forced to
  `sdio serve --root /`; on the machine itself the root (-R) is where
  system paths resolve, not a fence, and a file the operator names
  (plan --save, an export) may be anywhere.
"""

import abc
import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import (Callable, ContextManager, Dict, List, Mapping, Optional,
                    Sequence)

from ..errors import HostError

# The environment of every command: output formats we parse must not depend
# on the caller's locale or on which PATH found which helper.
COMMAND_ENV = MappingProxyType({
    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
    "LC_ALL": "C",
    "LANG": "C",
})

# The most sdtune reads of any one input (sd.conf, a plan, a journal entry,
# vdbench or fio output, its configuration).  The largest real sd.conf is
# a few hundred KiB; the bound stops /dev/zero or an endless FIFO from
# eating the machine's memory.
READ_LIMIT = 64 << 20


@dataclass(frozen=True)
class CommandResult:
    """What one command did; a non-zero exit is data, not an exception."""

    argv: List[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed_ns: int


def resolve_under(root: str, path: str) -> str:
    """Absolute system path ``path`` as a real path under ``root``, like
    the -R option of illumos tools; '..' may not climb above the root.
    Pure: no file is looked at."""
    if not path.startswith("/") or "\0" in path:
        raise HostError("resolve", path, "not an absolute path")
    parts: List[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise HostError("resolve", path,
                                "'..' leads outside the root")
            parts.pop()
        else:
            parts.append(part)
    return os.path.join(root, *parts)


class Host(abc.ABC):
    """Everything sdtune may do to the machine.  Errors raise HostError."""

    root: str = "/"
    # [libraries]: name -> absolute path of a C library on this host,
    # which the engine loads there (sdio diskmgt).
    libraries: Mapping[str, str] = MappingProxyType({})

    @abc.abstractmethod
    def sys_path(self, path: str) -> str:
        """Real path of absolute system path ``path`` under the root."""

    @abc.abstractmethod
    def read_bytes(self, path: str, limit: int = READ_LIMIT) -> bytes:
        """Contents of the file at real path ``path``; more than ``limit``
        bytes is a failure, not a longer wait, and a FIFO is read
        without waiting (empty, or a failure)."""

    @abc.abstractmethod
    def exists(self, path: str) -> bool:
        """Whether real path ``path`` exists: False only when there is no
        such file (ENOENT, ENOTDIR); any other failure of the stat is a
        HostError."""

    @abc.abstractmethod
    def same_file(self, a: str, b: str) -> bool:
        """Whether real paths ``a`` and ``b`` name the same existing file
        (through links, `..` or another spelling)."""

    @abc.abstractmethod
    def is_dir(self, path: str) -> bool:
        """Whether real path ``path`` is a directory; fails as exists()
        does."""

    @abc.abstractmethod
    def stat(self, path: str) -> os.stat_result:
        """stat(2) of real path ``path``, following symlinks."""

    @abc.abstractmethod
    def listdir(self, path: str) -> List[str]:
        """Names in the directory at real path ``path``, without . and
        .., sorted by their bytes."""

    @abc.abstractmethod
    def write_atomic(self, path: str, data: bytes,
                     mode: Optional[int] = None) -> None:
        """Replace the file at ``path`` with ``data``, all or nothing:
        readers see the old file or the new one.  An existing file keeps
        its mode and owner; a new one gets ``mode`` (default 0644,
        whatever the umask).  Refused (exit 3): a symbolic link below
        the root, a target that is not a regular file or has set-id or
        sticky bits, a ``mode`` with them, a file an ordinary user does
        not own."""

    @abc.abstractmethod
    def create_new(self, path: str, data: bytes, mode: int = 0o600) -> None:
        """Create the file ``path`` holding ``data`` with ``mode`` (less
        the umask), synced; refuse (exit 3) if anything already exists
        there, if a component below the root is a symbolic link, or if
        ``mode`` has set-id or sticky bits."""

    @abc.abstractmethod
    def check_replaceable(self, path: str) -> None:
        """Raise unless write_atomic(path) could replace the file: no
        symlink on the way, a regular file (or none) without set-id or
        sticky bits, a writable place; the same refusals, nothing
        written."""

    @abc.abstractmethod
    def run(self, name: str, args: Sequence[str],
            timeout_s: Optional[float] = None,
            stdin: Optional[bytes] = None) -> CommandResult:
        """Run allow-listed command ``name`` with arguments ``args``
        (the rules of the module docstring: no shell, a fixed
        environment, a time bound, bounded output)."""

    @abc.abstractmethod
    def stream(self, name: str, args: Sequence[str],
               on_output: Callable[[bytes], None],
               timeout_s: Optional[float] = None) -> CommandResult:
        """Run allow-listed command ``name`` with arguments ``args`` as
        run() does, without stdin (/dev/null), handing each piece of its
        standard output to ``on_output`` as it arrives, in order, while
        the command still runs; the result's stdout is "" (stderr, exit
        status and the time bound are run's).  If ``on_output`` raises
        (KeyboardInterrupt included), the command is killed and the
        exception propagates; over SSH the session is then over (every
        later call fails), for it cannot be trusted in the middle of an
        answer.  A connection lost meanwhile is run's HostError."""

    @abc.abstractmethod
    def user(self) -> str:
        """Who runs sdtune (for the journal)."""

    @abc.abstractmethod
    def is_root(self) -> bool:
        """Whether sdtune runs with root privileges."""

    @abc.abstractmethod
    def can_run(self, name: str) -> bool:
        """Whether allow-listed command ``name`` exists and is executable."""

    @abc.abstractmethod
    def readlink(self, path: str) -> str:
        """Target of symbolic link ``path`` (a real path)."""

    @abc.abstractmethod
    def monotonic_ns(self) -> int:
        """Monotonic clock for measuring durations."""

    @abc.abstractmethod
    def now(self) -> float:
        """Wall clock (seconds since the epoch) for journal entries."""

    @abc.abstractmethod
    def lock(self, path: str) -> ContextManager[None]:
        """Hold an exclusive lock on lock file ``path`` (real path),
        created if missing; LockedError (exit 3) when anyone holds it,
        this process included (the lock it holds is kept); refused
        (exit 3) when a component below the root, the lock file itself
        included, is a symbolic link, as for writes."""

    @abc.abstractmethod
    def mkdirs(self, path: str, mode: int = 0o755) -> None:
        """Create directory ``path`` (with ``mode``) and its parents if
        missing; refused (exit 3) when a component below the root is a
        symbolic link, as for writes: nothing is created through it, or
        when ``mode`` has set-id or sticky bits."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Remove the file at ``path``, durably; refused (exit 3) when a
        component below the root, the file itself included, is a
        symbolic link."""

    @abc.abstractmethod
    def remove_dir(self, path: str) -> None:
        """Remove the empty directory ``path``, durably; refused (exit 3)
        for the root or through a symbolic link below it; HostError when
        it is not empty or cannot be removed."""

    def append_durable(self, path: str, data: bytes) -> None:
        """Append ``data`` to the file at ``path`` (created 0600 if
        missing) and make it durable (fsync, and the directory's on
        creation) before returning: a log that must hold everything
        written to it when this machine, or the process, dies.  Refused
        (exit 3) through a symbolic link below the root, as for writes.
        Only a host whose disk sdtune keeps its own logs on has one:
        RealHost; any other refuses."""
        raise HostError("append to", self.where(path), "this host keeps "
                        "no log of sdtune's: a log is kept on the machine "
                        "sdtune runs on")

    def read_links(self, directory: str) -> Dict[str, str]:
        """Every symbolic link in ``directory``, name to target: one
        request for what /dev/rdsk holds, however many disks there are."""
        links = {}
        for name in self.listdir(directory):
            path = directory.rstrip("/") + "/" + name
            try:
                links[name] = self.readlink(path)
            except HostError:
                continue    # not a link, or gone since the listing
        return links

    def where(self, path: str) -> str:
        """A path of this host as messages name it."""
        return path

    def dtrace_dir(self) -> str:
        """Where sdtune's D scripts are, as a path on this host."""
        from .. import layout
        return layout.dtrace_dir()

    def worker(self) -> "Host":
        """A host for one more thread of work beside the others (a shelf
        of drives certified at once): this host itself where calls from
        several threads are independent, as on this machine."""
        return self

    def stop_commands(self) -> List[int]:
        """Kill, by PID, every command that run() started and that is
        still running, here and in every worker(), and refuse to start
        another: the host is being torn down (Ctrl-C, SIGTERM).  The
        PIDs signalled."""
        return []

    def close(self) -> None:
        """End what the host holds open (a connection); idempotent."""
