# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The platform adapters' pure parts and their file rules: /etc/release,
bootparams, zpool bootfs and beadm parsing, the effective sd.conf on the
module path, the loader.conf.local block, and journal entries that name
several files.  The adapters end to end are in tests/e2e/test_platforms.py.
"""

import pytest

from sdtune.errors import ParseError, RefusedError
from sdtune.host import RealHost
from sdtune.platform.bootarchive import parse_beadm
from sdtune.platform.detect import (parse_bootfs, parse_bootparams,
                                    parse_release)
from sdtune.platform.modpath import find_copies, module_path
from sdtune.platform.smartos import (BEGIN, END, loader_settings,
                                     with_loader_block)
from sdtune.tune.journal import Entry, FileRecord

SHA = "a" * 64


@pytest.mark.parametrize("text, name", [
    ("                       SmartOS 20240627T000746Z x86_64\n"
     "              Copyright 2010 Sun Microsystems, Inc.\n", "smartos"),
    ("  OmniOS v11 r151046l\n  Copyright (c) 2012-2017 OmniTI\n", "omnios"),
    ("             OpenIndiana Hipster 2023.10 (powered by illumos)\n",
     "openindiana"),
    ("\n  NexentaStor 5.3.0.1 (illumos)\n", "nexentastor"),
    ("  Tribblix m34\n", "illumos"),
    ("", "illumos"),
])
def test_release_names_the_distribution(text, name):
    got, first = parse_release(text)
    assert got == name
    assert first == (text.strip().splitlines() or [""])[0].strip()


def test_bootparams_and_bootfs():
    assert parse_bootparams('smartos=true\ntriton_bootpool="zones"\n\n') == \
        {"smartos": "true", "triton_bootpool": "zones"}
    with pytest.raises(ParseError, match="line 2"):
        parse_bootparams("a=b\nnonsense\n")
    assert parse_bootfs("zones\tzones/boot\ndata\t-\n") == \
        {"zones": "zones/boot", "data": None}
    with pytest.raises(ParseError, match="line 1"):
        parse_bootfs("zones zones/boot\n")


def test_beadm_flags():
    bes = parse_beadm("omnios-a;u1;N;/;100;static;1700000000\n"
                      "omnios-b;u2;R;;200;static;1700000001\n")
    assert [(b.name, b.active_now, b.active_on_reboot) for b in bes] == \
        [("omnios-a", True, False), ("omnios-b", False, True)]
    with pytest.raises(ParseError, match="7 fields"):
        parse_beadm("omnios-a;u1;NR\n")


def _conf(root, path, text=b"sd-config-list = \"\", \"retries-busy:1\";\n"):
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(text)


def test_first_copy_on_the_module_path_is_effective(tmp_path):
    host = RealHost(root=str(tmp_path))
    assert module_path("i86pc")[:2] == ["/system/boot/kernel",
                                        "/platform/i86pc/kernel"]
    none = find_copies(host, "i86pc", "/kernel/drv/sd.conf")
    assert (none.effective, none.exists) == ("/kernel/drv/sd.conf", False)
    _conf(tmp_path, "/kernel/drv/sd.conf")
    _conf(tmp_path, "/etc/driver/drv/sd.conf")
    one = find_copies(host, "i86pc", "/kernel/drv/sd.conf")
    assert (one.effective, one.shadowed, one.ignored) == \
        ("/kernel/drv/sd.conf", [], ["/etc/driver/drv/sd.conf"])
    _conf(tmp_path, "/platform/i86pc/kernel/drv/sd.conf")
    two = find_copies(host, "i86pc", "/kernel/drv/sd.conf")
    assert (two.effective, two.shadowed) == \
        ("/platform/i86pc/kernel/drv/sd.conf", ["/kernel/drv/sd.conf"])
    # Another platform's directory is not on this machine's path.
    assert find_copies(host, "sun4v", "/kernel/drv/sd.conf").effective == \
        "/kernel/drv/sd.conf"


def test_loader_block_is_added_once_and_kept_in_place():
    name = "/boot/bootfs/kernel/drv/sd.conf"
    first = with_loader_block(None, name, "l")
    assert first.decode().splitlines()[0] == BEGIN
    again = with_loader_block(first, name, "l")
    assert again == first
    theirs = b'console="ttyb"\n' + first + b'os_console="ttyb"\n'
    moved = with_loader_block(theirs, "/custom/bootfs/kernel/drv/sd.conf",
                              "l").decode().splitlines()
    assert moved[0] == 'console="ttyb"' and moved[-1] == 'os_console="ttyb"'
    assert moved.count(BEGIN) == 1 and moved.count(END) == 1
    settings = loader_settings("\n".join(moved))
    assert settings["sd_conf_name"] == "/custom/bootfs/kernel/drv/sd.conf"
    assert settings["sd_conf_flags"] == "name=/kernel/drv/sd.conf"
    assert settings["sd_conf_load"] == "YES"


def test_loader_lines_of_the_operators_own_are_refused():
    with pytest.raises(RefusedError, match="outside sdtune's block"):
        with_loader_block(b'sd_conf_load="YES"\n', "/x", "loader.conf.local")


@pytest.mark.parametrize("line", [
    'mysd_flags="name=/kernel/drv/sd.conf"',
    'mysd_flags = "name=/kernel/drv/sd.conf"  # mine',
    'x_flags="name=/kernel/drv/sd.conf,other"'])
def test_another_module_delivering_sd_conf_is_refused(line):
    """Adversarial 2026-11-27, F5.1: a module under another prefix that
    delivers the same file went undetected; sdtune added its own."""
    text = ('mysd_load="YES"\nmysd_type="file"\nmysd_name="/x"\n%s\n'
            % line).encode()
    with pytest.raises(RefusedError) as e:
        with_loader_block(text, "/y", "loader.conf.local")
    assert "already delivers /kernel/drv/sd.conf" in str(e.value)
    # Another file, or a comment, is no conflict.
    with_loader_block(b'#' + line.encode() + b"\n", "/y", "l")
    with_loader_block(b'mysd_flags="name=/kernel/drv/nvme.conf"\n', "/y",
                      "l")


def test_the_operators_crlf_lines_are_kept_byte_for_byte():
    """F5.2: console="ttyb"\\r\\n became console="ttyb"\\n."""
    theirs = b'console="ttyb"\r\nos_console="ttyb"\r\n'
    new = with_loader_block(theirs, "/y", "l")
    assert new.startswith(theirs)
    again = with_loader_block(new, "/z", "l")
    assert again.startswith(theirs)
    no_end = with_loader_block(b'console="ttyb"', "/y", "l")
    assert no_end.startswith(b'console="ttyb"\n' + BEGIN.encode())


def _entry(**kw):
    doc = {"id": "000001", "time": 1.0, "user": "root", "action": "apply",
           "state": "done", "sd_conf": "/kernel/drv/sd.conf",
           "old_sha256": SHA, "new_sha256": SHA}
    doc.update(kw)
    return doc


def test_entries_name_every_file_and_old_ones_still_read():
    old = Entry.from_json(_entry())
    assert [(r.path, r.old_sha256) for r in old.file_records()] == \
        [("/kernel/drv/sd.conf", SHA)]
    assert old.steps == ["update_drv"]
    new = Entry.from_json(_entry(
        files=[{"path": "/mnt/usbkey/boot/loader.conf.local",
                "role": "loader lines", "old_sha256": None,
                "new_sha256": SHA, "volatile": False}],
        steps=["bootadm", "update_drv"], platform={"name": "omnios"}))
    assert new.file_records() == [FileRecord(
        "/mnt/usbkey/boot/loader.conf.local", "loader lines", None, SHA)]
    assert Entry.from_json(new.to_json()) == new


@pytest.mark.parametrize("bad, field", [
    ({"files": [{"path": "/x", "role": "r", "old_sha256": "zz",
                 "new_sha256": None}]}, "files"),
    ({"files": [{"path": "/x"}]}, "files"),
    ({"steps": ["reboot"]}, "steps"),
    ({"handoff": {"content": 1}}, "handoff"),
])
def test_bad_file_records_name_the_field(bad, field):
    with pytest.raises(ValueError, match=field):
        Entry.from_json(_entry(**bad))
