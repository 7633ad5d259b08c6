# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Importing vdbench text and fio JSON for `sdtune infer`, and decoding
the SCSI evidence bytes sdio returns."""

import json
import os

import pytest

from sdtune.certify import evidence, importers
from sdtune.cli import main
from sdtune.errors import ParseError

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                   "bench")


def read(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_vdbench_both_column_layouts():
    steps = importers.parse_vdbench(read("vdbench-two-layouts.txt"))
    assert [(s.name, s.bs, s.qd) for s in steps] == [
        ("vdbench rd512", 512, 1), ("vdbench rd4k", 4096, 1)]
    # The avg_ line is the summary, not an interval; the intervals are
    # those it averages (avg_2-4: interval 1 is vdbench's warm-up).
    assert len(steps[0].intervals) == 3 and steps[0].iops == 502.0
    assert steps[0].intervals[0].lat_mean_ns == pytest.approx(1.98e6)
    # Layout with separate read/write max columns: resp time still found;
    # without an avg_ line, interval 1 is still the warm-up.
    assert steps[1].intervals[0].lat_mean_ns == pytest.approx(0.99e6)


def test_vdbench_read_runs_are_ignored_and_garbage_is_an_error():
    text = read("vdbench-two-layouts.txt").replace(
        "     512   0.00", "     512  50.00")
    steps = importers.parse_vdbench(text)
    assert [s.bs for s in steps] == [4096]
    with pytest.raises(ParseError) as e:
        importers.parse_vdbench("hello\n")
    assert "Starting RD=" in str(e.value)


def test_vdbench_bad_interval_line_names_the_rd():
    text = read("vdbench-two-layouts.txt").replace("  505.00", "   x.00", 1)
    with pytest.raises(ParseError) as e:
        importers.parse_vdbench(text)
    assert "RD=rd512" in str(e.value)


def fio_doc(jobs):
    return json.dumps({"fio version": "fio-3.33", "jobs": [
        {"jobname": name, "job options": opts,
         "write": {"total_ios": 10000, "iops": iops, "runtime": 10000,
                   "lat_ns": {"mean": 1e9 / iops, "stddev": 1e8 / iops}}}
        for name, opts, iops in jobs]})


def test_fio_json_jobs():
    steps = importers.parse_fio(fio_doc([
        ("w512", {"bs": "512", "rw": "write"}, 500.0),
        ("w4k", {"bs": "4k", "rw": "write"}, 1000.0),
        ("w4kf", {"bs": "4k", "rw": "write", "fdatasync": "1"}, 300.0),
        ("r4k", {"bs": "4k", "rw": "randwrite", "iodepth": "8"}, 7000.0)]))
    by = {s.name: s for s in steps}
    assert by["fio w512"].bs == 512 and by["fio w4k"].bs == 4096
    assert by["fio w4kf"].flush == "each"
    assert by["fio r4k"].qd == 8 and by["fio r4k"].pattern == "rand"
    lat = by["fio w4k"].latency(0)
    assert lat.n == 10 and lat.mean == pytest.approx(1e6)


def test_fio_garbage():
    with pytest.raises(ParseError) as e:
        importers.parse_fio("[1, 2]")
    assert "'fio'" in str(e.value)


def test_infer_cli_vdbench(tmp_path, capsys):
    path = tmp_path / "vd.txt"
    path.write_text(read("vdbench-two-layouts.txt"))
    assert main(["infer", "--from", str(path), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["native_sector_bytes"] == 4096
    assert doc["sector_confidence"] >= 0.95
    assert doc["recommended"] == {"physical-block-size": 4096}
    assert doc["cache"] == "inconclusive"


def test_infer_cli_fio_512_native(tmp_path, capsys):
    path = tmp_path / "fio.json"
    path.write_text(fio_doc([("w512", {"bs": "512"}, 9000.0),
                             ("w1k", {"bs": "1k"}, 8500.0),
                             ("w4k", {"bs": "4k"}, 7000.0)]))
    assert main(["infer", "--from", str(path), "--format", "fio"]) == 0
    out = capsys.readouterr().out
    assert "native sector: 512 B" in out


def test_infer_cli_missing_file(tmp_path, capsys):
    assert main(["infer", "--from", str(tmp_path / "nope")]) == 4
    assert "cannot read" in capsys.readouterr().err


# -- SCSI evidence bytes ------------------------------------------------------

def test_vpd86_nv_sup():
    page = bytes([0, 0x86, 0, 0x3c, 0, 0, 0x02, 0]) + bytes(56)
    assert evidence.decode_vpd86_nv_sup(page) is True
    assert evidence.decode_vpd86_nv_sup(page[:6] + b"\x00\x00") is False
    assert evidence.decode_vpd86_nv_sup(b"\x00\x80\x00") is None


def test_caching_page_wce():
    header = bytes([0, 0x1a, 0, 0, 0, 0, 0, 8])       # 8-byte descriptor
    desc = bytes(8)
    page = bytes([0x08, 0x12, 0x04]) + bytes(17)
    assert evidence.decode_caching_page_wce(header + desc + page) is True
    page_off = bytes([0x08, 0x12, 0x00]) + bytes(17)
    assert evidence.decode_caching_page_wce(header + desc + page_off) is \
        False
    assert evidence.decode_caching_page_wce(header + desc + b"\x0a") is None


def test_readcap16_physical_exponent():
    data = (1000).to_bytes(8, "big") + (512).to_bytes(4, "big") + \
        bytes([0, 3]) + bytes(18)
    assert evidence.decode_readcap16(data) == (512, 4096, 1001 * 512)
    assert evidence.decode_readcap16(bytes(32)) is None
