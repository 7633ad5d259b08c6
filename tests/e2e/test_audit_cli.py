# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune audit`: every finding has a simulated appliance that raises it
and one that does not (issue 6); the JSON schema; -x; exit status;
silencing in the configuration."""

import copy
import json
import os
import subprocess
import sys
import time


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from sdtune.findings import CATALOGUE  # noqa: E402
from tests import builders  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import (add_pair, platform_appliance,  # noqa: E402
                               spare_disk)
from tests.sim.testing import (HGST_6F8D, INTEL, INTEL_KEY,  # noqa: E402
                               SAMSUNG_AHCI, facts_host, hgst)

ACME = {"name": "c1t1d0", "instance": 3,
        "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@1,0", "ctype": "sata",
        "ata_model": "ACME FASTSSD 100", "rev": "0100",
        "serial": "ACME0001", "blocks": 195312500, "rotation_rate": 1,
        "nv_sup": False}
ACME_KEY = "ATA     ACME FASTSSD 100"


def disks(*extra):
    return [HGST_6F8D, hgst("7A11", 5), INTEL, SAMSUNG_AHCI] + list(extra)


def tank(ashift=12, **more):
    pool = {"name": "tank", "vdevs": [{"type": "mirror", "ashift": ashift,
                                       "disks": ["c0t5000CCA0496E6F8Dd0",
                                                 "c0t5000CCA0496E7A11d0"]}]}
    pool.update(more)
    return pool


def build(tmp_path, pools=(tank(),), pairs=(), text=None, flavour="nexenta",
          extra_disks=(), **extra):
    scenario = facts_host(disks(*extra_disks), pairs=pairs, pools=pools,
                          flavour=flavour, text=text, **extra)
    where = tmp_path / ("app%d" % time.time_ns())
    return Appliance.build(scenario, str(where))


def record(app, key, serial, firmware, native=4096, nv_sup=False,
           conf=0.99):
    builders.store_record(app.root, builders.cert_record(
        key, serial, firmware=firmware, when=time.time(),
        time_iso="2026-11-22T00:00:00Z", native=native,
        sector_confidence=conf, recommended={}, nv_sup=nv_sup),
        "%s.json" % serial)


def audit(app, *args, config=None):
    proc = app.sdtune("audit", "-o", "json", *args, config=config)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["findings"]


def ids(findings):
    return sorted({f["id"] for f in findings})


def raised(app, finding_id):
    return [f for f in audit(app)[1] if f["id"] == finding_id]


def test_clean_appliance_exits_0_and_says_so(tmp_path):
    app = build(tmp_path)
    rc, found = audit(app)
    assert rc == 0, found
    # Only info findings (the shipped VMware pair matches no disk here).
    assert {f["severity"] for f in found} <= {"info"}
    proc = app.sdtune("audit", "-x")
    assert proc.returncode == 0 and proc.stdout == "no problems found\n"


def test_json_schema_is_stable(tmp_path):
    pool = {"name": "fast", "vdevs": [{"type": "disk", "ashift": 9,
                                       "disks": [INTEL["name"]]}]}
    app = build(tmp_path, pools=[tank(), pool], flavour="upstream")
    rc, found = audit(app)
    assert rc == 1 and found
    for f in found:
        assert list(f) == ["id", "severity", "subject", "status", "action",
                           "see"]
        assert f["id"] in CATALOGUE
        assert f["severity"] == CATALOGUE[f["id"]].severity
        assert "sdtune" in f["action"] or "zpool" in f["action"] or \
            "Reboot" in f["action"]


def test_1001_ashift_below_native(tmp_path):
    pool = {"name": "fast", "vdevs": [{"type": "disk", "ashift": 9,
                                       "disks": [INTEL["name"]]}]}
    app = build(tmp_path, pools=[tank(), pool], flavour="upstream")
    (f,) = raised(app, "SDT-1001")
    assert f["subject"] == "fast/%s" % INTEL["name"]
    assert "ashift 9" in f["status"] and "4096 B pages" in f["status"]
    assert "only replacing the vdev helps" in f["action"]
    assert "zpool add -o ashift=12 fast" in f["action"]
    pool["vdevs"][0]["ashift"] = 12
    app = build(tmp_path, pools=[tank(), pool], flavour="upstream")
    assert raised(app, "SDT-1001") == []


def test_1001_from_certification_alone(tmp_path):
    pool = {"name": "fast", "vdevs": [{"type": "disk", "ashift": 12,
                                       "disks": [ACME["name"]]}]}
    app = build(tmp_path, pools=[tank(), pool], extra_disks=[ACME])
    record(app, ACME_KEY, "ACME0001", "0100", native=16384)
    (f,) = raised(app, "SDT-1001")
    assert "16384 B pages (certified" in f["status"]
    record(app, ACME_KEY, "ACME0001", "0100", native=16384, conf=0.6)
    assert raised(app, "SDT-1001") == []        # not confident enough


def test_1002_ashift_above_need(tmp_path):
    app = build(tmp_path, pools=[tank(ashift=13)])
    (f,) = raised(app, "SDT-1002")
    assert f["subject"] == "tank/mirror-0" and "ashift 13" in f["status"]
    app = build(tmp_path, pools=[tank(ashift=12)])
    assert raised(app, "SDT-1002") == []


def test_1003_spare_that_cannot_replace(tmp_path):
    spare = copy.deepcopy(ACME)
    spare["lbppbe"] = 3                       # reports 4096-byte sectors
    app = build(tmp_path, pools=[tank(ashift=9, spares=[spare["name"]])],
                flavour="upstream", extra_disks=[spare])
    (f,) = raised(app, "SDT-1003")
    assert f["subject"] == spare["name"] and "EDOM" in f["status"]
    spare["lbppbe"] = 0
    app = build(tmp_path, pools=[tank(ashift=9, spares=[spare["name"]])],
                flavour="upstream", extra_disks=[spare])
    assert raised(app, "SDT-1003") == []


def test_2001_ssd_without_certification(tmp_path):
    pool = tank(logs=[ACME["name"]])
    app = build(tmp_path, pools=[pool], extra_disks=[ACME])
    (f,) = raised(app, "SDT-2001")
    assert f["subject"] == ACME["name"]
    record(app, ACME_KEY, "ACME0001", "0100", native=4096)
    assert raised(app, "SDT-2001") == []
    # A model the known-drives table knows needs no certification.
    app = build(tmp_path, pools=[tank(logs=[INTEL["name"]])])
    assert raised(app, "SDT-2001") == []


def test_2002_certified_with_other_firmware(tmp_path):
    app = build(tmp_path)
    record(app, INTEL_KEY, INTEL["serial"], "0250")
    (f,) = raised(app, "SDT-2002")
    assert "0270" in f["status"] and "0250" in f["status"]
    record(app, INTEL_KEY, INTEL["serial"], "0270")
    assert raised(app, "SDT-2002") == []


def test_3001_pair_matching_no_disk(tmp_path):
    app = build(tmp_path, pairs=[("ATA     NOT PRESENT X   ",
                                  "physical-block-size:4096")])
    found = raised(app, "SDT-3001")
    assert '"ATA     NOT PRESENT X   "' in [f["subject"] for f in found]
    app = build(tmp_path, pairs=[(INTEL_KEY, "physical-block-size:4096")])
    assert INTEL_KEY not in str(raised(app, "SDT-3001"))


def test_3002_pair_matching_several_models(tmp_path):
    app = build(tmp_path, pairs=[("ATA", "disksort:false")])
    (f,) = raised(app, "SDT-3002")
    assert f["subject"] == '"ATA"' and "2 different models" in f["status"]
    app = build(tmp_path, pairs=[(INTEL_KEY, "disksort:false")])
    assert raised(app, "SDT-3002") == []


def test_3003_tunable_the_kernel_ignores(tmp_path):
    app = build(tmp_path, pairs=[(INTEL_KEY, "min-throttle:2")])
    (f,) = raised(app, "SDT-3003")
    assert "did you mean 'throttle-min'" in f["status"]
    app = build(tmp_path, pairs=[(INTEL_KEY, "throttle-min:2, "
                                  "throttle-max:16")])
    assert raised(app, "SDT-3003") == []


def test_3004_second_list(tmp_path):
    text = ('sd-config-list = "%s", "disksort:false";\n'
            'sd-config-list = "%s", "throttle-max:64";\n'
            % (INTEL_KEY, INTEL_KEY))
    app = build(tmp_path, text=text)
    (f,) = raised(app, "SDT-3004")
    assert "second sd-config-list" in f["status"]
    app = build(tmp_path, text=text.splitlines(True)[0])
    assert raised(app, "SDT-3004") == []


def test_3005_syntax_error(tmp_path):
    app = build(tmp_path, text='name="sd" class="scsi" target=0 lun=0;\n'
                'oops = 1 : 2;\n')
    (f,) = raised(app, "SDT-3005")
    assert f["subject"].endswith("sd.conf:2:10")
    app = build(tmp_path, text='name="sd" class="scsi" target=0 lun=0;\n')
    assert raised(app, "SDT-3005") == []


def test_4001_pending_reboot_then_gone(tmp_path):
    app = build(tmp_path, pools=[tank(logs=[INTEL["name"]])])
    conf = os.path.join(app.root, "kernel", "drv", "sd.conf")
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    subprocess.run([os.path.join(REPO, "bin", "sdtune"), "sdconf", "set",
                    conf, INTEL_KEY, "throttle-max=32", "--write"],
                   env=env, check=True, capture_output=True)
    assert app.run("update_drv", "-vf", "sd").returncode == 0
    (f,) = raised(app, "SDT-4001")
    assert f["subject"] == INTEL["name"]
    assert "un_saved_throttle: kernel 256, sd.conf 32" in f["status"]
    app.reboot()
    assert raised(app, "SDT-4001") == []


def test_4002_sd_ignores_disksort_on_an_ssd(tmp_path):
    app = build(tmp_path, pairs=[(INTEL_KEY, "disksort:true")])
    (f,) = raised(app, "SDT-4002")
    assert "rotation rate 1" in f["status"]
    app = build(tmp_path, pairs=[(INTEL_KEY, "disksort:false")])
    assert raised(app, "SDT-4002") == []


NVME_MODEL = "INTEL SSDPE2KX020T8"
NVME_TANK = "c2t5CD2E4300C1A0100d0"
NVME_IDLE = "c3t5CD2E4300C1B0100d0"


def nvme_conf_add(app, text):
    """The operator's hand edit: `text` appended to /kernel/drv/nvme.conf
    (the ramdisk's copy on SmartOS)."""
    with open(os.path.join(app.root, "kernel", "drv", "nvme.conf"),
              "a") as f:
        f.write(text)


def test_4003_nvme_namespace_pending_reboot(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "nvme"))
    assert raised(app, "SDT-4003") == []
    nvme_conf_add(app, 'nvme-config-list = "%s", "", '
                  '"min-phys-block-size:4096";\n' % NVME_MODEL)
    assert app.run("update_drv", "-vf", "nvme").returncode == 0
    found = {f["subject"]: f for f in raised(app, "SDT-4003")}
    assert sorted(found) == [NVME_TANK, NVME_IDLE]
    assert "blkdev reports 512 B, nvme.conf gives 4096 B" in \
        found[NVME_IDLE]["status"]
    assert found[NVME_IDLE]["severity"] == "info"
    app.reboot()
    assert raised(app, "SDT-4003") == []


