# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Disks under sd and blkdev together (issue 15 item 5), end to end on
the simulated appliance's nvme-mixed scenario: `sdtune disks` lists the
NVMe namespaces and the virtio disk with their driver beside the SATA
SSDs behind sd, without an sd-config-list key or sd values, with
blkdev's physical block size and, for a namespace, its controller, LBA
formats and write cache from nvmeadm (issue 18); an idle
NVMe namespace is certified like any disk (its record has no key, and
says driver and model); one in a pool is refused before any write."""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import scenario as scn  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

SCENARIO = os.path.join(REPO, "tests", "sim", "scenarios",
                        "nvme-mixed.json")
IN_POOL = "c3t0025385971B0F5A2d0"
IDLE = "c4t0014EE83021EAE80d0"
# Short measurements: the verdict's quality is tests/emu's business.
CERTIFY = ("\n[certify]\nphases = sector\nmin_rounds = 2\nmax_rounds = 4\n"
           "paired_max_s = 5\nregion_bytes = 67108864\n")


def scenario():
    with open(SCENARIO) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return Appliance.build(SCENARIO, str(tmp_path_factory.mktemp("nv")))


@pytest.fixture(scope="module")
def truth():
    """The scenario's disks, normalised by the simulator."""
    return {d["name"]: d for d in scn.load(SCENARIO)["disks"]}


