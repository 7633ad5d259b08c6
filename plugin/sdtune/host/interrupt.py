# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What SIGINT and SIGTERM stop at once, whatever the main thread does.

Python runs a signal's handler in the main thread, between two of its
bytecodes: a main thread waiting on a lock, joining workers or starved of
the GIL by two dozen of them raises KeyboardInterrupt only when it next
runs.  Killing a shelf's engines cannot wait for that.  So the command
line allows a watcher (install(), once), which the first on_signal()
from the main thread starts: the C-level handler writes the signal's
number to a pipe (signal.set_wakeup_fd) from whichever thread the kernel
interrupted, and a thread of its own, blocked reading that pipe, runs
the stop hooks registered with on_signal() as the byte arrives.  The
main thread still raises KeyboardInterrupt (or the command line's
Interrupted for SIGTERM) as before and unwinds; the hooks only do first
what cannot wait: kill processes by PID.

Without install() (sdtune used as a library, the in-process tests) no
hook ever runs and the main thread alone stops the work, as it always
did.  Hooks run in the watcher thread: they must be quick, idempotent and
safe beside the threads they stop.
"""

import contextlib
import os
import signal
import threading
from typing import Callable, Iterator, List, Optional

# The signals that stop sdtune; others never reach the hooks.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

Hook = Callable[[int], None]


class _Watcher:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: List[Hook] = []
        self._installed = False
        self._read_fd: Optional[int] = None

    def install(self) -> None:
        """Allow watching; the pipe and the thread come with the first
        hook (a command that registers none has no thread: under a
        memory limit, a second thread's malloc arena alone can turn an
        out-of-memory message into minutes of failing allocations)."""
        self._installed = True

    def _start(self) -> None:
        """The pipe, the wakeup fd and the thread (main thread only)."""
        read_fd, write_fd = os.pipe()
        # The C handler must never block on a full pipe; a byte lost to
        # a full pipe is a signal the hooks already saw.
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._read_fd = read_fd
        threading.Thread(target=self._watch, name="sdtune-signals",
                         daemon=True).start()

    def _watch(self) -> None:
        assert self._read_fd is not None
        # Never this thread's to take: the kernel then hands a signal to
        # the main thread (or a worker), whose wait it interrupts.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        while True:
            try:
                data = os.read(self._read_fd, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data:
                return
            for signo in data:
                if signo in STOP_SIGNALS:
                    self._run_hooks(signo)

    def _run_hooks(self, signo: int) -> None:
        with self._lock:
            hooks = list(self._hooks)
        for hook in hooks:
            # A hook that fails must not stop the others, nor the watcher:
            # the main thread's unwinding still stops the work.
            with contextlib.suppress(Exception):
                hook(signo)

    @contextlib.contextmanager
    def on_signal(self, hook: Hook) -> Iterator[None]:
        with self._lock:
            if self._installed and self._read_fd is None and \
                    threading.current_thread() is threading.main_thread():
                self._start()
            self._hooks.append(hook)
        try:
            yield
        finally:
            with self._lock:
                self._hooks.remove(hook)


_WATCHER = _Watcher()


def install() -> None:
    """Run the stop hooks the instant SIGINT or SIGTERM arrives (the
    command line, once, after the signals' own handlers are set)."""
    _WATCHER.install()


def installed() -> bool:
    return _WATCHER._installed


def on_signal(hook: Hook) -> "contextlib.AbstractContextManager[None]":
    """``with on_signal(hook):`` hook(signo) runs in the watcher thread
    if SIGINT or SIGTERM arrives inside the block (nothing without
    install()).  The first call, from the main thread, starts the
    watcher."""
    return _WATCHER.on_signal(hook)
