# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated kernel's life cycle and attach rules: update_drv with a
busy or idle sd, reboot, hot-plug, and what attach does with throttles,
disksort, the physical block size (NexentaStor and upstream, READ
CAPACITY(16) failing), NV_SUP and the built-in tables."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

HDD = t.HGST_6F8D["name"]
INTEL = t.INTEL["name"]
SAMSUNG = t.SAMSUNG_AHCI["name"]
TANK = [{"name": "tank", "vdevs": [HDD], "logs": [INTEL]}]


def _append_pairs(app, pairs):
    path = os.path.join(app.root, "kernel/drv/sd.conf")
    with open(path) as f:
        text = f.read()
    body = ",\n".join('\t"%s", "%s"' % p for p in pairs)
    text = text.replace('"io-time:180,slow-io-threshold:0";',
                        '"io-time:180,slow-io-threshold:0",\n%s;' % body)
    with open(path, "w") as f:
        f.write(text)


def _build(tmp_path, **kw):
    return Appliance.build(t.facts_host(**kw), str(tmp_path))


def _phy(app, name):
    return t.unit_fields(app, name)["un_phy_blocksize"]


# ---------------------------------------------------------------- life cycle

def test_busy_disks_keep_values_after_update_drv_until_reboot(tmp_path):
    app = _build(tmp_path, pools=TANK)
    _append_pairs(app, [(t.INTEL_KEY, "physical-block-size:4096")])
    before = {u["disk"]: u for u in app.state()["units"].values()}
    assert t.run(app, "update_drv", "-vf", "sd")[2] == 0
    units = {u["disk"]: u for u in app.state()["units"].values()}
    # Busy: the same attachment, old list, old values.
    assert units[INTEL]["seq"] == before[INTEL]["seq"]
    assert _phy(app, INTEL) == 512
    # Idle: detached and attached again (new soft state) but with the
    # list it had (facts §1.4).
    assert units[SAMSUNG]["seq"] != before[SAMSUNG]["seq"]
    assert units[SAMSUNG]["conf"] == before[SAMSUNG]["conf"]
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp[INTEL]["physical_block_bytes"] == 512
    assert not exp[INTEL]["attached_with_loaded_list"]
    app.reboot()
    assert _phy(app, INTEL) == 4096
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp[INTEL]["physical_block_bytes"] == 4096
    assert all(d["attached_with_loaded_list"] for d in exp.values())


def test_update_drv_without_f_keeps_the_old_list_loaded(tmp_path):
    app = _build(tmp_path, pools=TANK)
    _append_pairs(app, [("ATA     SAMSUNG MZ7LM480", "throttle-max:64")])
    out, err, rc = t.run(app, "update_drv", "sd")
    assert (out, rc) == ("", 1)
    assert err == "Cannot unload module: sd\nWill be unloaded upon reboot.\n"
    app.hotplug(SAMSUNG)
    assert t.unit_fields(app, SAMSUNG)["un_saved_throttle"] == 256
    assert t.run(app, "update_drv", "-f", "sd")[1] == (
        "Cannot unload module: sd\nWill be unloaded upon reboot.\n"
        "Forcing update of sd.conf.\n")
    # Idle disk: re-attached with its own (old) list...
    assert t.unit_fields(app, SAMSUNG)["un_saved_throttle"] == 256
    # ... until it is hot-plugged: a new node sees the loaded list.
    app.hotplug(SAMSUNG)
    assert t.unit_fields(app, SAMSUNG)["un_saved_throttle"] == 64


def test_all_idle_update_drv_unloads_and_keeps_lists(tmp_path):
    app = _build(tmp_path)
    anchor = t.mdb(app, "::sd_state -s\n")[0].splitlines()[0]
    _append_pairs(app, [(t.INTEL_KEY, "cache-nonvolatile:true")])
    assert t.run(app, "update_drv", "-vf", "sd") == (
        "", "sd.conf updated in the kernel.\n", 0)
    assert t.mdb(app, "::sd_state -s\n")[0].splitlines()[0] != anchor
    assert t.unit_fields(app, INTEL)["un_f_suppress_cache_flush"] == 0
    app.reboot()
    assert t.unit_fields(app, INTEL)["un_f_suppress_cache_flush"] == 1


