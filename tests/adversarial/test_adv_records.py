# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Adversarial regressions of the data files sdtune reads: T9
(certification records of the wrong shape crashed results, plan and
audit, or one of them disabled all the others) and T6 (a [data]
known_drives table that is not UTF-8, or has a bad row).

Every bad record sits next to a good one: the bad one must be named in a
warning and left out, and must neither become a recommendation nor stop
the good one from being used.
"""

import json
import os
import shutil
import time

import pytest

from tests.adversarial import support
from sdtune.records.record import QueueDepth
from tests import builders

# A free disk (no known-drives row): anything plan says about it can
# only come from a record.
SAMSUNG = "SAMSUNG MZILS480HEGR/007"


def good_fields(**changes) -> dict:
    rec = builders.cert_record(
        SAMSUNG, "B1", firmware="0270", when=time.time() + 100,
        target="bad-target", device="/dev/rdsk/x",
        time_iso="2026-11-23T00:00:00Z", source="test", native=8192,
        sector_reason="injected", cache="nonvolatile",
        cache_reason="injected", nv_sup=True,
        queue_depth=QueueDepth(8, {}, 77, None, 0.99, "injected"),
        recommended={"throttle-max": 77, "cache-nonvolatile": True},
    ).to_json()
    rec.update(changes)
    return rec


def dumped(**changes) -> bytes:
    return json.dumps(good_fields(**changes)).encode()


BAD_RECORDS = {
    "list": json.dumps([good_fields()]).encode(),
    "string": b'"a certification record"',
    "key-number": dumped(key=5),
    "key-short": dumped(key="ATA"),
    "recommended-list": dumped(recommended=["throttle-max", 77]),
    "recommended-text": dumped(recommended={"throttle-max": "77"}),
    "evidence-null": dumped(evidence=None),
    "nv-sup-text": dumped(evidence={"device": {"nv_sup": "yes"}}),
    "queue-depth-null": dumped(queue_depth=None),
    "time-text": dumped(time="x"),
    "not-utf8": dumped(serial="B\u00ff1").replace(b"\\u00ff", b"\xff"),
    "invalid-json": dumped()[:40],
    "directory": None,
}


def put_records(app, names):
    """The good Intel record (throttle-max 32, a firmware that differs
    from the disk's, for audit's SDT-2002), and the bad ones by name."""
    support.inject_record(app, support.INTEL, {"throttle-max": 32},
                          firmware="9999")
    d = os.path.join(app.root, "var", "sdtune", "certify")
    paths = []
    for name in names:
        path = os.path.join(d, "bad-%s.json" % name)
        if BAD_RECORDS[name] is None:
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(BAD_RECORDS[name])
        paths.append(path)
    return paths


def warned(proc, path) -> bool:
    return any(line.startswith("sdtune: warning: %s: " % path)
               for line in proc.stderr.splitlines())


@pytest.fixture(scope="module")
def all_bad(tmp_path_factory):
    """One appliance with every bad record at once, for plan and audit
    (each takes an inventory: a second apiece)."""
    app = support.build(tmp_path_factory.mktemp("bad"))
    return app, put_records(app, sorted(BAD_RECORDS))


# ------------------------------------------------------------------ T9

@pytest.fixture(scope="module")
def results_app(tmp_path_factory):
    return support.build(tmp_path_factory.mktemp("results"))


@pytest.mark.parametrize("name", sorted(BAD_RECORDS))
def test_T9_results_skips_bad_record(results_app, name):
    app = results_app
    d = os.path.join(app.root, "var", "sdtune", "certify")
    if os.path.isdir(d):
        shutil.rmtree(d)
    (path,) = put_records(app, [name])
    proc = support.run(app, "results")
    support.no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert warned(proc, path), proc.stderr
    assert support.INTEL in proc.stdout
    assert "bad-target" not in proc.stdout

    proc = support.run(app, "results", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert warned(proc, path), proc.stderr
    assert [r["key"] for r in json.loads(proc.stdout)["results"]] == \
        [support.INTEL]


def test_T9_plan_uses_good_records_only(all_bad):
    app, paths = all_bad
    # The good record's firmware differs from the disk's (for audit's
    # SDT-2002), which plan holds back without this override.
    proc = support.run(app, "plan", "--allow-firmware-mismatch")
    support.no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert "throttle-max:32  from certification" in proc.stdout
    assert SAMSUNG not in proc.stdout, proc.stdout


def test_T9_audit_uses_good_records_only(all_bad):
    app, paths = all_bad
    proc = support.run(app, "audit", "-o", "json")
    support.no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    ids = {f["id"] for f in json.loads(proc.stdout)["findings"]}
    assert "SDT-2002" in ids        # the good record's firmware was read


@pytest.mark.parametrize("command", ["plan", "audit"])
def test_T9_plan_and_audit_warn_about_bad_records(all_bad, command):
    app, paths = all_bad
    proc = support.run(app, command)
    support.no_traceback(proc)
    assert [p for p in paths if not warned(proc, p)] == []


def test_T9_record_problem_names_the_field():
    from sdtune.records.record import parse_record
    rec, why = parse_record(BAD_RECORDS["key-short"])
    assert rec is None and why == ("field 'key' must be null or a drive "
                                   "key of exactly 24 characters")
    assert parse_record(BAD_RECORDS["not-utf8"])[1].startswith(
        "not UTF-8 text (byte ")
    assert parse_record(BAD_RECORDS["invalid-json"])[1].startswith(
        "not valid JSON (line 1, column ")
    assert parse_record(dumped())[1] is None
    assert parse_record(dumped(key=None))[1] is None


# ------------------------------------------------------------------ T6

TABLE_HEAD = ("# a local table\n"
              "match\tpattern\tphysical_block_bytes\tnonvolatile_cache"
              "\tvendor\tsource\n")
ROW = "inquiry\tATA     INTEL SSDSC2BA40\t4096\t-\tIntel\tlocal\n"


def with_table(app, tmp_path, data: bytes) -> str:
    table = str(tmp_path / "drives.tsv")
    with open(table, "wb") as f:
        f.write(data)
    config = str(tmp_path / "table.conf")
    with open(app.config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text + "\n[data]\nknown_drives = %s\n" % table)
    return config


BAD_TABLES = {
    "not-utf8": ((TABLE_HEAD + ROW).encode() +
                 b"inquiry\tATA     Caf\xe9 SSD 1234\t4096\t-\tx\ty\n", 4,
                 "not UTF-8 text"),
    "bad-regex": ((TABLE_HEAD + ROW +
                   "ata-regex\tINTEL SSD(\t4096\t-\tIntel\tlocal\n").encode(),
                  4, "not a regular expression"),
    "bad-size": ((TABLE_HEAD + "ata-glob\tINTEL*\t4k\t-\tIntel\tlocal\n"
                  ).encode(), 3, "physical_block_bytes '4k'"),
    "odd-size": ((TABLE_HEAD + "ata-glob\tINTEL*\t3000\t-\tIntel\tlocal\n"
                  ).encode(), 3, "physical_block_bytes '3000'"),
    "bad-cache": ((TABLE_HEAD + "ata-glob\tINTEL*\t-\tmaybe\tIntel\tl\n"
                   ).encode(), 3, "nonvolatile_cache 'maybe'"),
    "bad-kind": ((TABLE_HEAD + "regex\tINTEL*\t4096\t-\tIntel\tlocal\n"
                  ).encode(), 3, "match 'regex'"),
}


def bad_table_run(tmp_path, name, command):
    """sdtune COMMAND with the bad table NAME as [data] known_drives:
    exit 2 (a configured file with bad content is a configuration
    error), naming the file and the line."""
    data, line, what = BAD_TABLES[name]
    app = support.build(tmp_path)
    config = with_table(app, tmp_path, data)
    table = str(tmp_path / "drives.tsv")
    proc = support.run(app, command, config=config)
    support.no_traceback(proc)
    assert proc.returncode == 2, (command, proc.stderr)
    assert "cannot read '%s': line %d: " % (table, line) in proc.stderr
    assert what in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", ["audit", "plan"])
def test_T6_known_drives_not_utf8(tmp_path, command):
    bad_table_run(tmp_path, "not-utf8", command)


def test_T6_known_drives_bad_regex(tmp_path):
    bad_table_run(tmp_path, "bad-regex", "plan")


@pytest.mark.parametrize("name", sorted(BAD_TABLES))
def test_T6_bad_rows_named_by_line(name):
    from sdtune.errors import SdtuneError
    from sdtune.knowndrives import load_table
    data, line, what = BAD_TABLES[name]
    with pytest.raises(SdtuneError) as info:
        load_table(_BytesHost(data), "/conf/drives.tsv")
    assert info.value.exit_code == 2
    assert str(info.value).startswith(
        "cannot read '/conf/drives.tsv': line %d: " % line)
    assert what in str(info.value)


class _BytesHost:
    """Just enough of a Host for load_table: one file's bytes."""

    def __init__(self, data: bytes):
        self.data = data

    def read_bytes(self, path: str) -> bytes:
        return self.data


def test_T6_good_known_drives_table_is_used(tmp_path):
    app = support.build(tmp_path)
    config = with_table(app, tmp_path, (TABLE_HEAD + ROW).encode())
    proc = support.run(app, "plan", config=config)
    assert proc.returncode == 0, proc.stderr
    assert "physical-block-size:4096  from known-drives (local)" in \
        proc.stdout
    assert "SAMSUNG MZ7LM480" not in proc.stdout    # not in this table
    # Only the bad table fails: a broken shipped table is no usage error.
    from sdtune.knowndrives import parse_table
    from sdtune.errors import SdtuneError
    with pytest.raises(SdtuneError) as info:
        parse_table(TABLE_HEAD + "x\ty\n", "t.tsv", 4)
    assert info.value.exit_code == 4
    assert str(info.value) == "cannot read 't.tsv': line 3: 2 fields, " \
        "expected 6"
