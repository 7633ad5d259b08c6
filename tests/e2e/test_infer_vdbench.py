# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`bin/sdtune infer --from FILE -o json` end to end on the simulated
appliance (issue 11): the constructed files of tests/fixtures/vdbench/
(README.md there: made-up numbers in the real layouts) for a
512-byte-native and a 4 KiB-native drive, with and without the
time-of-day column, and a corpus file that is refused naming its run.
The importer itself is tested in
tests/unit/certify/importers/test_vdbench_realworld.py."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402

CORPUS = os.path.join(REPO, "tests", "fixtures", "realworld", "vdbench")
MADE = os.path.join(REPO, "tests", "fixtures", "vdbench")
REFUSAL = ("vdbench: no run is usable (writes only, one fixed transfer "
           "size, a raw device): ")
QUICKTEST = "masakioui-vdb-2019-quicktest-summary.html"

K4_14 = "vdbench50407-constructed-4kn-14col-timestamp.txt"
K4_NT = "vdbench50407-constructed-4kn-no-timestamp.txt"
N512_14 = "vdbench50407-constructed-512n-14col-timestamp.txt"
N512_NT = "vdbench50407-constructed-512n-no-timestamp.txt"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return Appliance.build("small-nexenta",
                           str(tmp_path_factory.mktemp("vdbench") / "app"))


@pytest.mark.parametrize("name,native", [
    (N512_14, 512), (N512_NT, 512), (K4_14, 4096), (K4_NT, 4096)])
def test_infer_gives_the_sector_verdict(app, name, native):
    proc = app.sdtune("infer", "--from", os.path.join(MADE, name),
                      "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc = json.loads(proc.stdout)
    assert doc["native_sector_bytes"] == native
    assert doc["sector_confidence"] >= 0.95
    sector = doc["evidence"]["sector"]
    assert sorted(run["bs"] for run in sector.values()) == [512, 4096]
    assert all(run["qd"] == 1 and run["intervals_used"] == 5
               for run in sector.values())
    if native == 4096:
        assert doc["recommended"] == {"physical-block-size": 4096}
    else:
        assert "physical-block-size" not in doc["recommended"]


def test_infer_refuses_a_corpus_file_naming_its_run(app):
    path = os.path.join(CORPUS, QUICKTEST)
    proc = app.sdtune("infer", "--from", path, "-o", "json")
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr == "sdtune: cannot parse '%s': %sRD=rd1: 50.7 %% " \
        "reads\n" % (path, REFUSAL)