def test_4004_nvme_ignores_what_nvme_conf_asks(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "nvme"))
    assert raised(app, "SDT-4004") == []
    # 4000 is not a power of 2: the driver logs it and keeps 512.
    nvme_conf_add(app, 'nvme-config-list = "%s", "", '
                  '"min-phys-block-size:4000";\n' % NVME_MODEL)
    app.reboot()
    found = {f["subject"]: f for f in raised(app, "SDT-4004")}
    assert sorted(found) == [NVME_TANK, NVME_IDLE]
    assert "min-phys-block-size:4000 (not a power of 2: reset to 512)" in \
        found[NVME_TANK]["status"]
    assert "sdtune plan --driver nvme" in found[NVME_TANK]["action"]


def test_6005_smartos_nvme_conf_edit_lost_at_reboot(tmp_path):
    app = Appliance.build("nvme-4k-smartos", str(tmp_path / "nvme"))
    assert raised(app, "SDT-6005") == []
    # The old way on SmartOS: the ramdisk's copy, which the next boot
    # replaces with the platform image's.
    nvme_conf_add(app, 'nvme-config-list = "%s", "", '
                  '"min-phys-block-size:4096";\n' % NVME_MODEL)
    app.hotplug(NVME_IDLE)
    found = {f["subject"]: f for f in raised(app, "SDT-6005")}
    assert NVME_IDLE in found
    assert "lost at reboot" in found[NVME_IDLE]["status"]
    assert "sdtune apply --driver nvme" in found[NVME_IDLE]["action"]


