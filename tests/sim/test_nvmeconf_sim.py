# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""nvme.conf in the simulated appliance (tests/sim/nvme.py): each fact
of the NVMe contract as the simulated kernel applies it -- when the file
is read, which triplets apply, min-phys-block-size and the volatile
write cache per controller, blkdev's physical block size -- what of
nvme.conf survives a reboot on each platform, and the exact output of
nvmeadm and of mdb's blkdev pipeline."""

import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import nvme  # noqa: E402
from tests.sim import scenario as scn  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

NVME_CONF = "/kernel/drv/nvme.conf"
SYSTEM_BOOT_NVME = "/system/boot/kernel/drv/nvme.conf"
MODEL = "INTEL SSDPE2KX020T8"
TANK = "c2t5CD2E4300C1A0100d0"      # nvme0's namespace, in pool tank
IDLE = "c3t5CD2E4300C1B0100d0"      # nvme1's namespace, idle
BD_PIPE = ("*bd_state::walk softstate | ::print -d bd_t "
           "d_dip->devi_instance d_blkshift d_pblkshift\n")
LOADER_LOCAL = """nvme_conf_load="YES"
nvme_conf_type=file
nvme_conf_name="/boot/bootfs/kernel/drv/nvme.conf"
nvme_conf_flags="name=/kernel/drv/nvme.conf"
"""


@pytest.fixture
def app(tmp_path):
    return Appliance.build("nvme-4k", str(tmp_path / "app"))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="latin-1") as f:
        f.write(text)


def config_list(*triplets):
    return "nvme-config-list=%s;\n" % ",\n\t".join(
        '"%s", "%s", "%s"' % tr for tr in triplets)


def pblk(app):
    return {d["name"]: d["physical_block_bytes"]
            for d in app.expected_disks() if d["driver"] == "blkdev"}


def cache(app, ctrl="nvme0"):
    out, err, rc = t.run(app, "nvmeadm", "get-features", ctrl, "cache")
    assert rc == 0, err
    return out.splitlines()[-1].split()[-1]


def boot_with(app, text):
    write(app.root + NVME_CONF, text)
    app.reboot()


# ---------------------------------------------------------------- formats

def test_nvmeadm_list(app):
    assert t.run(app, "nvmeadm", "list") == (
        "nvme0: model: INTEL SSDPE2KX020T8, serial: PHLJ912300AB2P0BGN, "
        "FW rev: VDV10131, NVMe v1.2\n"
        "  nvme0/1 (c2t5CD2E4300C1A0100d0): Size = 1.82 TB, Capacity = "
        "1.82 TB, Used = 1.82 TB\n"
        "nvme1: model: INTEL SSDPE2KX020T8, serial: PHLJ912300CD2P0BGN, "
        "FW rev: VDV10131, NVMe v1.2\n"
        "  nvme1/1 (c3t5CD2E4300C1B0100d0): Size = 1.82 TB, Capacity = "
        "1.82 TB, Used = 0 B\n", "", 0)
    out, _, _ = t.run(app, "nvmeadm", "list", "nvme1")
    assert out.startswith("nvme1: ") and "nvme0" not in out


def test_nvmeadm_identify_controller(app):
    col = " " * 34
    assert t.run(app, "nvmeadm", "identify", "nvme0") == (
        "nvme0: Identify Controller\n"
        "  Controller Capabilities and Features\n"
        "    Model:" + col + "INTEL SSDPE2KX020T8\n"
        "    Serial:" + col[1:] + "PHLJ912300AB2P0BGN\n"
        "    Firmware Revision:" + col[12:] + "VDV10131\n"
        "    PCI vendor ID:" + col[8:] + "0x8086\n"
        "  NVM Command Set Attributes\n"
        "    Number of Namespaces:" + col[15:] + "1\n"
        "    Volatile Write Cache\n"
        "      Present:" + col[4:] + "yes\n", "", 0)


def test_nvmeadm_identify_namespace(app):
    out, err, rc = t.run(app, "nvmeadm", "identify", "nvme1/1")
    assert (err, rc) == ("", 0)
    lines = out.splitlines()
    assert lines[0] == "nvme1/1: Identify Namespace"
    for line in lines[2:]:
        if ":" in line:
            # Every value starts at column 44.
            assert line[43] == " " and line[44] != " ", line
    want = [
        "    Namespace Size:                         1907729MB",
        "    Number of LBA Formats:                  2",
        "    Formatted LBA Size",
        "      LBA Format:                           0",
        "      Extended Data LBA:                    no",
        "    LBA Format 0",
        "      Metadata Size:                        0 bytes",
        "      LBA Data Size:                        512 bytes",
        "      Relative Performance:                 Best",
        "    LBA Format 1",
        "      Metadata Size:                        0 bytes",
        "      LBA Data Size:                        4096 bytes",
        "      Relative Performance:                 Best"]
    assert [x for x in lines if x in want] == want


