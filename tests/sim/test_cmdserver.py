# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance's fork server (cmdserver.py, cmdclient.c):
a command run through it, in the server or in a worker, gives what the
script run alone gives (output, error, status, the modes of the files it
writes), many at once stay apart, input that ends late is read whole,
and a client killed while its command runs takes the command with it, as
sdtune's timeouts and Ctrl-C rely on."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import cmdserver  # noqa: E402
from tests.sim.appliance import FIXED_ENV, Appliance  # noqa: E402


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if cmdserver.ensure_started() is None:
        pytest.fail("the command server did not start")
    return Appliance.build("small-nexenta",
                           str(tmp_path_factory.mktemp("srv")))


def alone(app, cmd, *args, stdin=""):
    """The command as its script runs without the server."""
    env = dict(FIXED_ENV, SDTUNE_SIM_CMDSERVER="0")
    script = [sys.executable, os.path.join(REPO, "tests", "sim",
                                           "fakecmd.py"),
              "--state", app.dir, "--argv0", os.path.join(app.bin, cmd),
              cmd] + list(args)
    return subprocess.run(script, input=stdin.encode(), capture_output=True,
                          env=env, cwd="/", timeout=60, check=False)


@pytest.mark.parametrize("cmd,args,stdin", [
    ("diskinfo", ["-cH"], ""),
    ("iostat", ["-En"], ""),
    ("mdb", ["-k"], "::walk sd_state\n"),
    ("diskinfo", ["-x"], ""),            # usage error: status 1
    ("zpool", ["status", "nosuchpool"], ""),
])
def test_a_command_through_the_server_is_the_script(app, cmd, args, stdin):
    served = app.run(cmd, *args, stdin=stdin)
    assert (served.returncode, served.stdout, served.stderr) == \
        tuple(getattr(alone(app, cmd, *args, stdin=stdin), k)
              for k in ("returncode", "stdout", "stderr"))


def test_commands_at_once_stay_apart(app):
    expected = {cmd: app.run(cmd, *args).stdout for cmd, args in
                (("diskinfo", ["-cH"]), ("iostat", ["-En"]))}
    got = []

    def one(cmd, args):
        got.append((cmd, app.run(cmd, *args)))

    threads = [threading.Thread(target=one, args=(cmd, args))
               for cmd, args in (("diskinfo", ["-cH"]),
                                 ("iostat", ["-En"])) * 8]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(got) == 16
    for cmd, proc in got:
        assert proc.returncode == 0 and proc.stdout == expected[cmd], cmd


def test_a_killed_client_takes_its_command(app):
    """mdb reads its standard input to the end: with the pipe held open
    it waits.  Killing the client must end it (the pipe then has no
    reader left), within seconds."""
    r, w = os.pipe()
    client = subprocess.Popen([os.path.join(app.bin, "mdb"), "-k"],
                              stdin=r, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=FIXED_ENV,
                              cwd="/")
    os.close(r)
    try:
        time.sleep(0.5)
        assert client.poll() is None, "mdb did not wait for its input"
        client.send_signal(signal.SIGKILL)
        client.wait(10)
        deadline = time.monotonic() + 10
        while True:
            try:
                os.write(w, b"\n")
            except BrokenPipeError:
                break
            assert time.monotonic() < deadline, \
                "the command outlived its killed client"
            time.sleep(0.05)
    finally:
        os.close(w)
        if client.poll() is None:
            client.kill()
            client.wait()


def test_input_that_ends_late_is_read_whole(app):
    """The server reads mdb's input itself when it ends at once; one
    still open after STDIN_WAIT_S goes to a worker with what was read so
    far, and the command sees all of it."""
    client = subprocess.Popen([os.path.join(app.bin, "mdb"), "-k"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=FIXED_ENV, cwd="/")
    client.stdin.write(b"::walk ")
    client.stdin.flush()
    time.sleep(cmdserver.STDIN_WAIT_S * 2)
    out, err = client.communicate(b"sd_state\n", timeout=30)
    expected = alone(app, "mdb", "-k", stdin="::walk sd_state\n")
    assert (client.returncode, out, err) == \
        (expected.returncode, expected.stdout, expected.stderr)
    assert out.strip(), "mdb printed nothing"


@pytest.mark.parametrize("umask, mode", [(0o077, 0o600), (0o022, 0o644)])
def test_a_command_run_in_the_server_writes_with_the_clients_umask(
        app, umask, mode):
    proc = subprocess.run([os.path.join(app.bin, "update_drv"), "-vf",
                           "sd"], capture_output=True, env=FIXED_ENV,
                          cwd="/", umask=umask, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert os.stat(os.path.join(app.dir, "state.json")).st_mode & 0o777 \
        == mode
