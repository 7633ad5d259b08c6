# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A key forced to `sdio serve --root /` in authorized_keys (adversarial
2026-11-27 U4), over a real sshd on 127.0.0.1: with the policy beside
the engine, whatever the client asks to run, the key runs only the
policy's commands and writes only below the root and the policy's
write trees."""

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from sdtune.host import wire  # noqa: E402

pytestmark = pytest.mark.sshd
ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")


def exchange(sshd, requests, remote="anything the client asks"):
    """The answers of the forced engine to REQUESTS, sent over ssh with
    REMOTE as the command the client asks for."""
    data = b"".join(wire.encode(op, fields) for op, fields in requests)
    proc = subprocess.run(sshd.ssh_argv(remote), input=data,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return wire.parse_answers(proc.stdout, [op for op, _ in requests])


def test_a_forced_key_with_a_policy_is_restricted(fresh_sshd, tmp_path):
    bindir = tmp_path / "opt" / "lib" / "sdtune" / "bin"
    bindir.mkdir(parents=True)
    engine = str(bindir / "sdio")
    shutil.copy2(ENGINE, engine)
    writable = tmp_path / "var-sdtune"
    writable.mkdir()
    policy = bindir / "sdio-serve.allow"
    policy.write_text("run /bin/true\nwrite %s\n" % writable)
    policy.chmod(0o644)
    with open(fresh_sshd.client_key + ".pub") as f:
        key = f.read().strip()
    with open(fresh_sshd.authorized_keys, "w") as f:
        f.write('command="%s serve --root /",restrict %s\n' % (engine, key))
    outside = str(tmp_path / "not-allowed")
    answers = exchange(fresh_sshd, [
        ("hello", []),
        ("run", ["/bin/sh", 5000, 0, b"", "-c", "touch %s" % outside]),
        ("run", ["/bin/true", 5000, 0, b""]),
        ("stream", ["/bin/sh", 5000, 0, b"", "-c", "touch %s" % outside]),
        ("create", [outside, 0o600, b"x"]),
        ("create", [str(writable / "suid"), 0o4755, b"x"]),
        ("create", [str(writable / "journal"), 0o644, b"x"]),
        ("read", ["/etc/passwd", 1 << 20]),
        ("can_run", ["/bin/sh"]),
    ], remote="/bin/sh -c 'touch %s'" % outside)
    words = [(a.word, a.fields[0] if a.word == "err" else None)
             for a in answers]
    assert words == [("ok", None), ("err", "denied"), ("ok", None),
                     ("err", "denied"), ("err", "denied"), ("err", "denied"),
                     ("ok", None), ("ok", None), ("ok", None)], answers
    # Reads are the root's: "/" here, as the forced command says.
    assert answers[7].fields[0].startswith(b"root:")
    assert answers[8].fields == [False]
    assert not os.path.exists(outside)
    assert os.listdir(str(writable)) == ["journal"]
