# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The client's reading of the engine's answers (host/wire.py's shapes,
host/ssh.py's parse_answer and interpret): every answer that is short,
long, non-numeric, out of range, out of step or cut is the one HostError
"the engine's answer to OP is not in its protocol", never an IndexError,
WireError, OverflowError or ValueError (adversarial 2026-11-27 T1-T3,
F8, D3, W3, F10)."""

import io

import pytest

from sdtune.errors import EXIT_FAILED, EXIT_USAGE, HostError, SdtuneError
from sdtune.host import wire
from sdtune.host.ssh import (MissingError, check_destination,
                             classify_ssh_failure, error_of, parse_answer)

# A good answer to every op, as the engine sends it.
GOOD = {
    "hello": [wire.PROTOCOL, b"0", b"root", b"4242", b"/", b""],
    "read": [b"contents\n"],
    "stat": [b"33188", b"12", b"2049", b"1", b"0", b"0", b"9",
             b"1700000000000000000", b"1700000000000000000",
             b"1700000000000000000"],
    "lstat": [b"41471", b"13", b"2049", b"1", b"0", b"0", b"4",
              b"0", b"0", b"0"],
    "listdir": [b"a", b"b"],
    "readlink": [b"../target"],
    "readlinks": [b"l1", b"t1", b"l2", b"t2"],
    "samefile": [b"1"],
    "access": [b"0"],
    "can_run": [b"1"],
    "create": [],
    "replace": [],
    "check_replaceable": [],
    "mkdirs": [],
    "remove": [],
    "rmdir": [],
    "lock": [],
    "unlock": [],
    "run": [b"0", b"0", b"out", b"err", b"1234"],
    "stream": [b"0", b"0", b"", b"err", b"1234"],
    "now": [b"1700000000123456789"],
    "bye": [],
}
OPS = sorted(GOOD)
BAD_VALUES = [b"", b"x", b"xxx", b"-1", b"99999999999999999999",
              b"1" * 30, b"1e3", b"\xff", b"-", b"+1", b" 1", b"2"]


def answer(fields, word="ok", seq=1):
    return wire.encode_answer(word, seq, fields)


def not_in_protocol(data, op, seq=1):
    with pytest.raises(HostError) as e:
        parse_answer(data, op, seq)
    assert "the engine's answer to %s is not in its protocol" % op \
        in str(e.value), str(e.value)
    assert e.value.exit_code == EXIT_FAILED


def read_or_refuse(data, op):
    """parse_answer's result, or None when it refused with a HostError;
    anything else escaping is the bug this file is about."""
    try:
        return parse_answer(data, op)
    except HostError:
        return None


def test_every_op_of_the_protocol_has_a_good_answer_here():
    assert set(GOOD) == set(wire.ANSWERS)


@pytest.mark.parametrize("op", OPS)
def test_good_answers_are_read(op):
    got = parse_answer(answer(GOOD[op]), op)
    if op == "stat":
        assert got.st_mode == 33188 and got.st_mtime == 1700000000
    elif op == "run":
        assert got == (0, b"out", b"err")
    elif op == "stream":
        assert got == (0, b"", b"err")
    elif op == "now":
        assert got == pytest.approx(1700000000.123456789)
    elif op == "readlinks":
        assert got == {"l1": "t1", "l2": "t2"}


@pytest.mark.parametrize("op", OPS)
def test_a_field_too_many_or_too_few(op):
    """T1: a short answer (or a long one) to any op; listdir's names and
    readlinks' pairs may be any number, but readlinks' in whole pairs."""
    if op == "listdir":
        parse_answer(answer(GOOD[op] + [b"c"]), op)
        return
    not_in_protocol(answer(GOOD[op] + [b"1", b"2", b"3"]), op)
    if GOOD[op]:
        not_in_protocol(answer(GOOD[op][:-1]), op)
        if op != "readlinks":
            not_in_protocol(answer([]), op)


# The numeric fields of each op's answer.
NUMERIC = {"hello": (1, 3), "stat": range(10), "lstat": range(10),
           "run": (0, 1, 4), "stream": (0, 1, 4), "now": (0,),
           "samefile": (0,), "access": (0,), "can_run": (0,)}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("bad", BAD_VALUES)
def test_every_field_replaced_by_a_bad_value(op, bad):
    """T2, T3: non-numeric, negative or huge values in any field are
    read or refused, never a crash; a numeric field refuses anything
    that is not a decimal number in its range."""
    for i in range(len(GOOD[op])):
        fields = list(GOOD[op])
        fields[i] = bad
        got = read_or_refuse(answer(fields), op)
        if i in NUMERIC.get(op, ()) and bad not in (b"-1", b"2"):
            assert got is None, (op, i, bad, got)


@pytest.mark.parametrize("op", OPS)
def test_cut_anywhere(op):
    data = answer(GOOD[op])
    for n in range(len(data)):
        not_in_protocol(data[:n], op)


@pytest.mark.parametrize("op", OPS)
def test_garbage_and_empty_errors(op):
    not_in_protocol(b"this is not the protocol\n", op)
    not_in_protocol(answer([], word="err"), op)
    not_in_protocol(answer([b"0"], word="err"), op)
    not_in_protocol(b"OK 0 1\n", op)


@pytest.mark.parametrize("op", OPS)
def test_an_answer_out_of_step(op):
    """F8: an answer carries the number of its request; a repeated or
    lost one is seen at once."""
    data = answer(GOOD[op], seq=6)
    assert read_or_refuse(data, op) is None
    with pytest.raises(HostError) as e:
        parse_answer(data, op, 7)
    assert "out of step" in str(e.value)
    not_in_protocol(data + data, op, 6)
    parse_answer(data, op, 6)


def test_an_answer_that_names_no_request():
    """An engine of protocol 1: its headers carry no number."""
    not_in_protocol(wire.encode("ok", [b"1", b"0", b"root", b"1", b"/",
                                       b""]), "hello")
    not_in_protocol(wire.encode("ok", []), "replace")


def test_another_protocol_version():
    for version in (b"1", b"2", b"4", b""):
        fields = [version] + GOOD["hello"][1:]
        with pytest.raises(HostError) as e:
            parse_answer(answer(fields), "hello")
        assert "another protocol version" in str(e.value)


# -- a stream's answer: its parts, then run's -----------------------------


def part(data, seq=1):
    return wire.encode_answer("part", seq, [data])


def test_a_streams_parts_come_before_its_answer_in_order():
    data = part(b"one\n") + part(b"") + part(b"\0two") + \
        answer(GOOD["stream"])
    parts = []
    final = wire.read_stream(io.BytesIO(data), 1, parts.append)
    assert parts == [b"one\n", b"", b"\0two"]
    assert final == wire.Answer("ok", 1, [0, 0, b"", b"err", 1234])
    # parse_answer reads past the parts to what the call returns.
    assert parse_answer(data, "stream") == (0, b"", b"err")
    err = part(b"x") + answer([b"timeout", b"300"], word="err")
    assert wire.read_stream(io.BytesIO(err), 1, parts.append).word == "err"
    with pytest.raises(HostError, match="timed out after 0.3 s"):
        parse_answer(err, "stream")


@pytest.mark.parametrize("op", [op for op in OPS if op != "stream"])
def test_only_a_stream_is_answered_in_parts(op):
    not_in_protocol(part(b"out") + answer(GOOD[op]), op)


def test_a_part_of_one_field_and_of_this_request():
    for fields in ([], [b"a", b"b"]):
        not_in_protocol(wire.encode_answer("part", 1, fields) +
                        answer(GOOD["stream"]), "stream")
    data = part(b"a", seq=2) + answer(GOOD["stream"])
    with pytest.raises(wire.WireError, match="out of step"):
        wire.read_stream(io.BytesIO(data), 1, lambda b: None)
    not_in_protocol(data, "stream")
    # Parts after the answer belong to nothing.
    not_in_protocol(answer(GOOD["stream"]) + part(b"late"), "stream")


def test_a_streams_answer_holds_no_output():
    fields = list(GOOD["stream"])
    fields[2] = b"out"
    not_in_protocol(answer(fields), "stream")


def test_what_on_part_raises_goes_through_the_rest_unread():
    data = io.BytesIO(part(b"a") + part(b"b") + answer(GOOD["stream"]))

    def refuse(b):
        raise OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space"):
        wire.read_stream(data, 1, refuse)
    assert data.read().startswith(b"part 1 1\n1\nb")


@pytest.mark.parametrize("ns", [b"-1", b"99999999999999999999",
                                b"-99999999999999999999"])
def test_a_clock_the_journal_cannot_hold(ns):
    """D3: the appliance's clock answer is held to the journal's rule
    where it arrives, and refused in words about the clock."""
    with pytest.raises(HostError) as e:
        parse_answer(answer([ns]), "now")
    assert "clock" in str(e.value)


def test_the_clock_rule_is_the_journals():
    not_in_protocol(answer([b"1" * 22]), "now")
    assert parse_answer(answer([b"9223372036854775807"]), "now") == \
        pytest.approx(9223372036.854775807)
    assert wire.is_time(0) and wire.is_time(1e11 - 1)
    for t in (-1e-9, 1e11, float("nan"), float("inf")):
        assert not wire.is_time(t)


@pytest.mark.parametrize("code, detail", [
    ("weird", ["detail"]), ("errno", ["stat", "Permission denied", "13"]),
    ("errno", ["stat", "Input/output error", "5"]),
    ("errno", ["stat", "No such file", "99999999999999999999"]),
    ("timeout", ["99999999999999999999999999999"]),
    ("timeout", ["\u00b2"]), ("toolarge", []), ("sync", ["/x"]),
])
def test_errors_other_than_missing_are_failures(code, detail):
    """W3: only ENOENT and ENOTDIR say that a file is missing."""
    e = error_of("nas", [code] + detail, "stat", "/r")
    assert isinstance(e, HostError) and not isinstance(e, MissingError)
    assert e.exit_code == EXIT_FAILED


@pytest.mark.parametrize("number", ["2", "20"])
def test_missing(number):
    e = error_of("nas", ["errno", "stat", "No such file", number], "stat",
                 "/r")
    assert isinstance(e, MissingError)


@pytest.mark.parametrize("dest", [
    "ssh://appliance:99999", "ssh://appliance:0", "ssh://appliance:",
    "ssh://root@appliance:65536", "ssh://appliance:22x",
    "ssh://[fe80::1]:70000", "ssh://a:b:c", "ssh://[fe80::1]x"])
def test_a_port_outside_1_to_65535_is_a_usage_error(dest):
    """F10: refused before ssh runs."""
    with pytest.raises(SdtuneError) as e:
        check_destination(dest)
    assert "not an ssh destination" in str(e.value)


@pytest.mark.parametrize("dest", [
    "ssh://appliance:1", "ssh://root@nas1:65535", "ssh://[fe80::1]:22",
    "ssh://[fe80::1]", "ssh://nas1", "root@nas1", "nas1"])
def test_ports_ssh_takes(dest):
    assert check_destination(dest) == dest


SSH_USAGE = """usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface]
           [-b bind_address] [-c cipher_spec] [-D [bind_address:]port]
           [-E log_file] [-e escape_char] [-F configfile] [-I pkcs11]
           [-i identity_file] [-J destination] [-L address]
           [-l login_name] [-m mac_spec] [-O ctl_cmd] [-o option]
           [-P tag] [-p port] [-R address] [-S ctl_path] [-W host:port]
           [-w local_tun[:remote_tun]] destination [command [argument ...]]
"""


@pytest.mark.parametrize("connecting", [True, False])
def test_sshs_usage_text_is_never_the_reason(connecting):
    """F10: ssh refusing its own command line prints its usage; that
    text is not why sdtune failed."""
    e = classify_ssh_failure("nas", 255, SSH_USAGE, "/opt/sdio", connecting)
    assert "local_tun" not in str(e) and "usage:" not in str(e)
    assert "refused its command line" in str(e)
    assert e.exit_code != EXIT_USAGE
