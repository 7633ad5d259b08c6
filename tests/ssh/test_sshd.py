# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Self-tests of the SSH harness (tests/ssh/sshd.py): a real sshd on
127.0.0.1 logs the generated key in, hands the remote command its argv
when the caller quotes it, refuses the three bad-credential cases the way
sdtune --host will meet them (exit 255 and OpenSSH's own message),
multiplexes through a ControlMaster, and a session whose server side is
killed ends the client promptly.  No sleeps decide an outcome: every wait
polls a condition under a deadline."""

import os
import select
import shlex
import signal
import socket
import subprocess
import time

import pytest

from sshd import SSH

pytestmark = pytest.mark.sshd

# Generous: a loaded CI machine must not turn a slow login into a
# failure.  A hung ssh ends the test through subprocess's timeout.
TIMEOUT = 30.0


def run(argv, timeout=TIMEOUT):
    # stdin from /dev/null: ssh would otherwise read the test's stdin.
    return subprocess.run(argv, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def wait_for(cond, timeout=TIMEOUT, what="condition"):
    """Poll cond() until it returns a true value (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("timed out waiting for %s" % what)
        time.sleep(0.02)


def gone(pid):
    """True once pid is no longer a live process (zombies count as
    gone: their parent may not have reaped them yet)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def read_line(proc, timeout=TIMEOUT):
    """The first line a Popen'd ssh prints, read without blocking past
    the deadline."""
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            pytest.fail("no output from ssh within %.0f s" % timeout)
        chunk = os.read(fd, 4096)
        if not chunk:
            pytest.fail("ssh ended before printing a line: rc=%s"
                        % proc.wait(timeout=timeout))
        data += chunk
    return data.split(b"\n", 1)[0].decode()


@pytest.fixture
def popen(request):
    """Popen for clients that a test may leave running: each is killed
    and reaped at teardown, pass or fail."""
    procs = []

    def start(argv):
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=TIMEOUT)
        proc.stdout.close()
        proc.stderr.close()


def test_true_exits_0(sshd):
    proc = run(sshd.ssh_argv("true"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_client_files(sshd):
    with open(sshd.known_hosts) as f:
        entry = f.read().split()
    assert entry[0] == "[127.0.0.1]:%d" % sshd.port
    assert entry[1] == "ssh-ed25519"
    with open(sshd.config_path) as f:
        config = f.read()
    assert "Host %s\n" % sshd.alias in config
    assert "HostName 127.0.0.1\n" in config
    assert "User %s\n" % sshd.user in config
    assert os.path.exists(sshd.client_key)
    assert os.path.exists(sshd.host_key)


ARGV = ["plain", "two words", "it's", 'say "hi"', "$HOME", "`id`",
        "$(id)", "*", "", "back\\slash", "semi;colon && false", "tab\there",
        "new\nline", "-n", "--", "\u00fcn\u00efc\u00f6d\u00e9", "a'b\"c"]


def remote_argv(sshd, words):
    """What the remote command received as its arguments: printf writes
    each one NUL-terminated."""
    proc = subprocess.run(sshd.ssh_argv(*words), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().split("\0")[:-1]


def test_quoted_argv_arrives_intact(sshd):
    words = ["printf", "%s\\0"] + ARGV
    assert remote_argv(sshd, [shlex.quote(w) for w in words]) == ARGV


def test_unquoted_argv_is_reparsed(sshd):
    # Why callers must quote: ssh joins the words and the remote login
    # shell splits them again.
    words = [shlex.quote("printf"), shlex.quote("%s\\0"), "two words"]
    assert remote_argv(sshd, words) == ["two", "words"]


def test_wrong_key_is_refused(sshd):
    proc = run(sshd.ssh_argv("true", config=sshd.wrong_key_config()))
    assert proc.returncode == 255
    assert "Permission denied" in proc.stderr


def test_unknown_host_key_is_refused(sshd):
    proc = run(sshd.ssh_argv("true", config=sshd.unknown_host_config()))
    assert proc.returncode == 255
    assert "Host key verification failed" in proc.stderr


def test_changed_host_key_is_refused(fresh_sshd):
    # A private server: the shared one must keep its key.
    assert run(fresh_sshd.ssh_argv("true")).returncode == 0
    fresh_sshd.regenerate_host_key()
    proc = run(fresh_sshd.ssh_argv("true"))
    assert proc.returncode == 255
    assert ("REMOTE HOST IDENTIFICATION HAS CHANGED" in proc.stderr
            or "Host key verification failed" in proc.stderr)
    fresh_sshd.trust_host_key()
    assert run(fresh_sshd.ssh_argv("true")).returncode == 0


def test_control_master_multiplexes(sshd):
    # control_dir: a short path, since a socket path has 108 bytes.
    options = ["-o", "ControlMaster=auto",
               "-o", "ControlPath=%s/cm-%%C" % sshd.control_dir,
               "-o", "ControlPersist=60"]

    def control(op):
        return run([SSH, "-F", sshd.config_path] + options
                   + ["-O", op, sshd.alias])

    try:
        # Without a master yet, this ssh becomes one and persists.
        first = run(sshd.ssh_argv('echo "$SSH_CONNECTION"',
                                  options=options))
        assert first.returncode == 0, first.stderr
        check = control("check")
        assert check.returncode == 0, check.stderr
        assert "Master running" in check.stderr
        # Multiplexed: the second session rides the same TCP connection,
        # so sshd reports the same client port.
        second = run(sshd.ssh_argv('echo "$SSH_CONNECTION"',
                                   options=options))
        assert second.returncode == 0, second.stderr
        assert second.stdout == first.stdout
        assert first.stdout.startswith("127.0.0.1 ")
        exited = control("exit")
        assert exited.returncode == 0, exited.stderr
        # The master removes its socket as it exits.
        wait_for(lambda: not os.listdir(sshd.control_dir),
                 what="the control socket to go")
        assert control("check").returncode == 255
    finally:
        # A master left by a failure would otherwise persist 60 s.
        control("exit")


def test_killed_session_ends_client(sshd, popen):
    before = set(sshd.session_pids())
    # The remote shell prints its pid and becomes a long sleep; the
    # client can only end early if the server side goes.
    client = popen(sshd.ssh_argv("echo $$; exec sleep 60"))
    remote = int(read_line(client))
    new = wait_for(lambda: sorted(set(sshd.session_pids()) - before),
                   what="the session's server process")
    killed = sshd.kill_sessions(signal.SIGKILL, pids=new)
    assert set(new) <= set(killed)
    start = time.monotonic()
    assert client.wait(timeout=TIMEOUT) == 255
    assert time.monotonic() - start < 10
    assert all(gone(p) for p in killed)
    # The orphaned remote command was cleaned up as well.
    wait_for(lambda: gone(remote), what="the remote command to go")
    # Other sessions, and the listener, are untouched.
    assert run(sshd.ssh_argv("true")).returncode == 0


def test_stop_ends_everything(fresh_sshd, popen):
    client = popen(fresh_sshd.ssh_argv("echo $$; exec sleep 60"))
    remote = int(read_line(client))
    listener = fresh_sshd.pid
    port = fresh_sshd.port
    fresh_sshd.stop()
    assert fresh_sshd.pid is None
    assert fresh_sshd.session_pids() == []
    assert client.wait(timeout=TIMEOUT) == 255
    assert gone(listener)
    wait_for(lambda: gone(remote), what="the remote command to go")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
