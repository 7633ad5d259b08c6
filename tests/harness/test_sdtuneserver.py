# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The product's interpreter as a fork server (sdtuneserver.py): bin/sdtune
run through it gives what it gives with a Python of its own (output,
error, status, byte for byte), a program run through it sees the
interpreter a fresh `python -I -S -B -c` would give it, ends the same
way, takes its signals, and dies with its client; anything else is run
by the real Python."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.harness import sdtuneserver  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

PLUGIN = os.path.join(REPO, "plugin")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C",
       "SDTUNE_ZONENAME_CMD": "/nonexistent"}


@pytest.fixture(scope="module")
def served():
    python = sdtuneserver.python()
    if python == sys.executable:
        pytest.fail("the sdtune server did not start")
    return python


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return Appliance.build("small-nexenta",
                           str(tmp_path_factory.mktemp("srv")))


def launch(python, app, *args, stdin=None):
    env = dict(ENV, SDTUNE_PYTHON=python)
    return subprocess.run(
        [os.path.join(REPO, "bin", "sdtune"), "-R", app.root, "--config",
         app.config, *args], env=env, input=stdin, capture_output=True,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=60, check=False)


def seen(proc):
    return proc.returncode, proc.stdout, proc.stderr


def timeless(proc):
    """seen(), but for the time a plan was made."""
    return proc.returncode, re.sub(rb'"created": [0-9.]+', b'"created": T',
                                   proc.stdout), proc.stderr


@pytest.mark.parametrize("args", [
    ["--help"], [], ["nosuchcommand"], ["disks"], ["disks", "-o", "json"],
    ["plan", "-o", "json"], ["audit"], ["verify"], ["results"],
    ["sdconf", "show"], ["plan", "--bogus"],
])
def test_sdtune_through_the_server_is_sdtune_alone(served, app, args):
    assert timeless(launch(served, app, *args)) == \
        timeless(launch(sys.executable, app, *args))


def test_standard_input_reaches_sdtune(served, app):
    conf = (b'sd-config-list = "ATA     INTEL", '
            b'"physical-block-size:4096";\n')
    assert seen(launch(served, app, "sdconf", "check", "-", stdin=conf)) \
        == seen(launch(sys.executable, app, "sdconf", "check", "-",
                       stdin=conf))


def python_c(python, code, **kw):
    """`PYTHON -I -S -B -c CODE PLUGIN ARG...`, as the launcher runs it."""
    kw.setdefault("env", dict(ENV))
    kw.setdefault("capture_output", True)
    kw.setdefault("timeout", 60)
    return subprocess.run([python, "-I", "-S", "-B", "-c", code, PLUGIN,
                           "one", "two words"], check=False, **kw)


INTERPRETER = r"""
import io, os, sys
print(sys.argv)
print(sys.path)
print(sys.flags.isolated, sys.flags.no_site, sys.flags.dont_write_bytecode,
      sys.flags.utf8_mode)
for s in (sys.stdin, sys.stdout, sys.stderr):
    print(s.encoding, s.errors, s.line_buffering, s.write_through,
          s.mode, s.buffer.raw.name, s.buffer.raw.closefd)
print(sys.stdin is sys.__stdin__, sys.stdout is sys.__stdout__)
print(os.getcwd(), oct(os.umask(0o22)))
# PWD: sh, between the launcher and the client, exports it, as the
# launcher's ksh already has.
print(sorted(i for i in os.environ.items() if i[0] != "PWD"))
print(sorted(os.listdir("/proc/self/fd")))
print(repr(sys.stdin.read()))
print(__name__, sorted(k for k in globals() if k != "__builtins__"))
"""


def test_a_program_sees_the_interpreter_python_gives_it(served, tmp_path):
    env = dict(ENV, EXTRA="x y")
    kw = dict(env=env, cwd=str(tmp_path), umask=0o027, input=b"in\xe9put")
    assert seen(python_c(served, INTERPRETER, **kw)) == \
        seen(python_c(sys.executable, INTERPRETER, **kw))


SIGNALS = r"""
import signal
for s in sorted(signal.valid_signals()):
    if s not in (signal.SIGKILL, signal.SIGSTOP):
        print(int(s), signal.getsignal(s))
print(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
"""


