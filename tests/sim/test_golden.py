# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance against the fixtures printed in the facts
document: diskinfo in every mode, iostat -En, the mdb vid/pid pipeline,
::print and ::sd_state, zpool status, zdb -C and update_drv, byte for
byte except where the facts call the values illustrative."""

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim import facts_fixtures as fx  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

VIDPID = ("::walk sd_state | ::grep '.!=0' | ::print struct sd_lun un_sd | "
          "::print struct scsi_device sd_inq | ::print struct scsi_inquiry "
          "inq_vid inq_pid\n")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return Appliance.build(t.facts_host(),
                           str(tmp_path_factory.mktemp("facts-host")))


@pytest.mark.parametrize("args,expected", [
    ((), fx.DISKINFO), (("-H",), fx.DISKINFO_H), (("-Hp",), fx.DISKINFO_HP),
    (("-p",), fx.DISKINFO_P), (("-c",), fx.DISKINFO_C),
    (("-P",), fx.DISKINFO_BIG_P), (("-H", "-p"), fx.DISKINFO_HP),
    (("-pH",), fx.DISKINFO_HP)])
def test_diskinfo_every_mode(host, args, expected):
    out, err, rc = t.run(host, "diskinfo", *args)
    assert (out, err, rc) == (expected, "", 0)


def test_diskinfo_condensed_scripted_and_physical_parseable(host):
    out, _, _ = t.run(host, "diskinfo", "-cH")
    assert out.splitlines()[0] == ("SCSI\tc0t5000CCA0496E6F8Dd0\tHGST\t"
                                   "HUS724040ALS640\tP4GB6YEX\t3726.02 GiB\t"
                                   "??--\t[0] Slot 00")
    out, _, _ = t.run(host, "diskinfo", "-Pp")
    lines = out.splitlines()
    assert lines[1].endswith("-   -   0,0")
    assert lines[3].endswith("-   -   -1,-1")


def test_iostat_En(host):
    assert t.run(host, "iostat", "-En") == (fx.IOSTAT_EN, "", 0)


def test_iostat_E_uses_sd_names(host):
    out, _, _ = t.run(host, "iostat", "-E")
    first = out.splitlines()[0]
    assert first == ("sd0       Soft Errors: 0 Hard Errors: 0 Transport "
                     "Errors: 0 ")
    assert len(out.splitlines()) == 15


def test_vid_pid_pipeline(host):
    assert t.mdb(host, VIDPID) == (fx.VIDPID, "", 0)


def test_vid_pid_pipeline_with_revision(host):
    out, err, _ = t.mdb(host, VIDPID.replace("inq_pid", "inq_pid "
                                             "inq_revision"))
    assert not err
    lines = out.splitlines()
    assert lines[:3] == ['inq_vid = [ "HGST    " ]',
                         'inq_pid = [ "HUS724040ALS640 " ]',
                         'inq_revision = [ "A1C4" ]']
    assert lines[5] == 'inq_revision = [ "0270" ]'


def test_vid_pid_pipeline_through_the_wrapper(host):
    p = host.run("mdb", "-k", stdin=VIDPID)
    assert (p.stdout.decode(), p.returncode) == (fx.VIDPID, 0)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """sd0 + sd1 with the facts' tuned Intel (§8.2, §8.3)."""
    s = t.facts_host(disks=[t.HGST_6F8D, t.INTEL], pairs=[
        (t.INTEL_KEY, "physical-block-size:4096, cache-nonvolatile:true, "
                      "throttle-max:32")])
    return Appliance.build(s, str(tmp_path_factory.mktemp("tuned")))


def test_softstate_print(tuned):
    out, err, rc = t.mdb(tuned, "*sd_state::softstate 0t1 | ::print struct "
                         "sd_lun un_phy_blocksize un_tgt_blocksize "
                         "un_f_suppress_cache_flush un_f_disksort_disabled "
                         "un_saved_throttle un_min_throttle "
                         "un_f_is_solid_state un_f_sync_nv_supported\n")
    assert (out, err, rc) == (fx.SOFTSTATE_PRINT, "", 0)


def _mask(line):
    return re.sub(r"(0x)?fffff[0-9a-f]{11}", "ADDR", line)


def test_sd_state_matches_the_excerpt(tuned):
    out, err, rc = t.mdb(tuned, "::sd_state\n")
    assert (err, rc) == ("", 0)
    ours = [_mask(x) for x in out.split("\n")]
    wanted = [_mask(x) for x in fx.SD_STATE_EXCERPT.split("\n")
              if not x.startswith("\u22ee")]
    # Every line of the excerpt appears, in order; values the facts call
    # illustrative are masked (addresses).
    pos = 0
    for line in wanted:
        while pos < len(ours) and ours[pos] != line:
            pos += 1
        assert pos < len(ours), "missing line %r" % line
        pos += 1


def test_sd_state_structure(tuned):
    out, _, _ = t.mdb(tuned, "::sd_state\n")
    lines = out.split("\n")
    assert lines[:3] == ["walk_addr = fffffe0bc4b1e9c0",
                         "walking sd_state units via ptr: fffffe0bd0a1c000",
                         "32 entries in sd_state table"]
    assert [x for x in lines if re.match(r"^un \d+: ", x)] == \
        ["un 0: fffffe0bd8a76000", "un 1: fffffe0bd8a7a000"] + \
        ["un %d: 0" % i for i in range(2, 32)]
    assert lines[-5:] == ["--------------", "-" * 27,
                          "Processed 2 UN softstate entries", "-" * 27, ""]
    assert out.count("\n{\n") == 2 and out.count("\n}\n---\n") == 2
    assert "\t0\t\t168\t\t0\n" in out and "SEMOCLOSE" not in out
    members = [m.group(1) for m in re.finditer(r"^    (un_\w+) = ",
                                               out.split("un 1:")[0], re.M)]
    assert members[0] == "un_sd" and members[-1] == "un_fm_private"
    assert len(members) == len(set(members)) > 170


