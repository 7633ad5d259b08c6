# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The Host interface: everything sdtune may do to the machine it works
on, and what a command run returns.  Two implementations: the machine
itself (local.py) and an appliance over SSH (ssh.py).
"""

import abc
import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import ContextManager, Dict, List, Mapping, Optional, Sequence

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
        bytes is an error, not a longer wait."""

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
        """Sorted names in the directory at real path ``path``."""

    @abc.abstractmethod
    def write_atomic(self, path: str, data: bytes,
                     mode: Optional[int] = None) -> None:
        """Replace the file at ``path`` with ``data``, all or nothing."""

    @abc.abstractmethod
    def create_new(self, path: str, data: bytes, mode: int = 0o600) -> None:
        """Create the file ``path`` holding ``data``; refuse (exit 3) if
        anything already exists there."""

    @abc.abstractmethod
    def check_replaceable(self, path: str) -> None:
        """Raise unless write_atomic(path) could replace the file: no
        symlink on the way, a regular file (or none), a writable place."""

    @abc.abstractmethod
    def run(self, name: str, args: Sequence[str],
            timeout_s: Optional[float] = None,
            stdin: Optional[bytes] = None) -> CommandResult:
        """Run allow-listed command ``name`` with arguments ``args``."""

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
        """Hold an exclusive lock on lock file ``path`` (real path);
        refused (exit 3) when a component below the root is a symbolic
        link, as for writes."""

    @abc.abstractmethod
    def mkdirs(self, path: str, mode: int = 0o755) -> None:
        """Create directory ``path`` and its parents if missing; refused
        (exit 3) when a component below the root is a symbolic link, as
        for writes: nothing is created through it."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Remove the file at ``path``."""

    @abc.abstractmethod
    def remove_dir(self, path: str) -> None:
        """Remove the empty directory ``path`` (never the root), durably;
        HostError when it is not empty or cannot be removed."""

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
