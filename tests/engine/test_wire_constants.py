# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The wire protocol is written twice, in C (plugin/engine/serve.h, its
constants, and serve_dispatch.c, its table of ops) and in Python
(plugin/sdtune/host/wire.py): these tests hold the two to the same
constants, the same ops, and the same shape of every answer (the
engine's real answers read by the client's reader)."""

import io
import os
import re
import subprocess

import pytest

from sdtune.host import wire

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINE = os.path.join(REPO, "plugin", "engine")
# Where the constants are defined (once), and where the table of ops is.
SERVE_H = os.path.join(ENGINE, "serve.h")
DISPATCH_C = os.path.join(ENGINE, "serve_dispatch.c")


def source(path):
    with open(path) as f:
        return f.read()


def define(name):
    pattern = r"(?m)^#define\s+%s\s+(.+?)\s*(/\*.*)?$" % name
    m = re.search(pattern, source(SERVE_H))
    assert m, name
    # Defined once: no other source of the server defines it again.
    for other in os.listdir(ENGINE):
        if other.startswith("serve") and other != "serve.h":
            assert not re.search(pattern, source(os.path.join(
                ENGINE, other))), (name, other)
    text = m.group(1)
    if text.startswith('"'):
        return text.strip('"').encode()
    # C integer expressions of the form N, (N << K), NULL suffixes.
    return eval(re.sub(r"(?<=\d)U?L*L?\b", "", text))


@pytest.mark.parametrize("c_name, py_value", [
    ("PROTO_VERSION", wire.PROTOCOL),
    ("MAX_FIELDS", wire.MAX_FIELDS),
    ("MAX_FIELD", wire.MAX_FIELD),
    ("MAX_HEADER", wire.MAX_HEADER),
    ("MAX_LEN_LINE", wire.MAX_LEN_LINE),
    ("MAX_SEQ", wire.MAX_SEQ),
])
def test_constants_are_the_same_on_both_sides(c_name, py_value):
    assert define(c_name) == py_value


def test_the_ops_are_the_same_on_both_sides():
    table = source(DISPATCH_C).split("static const op_t ops[] = {", 1)[1]
    table = table.split("};", 1)[0]
    ops = re.findall(r'\{ "([a-z_]+)",', table)
    assert sorted(ops) == sorted(wire.ANSWERS)


def test_every_answer_of_the_engine_has_the_clients_shape(sdio, tmp_path):
    """One good request of every op, answered by the real engine and
    read by the client's reader, numbered in order."""
    root = str(tmp_path)
    f = os.path.join(root, "f")
    with open(f, "wb") as out:
        out.write(b"data")
    os.symlink("f", os.path.join(root, "l"))
    requests = [
        ("hello", []), ("read", [f, 100]), ("stat", [f]), ("lstat", [f]),
        ("listdir", [root]), ("readlink", [os.path.join(root, "l")]),
        ("readlinks", [root]), ("samefile", [f, f]), ("access", [f, 4]),
        ("can_run", ["/bin/sh"]),
        ("create", [os.path.join(root, "new"), 0o600, b"x"]),
        ("replace", [f, 0o644, b"y"]), ("check_replaceable", [f]),
        ("mkdirs", [os.path.join(root, "d", "e"), 0o755]),
        ("remove", [os.path.join(root, "new")]),
        ("rmdir", [os.path.join(root, "d", "e")]),
        ("lock", [os.path.join(root, "lk")]),
        ("unlock", [os.path.join(root, "lk")]),
        ("run", ["/bin/sh", 5000, 0, b"", "-c", "echo hi"]),
        ("stream", ["/bin/sh", 5000, 0, b"", "-c", "echo hi; echo ho"]),
        ("now", []), ("bye", []),
    ]
    assert sorted(op for op, _ in requests) == sorted(wire.ANSWERS)
    data = b"".join(wire.encode(op, fields) for op, fields in requests)
    proc = subprocess.run([sdio, "serve", "--root", root], input=data,
                          capture_output=True, timeout=60, check=True)
    answers = wire.parse_answers(proc.stdout, [op for op, _ in requests])
    assert [a.word for a in answers] == ["ok"] * len(requests), answers
    assert answers[0].fields[0] == wire.PROTOCOL
    assert answers[-4].fields[2] == b"hi\n"
    # The stream's output came in parts, read past by parse_answers.
    assert answers[-3].fields[:3] == [0, 0, b""]


def test_a_streams_parts_are_read_in_order_before_its_answer(
        sdio, tmp_path):
    data = (wire.encode("stream", ["/bin/sh", 5000, 0, b"", "-c",
                                   "echo one; sleep 0.1; echo two >&2; "
                                   "echo three; exit 4"]) +
            wire.encode("run", ["/bin/sh", 5000, 0, b"", "-c", "echo r"]))
    proc = subprocess.run([sdio, "serve", "--root", str(tmp_path)],
                          input=data, capture_output=True, timeout=60,
                          check=True)
    assert proc.stdout.startswith(b"part 1 1\n4\none\n")
    stream = io.BytesIO(proc.stdout)
    parts = []
    final = wire.read_stream(stream, 1, parts.append)
    assert parts == [b"one\n", b"three\n"]
    assert final.word == "ok" and final.fields[:4] == [4, 0, b"", b"two\n"]
    # A run's answer is never in parts.
    assert wire.next_answer(stream, "run", 2).fields[2] == b"r\n"
    assert stream.read() == b""


def test_a_malformed_request_is_answered_with_its_number(sdio, tmp_path):
    data = wire.encode("now", []) + b"now zero\n"
    proc = subprocess.run([sdio, "serve", "--root", str(tmp_path)],
                          input=data, capture_output=True, timeout=60)
    assert proc.returncode == 1
    stream = io.BytesIO(proc.stdout)
    assert wire.next_answer(stream, "now", 1).word == "ok"
    last = wire.next_answer(stream, "now", 2)
    assert last.word == "err" and last.fields[0] == "protocol"
