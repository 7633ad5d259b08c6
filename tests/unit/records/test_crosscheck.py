# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The per-model cross-check (issue 16): among the units of one key, the
one whose native sector, cache or QD1 write IOPS stands out is a
suspect unit; two units, no majority, inconclusive verdicts, imported
records and other keys never make one.  `results` shows the suspects in
its table and JSON.  Pure apart from `results`, which reads records
stored in a temporary directory."""

import dataclasses
import io
import json

from sdtune.records import storage
from sdtune.records.crosscheck import Suspect, consensus, cross_check
from sdtune.commands.certify import (RESULT_COLUMNS, ResultsRequest,
                                     cmd_results,
                                     result_rows, suspect_lines)
from sdtune.host import RealHost
from tests import builders

KEY = "ATA     SAMSUNG MZ7LH480"
OTHER = "ATA     INTEL SSDSC2KB48"


def unit(serial, key=KEY, native=4096, cache="nonvolatile", iops=1410.0,
         when=1.0, sector_confidence=0.99, source="sdio", lat_ns=None):
    """A record as certify stores it for one unit: the sector phase's
    arms, the cache verdict and the queue-depth phase's steps."""
    lat = lat_ns if lat_ns is not None else 1e9 / iops
    sector = {"size-%d" % bs: {"bs": bs, "offset": 0, "pattern": "seq",
                               "flush": "none", "lat_median_ns": lat,
                               "rounds": 8, "ios": 100}
              for bs in (512, 1024, 2048, 4096, 8192, 16384)}
    qd = {"qd-%s-%d" % (rw, depth): {"bs": 4096, "qd": depth, "rw": rw,
                                     "offset": 0, "flush": "none",
                                     "iops": iops * depth,
                                     "lat_mean_ns": lat}
          for rw in ("write", "read") for depth in (1, 2, 4)}
    return builders.cert_record(
        key, serial, firmware="HXT7404Q", when=when,
        time_iso="2026-11-20T00:00:%02dZ" % when, target="c1t%sd0" % serial,
        source=source, native=native, recommended={},
        sector_confidence=sector_confidence, cache=cache,
        evidence={"device": {"nv_sup": cache == "nonvolatile"},
                  "sector": sector, "queue_depth": qd})


def shelf(n=6, odd=None, **kw):
    """``n`` identical units S1..Sn; unit ``odd`` (1-based) gets ``kw``."""
    return [unit("S%d" % i, when=float(i), **(kw if i == odd else {}))
            for i in range(1, n + 1)]


# ------------------------------------------------------------ cross_check

def test_a_different_native_sector_among_six_is_flagged():
    (s,) = cross_check(shelf(odd=6, native=512))
    assert (s.key, s.serial, s.target) == (KEY, "S6", "c1tS6d0")
    assert s.reasons == ("native sector 512 B where 5 siblings measured "
                         "4096 B",)


def test_a_different_cache_among_six_is_flagged():
    (s,) = cross_check(shelf(odd=3, cache="volatile"))
    assert s.serial == "S3"
    assert s.reasons == ("cache volatile where 5 siblings measured "
                         "nonvolatile",)


def test_iops_below_half_the_siblings_median_are_flagged():
    (s,) = cross_check(shelf(odd=2, iops=310.0))
    assert s.serial == "S2"
    assert s.reasons == ("QD1 4 KiB random write IOPS 310, 22 % of its "
                         "siblings' median 1,410",)


def test_iops_just_above_half_are_not_flagged():
    assert cross_check(shelf(odd=2, iops=710.0)) == []


def test_without_the_queue_depth_phase_the_sector_latency_counts():
    recs = shelf(odd=4, iops=300.0)
    for r in recs:
        del r.evidence["queue_depth"]
    (s,) = cross_check(recs)
    assert s.serial == "S4"
    assert s.reasons[0].startswith("QD1 4 KiB sequential write IOPS (from "
                                   "its latency) 300, 21 % of its siblings'"
                                   " median 1,410")


def test_several_reasons_make_one_suspect():
    (s,) = cross_check(shelf(odd=1, native=512, cache="volatile",
                             iops=100.0))
    assert s.serial == "S1" and len(s.reasons) == 3
    assert [r.split()[0] for r in s.reasons] == ["native", "cache", "QD1"]


def test_identical_units_give_no_suspect():
    assert cross_check(shelf(5)) == []


def test_two_units_that_differ_are_no_outlier():
    recs = [unit("S1"), unit("S2", native=512, cache="volatile",
                             iops=100.0, when=2.0)]
    assert cross_check(recs) == []
    assert consensus(recs) == (recs, [])


def test_no_strict_majority_means_no_suspect():
    recs = [unit("S1", native=512), unit("S2", native=512, when=2.0),
            unit("S3", when=3.0), unit("S4", when=4.0)]
    assert cross_check(recs) == []


