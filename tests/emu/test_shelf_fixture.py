# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The shelf helper (tests/emu/shelf.py): three emulated drives behind one
simulated appliance that `sdtune disks` lists with the model, serial and
logical block of each (one unit odd: the model of another kind), every
disk file answering; after the `with` block no nbdkit, nbdfuse, mount or
temp dir of it survives.  A failed start stops what it had started."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.emu.drive import leftovers  # noqa: E402
from tests.emu.shelf import (Shelf, model_of, sd_key,  # noqa: E402
                             standard_mix)

pytestmark = pytest.mark.emu


def test_three_drives_listed_and_all_gone_after(tmp_path):
    mix = standard_mix(3)
    assert mix == [("512n", "volatile"), ("4kn", "nonvolatile"),
                   ("512e", "volatile")]
    with Shelf(mix, odd={0: ("4kn", "nonvolatile")}) as shelf:
        made = [(u.drive.pids, u.drive.tmpdir) for u in shelf.units]
        assert all(len(pids) == 2 for pids, _ in made)
        assert shelf.names == ["c5t0d0", "c5t1d0", "c5t2d0"]
        for u in shelf.units:
            with open(u.drive.path, "rb") as f:
                assert len(f.read(512)) == 512
        proc = shelf.app.sdtune("disks", "-o", "json")
        assert proc.returncode == 0, proc.stderr
        listed = {d["name"]: d for d in json.loads(proc.stdout)["disks"]}
        assert sorted(listed) == shelf.names
        for u in shelf.units:
            d = listed[u.name]
            assert (d["serial"], d["logical_block_bytes"]) == \
                (u.serial, u.logical)
            assert (d["model"], d["key"]) == (u.model, sd_key(u.model))
        # The odd 512n unit shares the key of the 4kn units.
        assert shelf.units[0].odd and not shelf.units[1].odd
        assert listed["c5t0d0"]["key"] == listed["c5t1d0"]["key"] == \
            sd_key(model_of("4kn", "nonvolatile"))
        assert listed["c5t2d0"]["key"] != listed["c5t1d0"]["key"]
        assert shelf.units[2].drive.model().native == 4096
        app_dir = shelf.app.dir
    assert shelf.left == []
    assert leftovers([p for pids, _ in made for p in pids],
                     [tmp for _, tmp in made]) == []
    assert shelf.pids == []
    assert not os.path.exists(app_dir)


def test_a_failed_start_stops_what_was_started():
    # The third drive is refused by sdemu (a native page that is not a
    # power of two); the two before it must not survive.
    shelf = Shelf(standard_mix(3))
    shelf.units[2].drive.params["native"] = 1000
    try:
        with pytest.raises(RuntimeError, match="nbdkit exited"):
            shelf.start()
    finally:
        shelf.stop()
    started = shelf.units[:2]
    assert all(u.drive.path is None for u in started)
    assert shelf.left == []
    assert len(shelf._made) == 2


def test_unknown_kinds_and_odd_units_are_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        Shelf([("8k", "volatile")])
    with pytest.raises(ValueError, match="no such unit"):
        Shelf(standard_mix(2), odd={2: ("4kn", "volatile")})