def test_nicenum():
    assert [nvme.nicenum(n) for n in (0, 512, 1 << 30, 1000204886016,
                                      3 << 40)] == [
        "0 ", "512 ", "1 G", "931.51 G", "3 T"]


def test_a_namespace_blkdev_has_not_attached_is_unattached(tmp_path):
    """A second namespace of a controller whose disk is not there (the
    simulator's "present": false)."""
    second = "c3t0025385971B0F5A3d0"
    s = t.facts_host(disks=[_ns(), _ns(
        name=second, instance=6, nsid=2, present=False,
        phys_path="/pci@0,0/pci8086,2030@0/pci144d,a801@0/"
                  "blkdev@w0025385971B0F5A3,0")], flavour="upstream")
    app = Appliance.build(s, str(tmp_path / "unattached"))
    out, _, rc = t.run(app, "nvmeadm", "list")
    assert rc == 0 and out.splitlines()[2] == (
        "  nvme0/2 (unattached): Size = 931.51 GB, Capacity = 931.51 GB, "
        "Used = 0 B")
    app.hotplug(second)
    out, _, _ = t.run(app, "nvmeadm", "list")
    assert out.splitlines()[2].startswith(
        "  nvme0/2 (%s): Size = 931.51 GB" % second)


def test_nvme_print_alignment():
    assert nvme.nvme_print(4, "Model", value="X") == \
        "    Model:" + " " * 34 + "X\n"
    assert nvme.nvme_print(4, "LBA Format", 12) == "    LBA Format 12\n"
    long = "A" * 50
    assert nvme.nvme_print(2, long, value="v") == "  %s: v\n" % long


def test_metadata_formats_hidden_without_v(tmp_path):
    s = t.facts_host(disks=[_ns(lba_formats=[
        {"data": 512, "ms": 8, "rp": 0}, {"data": 512, "ms": 0, "rp": 2},
        {"data": 4096, "ms": 0, "rp": 1}])], flavour="upstream")
    app = Appliance.build(s, str(tmp_path / "a"))
    out, _, _ = t.run(app, "nvmeadm", "identify", "nvme0/1")
    assert "Number of LBA Formats:                  3" in out
    assert "LBA Format 0\n" not in out and "LBA Format 2\n" in out
    assert "LBA Format:                           1" in out
    out, _, _ = t.run(app, "nvmeadm", "-v", "identify", "nvme0/1")
    assert "    LBA Format 0\n      Metadata Size:" \
        "                        8 bytes\n" in out
    # The 4096 format performs better (rp 1 < 2) and has no metadata.
    assert pblk(app) == {"c3t0025385971B0F5A2d0": 4096}


def test_nvmeadm_get_features_and_errors(app, tmp_path):
    assert t.run(app, "nvmeadm", "get-features", "nvme0", "cache") == (
        "nvme0: Get Features\n  Volatile Write Cache\n"
        "    Volatile Write Cache:                   enabled\n", "", 0)
    assert t.run(app, "nvmeadm", "identify", "nvme9") == (
        "", "nvmeadm: nvme9: no such controller\n", 1)
    assert t.run(app, "nvmeadm", "identify", "nvme0/2") == (
        "", "nvmeadm: nvme0/2: no such namespace\n", 1)
    assert t.run(app, "nvmeadm", "get-features", "nvme7", "cache")[2] == 1
    s = t.facts_host(disks=[_ns(vwc_present=False)], flavour="upstream")
    nocache = Appliance.build(s, str(tmp_path / "nocache"))
    out, err, rc = t.run(nocache, "nvmeadm", "get-features", "nvme0",
                         "cache")
    # nvmeadm before 2024: the header alone, the complaint, exit 0.
    assert (out, err, rc) == (
        "nvme0: Get Features\n",
        "nvmeadm: unsupported feature: Volatile Write Cache\n", 0)
    out, _, _ = t.run(nocache, "nvmeadm", "identify", "nvme0")
    assert out.endswith("      Present:" + " " * 30 + "no\n")
    # Through the DIR/bin wrapper too, as sdtune runs it.
    proc = app.run("nvmeadm", "list")
    assert proc.returncode == 0 and proc.stdout.startswith(b"nvme0: ")