def test_inconclusive_verdicts_are_never_flagged_nor_counted():
    recs = shelf(odd=6, native=None, sector_confidence=0.4,
                 cache="inconclusive")
    assert cross_check(recs) == []
    # A low-confidence size is no verdict either.
    assert cross_check(shelf(odd=6, native=512,
                             sector_confidence=0.6)) == []
    # Three inconclusive units do not help one outlier against two.
    recs = shelf(5, odd=None)
    for r in recs[2:]:
        r.native_sector_bytes, r.sector_confidence = None, 0.3
    recs[0].native_sector_bytes = 512
    assert cross_check(recs) == []


def test_keys_are_never_mixed():
    # Mixed, each of the other key's units would stand out among six.
    recs = shelf(5) + [unit("T%d" % i, key=OTHER, native=512, iops=300.0,
                            cache="volatile", when=10.0 + i)
                       for i in range(1, 4)]
    assert cross_check(recs) == []
    recs.append(unit("T4", key=OTHER, native=4096, when=20.0))
    assert [(s.key, s.serial) for s in cross_check(recs)] == [(OTHER, "T4")]


def test_imported_and_serial_less_records_are_not_compared():
    recs = shelf(2) + [unit("S3", source="vdbench:/in", native=512,
                            when=3.0),
                       unit("", native=512, when=4.0)]
    assert cross_check(recs) == []


def test_only_the_latest_record_of_a_unit_counts():
    recs = shelf(odd=6, native=512)
    recs.append(unit("S6", when=10.0))          # S6 certified again: fine
    assert cross_check(recs) == []
    recs.append(unit("S6", native=512, when=11.0))
    assert [s.serial for s in cross_check(recs)] == ["S6"]


def test_consensus_leaves_out_every_record_of_a_suspect_unit():
    recs = shelf(odd=6, native=512) + [unit("S6", native=512, when=0.5)]
    used, suspects = consensus(recs)
    assert [s.serial for s in suspects] == ["S6"]
    assert [r.serial for r in used] == ["S1", "S2", "S3", "S4", "S5"]


def test_when_every_unit_is_a_suspect_none_is_left_out():
    recs = [unit("S1", native=512), unit("S2", cache="volatile", when=2.0),
            unit("S3", iops=100.0, when=3.0)]
    assert len(cross_check(recs)) == 3
    assert consensus(recs) == (recs, [])


# ------------------------------------------------------------ results

def test_suspect_lines():
    assert suspect_lines([]) == ""
    assert suspect_lines([Suspect(KEY, "S6", "c1t6d0", ("a b", "c d"))]) \
        == 'suspect unit S6 (key "%s"): a b; c d\n' % KEY


def stored_shelf(tmp_path, recs):
    host = RealHost(str(tmp_path))
    for r in recs:
        storage.store(host, "/var/sdtune", r)
    return host


def test_results_table_and_lines_show_the_suspect(tmp_path):
    host = stored_shelf(tmp_path, shelf(odd=6, native=512))
    out = io.StringIO()
    assert cmd_results(host, "/var/sdtune", ResultsRequest(), out,
                       err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    header = lines[0].split()
    assert "NOTE" in header
    # The cells after the quoted key, which has spaces in it.
    cells = [line.split('"')[2].split() for line in lines[1:7]]
    rows = {c[0]: c for c in cells}
    note = header.index("NOTE") - 1
    assert rows["S6"][note] == "suspect"
    assert {rows[s][note] for s in ("S1", "S2", "S3", "S4", "S5")} == {"-"}
    assert lines[7:] == ['suspect unit S6 (key "%s"): native sector 512 B '
                         'where 5 siblings measured 4096 B' % KEY]


def test_scripted_results_have_the_note_and_no_lines(tmp_path):
    host = stored_shelf(tmp_path, shelf(odd=6, native=512))
    out = io.StringIO()
    cmd_results(host, "/var/sdtune", ResultsRequest(scripted=True), out,
                err=io.StringIO())
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert len(rows) == 6
    assert {r[1]: r[7] for r in rows}["S6"] == "suspect"


def test_results_json_adds_the_reasons_and_keeps_the_rest(tmp_path):
    recs = shelf(odd=6, native=512)
    host = stored_shelf(tmp_path, recs)
    out = io.StringIO()
    cmd_results(host, "/var/sdtune", ResultsRequest(as_json=True), out,
                err=io.StringIO())
    results = json.loads(out.getvalue())["results"]
    by_serial = {r["serial"]: r for r in results}
    assert by_serial["S6"]["suspect"] == [
        "native sector 512 B where 5 siblings measured 4096 B"]
    assert by_serial["S1"]["suspect"] == []
    stored = dict(by_serial["S1"])
    del stored["suspect"]
    assert stored == recs[0].to_json()


def test_an_older_record_of_a_suspect_unit_is_not_marked():
    old = dataclasses.replace(unit("S6", native=512), time=0.5)
    recs = shelf(odd=6, native=512) + [old]
    rows = result_rows(recs, cross_check(recs))
    assert [(r.record.time, bool(r.suspect)) for r in rows
            if r.record.serial == "S6"] == [(6.0, True), (0.5, False)]
    assert [name for name, _ in RESULT_COLUMNS][-2:] == ["NOTE", "TARGET"]