def test_set_busy_changes_the_unload_outcome(tmp_path):
    app = _build(tmp_path)
    app.set_busy(SAMSUNG, True)
    assert t.run(app, "update_drv", "-v", "sd")[2] == 1
    app.set_busy(SAMSUNG, False)
    assert t.run(app, "update_drv", "-v", "sd")[2] == 0


def test_update_drv_root_and_lock(tmp_path):
    app = _build(tmp_path)
    app.set_root(False)
    assert t.run(app, "update_drv", "-vf", "sd") == (
        "", "You must be root to run this program.\n", 1)
    app.set_root(True)
    app.set_drv_lock(True)
    assert t.run(app, "update_drv", "-vf", "sd") == (
        "", "add_drv/rem_drv currently busy; try later\n", 1)


def test_hotplug_brings_in_an_absent_disk(tmp_path):
    extra = dict(t.hgst("7A11", 5), present=False)
    app = _build(tmp_path, disks=[t.HGST_6F8D, extra])
    assert [d["name"] for d in app.expected_disks()] == [HDD]
    assert not os.path.lexists(os.path.join(
        app.root, "dev/rdsk/c0t5000CCA0496E7A11d0p0"))
    app.hotplug("c0t5000CCA0496E7A11d0")
    assert len(app.expected_disks()) == 2
    assert os.path.exists(os.path.join(
        app.root, "dev/rdsk/c0t5000CCA0496E7A11d0p0"))
    with open(os.path.join(app.root, "etc/path_to_inst")) as f:
        assert '"/scsi_vhci/disk@g5000cca0496e7a11" 5 "sd"\n' in f.read()
    out, _, _ = t.mdb(app, "::walk sd_state\n")
    assert out.splitlines()[5].startswith("0xfffffe0bd8")


def test_soft_state_array_doubles(tmp_path):
    disks = [t.HGST_6F8D, dict(t.hgst("7A11", 40))]
    app = _build(tmp_path, disks=disks)
    out, _, _ = t.mdb(app, "::sd_state -s\n")
    assert "64 entries in sd_state table" in out
    assert "\nun 63: 0\n" in out
    assert "Processed 2 UN softstate entries" in out


def test_last_slot_is_not_counted(tmp_path):
    app = _build(tmp_path, disks=[t.HGST_6F8D, t.hgst("7A11", 31)])
    out, _, _ = t.mdb(app, "::sd_state -s\n")
    assert out.endswith("Processed 1 UN softstate entries\n" + "-" * 27
                        + "\n")


# ---------------------------------------------------------------- attach

def _fields_with(tmp_path, tunables, disk=None, flavour="nexenta",
                 key=t.INTEL_KEY):
    disk = disk or t.INTEL
    app = _build(tmp_path, disks=[disk], pairs=[(key, tunables)],
                 flavour=flavour)
    return t.unit_fields(app, disk["name"])


@pytest.mark.parametrize("tunables,throttle,minimum", [
    ("throttle-max:4", 256, 8),
    ("throttle-min:2, throttle-max:4", 4, 2),
    ("throttle-max:4, throttle-min:2", 256, 2),
    ("throttle-max:32", 32, 8),
    ("throttle-max:40000", 256, 8),
    ("throttle-max:65538, throttle-min:2", 256, 2),
    ("throttle-min:2, throttle-max:65538", 2, 2),
    ("throttle-max:abc", 256, 8),
    ("throttle-max:0x20", 32, 8),
    ("throttle-max:040", 32, 8),
    ("throttle-max: 32 junk", 32, 8),
])
def test_throttle_rules(tmp_path, tunables, throttle, minimum):
    f = _fields_with(tmp_path, tunables)
    assert (f["un_saved_throttle"], f["un_min_throttle"]) == \
        (throttle, minimum)


@pytest.mark.parametrize("tagged,untagged,expected", [
    (True, True, 64), (False, True, 3), (False, False, 1)])
def test_queueing_clamp_after_sd_conf(tmp_path, tagged, untagged, expected):
    disk = dict(t.INTEL, tagged_queueing=tagged, untagged_queueing=untagged)
    f = _fields_with(tmp_path, "throttle-max:64", disk=disk)
    assert f["un_saved_throttle"] == expected


def test_disksort_on_rotation_rate_one_ssd(tmp_path):
    f = _fields_with(tmp_path, "disksort:true")
    assert f["un_f_disksort_disabled"] == 1
    assert f["un_f_is_solid_state"] == 1


