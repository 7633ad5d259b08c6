#!/usr/bin/env python3
# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A stand-in for ssh that corrupts the engine's answers (the adversarial
report's "fakessh", 2026-11-27 Appendix B), named as `[ssh] ssh` or
SshHost(ssh=...).

It runs its last argument, the remote command line sdtune gives ssh
(`ENGINE serve --root ROOT`), with /bin/sh on this machine, relays the
requests to it and the answers back, and replaces every answer to the
op named in $FAKESSH_MODE (``corrupt:OP:KIND``; ``pass`` or unset:
relay as is).  Each KIND is one class of malformed answer:

    empty        ok with no fields
    short        the first field only
    badnum       the first field "xxx"
    garbage      a line that is not the protocol
    eof          the connection ends instead
    err_unknown  err [weird, detail]
    err_empty    err with no fields
    neg          the first field -1
    bignum       the first field 99999999999999999999
    extra        the answer sent twice

The framing is read as either engine sends it: an answer's header may
carry the request number (protocols 2 and 3) or not (protocol 1); a
corrupted answer keeps its header's number.  The parts of a stream's
answer (protocol 3) are relayed as they are, and answer no request of
their own.
"""

import os
import subprocess
import sys
import threading

KINDS = ("empty", "short", "badnum", "garbage", "eof", "err_unknown",
         "err_empty", "neg", "bignum", "extra")


def read_message(stream):
    """(header words, fields) or None at EOF."""
    header = stream.readline()
    if not header:
        return None
    words = header.rstrip(b"\n").split(b" ")
    fields = []
    for _ in range(int(words[1])):
        size = int(stream.readline())
        fields.append(stream.read(size))
    return words, fields


def encode(words, fields):
    head = b" ".join([words[0], b"%d" % len(fields)] + words[2:])
    return head + b"\n" + b"".join(b"%d\n%s" % (len(f), f) for f in fields)


def corrupt(kind, words, fields):
    """The bytes sent instead of one answer; None: end the connection."""
    if kind == "eof":
        return None
    if kind == "garbage":
        return b"this is not the protocol\n"
    if kind == "extra":
        return encode(words, fields) * 2
    if kind == "err_unknown":
        return encode([b"err"] + words[1:], [b"weird", b"detail"])
    if kind == "err_empty":
        return encode([b"err"] + words[1:], [])
    first = {"empty": None, "short": fields[:1], "badnum": b"xxx",
             "neg": b"-1", "bignum": b"99999999999999999999"}[kind]
    if kind == "empty":
        return encode([b"ok"] + words[1:], [])
    if kind == "short":
        return encode(words, first)
    return encode([b"ok"] + words[1:], [first] + fields[1:])


def main():
    mode = os.environ.get("FAKESSH_MODE", "pass")
    target = kind = None
    if mode.startswith("corrupt:"):
        _, target, kind = mode.split(":")
        assert kind in KINDS, kind
    child = subprocess.Popen(["/bin/sh", "-c", sys.argv[-1]],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ops = []
    lock = threading.Condition()
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer

    def relay_requests():
        while True:
            msg = read_message(stdin)
            if msg is None:
                break
            with lock:
                ops.append(msg[0][0].decode())
                lock.notify()
            child.stdin.write(encode(*msg))
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=relay_requests, daemon=True).start()
    while True:
        msg = read_message(child.stdout)
        if msg is None:
            break
        data = encode(*msg)
        if msg[0][0] == b"part":
            stdout.write(data)
            stdout.flush()
            continue
        with lock:
            while not ops:
                lock.wait()
            op = ops.pop(0)
        if op == target:
            data = corrupt(kind, *msg)
            if data is None:
                child.kill()
                break
        stdout.write(data)
        stdout.flush()
    child.wait()
    return 0


if __name__ == "__main__":
    # os._exit, not sys.exit: the relay thread may still sit in a read
    # of standard input, holding its buffer's lock, and the interpreter's
    # shutdown then waits a second for that lock before it gives up
    # (measured: close() took 1.06 s instead of 0.06 s after a replace);
    # everything this stand-in wrote is flushed already.
    os._exit(main())