def test_mdb_blkdev_pipeline(app, tmp_path):
    assert t.mdb(app, BD_PIPE) == (
        "d_dip->devi_instance = 0\nd_blkshift = 9\nd_pblkshift = 9\n"
        "d_dip->devi_instance = 1\nd_blkshift = 9\nd_pblkshift = 9\n",
        "", 0)
    mixed = Appliance.build("nvme-mixed", str(tmp_path / "mixed"))
    # The WD is formatted with 4096-byte blocks; virtio's physical block
    # is its logical one.  mdb prints decimals above 9 with 0t.
    assert t.mdb(mixed, BD_PIPE)[0] == (
        "d_dip->devi_instance = 0\nd_blkshift = 9\nd_pblkshift = 9\n"
        "d_dip->devi_instance = 1\nd_blkshift = 0t12\nd_pblkshift = 0t12\n"
        "d_dip->devi_instance = 2\nd_blkshift = 9\nd_pblkshift = 9\n")
    out, _, _ = t.mdb(mixed, "*bd_state::walk softstate | ::print bd_t "
                      "d_blkshift\n")
    assert out.splitlines() == ["d_blkshift = 0x9", "d_blkshift = 0xc",
                                "d_blkshift = 0x9"]
    out, err, _ = t.mdb(app, "*bd_state::walk softstate | ::print bd_t "
                        "d_nope\n")
    assert out == "" and "no such member" in err
    # sd's soft state is unchanged: the SATA disk only.
    out, _, _ = t.mdb(app, "::walk sd_state | ::grep '.!=0'\n")
    assert len(out.split()) == 1


# ---------------------------------------------------------------- facts

def test_triplet_applies_at_reboot_not_at_update_drv(app):
    assert pblk(app) == {TANK: 512, IDLE: 512}
    text = config_list((MODEL, "", "min-phys-block-size:4096"))
    write(app.root + NVME_CONF, text)
    app.set_busy(TANK, False)
    assert t.run(app, "update_drv", "-v", "nvme") == (
        "", "nvme.conf updated in the kernel.\n", 0)
    assert pblk(app) == {TANK: 512, IDLE: 512}
    assert app.state()["nvme"]["loaded"] != []
    app.reboot()
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    assert t.mdb(app, BD_PIPE)[0].count("d_pblkshift = 0t12\n") == 2
    # The pool's ashift is the one it was created with.
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp[TANK]["vdev_ashift"] == 9


def test_update_drv_nvme_busy_messages(app):
    assert t.run(app, "update_drv", "nvme") == (
        "", "Cannot unload module: nvme\nWill be unloaded upon reboot.\n", 1)
    assert t.run(app, "update_drv", "-v", "nvme") == (
        "", "Cannot unload module: nvme\nWill be unloaded upon reboot.\n"
        "nvme.conf not updated in the kernel\n", 1)
    assert t.run(app, "update_drv", "-vf", "nvme") == (
        "", "Cannot unload module: nvme\nWill be unloaded upon reboot.\n"
        "Forcing update of nvme.conf.\nnvme.conf updated in the kernel.\n",
        0)
    assert t.run(app, "update_drv", "-vf", "nvmex") == (
        "", "Driver (nvmex) not installed.\n", 1)
    app.set_root(False)
    assert t.run(app, "update_drv", "-vf", "nvme")[1:] == (
        "You must be root to run this program.\n", 1)


def test_hotplug_attaches_the_controller_with_the_loaded_list(app):
    write(app.root + NVME_CONF,
          config_list((MODEL, "", "min-phys-block-size:8192")))
    t.run(app, "update_drv", "-f", "nvme")
    app.hotplug(IDLE)
    assert pblk(app) == {TANK: 512, IDLE: 8192}


def test_every_matching_triplet_applies_the_later_wins(app):
    boot_with(app, config_list(
        (MODEL, "", "min-phys-block-size:8192"),
        ("INTEL SSDPE2KX040T8", "", "min-phys-block-size:65536"),
        (MODEL, "VDV10131", "min-phys-block-size:4096")))
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    assert app.state()["nvme"]["controllers"]["0"][
        "config_list_applied"] == [0, 2]


