# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The illumos command parsers on what the simulated appliance prints
(tests/sim: the exact illumos formats): iostat -E and -En, zpool status,
zdb -C and diskinfo in every mode.  The parsers against real-world output
are tests/unit/inventory/test_parsers_realworld.py."""

import os
import re
import sys

import pytest

from sdtune.inventory import diskinfo, iostat, zdb, zpool

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    return Appliance.build("small-nexenta",
                           str(tmp_path_factory.mktemp("realworld-sim")))


def test_iostat_sim_E_and_En_agree(sim):
    # The simulator's iostat (show_disk_errors()'s column counter) with
    # sdN names (-E) and cXtYdZ names (-En): the same records.
    by_sd = iostat.parse_iostat_en(t.run(sim, "iostat", "-E")[0])
    by_name = iostat.parse_iostat_en(t.run(sim, "iostat", "-En")[0])
    assert len(by_sd) == len(by_name) > 3
    assert all(re.fullmatch(r"sd[0-9]+", n) for n in by_sd)
    strip = [(d.vendor, d.product, d.revision, d.serial, d.size_bytes)
             for d in by_sd.values()]
    assert strip == [(d.vendor, d.product, d.revision, d.serial,
                      d.size_bytes) for d in by_name.values()]


def test_zpool_sim_pools(sim):
    pools = zpool.parse_zpool_status(t.run(sim, "zpool", "status")[0])
    assert sorted(pools) == ["rpool", "tank"]
    assert {(m.disk, m.role) for m in pools["tank"].members} == {
        ("c0t5000CCA0496E6F8Dd0", "data"), ("c0t5000CCA0496E7A11d0", "data"),
        ("c0t55CD2E404C0D8D0Ed0", "log"), ("c1t0d0", "cache"),
        ("c0t5000CCA0496E8D14d0", "spare")}
    assert [(m.disk, m.slice) for m in pools["rpool"].members] == [
        ("c1t1d0", "s0"), ("c1t2d0", "s0")]


def test_zdb_sim_cachefile_every_pool(sim):
    pools = zdb.parse_zdb_cachefile(t.run(sim, "zdb", "-C")[0])
    assert sorted(pools) == ["rpool", "tank"]
    by_disk = zdb.ashift_by_disk(pools)
    assert by_disk["c0t55CD2E404C0D8D0Ed0"][0] == "tank"
    assert by_disk["c1t1d0"][0] == "rpool"
    assert all(ashift in (9, 12, 13) for _, ashift in by_disk.values())


@pytest.mark.parametrize("args", [("-cHp",), ("-cH",), ("-c",), ("-Hp",),
                                  ("-H",), ("-p",), (), ("-P",), ("-PH",),
                                  ("-Pp",)])
def test_diskinfo_sim_every_mode(sim, args):
    # The simulator's diskinfo in every mode against its -cHp.
    flags = "".join(args)
    got = diskinfo.parse_diskinfo_chp(t.run(sim, "diskinfo", *args)[0])
    ref = diskinfo.parse_diskinfo_chp(t.run(sim, "diskinfo", "-cHp")[0])
    assert list(got) == list(ref) and len(ref) > 3
    for name, d in got.items():
        r = ref[name]
        assert (d.vendor_id, d.product_id) == (r.vendor_id, r.product_id)
        assert d.serial == (r.serial if "c" in flags or "P" in flags
                            else None)
        if "P" in flags:
            assert (d.ctype, d.ssd, d.size_bytes, d.size_gib) == \
                (None, None, None, None)
            continue
        assert (d.ctype, d.ssd, d.removable) == (r.ctype, r.ssd,
                                                 r.removable)
        if "p" in flags:
            assert (d.size_bytes, d.size_gib) == (r.size_bytes, None)
        else:
            assert (d.size_bytes, d.size_gib) == \
                (None, round(r.size_bytes / 2 ** 30, 2))