def test_5001_cache_nonvolatile_without_evidence(tmp_path):
    app = build(tmp_path, pairs=[(ACME_KEY, "cache-nonvolatile:true")],
                extra_disks=[ACME])
    (f,) = raised(app, "SDT-5001")
    assert f["severity"] == "high" and f["subject"] == '"%s"' % ACME_KEY
    assert "corrupt the pool" in f["status"]
    assert "sdtune sdconf unset" in f["action"]
    record(app, ACME_KEY, "ACME0001", "0100", nv_sup=True)
    assert raised(app, "SDT-5001") == []
    # The known-drives table lists some RAID controllers' caches as
    # non-volatile.
    app = build(tmp_path, pairs=[("DELL    PERC H710       ",
                                  "cache-nonvolatile:true")])
    assert raised(app, "SDT-5001") == []


def test_5003_flushes_that_lie_under_a_log_device(tmp_path):
    from sdtune.records.powercuts import Claim, PowerCut
    app = build(tmp_path, pools=[tank(logs=[INTEL["name"]])])
    rec = builders.cert_record(
        INTEL_KEY, INTEL["serial"], firmware="0270", when=time.time(),
        time_iso="2026-11-22T00:00:00Z", native=4096, recommended={})
    lied = PowerCut(time.time(), "2026-11-27T23:00:00Z", "0270",
                    "0123456789abcdef", Claim(40, 40, "failed"),
                    Claim(52, 52, "failed"), 0)
    rec.power_cuts = [lied]
    builders.store_record(app.root, rec, "%s.json" % INTEL["serial"])
    (f,) = raised(app, "SDT-5003")
    assert f["severity"] == "high" and f["subject"] == INTEL["name"]
    assert "log device of pool tank" in f["status"]
    assert "40 of 40 writes a completed flush acknowledged lost" in \
        f["status"]
    # Honest flushes over a volatile cache are no danger there.
    rec.power_cuts = [PowerCut(time.time(), "2026-11-27T23:00:00Z", "0270",
                               "0123456789abcdef", Claim(40, 0, "passed"),
                               Claim(52, 12, "failed"), 0)]
    builders.store_record(app.root, rec, "%s.json" % INTEL["serial"])
    assert raised(app, "SDT-5003") == []


