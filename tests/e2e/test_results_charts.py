# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune results DISK|KEY|SERIAL` on the simulated appliance: the named
drives' records in full, each with the text charts of what certify
measured (certify/charts.py); a name no record has is an error, and the
list's own options do not mix with it."""

import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from sdtune.records.record import QueueDepth  # noqa: E402
from tests import builders  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import sdtune_checked as run  # noqa: E402
from tests.sim.testing import sdtune_json as as_json  # noqa: E402

SAMSUNG = "SAMSUNG MZILS480HEGR/007"


def arm(bs, lat, offset=0, pattern="seq"):
    return {"bs": bs, "offset": offset, "pattern": pattern,
            "flush": "none", "lat_median_ns": lat, "rounds": 64, "ios": 900}


def certified(tmp_path, serial="B1"):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    steps = {"qd-%s-%d" % (rw, d): {"bs": 4096, "qd": d, "rw": rw,
                                    "iops": 9000.0 * d ** 0.5,
                                    "lat_p50_ns": 60000 * d,
                                    "lat_p99_ns": 150000 * d,
                                    "lat_p99_9_ns": 300000 * d}
             for rw in ("write", "read") for d in (1, 2, 4)}
    builders.store_record(app.root, builders.cert_record(
        SAMSUNG, serial, firmware="0270", target="c0t5002538C40A1B2C3d0",
        native=8192, cache="nonvolatile", nv_sup=True,
        queue_depth=QueueDepth(4, {}, None, None, 0.9, "knee at QD4"),
        evidence={"device": {"nv_sup": True},
                  "sector": {"size-4096": arm(4096, 240000.0),
                             "size-8192": arm(8192, 70000.0),
                             "rand-8192": arm(8192, 90000.0, pattern="rand")},
                  "cache": {"write_lat_ns": 70000.0,
                            "write_flush_lat_ns": 71000.0},
                  "queue_depth": steps}))
    return app


def test_a_drives_record_with_its_charts(tmp_path):
    app = certified(tmp_path)
    for name in ("c0t5002538C40A1B2C3d0", "B1", SAMSUNG):
        proc = run(app, "results", name)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith('c0t5002538C40A1B2C3d0 (key "%s", '
                                   'serial B1' % SAMSUNG)
        assert "  write latency: p50/p99/p99.9 us: QD1 60/150/300, " \
            "QD2 120/300/600, QD4 240/600/1200" in lines
        at = lines.index("cost per I/O by transfer size (median of the "
                         "rounds):")
        assert lines[at + 1].split() == ["4096", "B", "#" * 30, "240",
                                         "us"]
        assert lines[at + 2].split()[:3] == ["8192", "B", "#" * 9]
        assert lines[at + 3].startswith("  8192 B random ")
        assert "  write + flush " in proc.stdout and "(1.01x a write)" in \
            proc.stdout
        assert "random 4 KiB reads by queue depth:" in lines
    doc = as_json(app, "results", "B1")
    assert [r["serial"] for r in doc["results"]] == ["B1"]


def test_a_name_without_a_record_and_the_lists_options(tmp_path):
    app = certified(tmp_path)
    proc = run(app, "results", "NOSUCH")
    assert proc.returncode == 1
    assert proc.stderr == "sdtune: cannot show the records of 'NOSUCH': " \
        "no certification record names it (sdtune results lists them)\n"
    proc = run(app, "results", "-H", "B1")
    assert proc.returncode == 2 and "not with -H" in proc.stderr
    assert run(app, "results").stdout.count("B1") == 1