def test_disks_json_shows_both_drivers(app, truth):
    proc = app.sdtune("disks", "-o", "json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    got = {d["name"]: d for d in json.loads(proc.stdout)["disks"]}
    assert sorted(got) == sorted(truth)
    for name, t in truth.items():
        g = got[name]
        assert g["driver"] == t["driver"], name
        assert g["instance"] == t["instance"], name
        assert g["serial"] == t["serial"], name
        assert g["size_bytes"] == t["blocks"] * t["logical_block"], name
        assert g["logical_block_bytes"] == t["logical_block"], name
        if t["driver"] == "sd":
            assert g["key"] == t["vid"] + t["pid"], name
            assert g["model"] == t["ata_model"], name
            assert g["sd"]["throttle_max"] is not None, name
            assert g["nvme"] is None, name
            continue
        # No INQUIRY, no sd unit: nothing sd.conf could key or change.
        assert g["key"] is None, name
        assert g["model"] == t["model"], name
        assert g["firmware"] == t["firmware"], name
        # blkdev's physical block size (mdb), what ZFS takes ashift from.
        assert g["physical_block_bytes"] == _physical_block(t), name
        assert g["nvme"] == _nvme_json(t), name
        assert g["sd"] == {"suppress_cache_flush": None,
                           "throttle_max": None, "throttle_min": None,
                           "disksort": None}, name
        assert g["ssd"] is t["solid_state"], name
    nvme = got[IN_POOL]
    assert (nvme["pool"], nvme["vdev_ashift"]) == ("fast", 9)
    assert nvme["rejected_reasons"] == ["member of pool fast"]
    assert got[IDLE]["rejected_reasons"] == [] and got[IDLE]["in_use"] is None


_PERFORMANCE = ("Best", "Better", "Good", "Degraded")


def _physical_block(t):
    """What blkdev reports for a scenario disk (issue 18 contract): a
    virtio disk its logical block; an NVMe namespace the best-performing
    format without metadata (ns_best_block_size()), at least nvme's
    default min-phys-block-size of 512 (nvme-mixed has no nvme.conf)."""
    if not t.get("model"):
        return t["logical_block"]
    size = t["lba_formats"][t["lba_format"]]["data"]
    best = 3
    for f in t["lba_formats"]:
        if f["data"] == 0:
            break
        if f["ms"] != 0 or f["rp"] >= best:
            continue
        best, size = f["rp"], f["data"]
    return max(size, 512)


def _nvme_json(t):
    """The "nvme" object of an NVMe namespace, null for a virtio disk.
    nvmeadm prints only the formats without metadata (no -v)."""
    if not t.get("model"):
        return None
    return {
        "controller": "nvme%d" % t["controller"], "namespace": t["nsid"],
        "version": t["nvme_version"],
        "lba_formats": [{"index": i, "data_bytes": f["data"],
                         "metadata_bytes": f["ms"],
                         "relative_performance": _PERFORMANCE[f["rp"]]}
                        for i, f in enumerate(t["lba_formats"])
                        if f["ms"] == 0],
        "lba_format_in_use": t["lba_format"],
        "volatile_write_cache": {
            "present": t["vwc_present"],
            "enabled": t["vwc_enabled_default"] if t["vwc_present"]
            else None}}


def test_disks_table_has_the_driver_column(app):
    proc = app.sdtune("disks")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["NAME", "DRIVER", "KEY", "SERIAL"]
    proc = app.sdtune("disks", "-H", "-p")
    rows = {r[0]: r for r in (line.split("\t")
                              for line in proc.stdout.splitlines())}
    assert rows[IDLE][1:5] == ["blkdev", "-", "A06AF9B1", "R1110021"]
    assert rows["c5t0d0"][1:3] == ["blkdev", "-"]
    assert rows["c1t1d0"][1:3] == ["sd", "ATA     INTEL SSDSC2KB48"]
    # FLUSH, THROTTLE and DISKSORT are sd's: "-" outside sd.
    assert rows[IDLE][11:14] == ["-", "-", "-"]
    # LBS and PBS: blkdev's, the 4096-byte format in use.
    assert rows[IDLE][6:8] == ["4096", "4096"]
    assert rows["c5t0d0"][6:8] == ["512", "512"]


@pytest.fixture
def lab(tmp_path):
    """nvme-mixed with a scratch file behind the idle namespace's raw
    whole-disk node, and short certify settings."""
    s = scenario()
    target = tmp_path / "nvme-scratch"
    with open(target, "wb") as f:
        f.truncate(128 << 20)
    for d in s["disks"]:
        if d["name"] == IDLE:
            d["device_file"] = str(target)
    app = Appliance.build(s, str(tmp_path / "app"))
    with open(app.config, "a") as f:
        f.write(CERTIFY)
    return app, target


def test_certify_an_idle_nvme_namespace(lab):
    app, target = lab
    before = os.stat(target).st_mtime_ns
    proc = app.sdtune("certify", IDLE, "--confirm", IDLE, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)["results"][0]
    assert res["target"] == IDLE
    assert res["key"] is None
    assert (res["driver"], res["model"]) == ("blkdev", "WUS4BB019D4M9E4")
    assert (res["serial"], res["firmware"]) == ("A06AF9B1", "R1110021")
    # No SCSI pass-through under blkdev: the device evidence is unknown.
    dev = res["evidence"]["device"]
    assert dev["nv_sup"] is None and dev["capacity_bytes"] is None
    assert res["evidence"]["region"]["size_from"] == "the inventory"
    assert os.stat(target).st_mtime_ns != before     # it was written
    stored = json.loads(app.sdtune("results", "-o", "json").stdout)
    rec = stored["results"][0]
    assert rec["key"] is None and rec["driver"] == "blkdev"
    assert rec["model"] == "WUS4BB019D4M9E4"
    names = os.listdir(os.path.join(app.root, "var", "sdtune", "certify"))
    assert names == ["blkdev--WUS4BB019D4M9E4--A06AF9B1--R1110021.json"]
    table = app.sdtune("results").stdout.splitlines()
    assert table[1].split()[:3] == ["-", "A06AF9B1", "R1110021"]


@pytest.mark.parametrize("arg", [IN_POOL, "/dev/rdsk/%sp0" % IN_POOL,
                                 "/dev/rdsk/%ss0" % IN_POOL])
def test_certify_refuses_an_nvme_namespace_in_a_pool(app, arg):
    proc = app.sdtune("certify", arg, "--confirm", arg)
    assert proc.returncode == 3
    assert proc.stderr == ("sdtune: cannot certify '%s': in use: member "
                           "of pool fast\n" % arg)
    assert not os.path.exists(os.path.join(app.root, "var", "sdtune",
                                           "certify"))