S45_KEY = "ATA     INTEL SSDSC2KB48"


def s45(suffix, instance, serial):
    """An Intel S4500 (…G7) or S4510 (…G8) 480 GB: the same key."""
    d = copy.deepcopy(INTEL)
    d.update(name="c0t55CD2E414D0A000%dd0" % instance, instance=instance,
             phys_path="/scsi_vhci/disk@g55cd2e414d0a000%d" % instance,
             ata_model="INTEL SSDSC2KB480%s" % suffix, serial=serial)
    d.pop("location", None)
    return d


S4500, S4510 = s45("G7", 6, "PHYG7SERIAL"), s45("G8", 7, "PHYG8SERIAL")


def test_3006_one_value_for_models_that_disagree(tmp_path):
    app = build(tmp_path, pairs=[(S45_KEY, "physical-block-size:4096")],
                extra_disks=[S4500, S4510])
    record(app, S45_KEY, "PHYG7SERIAL", "0270", native=8192)
    record(app, S45_KEY, "PHYG8SERIAL", "0270", native=4096)
    (f,) = raised(app, "SDT-3006")
    assert f["subject"] == '"%s"' % S45_KEY
    assert "physical-block-size:4096" in f["status"]
    assert "serial PHYG7SERIAL (INTEL SSDSC2KB480G7) 8192" in f["status"]
    assert "physical-block-size=8192 --write" in f["action"]
    assert "then 'sdtune apply'" in f["action"]
    record(app, S45_KEY, "PHYG7SERIAL", "0270", native=4096)
    assert raised(app, "SDT-3006") == []


def test_5002_cache_nonvolatile_over_a_volatile_cache(tmp_path):
    mx500 = copy.deepcopy(ACME)
    mx500.update(ata_model="CT500MX500SSD1", serial="MX5001")
    key = "ATA     CT500MX500SSD1  "
    app = build(tmp_path, pairs=[(key, "cache-nonvolatile:true")],
                extra_disks=[mx500])
    # NV_SUP from the drive does not outweigh the vendor's statement.
    record(app, key, "MX5001", "0100", nv_sup=True)
    (f,) = raised(app, "SDT-5002")
    assert f["severity"] == "high" and f["subject"] == '"%s"' % key
    assert "data at rest only" in f["status"]
    assert "cache-nonvolatile --write" in f["action"]
    assert raised(app, "SDT-5001") == []
    app = build(tmp_path, pairs=[(key, "throttle-max:32")],
                extra_disks=[mx500])
    assert raised(app, "SDT-5002") == []


