# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated 240-disk JBOD head: its shape, and every command sdtune
runs on it answers in full through its DIR/bin wrappers.  How fast they
answer (well under a second each) is measured by `make bench`
(tests/bench/bench_sim.py), not asserted here: a timing is no test on a
shared machine."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import JBOD_COMMANDS  # noqa: E402


@pytest.fixture(scope="module")
def jbod(tmp_path_factory):
    return Appliance.build("jbod-240", str(tmp_path_factory.mktemp("jbod")))


@pytest.mark.parametrize("cmd,args,stdin,lines", JBOD_COMMANDS)
def test_jbod_commands_answer_in_full(jbod, cmd, args, stdin, lines):
    p = jbod.run(cmd, *args, stdin=stdin)
    assert p.returncode == 0 and p.stderr == b""
    assert p.stdout.count(b"\n") >= lines


def test_jbod_shape(jbod):
    exp = jbod.expected_disks()
    assert len(exp) == 242
    p = jbod.run("mdb", "-k", stdin="::sd_state -s\n")
    out = p.stdout.decode()
    assert "256 entries in sd_state table" in out
    assert "Processed 242 UN softstate entries" in out
    pools = {d["pool"] for d in exp}
    assert pools == {"rpool", "data", None}
    assert sum(1 for d in exp if d["in_use"] and
               d["in_use"][0]["kind"] == "exported_pool") == 12
