# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune prove` on the simulated appliance, its disks plain files: the
states before apply, after apply (a busy pool member pending reboot)
and after reboot, contradicted where the simulated kernel's paths
ignore sd.conf, the JSON shape, errors and exit status, and that prove
writes nothing.  The flush timings on emulated drives are
tests/emu/test_prove_emu.py's; here only what does not depend on a
drive's timing is asserted."""

import hashlib
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.e2e.proving import (FREE_DISK, HOME_DISK, IGNORING_DISK, KEY,  # noqa: E402,E501
                               PAIR, POOL_DISK, check, proofs, scenario)
from tests.sim.appliance import Appliance  # noqa: E402

BLOCKS = (16 << 20) // 512
CERTIFIED = {"write_lat_ns": 830_000.0, "write_flush_lat_ns": 3_830_000.0}


@pytest.fixture
def app(tmp_path):
    devices = {}
    for name in (POOL_DISK, FREE_DISK, IGNORING_DISK, HOME_DISK):
        path = str(tmp_path / ("%s.img" % name))
        with open(path, "wb") as f:
            f.truncate(BLOCKS * 512)
        devices[name] = path
    app = Appliance.build(scenario(devices, BLOCKS), str(tmp_path / "app"))
    app.devices = devices
    return app


def digest(app):
    out = {}
    for name, path in app.devices.items():
        with open(path, "rb") as f:
            out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def apply_pair(app, tmp_path):
    inject_record(app, KEY, dict(PAIR, disksort=False),
                  evidence={"device": {"nv_sup": True}, "cache": CERTIFIED})
    plan = str(tmp_path / "plan.json")
    assert app.sdtune("plan", "--save", plan).returncode == 0
    proc = app.sdtune("apply", plan, "--yes")
    assert proc.returncode == 0, proc.stderr