def test_disksort_on_hdd(tmp_path):
    f = _fields_with(tmp_path, "disksort:false", disk=t.HGST_6F8D,
                     key="HGST    HUS724040ALS640 ")
    assert f["un_f_disksort_disabled"] == 1
    assert f["un_f_is_rotational"] == 1


@pytest.mark.parametrize("rate,ssd,rot", [(None, 0, 1), (0, 0, 0),
                                          (1, 1, 0), (7200, 0, 1)])
def test_rotation_rate(tmp_path, rate, ssd, rot):
    disk = dict(t.INTEL, rotation_rate=rate)
    f = _fields_with(tmp_path, "retries-busy:5", disk=disk)
    assert (f["un_f_is_solid_state"], f["un_f_is_rotational"]) == (ssd, rot)


SAS_4K = {"name": "c0t5002538C40A1B2C3d0", "instance": 0,
          "phys_path": "/scsi_vhci/disk@g5002538c40a1b2c3",
          "vid": "SAMSUNG", "pid": "MZILS480HEGR/007", "rev": "GXL0",
          "serial": "S2BJNWAG300123", "blocks": 937703088, "lbppbe": 3,
          "rotation_rate": 1}
SAS_4K_KEY = "SAMSUNG MZILS480HEGR/007"


@pytest.mark.parametrize("flavour,tunables,rc16_fails,expected", [
    ("nexenta", "throttle-max:32", False, 4096),
    ("upstream", "throttle-max:32", False, 4096),
    ("nexenta", "physical-block-size:512", False, 512),
    ("upstream", "physical-block-size:512", False, 4096),
    ("nexenta", "physical-block-size:8192", False, 8192),
    ("upstream", "physical-block-size:8192", False, 8192),
    ("nexenta", "physical-block-size:8192", True, 512),
    ("upstream", "physical-block-size:8192", True, 512),
    ("nexenta", "physical-block-size:3000", False, 4096),
    ("nexenta", "physical-block-size=4096", False, 4096),
])
def test_physical_block_size(tmp_path, flavour, tunables, rc16_fails,
                             expected):
    disk = dict(SAS_4K, rc16_fails=rc16_fails)
    f = _fields_with(tmp_path, tunables, disk=disk, flavour=flavour,
                     key=SAS_4K_KEY)
    assert f["un_phy_blocksize"] == expected


def test_physical_block_size_member_names_by_flavour(tmp_path):
    nx = _build(tmp_path / "nx", disks=[t.INTEL],
                pairs=[(t.INTEL_KEY, "physical-block-size:4096")])
    assert t.print_members(nx, 1, ["un_phy_blocksize",
                                   "un_f_sdconf_phy_blocksize"]) == {
        "un_phy_blocksize": "0x1000", "un_f_sdconf_phy_blocksize": "0x1"}
    up = _build(tmp_path / "up", disks=[t.INTEL], flavour="upstream",
                pairs=[(t.INTEL_KEY, "physical-block-size:4096")])
    assert t.print_members(up, 1, ["un_phy_blocksize", "un_f_reserved1"]) \
        == {"un_phy_blocksize": "0x1000", "un_f_reserved1": "0"}
    out, err, rc = t.mdb(up, "*sd_state::softstate 0t1 | ::print struct "
                         "sd_lun un_phy_blocksize un_f_sdconf_phy_blocksize "
                         "un_tgt_blocksize\n")
    assert out == "un_phy_blocksize = 0x1000\n"
    assert err == ("mdb: failed to find member un_f_sdconf_phy_blocksize "
                   "of struct sd_lun: no such member of structure or "
                   "union\n")
    assert rc == 0


def test_4kn_block_sizes(tmp_path):
    disk = dict(SAS_4K, logical_block=4096, blocks=117212886, lbppbe=0)
    f = _fields_with(tmp_path, "throttle-max:32", disk=disk, key=SAS_4K_KEY)
    assert (f["un_tgt_blocksize"], f["un_sys_blocksize"],
            f["un_phy_blocksize"], f["un_blockcount"]) == \
        (4096, 4096, 4096, 117212886)


@pytest.mark.parametrize("nv_sup,tunables,expected", [
    (True, "throttle-max:32", 1), (True, "cache-nonvolatile:true", 0),
    (False, "throttle-max:32", 0), (None, "throttle-max:32", 0)])
