# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The signal watcher (sdtune/host/interrupt.py): a stop hook runs the
moment SIGINT or SIGTERM arrives, even while the main thread cannot run
Python (here it blocks both signals and sleeps, the way a main thread
parked in a wait, or starved of the GIL, would leave a flag-setting
handler unrun).  Real signals, to a real process."""

import os
import select
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.join(HERE, "..", "..", "..", "plugin")

# The child: install the watcher, register a hook that prints the signal
# and the time, then park the main thread in a read of its standard input
# with both signals blocked in it, so that the kernel hands them to a
# worker.  Hooks run only in the watcher thread: a hook line is the
# watcher's doing, never the main thread's.
CHILD = r"""
import os, signal, sys, threading, time
from sdtune.host import interrupt

# As in a terminal's foreground, whatever this test run inherited.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, lambda s, f: sys.exit(3))
interrupt.install()

def hook(signo):
    os.write(1, b"hook %d %d\n" % (signo, time.monotonic_ns()))

def idle():
    time.sleep(60)

with interrupt.on_signal(hook):
    # A worker that does not block the signals: the kernel gives it the
    # signal the main thread refuses.
    threading.Thread(target=idle, daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK,
                           [signal.SIGINT, signal.SIGTERM])
    ready = False
    while True:
        try:
            if not ready:
                ready = True
                os.write(1, b"ready\n")
            os.read(0, 1)
            break
        except (KeyboardInterrupt, SystemExit):
            # The main thread runs the signal's Python handler when it is
            # between two bytecodes (before it reached the read, here):
            # what it does there is not the test.  Keep the process, and
            # the hook's line, alive.
            pass
"""


def line_within(proc, seconds):
    """The child's next line, or '' if none comes in time (a hook that
    never runs must fail the test, not hang it)."""
    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    return proc.stdout.readline() if ready else ""


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_hook_runs_while_the_main_thread_cannot(signo):
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
        env={"PYTHONPATH": PLUGIN, "PATH": "/usr/bin:/bin"})
    try:
        assert proc.stdout.readline() == "ready\n"
        sent = time.monotonic_ns()
        proc.send_signal(signo)
        line = line_within(proc, 10.0).split()
        assert line[:2] == ["hook", str(int(signo))], line
        # The hook ran in the watcher thread while the main thread was
        # still parked: well within the second sdtune(8) promises.
        assert (int(line[2]) - sent) / 1e9 < 1.0
        proc.stdin.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_no_hook_without_install():
    """A library user (no install()) keeps Python's own handling: the
    hook is never called and the signal is the main thread's alone."""
    child = (
        "import signal, sys, time\n"
        "from sdtune.host import interrupt\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "called = []\n"
        "with interrupt.on_signal(called.append):\n"
        "    try:\n"
        "        print('ready', flush=True)\n"
        "        time.sleep(20)\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted', called, interrupt.installed(),\n"
        "              flush=True)\n")
    p = subprocess.Popen(
        [sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
        env={"PYTHONPATH": PLUGIN, "PATH": "/usr/bin:/bin"})
    try:
        assert p.stdout.readline() == "ready\n"
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline() == "interrupted [] False\n"
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