def test_sd_state_silent(tuned):
    out, _, _ = t.mdb(tuned, "::sd_state -s\n")
    assert "{" not in out and "XBUF ATTR" not in out
    assert out.count("xbuf Q head: 0") == 2
    assert out.count("UN wait Q head: 0") == 2


def test_zpool_status(tmp_path):
    disks = [t.HGST_6F8D, t.INTEL, t.SAMSUNG_AHCI, t.hgst("7A11", 3),
             t.hgst("7B52", 4), t.hgst("7C93", 5), t.hgst("8D14", 6)]
    pool = {"name": "tank", "scan": "scrub repaired 0 in 2h41m with 0 "
                                    "errors on Sun Nov 17 04:41:03 2024",
            "vdevs": [{"type": "mirror", "disks": [
                "c0t5000CCA0496E6F8Dd0", "c0t5000CCA0496E7A11d0"]},
                {"type": "mirror", "disks": [
                    "c0t5000CCA0496E7B52d0", "c0t5000CCA0496E7C93d0"]}],
            "logs": ["c0t55CD2E404C0D8D0Ed0"], "cache": ["c1t0d0"],
            "spares": ["c0t5000CCA0496E8D14d0"]}
    app = Appliance.build(t.facts_host(disks=disks, pools=[pool]),
                          str(tmp_path))
    assert t.run(app, "zpool", "status") == (fx.ZPOOL_STATUS, "", 0)
    assert t.run(app, "zpool", "status", "tank") == (fx.ZPOOL_STATUS, "", 0)
    assert t.run(app, "zpool", "list", "-H", "-o", "name") == \
        ("tank\n", "", 0)


_ILLUSTRATIVE = ("guid", "pool_guid", "metaslab_array", "asize", "DTL",
                 "create_txg", "com.delphix:vdev_zap_leaf",
                 "com.delphix:vdev_zap_top")


def _mask_numbers(text):
    keys = "|".join(map(re.escape, _ILLUSTRATIVE))
    return re.sub(r"^( *(%s): )\d+$" % keys, r"\1N", text, flags=re.M)


def test_zdb_C_tank(tmp_path):
    disks = [t.HGST_6F8D, t.INTEL, t.hgst("7A11", 3)]
    pool = {"name": "tank", "guid": 7371893247236529472, "txg": 2916407,
            "vdevs": [{"type": "mirror", "disks": [
                "c0t5000CCA0496E6F8Dd0", "c0t5000CCA0496E7A11d0"]}],
            "logs": ["c0t55CD2E404C0D8D0Ed0"]}
    app = Appliance.build(t.facts_host(disks=disks, pools=[pool]),
                          str(tmp_path))
    out, err, rc = t.run(app, "zdb", "-C", "tank")
    assert (err, rc) == ("", 0)
    assert _mask_numbers(out) == _mask_numbers(fx.ZDB_C_TANK)
    # The cache-file form: pool name at column 0, top-level vdev members
    # (with ashift) at 12.
    out, _, _ = t.run(app, "zdb", "-C")
    assert out.startswith("tank:\n    version: 5000\n")
    assert "\n            ashift: 12\n" in out
    assert "\n                type: 'disk'\n" in out


def test_update_drv_messages(tmp_path):
    app = Appliance.build(t.facts_host(pools=[{
        "name": "tank", "vdevs": ["c0t5000CCA0496E6F8Dd0"]}]), str(tmp_path))
    assert t.run(app, "update_drv", "-vf", "sd") == \
        ("", fx.UPDATE_DRV_VF_BUSY, 0)
    assert t.run(app, "update_drv", "-v", "sd") == \
        ("", fx.UPDATE_DRV_V_BUSY, 1)
    app.set_busy("c0t5000CCA0496E6F8Dd0", False)
    assert t.run(app, "update_drv", "-vf", "sd") == \
        ("", fx.UPDATE_DRV_VF_IDLE, 0)
    p = app.run("update_drv", "-vf", "sd")
    assert (p.stdout, p.stderr, p.returncode) == (
        b"", fx.UPDATE_DRV_VF_IDLE.encode(), 0)


@pytest.mark.parametrize("value,bits,signed,dec,text", [
    (0, 32, False, False, "0"), (0x1f, 32, False, False, "0x1f"),
    (-1, 16, True, False, "0xffff"), (-2, 64, True, False,
                                      "0xfffffffffffffffe"),
    (4096, 32, False, True, "0t4096"), (8, 16, True, True, "8"),
    (-1, 16, True, True, "-1")])
def test_print_integer_formatting(value, bits, signed, dec, text):
    from tests.sim import sdlun
    assert sdlun.fmt_int(value, bits, signed, dec) == text


def test_zdb_CC(host, tmp_path):
    app = Appliance.build(t.facts_host(pools=[{
        "name": "tank", "vdevs": ["c0t5000CCA0496E6F8Dd0"]}]), str(tmp_path))
    out, err, rc = t.run(app, "zdb", "-CC", "tank")
    assert out.startswith("\nCached configuration:\n        version: 5000\n")
    assert out.count("\nMOS Configuration:\n") == 1 and rc == 0