def test_triplet_overrides_the_global_properties(app):
    boot_with(app, "min-phys-block-size=8192;\n"
              "volatile-write-cache-enable=0;\n" +
              config_list((MODEL, "VDV10131",
                           "min-phys-block-size:512,"
                           "volatile-write-cache:on")))
    assert pblk(app) == {TANK: 512, IDLE: 512}
    assert cache(app) == "enabled"


def test_global_min_phys_block_size(app):
    boot_with(app, "min-phys-block-size=4096;\n")
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    boot_with(app, "min-phys-block-size=3000;\n")
    assert pblk(app) == {TANK: 512, IDLE: 512}
    assert "min-phys-block-size not a power of 2" in app.messages()


def test_malformed_tuple_stops_the_whole_list(app):
    boot_with(app, config_list(
        (MODEL, "", "min-phys-block-size:4096,bogus,"
                    "volatile-write-cache:off"),
        (MODEL, "", "min-phys-block-size:8192")))
    # The tuple before it stays applied; nothing after it is.
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    assert cache(app) == "enabled"
    assert "malformed entry 'bogus'" in app.messages()
    boot_with(app, config_list((MODEL, "", ":4096,volatile-write-cache:"
                                           "off")))
    assert pblk(app) == {TANK: 512, IDLE: 512}
    assert cache(app) == "enabled"


@pytest.mark.parametrize("value,size", [
    ("4096", 4096), ("0x1000", 4096), ("010000", 4096), (" 4096", 4096),
    ("4096kb", 4096), ("4095", 512), ("256", 512), ("abc", 512),
    ("", 512), ("-4096", 512)])
def test_invalid_min_phys_block_size_resets_to_512(app, value, size):
    # The global 8192 is overridden by the triplet, valid or not.
    boot_with(app, "min-phys-block-size=8192;\n" + config_list(
        (MODEL, "", "min-phys-block-size:" + value)))
    assert pblk(app) == {TANK: size, IDLE: size}


@pytest.mark.parametrize("fwrevs,applies", [
    ("", True), ("VDV10131", True), ("VDV10130,VDV10131", True),
    (",,VDV10131,", True), ("VDV10130", False), (" VDV10131", False),
    ("VDV1013", False), ("vdv10131", False), (",", False)])
def test_firmware_list(app, fwrevs, applies):
    boot_with(app, config_list((MODEL, fwrevs, "min-phys-block-size:4096")))
    assert pblk(app)[TANK] == (4096 if applies else 512)


@pytest.mark.parametrize("model", [
    "INTEL SSDPE2KX020T8 ", "intel ssdpe2kx020t8", "INTEL SSDPE2KX020",
    " INTEL SSDPE2KX020T8"])
def test_model_match_is_exact(app, model):
    boot_with(app, config_list((model, "", "min-phys-block-size:4096")))
    assert pblk(app)[TANK] == 512


def test_volatile_write_cache(app):
    boot_with(app, config_list((MODEL, "", "volatile-write-cache:off")))
    assert cache(app) == "disabled" and cache(app, "nvme1") == "disabled"
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp[TANK]["nvme"]["volatile_write_cache"] == {
        "present": True, "enabled": False}
    boot_with(app, "volatile-write-cache-enable=0;\n")
    assert cache(app) == "disabled"
    # Without a value the property is an integer 0: disabled too.
    boot_with(app, "volatile-write-cache-enable;\n")
    assert cache(app) == "disabled"
    boot_with(app, "volatile-write-cache-enable=1;\n")
    assert cache(app) == "enabled"
    boot_with(app, "volatile-write-cache-enable=0;\n" + config_list(
        (MODEL, "", "volatile-write-cache:true")))
    assert cache(app) == "enabled"
    # Not a boolean the driver knows: warning, value unchanged.
    boot_with(app, config_list((MODEL, "", "volatile-write-cache:OFF"),
                               (MODEL, "", "volatile-write-cache:0")))
    assert cache(app) == "enabled"
    assert "invalid value for 'volatile-write-cache'" in app.messages()


