# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""host/wire.py: the framing of `sdio serve`, and how SshHost turns what
ssh said into one line (host/ssh.py's pure parts)."""

import io

import pytest

from sdtune.errors import EXIT_FAILED, EXIT_REFUSED, HostError
from sdtune.host import wire
from sdtune.host.ssh import (FORCED_OPTIONS, SshHost, check_destination,
                             classify_ssh_failure, zone_refusal)


def test_round_trip_of_binary_fields():
    data = wire.encode("replace", ["/kernel/drv/sd.conf", 420,
                                   b"\x00\n12\nok 1\n", True, ""])
    word, fields = wire.read_message(io.BytesIO(data))
    assert word == "replace"
    assert fields == [b"/kernel/drv/sd.conf", b"420", b"\x00\n12\nok 1\n",
                      b"1", b""]


def test_pipelined_messages_read_in_order():
    stream = io.BytesIO(wire.encode("ok", ["a"]) + wire.encode("err", [
        "errno", "open", "No such file or directory", 2]))
    assert wire.read_message(stream) == ("ok", [b"a"])
    word, fields = wire.read_message(stream)
    assert word == "err" and wire.number(fields[3]) == 2
    with pytest.raises(wire.WireError) as e:
        wire.read_message(stream)
    assert e.value.eof


@pytest.mark.parametrize("data", [
    b"ok 1\n5\nabc",                 # the stream ends inside a field
    b"ok x\n",                       # count not a number
    b"OK 0\n",                       # not a word of the protocol
    b"ok 2000000\n",                 # over the field limit
    b"ok 1\n99999999999999\n",       # length over the limit
    b"ok 1\n-1\n",                   # negative length
    b"ok" + b"k" * 100 + b"\n",      # header line too long
])
def test_broken_framing_is_a_wire_error_not_eof(data):
    with pytest.raises(wire.WireError) as e:
        wire.read_message(io.BytesIO(data))
    assert not e.value.eof


def test_numbers():
    assert wire.number(b"-9") == -9 and wire.number(b"0") == 0
    for bad in (b"", b"-", b"1e3", b"9" * 21):
        with pytest.raises(wire.WireError):
            wire.number(bad)


@pytest.mark.parametrize("dest", ["appliance", "root@nas1",
                                  "ssh://root@nas1:2222", "admin@[fe80::1]",
                                  "nas-1.example.org"])
def test_destinations_ssh_takes(dest):
    assert check_destination(dest) == dest


@pytest.mark.parametrize("dest", ["", "-oProxyCommand=x", "a b", "a;b",
                                  "$(x)", "a\nb", "a'b"])
def test_destinations_that_could_be_an_option_or_a_second_word(dest):
    with pytest.raises(HostError):
        check_destination(dest)


def test_forced_options_come_before_the_operators():
    host = SshHost("nas1", "/", {"sdio": "/usr/lib/sdtune/bin/sdio"},
                   "/usr/bin/ssh", ["-o", "BatchMode=no", "-p", "2222"])
    argv = host.argv()
    assert argv[:len(FORCED_OPTIONS) + 1] == ["/usr/bin/ssh",
                                              *FORCED_OPTIONS]
    assert argv.index("BatchMode=yes") < argv.index("BatchMode=no")
    assert argv[-3:] == ["--", "nas1", "/usr/lib/sdtune/bin/sdio serve "
                         "--root /"]


def test_remote_words_are_quoted_for_the_login_shell():
    host = SshHost("nas1", "/a b/$(x)", {"sdio": "/opt/my tools/sdio"})
    assert host.argv()[-1] == "'/opt/my tools/sdio' serve --root " \
        "'/a b/$(x)'"


@pytest.mark.parametrize("said, code, words, exit_code", [
    ("@@@@@@@@\n@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\n"
     "Host key verification failed.", 255, "host key has changed",
     EXIT_REFUSED),
    ("No ED25519 host key is known for [127.0.0.1]:2222 and you have "
     "requested strict checking.\nHost key verification failed.", 255,
     "host key is not known", EXIT_REFUSED),
    ("root@127.0.0.1: Permission denied (publickey).", 255,
     "never asks for a password", EXIT_FAILED),
    ("bash: line 1: /usr/lib/sdtune/bin/sdio: No such file or directory",
     127, "engine is not installed at /usr/lib/sdtune/bin/sdio",
     EXIT_FAILED),
    ("ssh: connect to host 10.0.0.9 port 22: Connection refused", 255,
     "Connection refused", EXIT_FAILED),
])
def test_ssh_failures_in_one_line(said, code, words, exit_code):
    e = classify_ssh_failure("nas1", code, said,
                             "/usr/lib/sdtune/bin/sdio", True)
    assert words in str(e) and "\n" not in str(e)
    assert str(e).startswith("cannot reach 'nas1': ")
    assert e.exit_code == exit_code


def test_a_lost_connection_says_sd_conf_is_whole():
    e = classify_ssh_failure("nas1", 255, "Connection reset by peer", "x",
                             False)
    assert "old or the new file" in str(e) and "reset" in str(e)


def test_only_the_global_zone_is_tuned():
    assert zone_refusal("nas1", "global") is None
    assert zone_refusal("nas1", "") is None          # not illumos
    for zone, words in (("web01", "non-global zone 'web01'"),
                        ("?", "a zone it cannot name")):
        e = zone_refusal("nas1", zone)
        assert e.exit_code == EXIT_REFUSED and words in str(e)