@pytest.mark.parametrize("ignored,blocked", [
    ((), ()),
    ((signal.SIGINT, signal.SIGQUIT), ()),   # a shell's background job
    ((signal.SIGUSR1, signal.SIGHUP, signal.SIGPIPE), (signal.SIGUSR2,)),
])
def test_a_program_starts_with_the_signals_python_would(served, ignored,
                                                        blocked):
    """What the client ignores stays ignored and what it blocks stays
    blocked, as across an exec; everything else as Python's start sets
    it, whatever the server itself was started with."""
    def setup():
        for s in ignored:
            signal.signal(s, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    kw = dict(preexec_fn=setup)
    assert seen(python_c(served, SIGNALS, **kw)) == \
        seen(python_c(sys.executable, SIGNALS, **kw))


@pytest.mark.parametrize("code", [
    "import sys; sys.exit(3)",
    "import sys; sys.exit(300)",
    "raise SystemExit('gone: \\u00e9')",
    "raise SystemExit",
    "raise ValueError('x')",
    "import sys; sys.stdout.write('no newline'); "
    "sys.stderr.write('err no newline')",
    "import atexit; atexit.register(print, 'at exit')",
    "import threading, time; threading.Thread(target=lambda: "
    "(time.sleep(0.2), print('thread done'))).start()",
    "import sys; print('\\udcff'); print(sys.argv[1:])",
    "raise KeyboardInterrupt",
    "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
])
def test_a_program_ends_as_it_would(served, code):
    assert seen(python_c(served, code)) == \
        seen(python_c(sys.executable, code))


@pytest.mark.parametrize("argv,env", [
    (["-I", "-c", "import sys; print(sys.flags.no_site)"], ENV),
    (["-I", "-S", "-B", "-c", "print(1)", "/elsewhere"], ENV),
    (["-I", "-S", "-B", "-c", "import sys; print(sys.flags.utf8_mode)",
      PLUGIN], dict(ENV, LC_ALL="C.UTF-8")),
])
def test_anything_else_is_run_by_the_real_python(served, argv, env):
    def run(python):
        return seen(subprocess.run([python] + argv, env=env,
                                   capture_output=True, timeout=60,
                                   check=False))
    assert run(served) == run(sys.executable)


# Short sleeps: Python runs a handler between two bytecodes, and one
# long sleep entered just after the signal came would outlast the test.
WAIT = ("import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: (print('term'), "
        "sys.exit(7)))\n"
        "print('ready', flush=True)\n"
        "for _ in range(600):\n"
        "    time.sleep(0.1)\n")


def _sigint_default():
    # A shell's background job (make check started with &) ignores
    # SIGINT, and what it runs inherits that; the program must not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def started(served, code=WAIT):
    proc = subprocess.Popen([served, "-I", "-S", "-B", "-c", code, PLUGIN],
                            env=dict(ENV), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            preexec_fn=_sigint_default)
    assert proc.stdout.readline() == b"ready\n"
    return proc


def test_signals_reach_the_program(served):
    """SIGTERM runs the program's handler (exit 7); SIGINT raises
    KeyboardInterrupt, which ends it by SIGINT, as Python does."""
    proc = started(served)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (7, b"term\n")
    proc = started(served)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGINT
    assert b"KeyboardInterrupt" in err


def test_a_signal_sent_at_once_is_never_lost(served):
    """Before the server has said which worker is the program's, the
    client keeps the signal and sends it on: the program ends, by the
    signal or by its handler, never waits out its sleep."""
    for _ in range(20):
        proc = subprocess.Popen(
            [served, "-I", "-S", "-B", "-c", WAIT, PLUGIN], env=dict(ENV),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in (7, -signal.SIGTERM)


def test_a_killed_client_takes_its_program(served, tmp_path):
    mark = tmp_path / "pid"
    proc = started(served, "import os, time\n"
                   "open(%r, 'w').write(str(os.getpid()))\n"
                   "print('ready', flush=True)\n"
                   "time.sleep(60)\n" % str(mark))
    worker = int(mark.read_text())
    proc.kill()
    proc.wait(30)
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d" % worker) and \
            open("/proc/%d/stat" % worker).read().split()[2] != "Z":
        assert time.monotonic() < deadline, \
            "the program outlived its killed client"
        time.sleep(0.05)