def test_lists_the_driver_ignores(app):
    boot_with(app, 'nvme-config-list="%s", "", "min-phys-block-size:4096",'
              ' "x";\n' % MODEL)
    assert pblk(app)[TANK] == 512
    assert "must be triplets" in app.messages()
    # The lookup is by type: an integer list is passed over, silently,
    # for a later list of strings.
    boot_with(app, "nvme-config-list=4096;\n")
    assert pblk(app)[TANK] == 512
    boot_with(app, "nvme-config-list=4096;\n" + config_list(
        (MODEL, "", "min-phys-block-size:4096")))
    assert pblk(app)[TANK] == 4096
    boot_with(app, config_list((MODEL, "", "max-queue:4,"
                                "min-phys-block-size:4096")))
    assert pblk(app)[TANK] == 4096
    assert "unknown config 'max-queue'" in app.messages()


def test_shipped_nvme_conf_changes_nothing(app):
    with open(app.root + NVME_CONF) as f:
        text = f.read()
    assert "#min-phys-block-size=512;" in text
    assert "#volatile-write-cache-enable=0;" in text
    assert app.state()["nvme"]["loaded"] == []
    assert app.state()["nvme"]["loaded_from"] == NVME_CONF


def test_best_block_size_rule():
    d = {"logical_block": 512, "lba_format": 0, "lba_formats": [
        {"data": 512, "ms": 0, "rp": 2}, {"data": 4096, "ms": 8, "rp": 0},
        {"data": 4096, "ms": 0, "rp": 1}, {"data": 0, "ms": 0, "rp": 0},
        {"data": 8192, "ms": 0, "rp": 0}]}
    # rp 1 wins; the metadata format is skipped; data 0 stops the scan.
    assert nvme.best_block_size(d, 512) == 4096
    assert nvme.best_block_size(d, 16384) == 16384
    d["lba_formats"][2]["rp"] = 3
    assert nvme.best_block_size(d, 512) == 512


# ---------------------------------------------------------------- platforms

def test_boot_archive_keeps_nvme_conf(app):
    assert app.archive()[NVME_CONF] is not None
    write(app.root + NVME_CONF, config_list(
        (MODEL, "", "min-phys-block-size:4096")))
    app.reboot(clean=False)
    # The archive's copy was booted.
    assert pblk(app)[TANK] == 512
    assert t.run(app, "bootadm", "update-archive") == (
        "updating /platform/i86pc/amd64/boot_archive\n", "", 0)
    app.reboot(clean=False)
    assert pblk(app)[TANK] == 4096
    # Another nvme.conf earlier on the module path shadows /kernel's.
    write(app.root + "/platform/i86pc/kernel/drv/nvme.conf", "")
    app.reboot()
    assert pblk(app)[TANK] == 512
    assert app.state()["nvme"]["loaded_from"] == \
        "/platform/i86pc/kernel/drv/nvme.conf"


def test_smartos_restores_nvme_conf_and_keeps_the_boot_module(tmp_path):
    app = Appliance.build("nvme-4k-smartos", str(tmp_path / "s"))
    image = open(app.root + NVME_CONF).read()
    text = config_list((MODEL, "", "min-phys-block-size:4096"))
    boot_with(app, text)
    assert open(app.root + NVME_CONF).read() == image
    assert pblk(app) == {TANK: 512, IDLE: 512}
    key = app.root + "/mnt/usbkey"
    write(key + "/boot/bootfs/kernel/drv/nvme.conf", text)
    write(key + "/boot/loader.conf.local", LOADER_LOCAL)
    app.reboot()
    assert open(app.root + SYSTEM_BOOT_NVME).read() == text
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    assert app.state()["nvme"]["loaded_from"] == SYSTEM_BOOT_NVME
    app.unmount_usbkey()
    app.reboot()
    assert pblk(app) == {TANK: 4096, IDLE: 4096}
    assert t.run(app, "bootadm", "update-archive")[2] == 1


# ---------------------------------------------------------------- scenario

def _ns(**kw):
    d = {"name": "c3t0025385971B0F5A2d0", "instance": 5, "driver": "blkdev",
         "phys_path": "/pci@0,0/pci8086,2030@0/pci144d,a801@0/"
                      "blkdev@w0025385971B0F5A2,0",
         "model": "Samsung SSD 970 EVO 1TB", "rev": "2B2QEXE7",
         "serial": "S467NX0K612345A", "blocks": 1953525168}
    d.update(kw)
    return d