def test_nv_sup(tmp_path, nv_sup, tunables, expected):
    disk = dict(t.INTEL, nv_sup=nv_sup)
    f = _fields_with(tmp_path, tunables, disk=disk)
    assert f["un_f_sync_nv_supported"] == expected


def test_flash_table_forces_4096_and_rmw(tmp_path):
    disk = {"name": "c1t3d0", "instance": 0, "ctype": "sata",
            "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@3,0",
            "vid": "TOSHIBA", "pid": "THNSNV05", "rev": "0001",
            "blocks": 1000000, "rotation_rate": 1, "logical_block": 512}
    app = _build(tmp_path, disks=[disk])
    f = t.unit_fields(app, "c1t3d0")
    assert (f["un_phy_blocksize"], f["un_f_enable_rmw"]) == (4096, 1)


def test_builtin_table_after_improved_format(tmp_path):
    disk = {"name": "c0t1d0", "instance": 0,
            "phys_path": "/pci@0,0/pci1000,30@10/sd@1,0",
            "vid": "SEAGATE", "pid": "ST39102FC", "rev": "0004",
            "blocks": 17783240, "interconnect": "parallel"}
    app = _build(tmp_path, disks=[disk],
                 pairs=[("SEAGATE ST39102FC", "retries-busy:9")])
    f = t.unit_fields(app, "c0t1d0")
    assert (f["un_saved_throttle"], f["un_busy_retry_count"]) == (15, 9)


def test_lsi_oem_table_suppresses_flushes(tmp_path):
    disk = {"name": "c0t2d0", "instance": 0,
            "phys_path": "/scsi_vhci/disk@g600a0b800029e1b2",
            "vid": "SUN", "pid": "CSM200_R", "rev": "0660",
            "blocks": 1000000}
    app = _build(tmp_path, disks=[disk])
    f = t.unit_fields(app, "c0t2d0")
    assert (f["un_f_suppress_cache_flush"], f["un_notready_retry_count"],
            f["un_f_cfg_is_lsi"]) == (1, 36, 1)


def test_nexenta_only_tunables(tmp_path):
    nx = _fields_with(tmp_path / "nx", "io-time:180,slow-io-threshold:0")
    assert (nx["un_io_time"], nx["un_slow_io_threshold"]) == (180, 0)
    up = _fields_with(tmp_path / "up", "io-time:180,slow-io-threshold:0",
                      flavour="upstream")
    assert "un_io_time" not in up and "un_slow_io_threshold" not in up
    nx = _fields_with(tmp_path / "bad", "io-time:x,slow-io-threshold:y")
    assert (nx["un_io_time"], nx["un_slow_io_threshold"]) == \
        (15, 30000000000)


def test_expected_disks_truth(tmp_path):
    app = Appliance.build("small-nexenta", str(tmp_path))
    exp = {d["name"]: d for d in app.expected_disks()}
    assert len(exp) == 9 and "c2t0d0" not in exp
    intel = exp[INTEL]
    assert intel["key"] == t.INTEL_KEY and len(intel["key"]) == 24
    assert intel["serial"] == "BTTV5095012Z400HGN"
    assert intel["firmware"] == "0270"
    assert intel["in_use"] == [{"kind": "log", "detail": "tank"}]
    assert (intel["pool"], intel["vdev_ashift"]) == ("tank", 12)
    assert intel["sd"] == {"suppress_cache_flush": False,
                           "throttle_max": 256, "throttle_min": 8,
                           "disksort": False}
    assert exp["c1t0d0"]["in_use"] == [{"kind": "l2cache",
                                        "detail": "tank"}]
    assert exp["c1t0d0"]["vdev_ashift"] is None
    assert exp["c0t5000CCA0496E8D14d0"]["in_use"] == [
        {"kind": "spare", "detail": "tank"}]
    assert exp["c0t5000CCA0496E8D14d0"]["busy"] is False
    assert exp["c1t1d0"]["in_use"] == [{"kind": "pool", "detail": "rpool"}]
    sas = exp["c0t5002538C40A1B2C3d0"]
    assert (sas["physical_block_bytes"], sas["ssd"], sas["in_use"],
            sas["pool"]) == (4096, True, [], None)