def test_before_apply_nothing_is_in_effect(app):
    before = digest(app)
    proc = app.sdtune("prove", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    got = proofs(proc)
    assert {n: p["state"] for n, p in got.items()} == dict.fromkeys(
        app.devices, "not in effect")
    for p in got.values():
        pb = check(p, "physical-block-size")
        assert (pb["expected"], pb["measured"], pb["agrees"]) == \
            (None, 512, None)
        assert check(p, "cache-nonvolatile")["flush_calls"] == 64
        assert check(p, "throttle-max")["kernel_throttle"] == 256
    assert digest(app) == before


def test_apply_then_reboot(app, tmp_path):
    before = digest(app)
    apply_pair(app, tmp_path)
    # update_drv reattaches idle disks with the list they had (a busy
    # pool member keeps the module loaded): every unit waits for reboot.
    proc = app.sdtune("prove", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    got = proofs(proc)
    assert {n: p["state"] for n, p in got.items()} == {
        POOL_DISK: "pending reboot", FREE_DISK: "pending reboot",
        IGNORING_DISK: "pending reboot", HOME_DISK: "not in effect"}
    assert "un_phy_blocksize: kernel 512, sd.conf 4096" in \
        got[POOL_DISK]["details"]
    assert check(got[FREE_DISK], "physical-block-size")["measured"] == 512

    app.reboot()
    proc = app.sdtune("prove", "-o", "json")
    assert proc.returncode == 1, proc.stderr     # one is contradicted
    got = proofs(proc)
    assert {n: p["state"] for n, p in got.items()} == {
        POOL_DISK: "proven", FREE_DISK: "proven",
        IGNORING_DISK: "contradicted", HOME_DISK: "not in effect"}
    for name in (POOL_DISK, FREE_DISK):
        assert check(got[name], "physical-block-size")["pbsize_bytes"] == \
            4096
        flush = check(got[name], "cache-nonvolatile")
        assert flush["agrees"] is True
        assert flush["certified_flush_ns"] == 3_000_000
        assert flush["ceiling_ns"] == 750_000
        assert flush["flush_median_ns"] < flush["ceiling_ns"]
        assert check(got[name], "throttle-max")["kernel_throttle"] == 32
    # sd_lun says 4096 (verify: applied), DKIOCGMEDIAINFOEXT says 512:
    # the kernel's path is what ZFS reads.
    bad = got[IGNORING_DISK]
    assert check(bad, "physical-block-size")["measured"] == 512
    assert "physical-block-size: kernel 512, applied 4096" in \
        bad["details"]

    proc = app.sdtune("prove", POOL_DISK, FREE_DISK)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "TUNABLE", "APPLIED",
                                "AGREES", "MEASURED"]
    assert len(lines) == 7 and all(" proven " in x for x in lines[1:])
    assert digest(app) == before


def test_scripted_output(app):
    proc = app.sdtune("prove", "-H", FREE_DISK)
    assert proc.returncode == 0
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert [r[2] for r in rows] == ["physical-block-size",
                                    "cache-nonvolatile", "throttle-max"]
    assert all(len(r) == 6 and r[1] == "not in effect" for r in rows)


def test_unknown_disk_and_unreadable_node(app):
    os.unlink(app.devices[HOME_DISK])
    proc = app.sdtune("prove", "c9t9d9", HOME_DISK, FREE_DISK)
    assert proc.returncode == 4
    assert "sdtune: cannot prove 'c9t9d9': no such disk\n" in proc.stderr
    assert "sdtune: cannot prove '%s': sdio prove failed (exit 2): sdio: " \
        "cannot open" % HOME_DISK in proc.stderr
    assert "Traceback" not in proc.stderr
    # The disks that could be proven are still shown.
    assert FREE_DISK in proc.stdout and HOME_DISK not in proc.stdout


def test_bad_flush_count_is_usage(app):
    proc = app.sdtune("prove", "--flushes", "0")
    assert proc.returncode == 2
    assert "invalid count '0'" in proc.stderr


def test_nvme_proves_the_physical_block_blkdev_reports(tmp_path):
    """nvme-4k with the triplet in nvme.conf from boot: blkdev reports
    4096 for both namespaces, and DKIOCGMEDIAINFOEXT says so; a disk
    without a node cannot be proven."""
    import json
    with open(os.path.join(REPO, "tests/sim/scenarios/nvme-4k.json")) as f:
        s = json.load(f)
    names = []
    for d in s["disks"]:
        if d.get("driver") == "blkdev":
            path = str(tmp_path / ("%s.img" % d["name"]))
            with open(path, "wb") as f:
                f.truncate(1 << 20)
            d["device_file"] = path
            names.append(d["name"])
    s["nvme_conf"] = {"text": 'nvme-config-list = "INTEL SSDPE2KX020T8", '
                      '"", "min-phys-block-size:4096";\n'}
    app = Appliance.build(s, str(tmp_path / "app"))
    proc = app.sdtune("prove", "-o", "json", *names)
    assert proc.returncode == 0, proc.stderr
    for name, p in proofs(proc).items():
        assert p["state"] == "proven", p
        c = check(p, "min-phys-block-size")
        assert (c["expected"], c["measured"], c["agrees"]) == \
            (4096, 4096, True)
    # Without the triplet nothing is set: not in effect, and blkdev
    # reports the 512-byte format in use.
    s.pop("nvme_conf")
    app = Appliance.build(s, str(tmp_path / "app2"))
    got = proofs(app.sdtune("prove", "-o", "json", *names))
    assert {p["state"] for p in got.values()} == {"not in effect"}
    assert {check(p, "min-phys-block-size")["measured"]
            for p in got.values()} == {512}


def test_the_last_proof_of_every_disk_goes_into_the_report(app, tmp_path):
    """prove keeps its proofs of every disk for `sdtune report` (which
    runs nothing itself); a proof of some disks only is not kept, and a
    report without any proof says how to get one."""
    inject_record(app, KEY, {"physical-block-size": 4096})
    page = app.sdtune("report", "-o", "-")
    assert "Not part of this report" in page.stdout
    kept = os.path.join(app.root, "var", "sdtune", "prove.json")
    assert app.sdtune("prove", FREE_DISK).returncode == 0
    assert not os.path.exists(kept)
    assert app.sdtune("prove").returncode == 0
    assert os.path.exists(kept)
    page = app.sdtune("report", "-o", "-")
    assert page.returncode == 0, page.stderr
    section = page.stdout.split("<h2>Proof after apply</h2>", 1)[1]
    for name in app.devices:
        assert "<td>%s</td>" % name in section
    assert "not in effect" in section
    assert "physical-block-size not configured, kernel 512" in section
    assert "flush median" in section
    # Damaged: the report is still made, with a warning naming the file.
    with open(kept, "w") as f:
        f.write("{")
    page = app.sdtune("report", "-o", "-")
    assert page.returncode == 0
    assert "prove.json' is not a proof sdtune wrote" in page.stderr
    assert "Not part of this report" in page.stdout