def test_vdev_of_a_disk_outside_sd_is_checked(tmp_path):
    """An NVMe namespace (blkdev: no key) alone in an ashift-9 vdev:
    its certification, found by serial, says 4096."""
    from tests.adversarial.support import inject_record
    app = Appliance.build("nvme-mixed", str(tmp_path / "nvme"))
    nvme = "c3t0025385971B0F5A2d0"
    assert [f for f in raised(app, "SDT-1001")
            if f["subject"] == "fast/" + nvme] == []
    inject_record(app, None, {}, serial="S467NX0K612345A",
                  native_sector_bytes=4096, firmware="2B2QEXE7",
                  driver="blkdev", model="Samsung SSD 970 EVO 1TB")
    (f,) = [f for f in raised(app, "SDT-1001")
            if f["subject"] == "fast/" + nvme]
    assert "4096 B pages (certified" in f["status"]


def test_3007_nvme_conf_setting_the_driver_ignores(tmp_path):
    """nvme.conf's lint, as sd.conf's (SDT-3003)."""
    app = Appliance.build("nvme-4k", str(tmp_path / "nvme"))
    assert raised(app, "SDT-3007") == []
    nvme_conf_add(app, 'nvme-config-list = "%s", "", '
                  '"min-phys-blok-size:4096";\n' % NVME_MODEL)
    (f,) = raised(app, "SDT-3007")
    assert f["subject"].startswith("/kernel/drv/nvme.conf:")
    assert "min-phys-blok-size" in f["status"]
    assert "sdtune sdconf check /kernel/drv/nvme.conf" in f["action"]


def test_3008_nvme_conf_syntax_error(tmp_path):
    """A line of nvme.conf that does not parse, as SDT-3005."""
    app = Appliance.build("nvme-4k", str(tmp_path / "nvme"))
    assert raised(app, "SDT-3008") == []
    nvme_conf_add(app, 'nvme-bogus = "x" "y";\n')
    (f,) = raised(app, "SDT-3008")
    assert f["subject"].startswith("/kernel/drv/nvme.conf:")
    assert f["severity"] == "medium"


def test_6007_nvme_conf_copy_shadowed_on_the_module_path(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "nvme"))
    assert raised(app, "SDT-6007") == []
    drv = os.path.join(app.root, "kernel", "drv", "nvme.conf")
    first = os.path.join(app.root, "platform", "i86pc", "kernel", "drv",
                         "nvme.conf")
    os.makedirs(os.path.dirname(first), exist_ok=True)
    with open(drv, "rb") as src, open(first, "wb") as dst:
        dst.write(src.read())
    nvme_conf_add(app, 'nvme-config-list = "%s", "", '
                  '"min-phys-block-size:4096";\n' % NVME_MODEL)
    (f,) = raised(app, "SDT-6007")
    assert f["subject"] == "/kernel/drv/nvme.conf"
    assert "/platform/i86pc/kernel/drv/nvme.conf" in f["status"]
    assert "sdtune apply --driver nvme" in f["action"]


def platform_app(tmp_path, scenario, **platform):
    return platform_appliance(str(tmp_path / scenario), scenario, **platform)


def test_6001_copy_shadowed_on_the_module_path(tmp_path):
    app = platform_app(tmp_path, "omnios")
    assert raised(app, "SDT-6001") == []
    app = platform_app(tmp_path / "b", "omnios", extra_conf={
        "/platform/i86pc/kernel/drv/sd.conf": "upstream"})
    spare = spare_disk(app)
    add_pair(app, "/kernel/drv/sd.conf", spare["key"], "throttle-max:8")
    (f,) = raised(app, "SDT-6001")
    assert f["subject"] == "/kernel/drv/sd.conf"
    assert "/platform/i86pc/kernel/drv/sd.conf" in f["status"]
    assert spare["name"] in f["status"]


def test_6002_etc_driver_drv_is_ignored(tmp_path):
    app = platform_app(tmp_path, "openindiana", extra_conf={
        "/etc/driver/drv/sd.conf": "upstream"})
    (f,) = raised(app, "SDT-6002")
    assert f["subject"] == "/etc/driver/drv/sd.conf"
    assert raised(platform_app(tmp_path / "b", "openindiana"),
                  "SDT-6002") == []