def test_scenario_defaults():
    d = scn.load({"disks": [_ns()]})["disks"][0]
    assert (d["controller"], d["nsid"], d["nvme_version"], d["lba_format"],
            d["vwc_present"], d["vwc_enabled_default"]) == \
        (0, 1, "1.3", 0, True, True)
    assert d["lba_formats"] == [{"data": 512, "ms": 0, "rp": 0}]
    two = scn.load({"disks": [
        _ns(), _ns(name="c3t0025385971B0F5A3d0", instance=6, nsid=2,
                   phys_path="/pci@0,0/pci8086,2030@0/pci144d,a801@0/"
                             "blkdev@w0025385971B0F5A3,0"),
        _ns(name="c4t0d0", instance=7, controller=0, nsid=3,
            phys_path="/pci@0,0/pci8086,2030@0/pci144d,a801@0/blkdev@3,0"),
        _ns(name="c5t0d0", instance=8, serial="OTHER",
            phys_path="/pci@0,0/pci8086,2031@0/pci144d,a801@0/blkdev@1,0")
    ]})["disks"]
    assert [d["controller"] for d in two] == [0, 0, 0, 1]


@pytest.mark.parametrize("change,why", [
    ({"controller": -1}, "controller is an nvme instance number"),
    ({"nsid": 0}, "nsid is a namespace ID from 1"),
    ({"nvme_version": 1.3}, "nvme_version is like"),
    ({"lba_formats": []}, "lba_formats is a list of 1-16"),
    ({"lba_formats": [{"data": 1000}]}, "not 0 or a power of 2"),
    ({"lba_formats": [{"data": 512, "rp": 4}]}, "relative performance"),
    ({"lba_formats": [{"data": 512, "x": 1}]}, "{data, ms, rp}"),
    ({"lba_formats": [{"data": 4096}]}, "no LBA format of 512 bytes"),
    ({"lba_formats": [{"data": 512}, {"data": 4096}], "lba_format": 1},
     "lba_format must index"),
    ({"lba_formats": [{"data": 512, "ms": 8}]}, "no LBA format of 512"),
    ({"vwc_present": "yes"}, "vwc_present is true or false"),
])
def test_scenario_checks_nvme_fields(change, why):
    with pytest.raises(scn.ScenarioError) as e:
        scn.load({"disks": [_ns(**change)]})
    assert why in str(e.value)


def test_scenario_checks_controllers():
    other = "/pci@0,0/pci8086,2031@0/pci144d,a801@0/blkdev@1,0"
    for disks, why in [
            ([_ns(controller=0), _ns(name="c4t0d0", instance=6,
                                     controller=0, serial="X",
                                     phys_path=other)], "serial differs"),
            ([_ns(controller=0), _ns(name="c4t0d0", instance=6,
                                     controller=0, phys_path=other)],
             "under one node"),
            ([_ns(controller=1), _ns(
                name="c4t0d0", instance=6, phys_path=_ns()["phys_path"][
                    :-len("blkdev@w0025385971B0F5A2,0")] + "blkdev@2,0")],
             "duplicate nsid 1 on nvme1")]:
        with pytest.raises(scn.ScenarioError) as e:
            scn.load({"disks": disks})
        assert why in str(e.value)
    for bad in ({"nsid": 1}, {"lba_formats": []}):
        with pytest.raises(scn.ScenarioError):
            scn.load({"disks": [dict(t.SAMSUNG_AHCI, **bad)]})
    with pytest.raises(scn.ScenarioError):
        scn.load({"nvme_conf": "x"})


def test_expected_disks_nvme_object(app):
    exp = {d["name"]: d for d in app.expected_disks()}
    assert exp[TANK]["nvme"] == {
        "controller": "nvme0", "namespace": 1, "version": "1.2",
        "lba_formats": [
            {"index": 0, "data_bytes": 512, "metadata_bytes": 0,
             "relative_performance": "Best"},
            {"index": 1, "data_bytes": 4096, "metadata_bytes": 0,
             "relative_performance": "Best"}],
        "lba_format_in_use": 0,
        "volatile_write_cache": {"present": True, "enabled": True}}
    assert exp["c1t0d0"]["nvme"] is None
    assert (exp[TANK]["physical_block_bytes"], exp[TANK]["vdev_ashift"],
            exp[TANK]["pool"]) == (512, 9, "tank")


def test_nvme_conf_scenario_field(tmp_path):
    s = t.facts_host(disks=[_ns()], flavour="upstream",
                     nvme_conf={"text": "min-phys-block-size=16384;\n"})
    app = Appliance.build(s, str(tmp_path / "a"))
    assert pblk(app) == {"c3t0025385971B0F5A2d0": 16384}
