# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The witness of the power-cut check (certify/witness.py) on this
machine's disk: the log durable line by line, a cycle's .json read back
strictly, the pending cycle found; [powercut] in sdtune.conf; and a
record that keeps its witnessed cuts when it is stored again
(records/storage.py)."""

import json
import os

import pytest

from sdtune.certify.witness import (CUT, STOPPED, VERIFIED, WRITING, Cycle,
                                    Witness, cycle_from_json)
from sdtune.config import load_config
from sdtune.errors import (EXIT_REFUSED, ConfigError, HostError, ParseError,
                           UsageError)
from sdtune.host import RealHost
from sdtune.records import storage
from sdtune.records.powercuts import FAILED, PASSED, Claim, PowerCut
from sdtune.records.record import CertRecord
from tests.builders import cert_record

RUN = "0123456789abcdef"


def cycle(**changes):
    values = dict(dest="root@lab", disk="c5t0d0", device="/dev/rdsk/c5t0d0p0",
                  run=RUN, slots=4096, block=4096, offset=0, boot_time=1000,
                  started=1795800000.5, key="ATA     EMU SSD X1      ",
                  model="EMU SSD X1", driver="sd", serial="X1",
                  firmware="1.00")
    values.update(changes)
    return Cycle(**values)


def test_the_log_holds_whole_lines_and_the_cycle_reads_back(tmp_path):
    w = Witness(RealHost(), str(tmp_path / "witness"))
    c = cycle()
    w.begin(c)
    assert oct(os.stat(w.directory).st_mode & 0o777) == "0o700"
    assert w.log(c) is None
    w.append(c, ["run %s 4096 4096" % RUN, "w 1 7"])
    w.append(c, ["f 1"])
    log = w.log(c)
    assert log.completed == {1: 7} and log.flushed == 1
    # A crash of this machine half way through an append: the unfinished
    # line is not part of the log.
    with open(w.path(c, "log"), "ab") as f:
        f.write(b"w 2 ")
    assert w.log(c).completed == {1: 7}
    assert oct(os.stat(w.path(c, "log")).st_mode & 0o777) == "0o600"
    with open(w.path(c, "json"), "rb") as f:
        assert cycle_from_json(f.read(), "x") == c


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.pop("run"), "run"),
    (lambda d: d.update(run="0123"), "run"),
    (lambda d: d.update(state="done"), "run"),
    (lambda d: d.update(slots=True), "slots"),
    (lambda d: d.update(boot_time="1000"), "boot_time"),
    (lambda d: d.update(serial="X1\x1b[2J"), "serial"),
    (lambda d: d.update(version=2), "version"),
])
def test_a_bad_cycle_names_its_file_and_field(edit, field):
    doc = cycle().to_json()
    edit(doc)
    with pytest.raises(ParseError) as e:
        cycle_from_json(json.dumps(doc).encode(), "/w/c.json")
    assert e.value.field == field and "/w/c.json" in str(e.value)
    with pytest.raises(ParseError) as e:
        cycle_from_json(b"\xff{", "/w/c.json")
    assert e.value.field == "json"


def test_the_pending_cycle_is_the_one_writing_or_cut(tmp_path):
    w = Witness(RealHost(), str(tmp_path / "witness"))
    assert w.pending("root@lab", "c5t0d0") is None
    w.begin(cycle(run="1" * 16, state=VERIFIED))
    w.begin(cycle(run="2" * 16, state=STOPPED))
    w.begin(cycle(run="3" * 16, disk="c6t0d0"))
    assert w.pending("root@lab", "c5t0d0") is None
    w.begin(cycle(run="4" * 16, state=CUT))
    assert w.pending("root@lab", "c5t0d0").run == "4" * 16
    assert w.pending("other", "c5t0d0") is None
    w.begin(cycle(run="5" * 16, state=WRITING))
    with pytest.raises(UsageError) as e:
        w.pending("root@lab", "c5t0d0")
    assert "2 cycles pending" in str(e.value)


def test_append_durable_refuses_a_symlink_and_the_remote_default(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    link = tmp_path / "log"
    link.symlink_to(target)
    with pytest.raises(HostError) as e:
        RealHost().append_durable(str(link), b"x\n")
    assert e.value.exit_code == EXIT_REFUSED
    assert target.read_bytes() == b""

    class Remote(RealHost):
        append_durable = RealHost.__bases__[0].append_durable

    with pytest.raises(HostError) as e:
        Remote().append_durable(str(tmp_path / "x"), b"x\n")
    assert "keeps no log" in str(e.value)
    assert not (tmp_path / "x").exists()


def conf(tmp_path, text):
    path = tmp_path / "x.conf"
    path.write_text(text)
    return load_config(RealHost(), str(path), system_config=None)


def test_powercut_settings_and_their_errors(tmp_path):
    cfg = conf(tmp_path, "")
    s = cfg.powercut({"HOME": "/home/op"})
    assert (s.witness_dir, s.seconds, s.wait, s.flush_every_ms,
            s.notice_ms) == ("/home/op/.local/state/sdtune/witness", 600,
                             1800, 2000, 500)
    assert cfg.powercut({"XDG_STATE_HOME": "/st", "HOME": "/h"}) \
        .witness_dir == "/st/sdtune/witness"
    with pytest.raises(ConfigError) as e:
        cfg.powercut({})
    assert "witness_dir" in str(e.value)
    cfg = conf(tmp_path, "[powercut]\nwitness_dir = /w\nseconds = 30\n"
               "wait = 0\n")
    s = cfg.powercut({})
    assert (s.witness_dir, s.seconds, s.wait) == ("/w", 30, 0)
    for text, key in (("witness_dir = w", "witness_dir"),
                      ("seconds = 9", "seconds"), ("wait = -1", "wait"),
                      ("seconds = 86401", "seconds"),
                      ("notice_ms = 60001", "notice_ms"),
                      ("flush_every_ms = 1.5", "flush_every_ms")):
        cfg = conf(tmp_path, "[powercut]\n" + text + "\n")
        with pytest.raises(ConfigError) as e:
            cfg.powercut({"HOME": "/h"})
        assert "x.conf" in str(e.value) and "line 2" in str(e.value) \
            and key in str(e.value)


def cut(run, status_flush=PASSED, status_nv=FAILED, when=1.0):
    return PowerCut(when, "2026-11-28T00:00:0%dZ" % when, "0270", run,
                    Claim(10, 0, status_flush), Claim(12, 3, status_nv), 0)


def test_a_record_keeps_its_cuts_stored_again_and_takes_new_ones(tmp_path):
    host = RealHost(root=str(tmp_path))
    state = "/var/sdtune"
    certified = cert_record(cache="volatile", when=5.0)
    storage.store(host, state, certified)
    # A cut is added to the stored record, whose verdicts stay.
    base = CertRecord(key=certified.key, serial=certified.serial,
                      firmware=certified.firmware, time=9.0)
    path = storage.add_power_cut(host, state, base, cut("a" * 16))
    path = storage.add_power_cut(host, state, base, cut("b" * 16, when=2.0))
    records, problems = storage.load_checked(host, state)
    assert problems == [] and len(records) == 1
    assert records[0].cache == "volatile"
    assert [c.run for c in records[0].power_cuts] == ["a" * 16, "b" * 16]
    # certify again: the new record keeps the cuts.
    storage.store(host, state, cert_record(cache="nonvolatile", when=20.0))
    records, _ = storage.load_checked(host, state)
    assert records[0].cache == "nonvolatile"
    assert [c.run for c in records[0].power_cuts] == ["a" * 16, "b" * 16]
    assert os.path.basename(path) == os.listdir(
        os.path.dirname(path))[0]
