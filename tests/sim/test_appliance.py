# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance as sdtune meets it: the wrappers in DIR/bin
under a fixed environment, the generated root and config, the
appliance CLI, arguments the real tools reject, mdb's error handling,
and the simulator's independence from the product's code."""

import ast
import configparser
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import sdlun  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

SIM = os.path.join(REPO, "tests", "sim")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return Appliance.build("small-nexenta",
                           str(tmp_path_factory.mktemp("small")))


# ---------------------------------------------------------------- arguments

@pytest.mark.parametrize("cmd,args,err_start,rc", [
    ("diskinfo", ["-x"], "Usage: /usr/sbin/diskinfo [-Hp] [{-c|-P}]\n"
     "unknown option -x\n", 1),
    ("diskinfo", ["-c", "-P"], "Usage: /usr/sbin/diskinfo [-Hp] "
     "[{-c|-P}]\n-c and -P are mutually exclusive\n", 1),
    ("diskinfo", ["-Pc"], "Usage: /usr/sbin/diskinfo [-Hp] [{-c|-P}]\n"
     "-c and -P are mutually exclusive\n", 1),
    ("mdb", ["-q"], "mdb: illegal option -- q\nUsage: mdb ", 2),
    ("iostat", ["-q"], "iostat: illegal option -- q\nUsage: iostat ", 1),
    ("zpool", ["status", "-q"], "invalid option 'q'\nusage:\n", 2),
    ("zpool", ["list", "-o"], "missing argument for 'o' option\n", 2),
    ("zpool", ["list", "-o", "name,bogus"],
     "bad property list: invalid property 'bogus'\n", 2),
    ("zdb", ["-Z"], "zdb: illegal option -- Z\nUsage:\t", 1),
    ("update_drv", ["-q", "sd"], "update_drv: illegal option -- q\n"
     "Usage:\tupdate_drv [ -f | -v ] <driver_module>\n", 1),
    ("update_drv", [], "Usage:\tupdate_drv [ -f | -v ] <driver_module>\n",
     1),
    ("update_drv", ["-vf", "nosuch"], "Driver (nosuch) not installed.\n", 1),
    ("devfsadm", ["-q"], "devfsadm: illegal option -- q\n", 1),
])
def test_rejected_arguments(small, cmd, args, err_start, rc):
    out, err, status = t.run(small, cmd, *args)
    assert out == "" and status == rc
    assert err.startswith(err_start), err


def test_zpool_errors_and_empty_answers(small):
    assert t.run(small, "zpool", "status", "nope") == (
        "", "cannot open 'nope': no such pool\n", 1)
    assert t.run(small, "zpool", "status", "-x") == (
        "all pools are healthy\n", "", 0)
    assert t.run(small, "zdb", "-C", "nope") == (
        "", "zdb: can't open 'nope': No such file or directory\n", 1)
    out, _, _ = t.run(small, "zpool", "list")
    assert out.splitlines()[0].split() == [
        "NAME", "SIZE", "ALLOC", "FREE", "EXPANDSZ", "FRAG", "CAP", "DEDUP",
        "HEALTH", "ALTROOT"]
    assert t.run(small, "zpool", "list", "-H", "-o", "name,health") == (
        "rpool\tONLINE\ntank\tONLINE\n", "", 0)
    assert t.run(small, "devfsadm", "-i", "sd") == ("", "", 0)


def test_zpool_status_slices_and_full_paths(small):
    out, _, _ = t.run(small, "zpool", "status", "rpool")
    assert "\t    c1t1d0s0  ONLINE       0     0     0\n" in out
    out, _, _ = t.run(small, "zpool", "status", "-P", "tank")
    assert "\t    /dev/dsk/c0t5000CCA0496E6F8Dd0s0  ONLINE" in out


# ---------------------------------------------------------------- mdb

def test_mdb_errors_abort_the_pipeline_and_continue(small):
    out, err, rc = t.mdb(small, "::nosuch\n*sd_state::softstate 0t20\n"
                         "*sd_state::softstate 0t99\n"
                         "*sd_state::softstate 0t1\n$q\n::sd_state\n")
    assert rc == 0
    assert err == ("mdb: invalid command '::nosuch': unknown dcmd name\n"
                   "mdb: instance 20 unused\n"
                   "mdb: couldn't determine softstate for instance 99: "
                   "Error 0\n")
    assert out == "fffffe0bd8a7a000\n"


def test_mdb_e_and_status(small):
    p = small.run("mdb", "-k", "-e", "*sd_state::softstate 0t1")
    assert (p.stdout, p.returncode) == (b"fffffe0bd8a7a000\n", 0)
    p = small.run("mdb", "-k", "-e", "*sd_state::softstate 0t20")
    assert p.returncode == 1


def test_mdb_print_forms(small):
    out, err, _ = t.mdb(small, "fffffe0bd8a7a000::print struct sd_lun "
                        "un_semoclose un_saved_throttle\n")
    assert out == ("un_semoclose = {\n    un_semoclose._opaque = "
                   "[ 0, 0x1 ]\n}\nun_saved_throttle = 0x100\n")
    out, _, _ = t.mdb(small, "*sd_state::softstate 0t1 | ::print -d struct "
                      "sd_lun un_blockcount un_min_throttle\n")
    assert out == "un_blockcount = 0t781422768\nun_min_throttle = 8\n"
    out, _, _ = t.mdb(small, "::walk sd_state | ::grep '.!=0' | ::print "
                      "struct sd_lun un_phy_blocksize\n")
    assert out.count("un_phy_blocksize = 0x1000\n") == 1
    assert len(out.splitlines()) == 10
    out, _, _ = t.mdb(small, "::walk sd_state\n")
    assert out.splitlines()[10:12] == ["0", "0"]
    out, _, _ = t.mdb(small, "fffffe0bd8a7a000::sd_state -s\n")
    assert out.startswith("\nun: fffffe0bd8a7a000\n--------------\n")


def test_mdb_non_disk_instance_is_walked(small):
    out, _, _ = t.mdb(small, "*sd_state::softstate 0t9 | ::print struct "
                      "sd_lun un_ctype un_node_type un_blockcount\n")
    assert out == ('un_ctype = 0\nun_node_type = 0xfffffffffbc45ec0 '
                   '"ddi_block:cdrom"\nun_blockcount = 0\n')


# ---------------------------------------------------------------- wrappers

def test_wrappers_need_no_environment_or_cwd(small):
    for env in ({}, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                     "LC_ALL": "C"}):
        p = subprocess.run([os.path.join(small.bin, "diskinfo"), "-Hp"],
                           capture_output=True, env=env, cwd="/",
                           check=False)
        assert p.returncode == 0 and p.stdout.count(b"\n") == 9


def test_config_points_at_the_wrappers(small):
    cp = configparser.ConfigParser(interpolation=None,
                                   inline_comment_prefixes=("#",))
    cp.read(small.config)
    for cmd in ("mdb", "diskinfo", "iostat", "zpool", "zdb", "update_drv",
                "devfsadm"):
        assert cp["commands"][cmd] == os.path.join(small.bin, cmd)
        assert os.access(cp["commands"][cmd], os.X_OK)
    assert cp["sdconf"]["flavour"] == "nexenta"
    lib = small.library()
    if lib.get("built"):
        assert cp["libraries"]["diskmgt"] == os.path.join(
            small.dir, "lib", "libdiskmgt.so")
        assert os.path.isabs(cp["libraries"]["nvpair"])
    else:
        assert not cp.has_section("libraries") and lib["note"]


def test_root_layout(small):
    root = small.root
    with open(os.path.join(root, "etc/path_to_inst")) as f:
        text = f.read()
    assert '"/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"\n' in text
    assert '"/pci@0,0/pci15d9,805@1f,2/disk@0,0" 2 "sd"\n' in text
    link = os.path.join(root, "dev/dsk/c0t5000CCA0496E6F8Dd0s0")
    assert os.readlink(link) == \
        "../../devices/scsi_vhci/disk@g5000cca0496e6f8d:a"
    assert os.path.isfile(link)
    assert os.readlink(os.path.join(root, "dev/rdsk/c1t0d0p0")) == \
        "../../devices/pci@0,0/pci15d9,805@1f,2/disk@0,0:q,raw"
    assert os.readlink(os.path.join(root, "dev/rdsk/c1t0d0s6")).endswith(
        ":g,raw")
    with open(os.path.join(root, "kernel/drv/sd.conf")) as f:
        conf = f.read()
    assert 'name="sd" class="scsi" target=15 lun=0;' in conf
    assert '"VMware  Virtual disk", "io-time:180,slow-io-threshold:0";' \
        in conf and "ddi-forceattach=1;" in conf


def test_device_file_link(tmp_path):
    backing = tmp_path / "backing.img"
    backing.write_bytes(b"\0" * 4096)
    disk = dict(t.INTEL, device_file=str(backing))
    app = Appliance.build(t.facts_host(disks=[disk]), str(tmp_path / "a"))
    raw = os.path.join(app.root, "dev/rdsk/%sp0" % t.INTEL["name"])
    assert os.path.realpath(raw) == str(backing)


def test_upstream_shape(tmp_path):
    app = Appliance.build("upstream", str(tmp_path))
    with open(os.path.join(app.root, "kernel/drv/sd.conf")) as f:
        conf = f.read()
    assert "sd-config-list" not in conf and "ddi-forceattach" not in conf
    assert "ddi-devid-registrant=1;" in conf


def test_inuse_states(tmp_path):
    app = Appliance.build("inuse-states", str(tmp_path))
    kinds = {d["name"]: [u["kind"] for u in d["in_use"]]
             for d in app.expected_disks()}
    assert kinds == {"c3t0d0": ["pool"], "c3t1d0": ["log"],
                     "c3t2d0": ["l2cache"], "c3t3d0": ["spare"],
                     "c3t4d0": ["exported_pool"], "c3t5d0": ["mount"],
                     "c3t6d0": ["vfstab"], "c3t7d0": ["swap"],
                     "c3t8d0": ["dump"], "c3t9d0": ["unknown"],
                     "c3t10d0": []}
    with open(os.path.join(app.dir, "diskmgt.tsv")) as f:
        tsv = f.read().splitlines()
    for line in ("inuse\tc3t0d0s0\tactive_pool\tpool1",
                 "inuse\tc3t1d0s0\tactive_pool\tpool1",
                 "inuse\tc3t2d0s0\tl2cache\tpool1",
                 "inuse\tc3t3d0s0\tspare\tpool1",
                 "inuse\tc3t4d0s0\texported_pool\toldpool",
                 "inuse\tc3t5d0s0\tmount\t/export/home",
                 "inuse\tc3t6d0s0\tvfstab\t/data",
                 "inuse\tc3t7d0s1\tswap\t", "inuse\tc3t8d0s1\tdump\tdump",
                 "fail\tc3t9d0\t5", "fail\tc3t9d0s0\t5",
                 "slice\tc3t10d0\tc3t10d0s6",
                 "media\tc3t2d0\t/dev/rdsk/c3t2d0s0\t937703088\t512\t"
                 "SAMSUNG\tMZILS480HEGR/007\t0\t1\tscsi\t-"):
        assert line in tsv
    assert not [x for x in tsv if x.startswith("inuse\tc3t10d0")]
    busy = {d["name"]: d["busy"] for d in app.expected_disks()}
    assert [n for n in busy if busy[n]] == ["c3t0d0", "c3t1d0", "c3t2d0",
                                            "c3t5d0", "c3t7d0", "c3t8d0"]
    with open(os.path.join(app.root, "etc/vfstab")) as f:
        assert "/dev/dsk/c3t6d0s0\t/dev/rdsk/c3t6d0s0\t/data\tufs" in f.read()


def test_sata_split_properties(tmp_path):
    app = Appliance.build("sata-behind-sas", str(tmp_path))
    out, _, _ = t.run(app, "diskinfo", "-H")
    rows = [line.split("\t")[2:4] for line in out.splitlines()]
    assert rows == [["INTEL", "SSDSC2BA400G3"],
                    ["SAMSUNG", "MZ7LM480HCHP-00003"],
                    ["ATA", "Micron_5100_MTFDDAK960TCB"],
                    ["KINGSTON", "SEDC500M960G"],
                    ["Samsung", "SSD 860 EVO 1TB"],
                    ["ATA", "ST4000NM0033-9ZM170"],
                    ["ATA", "SanDiskSDSSDA240G"]]
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp["c0t500A07511B2C3D4Ed0"]["key"] == "ATA     Micron_5100_MTFD"
    # The scenario's sd.conf was read at boot: plain, blank-compressed
    # and wildcard keys all matched; disksort:true cannot re-enable
    # disksort on a rotation-rate-1 SSD.
    assert exp["c0t55CD2E404C0D8D0Ed0"]["physical_block_bytes"] == 4096
    assert exp["c0t55CD2E404C0D8D0Ed0"]["sd"]["suppress_cache_flush"]
    assert exp["c0t5002538C40123456d0"]["physical_block_bytes"] == 4096
    assert exp["c0t500A07511B2C3D4Ed0"]["sd"]["throttle_max"] == 16
    assert exp["c0t50026B7682A1B2C3d0"]["sd"]["disksort"] is False


def test_every_shipped_scenario(tmp_path):
    names = sorted(n[:-5] for n in os.listdir(os.path.join(SIM,
                                                           "scenarios"))
                   if n.endswith(".json") and n != "jbod-240.json")
    assert names == ["4kn", "inuse-states", "nexentastor-3",
                     "nexentastor-4", "nvme-4k", "nvme-4k-smartos",
                     "nvme-mixed", "omnios", "openindiana", "rc16-fails",
                     "sata-behind-sas", "small-nexenta", "smartos-pool",
                     "smartos-usb", "triton-cn", "triton-hn", "upstream"]
    for name in names:
        app = Appliance.build(name, str(tmp_path / name))
        exp = app.expected_disks()
        out, _, _ = t.run(app, "diskinfo", "-Hp")
        assert len(out.splitlines()) == len(exp)
        units = app.state()["units"]
        for d in exp:
            if d["driver"] != "sd":
                # No sd unit: its instance is blkdev's, not sd_state's;
                # its physical block is blkdev's (mdb's d_pblkshift).
                assert d["key"] is None
                bd, _, _ = t.mdb(app, "*bd_state::walk softstate | "
                                 "::print -d bd_t d_dip->devi_instance "
                                 "d_pblkshift\n")
                assert "d_dip->devi_instance = %s\nd_pblkshift = %s\n" % (
                    sdlun.fmt_int(d["instance"], 32, True, True),
                    sdlun.fmt_int(d["physical_block_bytes"].bit_length() - 1,
                                  32, False, True)) in bd
                assert set(d["sd"].values()) == {None}
                assert d["name"] not in {u["disk"] for u in units.values()}
                continue
            got = t.print_members(app, d["instance"], [
                "un_phy_blocksize", "un_saved_throttle"])
            assert int(got["un_phy_blocksize"], 16) == \
                d["physical_block_bytes"]
            assert int(got["un_saved_throttle"], 16) == \
                d["sd"]["throttle_max"]


def test_blkdev_disks_are_no_sd_units(tmp_path):
    app = Appliance.build("nvme-mixed", str(tmp_path))
    nvme = "c3t0025385971B0F5A2d0"          # in pool fast: open by ZFS
    assert {d["name"]: d["busy"] for d in app.expected_disks()}[nvme]
    app.set_busy("c1t0d0", False)           # the one busy sd unit
    # The busy NVMe namespace does not keep sd from unloading.
    assert t.run(app, "update_drv", "-vf", "sd") == (
        "", "sd.conf updated in the kernel.\n", 0)
    app.hotplug(nvme)
    app.reboot()
    disks = {u["disk"] for u in app.state()["units"].values()}
    assert disks == {"c1t0d0", "c1t1d0"}
    exp = {d["name"]: d for d in app.expected_disks()}
    assert (exp[nvme]["driver"], exp[nvme]["firmware"], exp[nvme]["ssd"],
            exp[nvme]["key"]) == ("blkdev", "2B2QEXE7", True, None)
    assert exp["c5t0d0"]["ssd"] is False
    assert exp["c1t0d0"]["driver"] == "sd" and exp["c1t0d0"]["key"] == \
        "ATA     Samsung SSD 860 "


def test_rc16_scenario(tmp_path):
    app = Appliance.build("rc16-fails", str(tmp_path))
    phys = {d["name"]: d["physical_block_bytes"]
            for d in app.expected_disks()}
    assert phys == {"c0t55CD2E404C0D8D0Ed0": 512,
                    "c0t5000C50012345678d0": 512,
                    "c0t5002538C40A1B2C3d0": 512,
                    "c0t58CE38EE2001A3B5d0": 4096}


def test_4kn_scenario(tmp_path):
    app = Appliance.build("4kn", str(tmp_path))
    out, _, _ = t.run(app, "diskinfo", "-Hp")
    assert out.splitlines()[0].split("\t")[4] == "10000831348736"
    exp = {d["name"]: d for d in app.expected_disks()}
    d = exp["c0t5000CCA26B000001d0"]
    assert (d["logical_block_bytes"], d["physical_block_bytes"],
            d["vdev_ashift"]) == (4096, 4096, 12)


# ---------------------------------------------------------------- CLI

def test_appliance_cli(tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable,
                               os.path.join(SIM, "appliance.py")] +
                              list(args), capture_output=True, text=True,
                              cwd="/", check=False)
    d = str(tmp_path / "app")
    p = cli("build", "small-nexenta", d)
    assert p.returncode == 0 and p.stdout.startswith("built %s:" % d)
    assert cli("busy", d, "c0t55CD2E404C0D8D0Ed0", "off").returncode == 0
    assert cli("hotplug", d, "c1t0d0").returncode == 0
    assert cli("reboot", d).returncode == 0
    p = cli("expected", d)
    exp = {x["name"]: x for x in json.loads(p.stdout)}
    assert exp["c0t55CD2E404C0D8D0Ed0"]["busy"] is False
    assert cli("busy", d, "c9t9d9", "on").returncode == 1
    assert cli("bogus").returncode == 2
    assert cli("build", "small-nexenta", str(tmp_path)).returncode == 1
    assert cli("build", "small-nexenta", d).returncode == 0


def test_bad_scenarios(tmp_path):
    from tests.sim.scenario import ScenarioError
    bad = [{"disks": [{"name": "sd0", "instance": 0, "phys_path": "/x"}]},
           t.facts_host(bogus=1),
           t.facts_host(disks=[dict(t.INTEL, vid="TOOLONGVENDOR")]),
           t.facts_host(pools=[{"name": "p", "vdevs": ["c9t9d9"]}])]
    for i, s in enumerate(bad):
        with pytest.raises(ScenarioError):
            Appliance.build(s, str(tmp_path / str(i)))


def test_jbod_file_is_what_make_jbod_writes(tmp_path):
    path = os.path.join(SIM, "scenarios", "jbod-240.json")
    with open(path) as f:
        shipped = f.read()
    subprocess.run([sys.executable, os.path.join(SIM, "scenarios",
                                                 "make_jbod.py")],
                   check=True, capture_output=True)
    with open(path) as f:
        assert f.read() == shipped


# ---------------------------------------------------------------- oracle

def test_simulator_is_independent_of_the_product():
    for top, _, files in os.walk(SIM):
        for name in files:
            if not name.endswith(".py") or "libdiskmgt" in top:
                continue
            with open(os.path.join(top, name)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                mods = []
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    mods = [node.module or ""]
                for mod in mods:
                    assert not mod.startswith(("sdtune", "plugin")), \
                        (name, mod)
                    assert "kernel_ref" not in mod, (name, mod)