def test_6003_smartos_ramdisk_edit_lost_at_reboot(tmp_path):
    app = platform_app(tmp_path, "smartos-usb")
    assert raised(app, "SDT-6003") == []
    spare = spare_disk(app)
    add_pair(app, "/kernel/drv/sd.conf", spare["key"], "throttle-max:8")
    # Which values the platform image gives is not on the system: every
    # disk an sd.conf pair matches is said to lose them.
    found = {f["subject"]: f for f in raised(app, "SDT-6003")}
    assert spare["name"] in found
    assert "lost at reboot" in found[spare["name"]]["status"]


def test_6004_another_boot_environment_boots_next(tmp_path):
    app = platform_app(tmp_path, "omnios")
    assert raised(app, "SDT-6004") == []
    other = next(b["name"] for b in app.boot_environments()
                 if "N" not in b["active"])
    app.activate_be(other)
    (f,) = raised(app, "SDT-6004")
    assert f["subject"] == other
    assert "beadm activate" in f["action"]


def test_6006_another_boot_module_delivers_sd_conf(tmp_path):
    """Adversarial report 2026-11-27 F5: an operator's own module that
    delivers /kernel/drv/sd.conf is found by audit too, not only by the
    apply it would make refuse."""
    app = platform_app(tmp_path, "smartos-usb")
    assert raised(app, "SDT-6006") == []
    loader = os.path.join(app.root, "mnt", "usbkey", "boot",
                          "loader.conf.local")
    with open(loader, "a") as f:
        f.write('mysd_load="YES"\nmysd_type="file"\n'
                'mysd_name="/boot/mine/sd.conf"\n'
                'mysd_flags="name=/kernel/drv/sd.conf"\n')
    (f,) = raised(app, "SDT-6006")
    assert f["severity"] == "medium"
    assert f["subject"] == "/mnt/usbkey/boot/loader.conf.local mysd"
    assert "deliver /kernel/drv/sd.conf" in f["status"]
    assert "'mysd_flags=\"name=/kernel/drv/sd.conf\"'" in f["status"]
    assert "refuses" in f["status"] and "sdtune sdconf set" in f["action"]


def test_silencing_by_id_and_subject(tmp_path):
    app = build(tmp_path, pairs=[(ACME_KEY, "cache-nonvolatile:true")],
                extra_disks=[ACME])
    conf = str(tmp_path / "silence.conf")
    with open(conf, "w") as f:
        f.write(open(app.config).read() +
                '\n[silence]\nSDT-5001 = "%s"\n' % ACME_KEY)
    rc, found = audit(app, config=conf)
    assert "SDT-5001" not in ids(found)
    with open(conf, "w") as f:
        f.write(open(app.config).read() +
                '\n[silence]\nSDT-5001 = "ATA     OTHER"\n')
    assert "SDT-5001" in ids(audit(app, config=conf)[1])


def test_every_finding_is_tested_here():
    source = open(__file__).read()
    for finding_id in CATALOGUE:
        assert "test_%s_" % finding_id[4:] in source, finding_id


def test_missing_or_unrunnable_command_is_a_failed_source(tmp_path):
    """Inventory.failed, which audit and verify report, also records a
    [commands] path that is missing, a directory or not executable (host
    raises HostError); libdiskmgt being unavailable is a note only."""
    from sdtune.host import RealHost
    from sdtune.inventory.disks import take_inventory
    app = build(tmp_path)
    directory = str(tmp_path / "dir")
    os.mkdir(directory)
    plain = str(tmp_path / "plain")
    with open(plain, "w") as f:
        f.write("#!/bin/sh\n")
    host = RealHost(app.root, {"mdb": "/nonexistent/mdb",
                               "iostat": directory, "diskinfo": plain,
                               "zpool": "/nonexistent/zpool"})
    inv = take_inventory(host)
    assert set(inv.failed) == {"mdb ::sd_state", "mdb inquiry",
                               "iostat -En", "diskinfo", "zpool status"}
    assert "/nonexistent/mdb" in inv.failed["mdb ::sd_state"]
    assert directory in inv.failed["iostat -En"]
    assert plain in inv.failed["diskinfo"]
    assert inv.pools_unknown().startswith("zpool status failed: ")
    assert any("libdiskmgt unavailable" in n for n in inv.notes)
