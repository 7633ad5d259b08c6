# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune report` on the simulated appliance: the page goes to the state
directory under -R by default (its path printed), to FILE with -o, to
standard output with `-o -`; names choose the drives as `results` does;
a page that cannot be written is an illumos-style error, exit 4, and
leaves nothing behind."""

import os
import sys
import xml.etree.ElementTree as ET

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests import builders, reportdata  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import sdtune_checked as run  # noqa: E402


def appliance(tmp_path, recs):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    for rec in recs:
        builders.store_record(app.root, rec)
    return app


def test_the_default_page_is_in_the_state_directory(tmp_path):
    app = appliance(tmp_path, reportdata.demo_records())
    proc = run(app, "report")
    assert proc.returncode == 0, proc.stderr
    path = os.path.join(app.root, "var", "sdtune", "report.html")
    assert proc.stdout == "report of 3 records written to %s (%d bytes)\n" \
        % (path, os.path.getsize(path))
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    ET.fromstring(doc.split("\n", 1)[1])
    for target in ("c5t1d0", "c5t2d0", "c5t3d0"):
        assert ">%s</a>" % target in doc
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"


def test_names_choose_the_drives_and_dash_is_standard_output(tmp_path):
    app = appliance(tmp_path, reportdata.demo_records())
    proc = run(app, "report", "HOME-0001", "ATA     ACME DC4K", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>")
    assert "2 records, 2 models" in proc.stdout
    assert "DC512N" not in proc.stdout
    missing = run(app, "report", "c9t9d9")
    assert missing.returncode == 1
    assert missing.stderr == "sdtune: cannot report on 'c9t9d9': no " \
        "certification record names it (sdtune results lists them)\n"


def test_a_page_that_cannot_be_written_leaves_nothing(tmp_path):
    app = appliance(tmp_path, reportdata.demo_records()[:1])
    where = tmp_path / "no" / "such"
    proc = run(app, "report", "-o", str(where / "r.html"))
    assert proc.returncode == 4
    assert proc.stderr == "sdtune: cannot write report '%s': No such " \
        "file or directory\n" % (where / "r.html")
    assert not (tmp_path / "no").exists()
    # A directory in the way: refused, the directory untouched.
    (tmp_path / "d").mkdir()
    proc = run(app, "report", "-o", str(tmp_path / "d"))
    assert proc.returncode in (3, 4)
    assert proc.stderr.startswith("sdtune: cannot write report '%s': "
                                  % (tmp_path / "d"))
    assert os.listdir(str(tmp_path / "d")) == []
    assert proc.stdout == ""


def test_no_record_no_page(tmp_path):
    app = appliance(tmp_path, [])
    proc = run(app, "report")
    assert proc.returncode == 1
    assert proc.stderr.startswith("sdtune: cannot write report '")
    assert "no certification record is stored" in proc.stderr
    assert not os.path.exists(os.path.join(app.root, "var", "sdtune",
                                           "report.html"))
