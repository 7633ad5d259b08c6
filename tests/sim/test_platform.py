# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance's platforms (tests/sim/platform.py): each
platform's /etc/release and commands in their exact formats, which
sd.conf the kernel reads (the module path), what a SmartOS reboot
restores and what its boot modules keep, Triton CN boot modules, the
boot archive on a clean and a crash reboot, boot environments, bootadm
failures, and scenario validation."""

import base64
import configparser
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import driverconf  # noqa: E402
from tests.sim import platform as plat  # noqa: E402
from tests.sim import scenario as scn  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

STAMP = "20240627T000746Z"
SD_CONF = "/kernel/drv/sd.conf"
SYSTEM_BOOT_CONF = "/system/boot/kernel/drv/sd.conf"
NEW_SCENARIOS = ["omnios", "openindiana", "smartos-pool", "smartos-usb",
                 "triton-cn", "triton-hn"]
S860_PAIR = '"ATA     Samsung SSD 860", "physical-block-size:4096"'
LOADER_LOCAL = """# sd.conf as a boot module (smartos-docs)

sd_conf_load="YES"
sd_conf_type=file
sd_conf_name="/boot/bootfs/kernel/drv/sd.conf"   # on the media
sd_conf_flags="name=/kernel/drv/sd.conf"
"""
SAMSUNG_850 = {"name": "c1t0d0", "instance": 0,
               "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@0,0",
               "ctype": "sata", "ata_model": "Samsung SSD 850 PRO 512GB",
               "rev": "4B6Q", "serial": "S250NXAG800001A",
               "blocks": 1000215216, "rotation_rate": 1}
SAMSUNG_860 = dict(SAMSUNG_850, name="c1t1d0", instance=1,
                   phys_path="/pci@0,0/pci15d9,805@1f,2/disk@1,0",
                   ata_model="Samsung SSD 860 EVO 500GB",
                   serial="S3Z1NB0K700002B", blocks=976773168)


def scenario(platform=None, **extra):
    """Two idle SATA SSDs: a Samsung 850 PRO (on SmartOS's own list)
    and a Samsung 860 EVO (on no list)."""
    s = {"name": "platform-test", "flavour": "upstream",
         "hostname": "host01", "disks": [dict(SAMSUNG_850),
                                         dict(SAMSUNG_860)]}
    if platform is not None:
        s["platform"] = platform
    s.update(extra)
    return s


def build(tmp_path, s, name="app"):
    return Appliance.build(s, str(tmp_path / name))


def phys(app):
    return {d["name"]: d["physical_block_bytes"]
            for d in app.expected_disks()}


def read(path):
    with open(path, encoding="latin-1") as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="latin-1") as f:
        f.write(text)


def with_pair(text, pair):
    """``text`` with one more sd-config-list pair: at the end of its one
    list, or in a new list."""
    if "sd-config-list" not in text:
        return text + "\nsd-config-list=\n\t%s;\n" % pair
    end = text.index(";", text.index("sd-config-list"))
    return text[:end] + ",\n\t" + pair + text[end:]


def reload(app, *names):
    """update_drv -vf sd, then hot-plug ``names``: idle units attached
    again keep their list (facts 1.4), new nodes take the loaded one."""
    out, err, rc = t.run(app, "update_drv", "-vf", "sd")
    assert rc == 0, err
    for name in names:
        app.hotplug(name)


# ---------------------------------------------------------------- release

RELEASE = {
    "smartos": "                       SmartOS %s x86_64" % STAMP,
    "triton-hn": "                       SmartOS %s x86_64" % STAMP,
    "triton-cn": "                       SmartOS %s x86_64" % STAMP,
    "omnios": "  OmniOS v11 r151046l",
    "openindiana": "             OpenIndiana Hipster 2023.10 (powered by "
                   "illumos)",
    "nexentastor": "  NexentaStor 5.3.0.1 (illumos)",
    "illumos": "  Tribblix m34",
}
VERSION = {"smartos": "joyent_" + STAMP, "triton-hn": "joyent_" + STAMP,
           "triton-cn": "joyent_" + STAMP,
           "omnios": "omnios-r151046-0d49ad5c1b",
           "openindiana": "illumos-2023.10",
           "nexentastor": "illumos-2023.10", "illumos": "illumos-2023.10",
           None: "illumos-2023.10"}


@pytest.mark.parametrize("name", sorted(RELEASE) + [None])
def test_release_uname_and_command_list(tmp_path, name):
    app = build(tmp_path, scenario(None if name is None
                                   else {"name": name}))
    release = os.path.join(app.root, "etc", "release")
    if name is None:
        assert not os.path.exists(release)
    else:
        lines = read(release).splitlines()
        assert lines[0] == RELEASE[name]
        assert len(lines) >= 2 and re.search(r"Copyright|\(C\)", lines[1])
    assert t.run(app, "uname", "-i") == ("i86pc\n", "", 0)
    assert t.run(app, "uname", "-v") == (VERSION[name] + "\n", "", 0)
    assert t.run(app, "uname", "-s") == ("SunOS\n", "", 0)
    assert t.run(app, "uname") == ("SunOS\n", "", 0)
    assert t.run(app, "uname", "-q")[2] == 1
    cp = configparser.ConfigParser()
    cp.read(app.config)
    for cmd in ("bootparams", "uname", "bootadm", "beadm"):
        assert cp["commands"][cmd] == os.path.join(app.bin, cmd)
    ramdisk = name in ("smartos", "triton-hn", "triton-cn")
    assert os.path.exists(os.path.join(app.bin, "bootparams")) == ramdisk
    assert os.path.exists(os.path.join(app.bin, "beadm")) != ramdisk
    assert os.access(os.path.join(app.bin, "bootadm"), os.X_OK)
    assert app.platform()["name"] == name


@pytest.mark.parametrize("platform,extra", [
    ({"name": "smartos"}, ["smartos=true"]),
    ({"name": "smartos", "boot": "pool"}, ["smartos=true"]),
    ({"name": "triton-hn"}, ["headnode=true"]),
    ({"name": "triton-hn", "boot": "pool"},
     ["headnode=true", "triton_bootpool=zones"]),
    ({"name": "triton-cn"}, ["rabbitmq=guest:guest:10.99.99.20:5672"]),
])
def test_bootparams(tmp_path, platform, extra):
    s = scenario(platform, pools=[{"name": "zones", "vdevs": ["c1t0d0"]}])
    app = build(tmp_path, s)
    proc = app.run("bootparams")
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode().splitlines() == [
        "boot-file=/platform/i86pc/kernel/amd64/unix",
        "console=text"] + extra


def test_no_bootparams_off_smartos(tmp_path):
    app = build(tmp_path, scenario({"name": "omnios"}))
    assert not os.path.lexists(os.path.join(app.bin, "bootparams"))
    assert t.run(app, "bootparams")[2] == 127


# ---------------------------------------------------------------- zpool

def test_zpool_bootfs(tmp_path):
    pools = [{"name": "zones", "vdevs": ["c1t0d0"]}]
    usb = build(tmp_path, scenario({"name": "smartos"}, pools=pools), "u")
    assert t.run(usb, "zpool", "list", "-Ho", "name,bootfs") == (
        "zones\t-\n", "", 0)
    pool = build(tmp_path, scenario({"name": "smartos", "boot": "pool"},
                                    pools=pools), "p")
    assert t.run(pool, "zpool", "list", "-Ho", "name,bootfs") == (
        "zones\tzones/boot\n", "", 0)
    omni = Appliance.build("omnios", str(tmp_path / "o"))
    assert t.run(omni, "zpool", "list", "-Ho", "name,bootfs") == (
        "rpool\trpool/ROOT/omnios-r151046l\ntank\t-\n", "", 0)
    omni.activate_be("omnios-r151046")
    assert t.run(omni, "zpool", "list", "-Ho", "name,bootfs")[0] == \
        "rpool\trpool/ROOT/omnios-r151046\ntank\t-\n"
    head = t.run(omni, "zpool", "list", "-o", "name,bootfs")[0]
    assert head.splitlines()[0].split() == ["NAME", "BOOTFS"]


# ---------------------------------------------------------------- module path

def test_module_path_shadowing_and_etc_driver_ignored(tmp_path):
    s = scenario({"name": "omnios", "extra_conf": {
        "/etc/driver/drv/sd.conf": {"shape": "upstream", "pairs": [
            ["ATA     Samsung SSD 850", "physical-block-size:4096"]]}}})
    app = build(tmp_path, s, "etc")
    # Oracle Solaris would merge /etc/driver/drv; illumos never reads it.
    assert app.effective_conf() == SD_CONF
    assert phys(app) == {"c1t0d0": 512, "c1t1d0": 512}
    pair_860 = ["ATA     Samsung SSD 860", "physical-block-size:4096"]
    pair_850 = ["ATA     Samsung SSD 850", "physical-block-size:4096"]
    extra = {"/platform/i86pc/kernel/drv/sd.conf": {
        "shape": "upstream", "pairs": [pair_860]}}
    s = scenario({"name": "openindiana", "extra_conf": extra},
                 sd_conf={"shape": "upstream", "pairs": [pair_850]})
    app = build(tmp_path, s, "plat")
    assert app.effective_conf() == "/platform/i86pc/kernel/drv/sd.conf"
    # One file wins wholesale: the 850 pair in /kernel is not merged.
    assert phys(app) == {"c1t0d0": 512, "c1t1d0": 4096}
    # update_drv reads the same shadowing file: /kernel edits do nothing.
    write(app.root + SD_CONF, with_pair(read(app.root + SD_CONF),
                                        '"ATA     Samsung SSD 8", '
                                        '"physical-block-size:8192"'))
    reload(app, "c1t0d0", "c1t1d0")
    assert phys(app) == {"c1t0d0": 512, "c1t1d0": 4096}
    # Without the platform copy /kernel is read; without both, /usr/kernel.
    os.unlink(app.root + "/platform/i86pc/kernel/drv/sd.conf")
    reload(app, "c1t0d0", "c1t1d0")
    # Every matching pair applies in order: the later 8192 wins.
    assert phys(app) == {"c1t0d0": 8192, "c1t1d0": 8192}
    write(app.root + "/usr/kernel/drv/sd.conf",
          with_pair("", '"ATA     Samsung SSD 850", '
                        '"physical-block-size:4096"'))
    os.unlink(app.root + SD_CONF)
    assert app.effective_conf() == "/usr/kernel/drv/sd.conf"
    reload(app, "c1t0d0", "c1t1d0")
    assert phys(app) == {"c1t0d0": 4096, "c1t1d0": 512}
    os.unlink(app.root + "/usr/kernel/drv/sd.conf")
    assert app.effective_conf() is None


def test_parse_warnings_name_the_file_read(tmp_path):
    s = scenario({"name": "illumos", "extra_conf": {
        "/platform/i86pc/kernel/drv/sd.conf": {"text": 'bad-line = "x\n'}}})
    app = build(tmp_path, s)
    assert "/platform/i86pc/kernel/drv/sd.conf" in app.messages()


# ---------------------------------------------------------------- SmartOS

def test_smartos_sd_conf_shape(tmp_path):
    pair = ["ATA     Samsung SSD 860", "physical-block-size:4096"]
    s = scenario({"name": "smartos"},
                 sd_conf={"shape": "smartos", "pairs": [pair]})
    app = build(tmp_path, s)
    text = read(app.root + SD_CONF)
    parsed = driverconf.parse(text.encode("latin-1"))
    lists = [p for p in parsed.globals if p[0] == "sd-config-list"]
    assert len(lists) == 1 and not parsed.warnings
    values = lists[0][-1]
    assert values[:2] == ["", "retries-timeout:1,retries-busy:1,"
                              "retries-reset:1,retries-victim:2"]
    assert "ATA     Samsung SSD 830" in values
    assert "DELL    PERC H710" in values
    assert values[-2:] == ["ATA     Samsung SSD 860",
                           "physical-block-size:4096"]
    assert phys(app) == {"c1t0d0": 4096, "c1t1d0": 4096}
    plain = build(tmp_path, scenario({"name": "smartos"},
                                     sd_conf="smartos"), "plain")
    with open(os.path.join(REPO, "tests", "fixtures", "realworld", "sdconf",
                           "smartos-live-2016-06-29-dd25937d-overlay-"
                           "sd.conf"), encoding="latin-1") as f:
        assert read(plain.root + SD_CONF) == f.read()


def test_smartos_reboot_restores_the_platform_image(tmp_path):
    app = Appliance.build("smartos-usb", str(tmp_path / "app"))
    image = read(app.root + SD_CONF)
    assert phys(app)["c1t2d0"] == 512
    write(app.root + SD_CONF, with_pair(image, S860_PAIR))
    reload(app, "c1t2d0")
    # The spare, hot-plugged, took the edit at once ...
    assert phys(app)["c1t2d0"] == 4096
    write(app.root + "/etc/system", "set zfs:zfs_arc_max=1\n")
    write(app.root + "/opt/custom/smf/keep.xml", "<service/>\n")
    write(app.root + "/var/sdtune/keep", "x\n")
    app.reboot()
    # ... and lost it at reboot: / came back from the platform image.
    assert read(app.root + SD_CONF) == image
    assert not os.path.exists(app.root + "/etc/system")
    assert phys(app)["c1t2d0"] == 512
    for kept in ("/opt/custom/smf/keep.xml", "/var/sdtune/keep",
                 "/mnt/usbkey/.joyliveusb", "/usbkey/config"):
        assert os.path.exists(app.root + kept), kept
    assert os.path.exists(app.root + "/etc/release")
    assert os.listdir(app.root + "/dev/dsk")
    # A crash reboot is the same on a ramdisk.
    write(app.root + SD_CONF, "")
    app.reboot(clean=False)
    assert read(app.root + SD_CONF) == image


def test_usb_boot_module_survives_and_shadows(tmp_path):
    app = Appliance.build("smartos-usb", str(tmp_path / "app"))
    key = app.root + "/mnt/usbkey"
    assert os.path.isfile(key + "/.joyliveusb")
    assert os.path.isfile(key + "/boot/loader.conf")
    assert not os.path.exists(key + "/boot/loader.conf.local")
    image = read(app.root + SD_CONF)
    module = with_pair(image, S860_PAIR)
    write(key + "/boot/bootfs/kernel/drv/sd.conf", module)
    write(key + "/boot/loader.conf.local", LOADER_LOCAL)
    assert phys(app)["c1t2d0"] == 512
    app.reboot()
    assert read(app.root + SYSTEM_BOOT_CONF) == module
    assert app.effective_conf() == SYSTEM_BOOT_CONF
    assert phys(app)["c1t2d0"] == 4096
    # /kernel edits are shadowed now, even for update_drv.
    write(app.root + SD_CONF, "")
    reload(app, "c1t2d0")
    assert phys(app)["c1t2d0"] == 4096
    # The module is loaded again at every boot, key mounted or not.
    app.unmount_usbkey()
    assert os.listdir(key) == []
    app.reboot()
    assert read(app.root + SYSTEM_BOOT_CONF) == module
    assert os.listdir(key) == []
    app.mount_usbkey()
    assert os.path.isfile(key + "/boot/loader.conf.local")
    # Removing the lines removes the module at the next boot.
    write(key + "/boot/loader.conf.local",
          LOADER_LOCAL.replace('_load="YES"', '_load="no"'))
    app.reboot()
    assert not os.path.exists(app.root + SYSTEM_BOOT_CONF)
    assert app.effective_conf() == SD_CONF
    assert phys(app)["c1t2d0"] == 512


def test_missing_boot_module_is_logged_and_skipped(tmp_path):
    app = Appliance.build("smartos-usb", str(tmp_path / "app"))
    write(app.root + "/mnt/usbkey/boot/loader.conf.local",
          LOADER_LOCAL.replace("sd_conf_load=\"YES\"", "sd_conf_load=yes"))
    app.reboot()
    assert not os.path.exists(app.root + SYSTEM_BOOT_CONF)
    assert "/boot/bootfs/kernel/drv/sd.conf" in app.messages()
    assert app.effective_conf() == SD_CONF


def test_pool_boot_symlinked_loader_conf_local(tmp_path):
    app = Appliance.build("smartos-pool", str(tmp_path / "app"))
    bootfs = app.root + "/zones/boot"
    assert os.readlink(bootfs + "/boot") == "boot-" + STAMP
    assert os.readlink(bootfs + "/platform") == "platform-" + STAMP
    assert read(bootfs + "/etc/version/boot").strip() == STAMP
    assert read(bootfs + "/platform/etc/version/platform").strip() == STAMP
    assert os.path.isfile(bootfs + "/boot-%s/loader.conf" % STAMP)
    assert os.listdir(bootfs + "/custom") == []
    assert not os.path.exists(bootfs + "/.joyliveusb")
    module = with_pair("", S860_PAIR)
    # piadm's layout: the file under the active boot-<stamp>, and
    # loader.conf.local a relative symlink into custom/.
    write(bootfs + "/boot/bootfs/kernel/drv/sd.conf", module)
    write(bootfs + "/custom/loader.conf.local", LOADER_LOCAL)
    os.symlink("../custom/loader.conf.local",
               bootfs + "/boot-%s/loader.conf.local" % STAMP)
    app.reboot()
    assert read(app.root + SYSTEM_BOOT_CONF) == module
    # Wholesale: the platform's Samsung 850 pair is gone (the Intel
    # reports 4096 itself).
    assert phys(app) == {"c1t0d0": 512, "c1t1d0": 4096, "c1t2d0": 4096}


def test_triton_hn_pool_has_joyliveusb(tmp_path):
    s = scenario({"name": "triton-hn", "boot": "pool"},
                 pools=[{"name": "zones", "vdevs": ["c1t0d0"]}])
    app = build(tmp_path, s)
    assert os.path.isfile(app.root + "/zones/boot/.joyliveusb")


def test_triton_cn_boot_modules(tmp_path):
    app = Appliance.build("triton-cn", str(tmp_path / "app"))
    assert not os.path.exists(app.root + "/mnt/usbkey/boot")
    module = with_pair("", S860_PAIR.replace("860", "850").replace(
        "4096", "8192"))
    app.set_boot_modules([{"path": "kernel/drv/sd.conf", "type": "base64",
                           "content": base64.b64encode(
                               module.encode()).decode()}])
    assert phys(app)["c1t3d0"] == 4096
    app.reboot()
    assert read(app.root + SYSTEM_BOOT_CONF) == module
    assert phys(app)["c1t3d0"] == 8192
    # The Intel raidz members lost the platform's "" retry pair too:
    # the boot module replaced sd.conf wholesale.
    app.set_boot_modules([])
    app.reboot()
    assert not os.path.exists(app.root + SYSTEM_BOOT_CONF)
    assert phys(app)["c1t3d0"] == 4096
    for bad in ([{"path": "../x", "type": "base64", "content": ""}],
                [{"path": "kernel/drv/sd.conf", "type": "file",
                  "content": ""}],
                [{"path": "kernel/drv/sd.conf", "type": "base64",
                  "content": "!!"}], ["x"]):
        with pytest.raises(ValueError):
            app.set_boot_modules(bad)
    smartos = Appliance.build("smartos-usb", str(tmp_path / "s"))
    with pytest.raises(ValueError):
        smartos.set_boot_modules([])
    omni = Appliance.build("omnios", str(tmp_path / "o"))
    with pytest.raises(ValueError):
        omni.unmount_usbkey()


def test_bootadm_refuses_on_smartos_and_is_recorded(tmp_path):
    app = Appliance.build("smartos-usb", str(tmp_path / "app"))
    assert app.platform_calls() == []
    assert t.run(app, "bootadm", "update-archive") == (
        "", "bootadm: not supported on this platform\n", 1)
    assert app.platform_calls() == [["bootadm", "update-archive"]]
    assert app.boot_environments() == []


# ---------------------------------------------------------------- archive

def test_clean_and_crash_reboot_with_a_stale_archive(tmp_path):
    app = Appliance.build("omnios", str(tmp_path / "app"))
    assert phys(app)["c1t1d0"] == 512
    edited = with_pair(read(app.root + SD_CONF),
                       '"ATA     Samsung SSD 850", '
                       '"physical-block-size:4096"')
    write(app.root + SD_CONF, edited)
    assert app.archive()[SD_CONF] != edited
    app.reboot(clean=False)
    # Power loss: the archive's old copy was booted; the file stays.
    assert phys(app)["c1t1d0"] == 512
    assert read(app.root + SD_CONF) == edited
    app.reboot()
    # init updated the archive first.
    assert app.archive()[SD_CONF] == edited
    assert phys(app)["c1t1d0"] == 4096
    # update_drv reads the root file, not the archive.
    write(app.root + SD_CONF, edited.replace("4096", "8192"))
    reload(app, "c1t1d0")
    assert phys(app)["c1t1d0"] == 8192
    assert app.archive()[SD_CONF] == edited


def test_bootadm_update_archive(tmp_path):
    app = Appliance.build("openindiana", str(tmp_path / "app"))
    assert t.run(app, "bootadm", "update-archive") == ("", "", 0)
    write(app.root + SD_CONF, with_pair(read(app.root + SD_CONF),
                                        S860_PAIR))
    assert t.run(app, "bootadm", "update-archive", "-R", app.root + "/") \
        == ("updating /platform/i86pc/amd64/boot_archive\n", "", 0)
    assert app.archive()[SD_CONF] == read(app.root + SD_CONF)
    assert t.run(app, "bootadm", "update-archive") == ("", "", 0)
    out, err, rc = t.run(app, "bootadm", "update-archive", "-R", "/")
    assert rc == 1 and out == "" and err.startswith("bootadm: ")
    assert t.run(app, "bootadm")[2] == 1
    app.set_root(False)
    assert t.run(app, "bootadm", "update-archive")[2] == 1
    app.set_root(True)
    # A full root: the archive is left as it was.
    before = app.archive()
    write(app.root + SD_CONF, "")
    app.set_bootadm_fail(True)
    proc = app.run("bootadm", "update-archive")
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "bootadm: write to /platform/i86pc/amd64/boot_archive failed: "
        "No space left on device\n")
    assert app.archive() == before
    # init's update fails the same way: a clean reboot boots it stale.
    app.reboot()
    assert app.archive() == before
    assert phys(app)["c1t3d0"] == 4096
    assert "No space left on device" in app.messages()
    app.set_bootadm_fail(False)
    assert t.run(app, "bootadm", "update-archive")[0] == \
        "updating /platform/i86pc/amd64/boot_archive\n"
    assert ["bootadm", "update-archive"] in app.platform_calls()


# ---------------------------------------------------------------- BEs

BEADM_LINE = re.compile(r"^([^;]+);([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                        r"[0-9a-f]{4}-[0-9a-f]{12});(NR|N|R|);(/?);(\d+);"
                        r"static;(\d+)$")


def beadm_list(app):
    out, err, rc = t.run(app, "beadm", "list", "-H")
    assert rc == 0 and err == ""
    rows = []
    for line in out.splitlines():
        m = BEADM_LINE.match(line)
        assert m, line
        rows.append((m.group(1), m.group(3), m.group(4)))
    return rows


def test_beadm_formats(tmp_path):
    app = Appliance.build("omnios", str(tmp_path / "app"))
    assert beadm_list(app) == [("omnios-r151046", "", ""),
                               ("omnios-r151046l", "NR", "/")]
    assert t.run(app, "beadm", "activate", "nope") == (
        "", "nope does not exist or appear to be a valid BE.\nPlease check "
        "that the name of the BE provided is correct.\n", 1)
    assert t.run(app, "beadm", "activate", "omnios-r151046") == (
        "Activated successfully\n", "", 0)
    assert beadm_list(app) == [("omnios-r151046", "R", ""),
                               ("omnios-r151046l", "N", "/")]
    assert t.run(app, "beadm", "create", "pre-sdtune") == (
        "Created successfully\n", "", 0)
    assert beadm_list(app)[-1] == ("pre-sdtune", "", "")
    assert t.run(app, "beadm", "create", "pre-sdtune")[2] == 1
    assert t.run(app, "beadm", "list", "-H", "pre-sdtune")[0].startswith(
        "pre-sdtune;")
    human = t.run(app, "beadm", "list")[0].splitlines()
    assert human[0].split() == ["BE", "Active", "Mountpoint", "Space",
                                "Policy", "Created"]
    with pytest.raises(KeyError):
        app.activate_be("nope")
    default = build(tmp_path, scenario(), "default")
    assert [(b["name"], b["active"]) for b in default.boot_environments()] \
        == [("default", "NR")]
    illumos = build(tmp_path, scenario({"name": "illumos"}), "illumos")
    assert beadm_list(illumos) == [("illumos", "NR", "/")]


def test_be_switch_brings_the_other_sd_conf_back(tmp_path):
    app = Appliance.build("omnios", str(tmp_path / "app"))
    shipped = read(app.root + SD_CONF)
    edited = with_pair(shipped, S860_PAIR)
    write(app.root + SD_CONF, edited)
    app.reboot()
    assert phys(app)["c1t3d0"] == 4096
    # A clone of the running BE carries the edit.
    app.create_be("tuned")
    app.activate_be("omnios-r151046")
    app.reboot()
    assert read(app.root + SD_CONF) == shipped
    assert phys(app)["c1t3d0"] == 512
    assert beadm_list(app)[0] == ("omnios-r151046", "NR", "/")
    app.activate_be("tuned")
    app.reboot(clean=False)
    assert read(app.root + SD_CONF) == edited
    assert phys(app)["c1t3d0"] == 4096
    app.activate_be("omnios-r151046l")
    app.reboot()
    assert read(app.root + SD_CONF) == edited
    assert [b["active"] for b in app.boot_environments()] == ["", "NR", ""]


# ---------------------------------------------------------------- scenarios

@pytest.mark.parametrize("platform,field", [
    ({"name": "solaris"}, "platform.name"),
    ({"name": "omnios", "boot": "usb"}, "platform.boot"),
    ({"name": "smartos", "boot": "net"}, "platform.boot"),
    ({"name": "smartos", "boot": "pool"}, "platform.boot"),
    ({"name": "smartos", "stamp": "yesterday"}, "platform.stamp"),
    ({"name": "omnios", "stamp": STAMP}, "platform.stamp"),
    ({"name": "smartos", "boot_environments": []},
     "platform.boot_environments"),
    ({"name": "omnios", "boot_environments": [{"name": "a", "active": "N"}]},
     "platform.boot_environments"),
    ({"name": "omnios", "boot_environments": [
        {"name": "a", "active": "NR"}, {"name": "a", "active": ""}]},
     "platform.boot_environments"),
    ({"name": "omnios", "boot_environments": [{"name": "a",
                                               "active": "X"}]},
     "platform.boot_environments"),
    ({"name": "omnios", "extra_conf": {"/kernel/drv/sd.conf": "upstream"}},
     "platform.extra_conf"),
    ({"name": "omnios", "extra_conf": {
        "/usr/kernel/drv/sd.conf": "solaris"}},
     "platform.extra_conf[/usr/kernel/drv/sd.conf]"),
    ({"name": "omnios", "colour": "red"}, "platform"),
    ("omnios", "platform"),
])
def test_platform_validation(platform, field):
    with pytest.raises(scn.ScenarioError) as e:
        scn.load(scenario(platform))
    assert str(e.value).startswith(field), str(e.value)


def test_sd_conf_shape_validation():
    with pytest.raises(scn.ScenarioError) as e:
        scn.load(scenario(sd_conf="solaris"))
    assert str(e.value).startswith("sd_conf: shape must be one of")
    assert scn.load(scenario())["platform"] == plat.normalize(None, {})


@pytest.mark.parametrize("name", NEW_SCENARIOS)
def test_new_scenarios(tmp_path, name):
    app = Appliance.build(name, str(tmp_path / name))
    exp = app.expected_disks()
    assert app.platform()["name"] == name.split("-usb")[0].split("-pool")[0]
    out, _, _ = t.run(app, "diskinfo", "-Hp")
    assert len(out.splitlines()) == len(exp)
    for d in exp:
        got = t.print_members(app, d["instance"], ["un_phy_blocksize"])
        assert int(got["un_phy_blocksize"], 16) == d["physical_block_bytes"]
    # Every new scenario has an idle spare and a tuned-or-not Samsung.
    assert any(not d["busy"] for d in exp)
    assert any(d["key"].startswith("ATA     Samsung SSD 85") for d in exp)


def test_cli_reboot_crash(tmp_path):
    script = os.path.join(REPO, "tests", "sim", "appliance.py")
    where = str(tmp_path / "app")

    def cli(*args):
        return subprocess.run([sys.executable, script, *args],
                              capture_output=True, text=True, check=False)

    assert cli("build", "omnios", where).returncode == 0
    app = Appliance.load(where)
    write(app.root + SD_CONF, with_pair(read(app.root + SD_CONF),
                                        S860_PAIR))
    proc = cli("reboot", where, "--crash")
    assert proc.returncode == 0, proc.stderr
    assert phys(app)["c1t3d0"] == 512
    assert cli("reboot", where).returncode == 0
    assert phys(app)["c1t3d0"] == 4096
    assert cli("reboot", where, "--bogus").returncode == 2


def test_read_only_commands_do_not_save(tmp_path):
    app = Appliance.build("omnios", str(tmp_path / "app"))
    state = os.path.join(app.dir, "state.json")
    before = os.stat(state).st_mtime_ns
    for args in (["list", "-H"], ["list"]):
        assert t.run(app, "beadm", *args)[2] == 0
    assert t.run(app, "uname", "-a")[2] == 0
    assert os.stat(state).st_mtime_ns == before
    assert app.platform_calls() == []
    assert t.run(app, "bootadm", "update-archive", "-x") == (
        "", "bootadm: invalid option or missing option argument: -x\n", 1)
    assert app.platform_calls() == [["bootadm", "update-archive", "-x"]]
