# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""nvme.conf tuned end to end (issue 18) on the simulated appliance's
nvme-4k scenarios: two namespaces of an Intel P4510 formatted with
512-byte LBAs on a 4 KiB-page drive, tank (ashift 9) on the first, the
second idle.  A certification record of the model (as `sdtune certify`
stores one for a namespace: no key, driver blkdev, the model) stands in
for the measurement, which tests/emu/test_nvme_certify.py makes for real.

* plan --driver nvme holds min-phys-block-size:4096 back while a
  namespace of the model is in an ashift-9 vdev, and names
  `nvmeadm format` as an option it never takes;
* with --allow-ashift-mismatch it writes one triplet for the model, apply
  (a saved plan needs no --driver) writes nvme.conf as a transaction,
  verify says pending reboot, after the reboot blkdev reports 4096 and
  verify says applied, audit raises the ashift finding, and rollback
  restores nvme.conf byte for byte; sd.conf is never touched;
* the operator's own value for the model is kept, a record of another
  firmware is held back, units that disagree are held back;
* on SmartOS the change lives in a boot module on the USB key and
  survives the reboot that restores the ramdisk's nvme.conf.
"""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402
from tests.sim.testing import read_system_file as read  # noqa: E402
from tests.sim.testing import sdtune_checked as run  # noqa: E402
from tests.sim.testing import sdtune_json as as_json  # noqa: E402

MODEL = "INTEL SSDPE2KX020T8"
FIRMWARE = "VDV10131"
TANK = "c2t5CD2E4300C1A0100d0"      # nvme0/1, in tank (ashift 9)
IDLE = "c3t5CD2E4300C1B0100d0"      # nvme1/1, idle
NVME_CONF = "/kernel/drv/nvme.conf"
SD_CONF = "/kernel/drv/sd.conf"
TRIPLET = '"INTEL SSDPE2KX020T8", "", "min-phys-block-size:4096"'


def certified(app, serial="PHLJ912300CD2P0BGN", native=4096,
              firmware=FIRMWARE):
    """The record `sdtune certify IDLE` stores for a 4 KiB-page unit."""
    return inject_record(app, None, {"min-phys-block-size": native},
                         serial=serial, firmware=firmware,
                         native_sector_bytes=native, driver="blkdev",
                         model=MODEL, target=IDLE, cache="volatile",
                         queue_depth={"knee": None, "throttle_max": None,
                                      "throttle_min": None,
                                      "confidence": 0.5,
                                      "reason": "reported only"})


def verify_states(app):
    return {d["name"]: (d["state"], d["details"])
            for d in as_json(app, "verify")["disks"]}


def pbs(app):
    return {d["name"]: d["physical_block_bytes"]
            for d in as_json(app, "disks")["disks"]
            if d["driver"] == "blkdev"}


@pytest.fixture
def omnios(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "omnios"))
    certified(app)
    return app


def test_ashift9_pool_holds_the_model_back_and_names_the_format_option(
        omnios):
    proc = run(omnios, "plan", "--driver", "nvme")
    assert proc.returncode == 0, proc.stderr
    assert 'held back "%s" min-phys-block-size:4096: %s is in an ashift=9 ' \
        'vdev of pool tank' % (MODEL, TANK) in proc.stdout
    assert "--allow-ashift-mismatch" in proc.stdout
    # The namespaces could be made 4096-byte themselves: said, never done.
    for name, ns in ((TANK, "nvme0/1"), (IDLE, "nvme1/1")):
        assert "option: %s (%s) supports 4096-byte LBAs (LBA format 1): " \
            "'nvmeadm format %s 1'" % (name, ns, ns) in proc.stdout
    assert "DESTROYS ALL DATA on it; it is in pool tank: take it out of " \
        "the pool first; sdtune never does this" in proc.stdout
    assert not [c for c in omnios.platform_calls() if c[0] == "nvmeadm"
                and "format" in c]
    doc = as_json(omnios, "plan", "--driver", "nvme")
    assert doc["changes"] == []
    assert [(h["key"], h["tunable"], h["value"]) for h in doc["held"]] == \
        [(MODEL, "min-phys-block-size", "4096")]
    assert len(doc["options"]) == 2 and doc["warnings"] == []
    # The sd plan has nothing for a namespace: sd.conf never reaches it.
    sd_plan = as_json(omnios, "plan")
    assert sd_plan["changes"] == []


def test_plan_apply_reboot_verify_audit_rollback(omnios):
    app = omnios
    nvme_before = read(app, NVME_CONF)
    sd_before = read(app, SD_CONF)
    assert pbs(app) == {TANK: 512, IDLE: 512}
    plan_file = os.path.join(app.dir, "plan.json")
    proc = run(app, "plan", "--driver", "nvme", "--allow-ashift-mismatch",
               "--save", plan_file)
    assert proc.returncode == 0, proc.stderr
    assert '"%s" (%s, %s):' % (MODEL, TANK, IDLE) in proc.stdout
    assert "min-phys-block-size:4096  from certification" in proc.stdout
    assert "+nvme-config-list =\n+\t" + TRIPLET + ";" in proc.stdout
    saved = json.load(open(plan_file))
    assert saved["driver"] == "nvme"
    # An explicit --driver sd does not apply an nvme.conf plan.
    proc = run(app, "apply", plan_file, "--yes", "--driver", "sd",
               "--allow-ashift-mismatch")
    assert proc.returncode == 3
    assert "the plan is for nvme.conf: apply it with --driver nvme" in \
        proc.stderr
    assert read(app, NVME_CONF) == nvme_before
    # Without --driver the saved plan says which file it changes.
    proc = run(app, "apply", plan_file, "--yes", "--allow-ashift-mismatch")
    assert proc.returncode == 0, proc.stderr
    assert "journal entry 000001: applied to nvme.conf and loaded by " \
        "update_drv" in proc.stdout
    # The simulated update_drv says this for `update_drv -vf nvme` only.
    assert "update_drv: Forcing update of nvme.conf." in proc.stdout
    assert read(app, NVME_CONF) == saved["new_text"].encode("latin-1")
    assert read(app, SD_CONF) == sd_before
    # nvme reads nvme.conf when a controller attaches: the next boot.
    states = verify_states(app)
    assert states[TANK][0] == states[IDLE][0] == "pending reboot"
    assert "blkdev reports 512 B, nvme.conf gives 4096 B" in states[IDLE][1]
    assert pbs(app) == {TANK: 512, IDLE: 512}
    app.reboot()
    assert pbs(app) == {TANK: 4096, IDLE: 4096}
    states = verify_states(app)
    assert states[TANK] == ("applied", "min-phys-block-size:4096; blkdev "
                            "reports 4096 B")
    assert states[IDLE][0] == "applied"
    # The boot archive holds the new file (OmniOS boots from it).
    assert app.archive()[NVME_CONF] == saved["new_text"]
    findings = {(f["id"], f["subject"])
                for f in as_json(app, "audit")["findings"]}
    assert ("SDT-1001", "tank/" + TANK) in findings
    assert ("SDT-1003", IDLE) in findings
    hist = as_json(app, "history")["entries"]
    assert [(e["id"], e["action"], e["result"]) for e in hist] == [
        ("000001", "apply", "applied to nvme.conf and loaded by "
         "update_drv")]
    proc = run(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read(app, NVME_CONF) == nvme_before
    assert read(app, SD_CONF) == sd_before
    app.reboot()
    assert pbs(app) == {TANK: 512, IDLE: 512}
    assert {s for s, _ in verify_states(app).values()} == {"not matched"}


def test_apply_json_names_nvme_conf_and_the_reboot(omnios):
    doc = as_json(omnios, "apply", "--driver", "nvme",
                  "--allow-ashift-mismatch")
    assert doc["dry_run"] is True and doc["changed"] is False
    assert [f["path"] for f in doc["files"]] == [NVME_CONF]
    assert doc["reboot_required"] is True
    doc = as_json(omnios, "apply", "--driver", "nvme",
                  "--allow-ashift-mismatch", "--yes")
    assert doc["changed"] is True and doc["journal_entry"] == "000001"
    assert NVME_CONF in [f["path"] for f in doc["files"]]
    assert doc["reboot_required"] is True


def test_the_operators_own_value_is_kept(omnios):
    app = omnios
    path = os.path.join(app.root, NVME_CONF.lstrip("/"))
    with open(path) as f:
        shipped = f.read()
    for value, held in (("512", True), ("8192", False)):
        with open(path, "w") as f:
            f.write(shipped + 'nvme-config-list = "%s", "", '
                    '"min-phys-block-size:%s";\n' % (MODEL, value))
        doc = as_json(app, "plan", "--driver", "nvme",
                      "--allow-ashift-mismatch")
        assert doc["changes"] == []
        if held:
            assert [h["reason"] for h in doc["held"]] == [
                "nvme.conf already sets min-phys-block-size:512 for this "
                "model; the operator's value is kept"]
        else:
            # 8192 already gives blkdev more than the native 4096.
            assert doc["held"] == []


def test_a_record_of_another_firmware_is_held_back(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "fw"))
    certified(app, firmware="VDV10170")
    doc = as_json(app, "plan", "--driver", "nvme", "--allow-ashift-mismatch")
    assert doc["changes"] == []
    assert any("measured firmware VDV10170" in h["reason"]
               for h in doc["held"])
    doc = as_json(app, "plan", "--driver", "nvme", "--allow-ashift-mismatch",
                  "--allow-firmware-mismatch")
    assert [c["set"] for c in doc["changes"]] == [
        {"min-phys-block-size": "4096"}]


def test_units_that_disagree_are_held_back(omnios):
    certified(omnios, serial="PHLJ912300AB2P0BGN", native=512)
    doc = as_json(omnios, "plan", "--driver", "nvme",
                  "--allow-ashift-mismatch")
    assert doc["changes"] == []
    assert any("disagree on the native sector" in h["reason"]
               for h in doc["held"])


def test_smartos_keeps_the_change_in_a_boot_module(tmp_path):
    app = Appliance.build("nvme-4k-smartos", str(tmp_path / "smartos"))
    certified(app)
    image = read(app, NVME_CONF)
    proc = run(app, "apply", "--driver", "nvme", "--allow-ashift-mismatch",
               "--yes")
    assert proc.returncode == 0, proc.stderr
    module = "/mnt/usbkey/boot/bootfs/kernel/drv/nvme.conf"
    assert "write %s (boot module (usb key))" % module in proc.stdout
    assert TRIPLET.encode() in read(app, module)
    loader = read(app, "/mnt/usbkey/boot/loader.conf.local").decode()
    assert 'nvme_conf_name="/boot/bootfs/kernel/drv/nvme.conf"' in loader
    assert 'nvme_conf_flags="name=/kernel/drv/nvme.conf"' in loader
    assert verify_states(app)[IDLE][0] == "pending reboot"
    # The reboot restores the ramdisk's nvme.conf from the platform
    # image; the boot module is what nvme reads.
    app.reboot()
    assert read(app, NVME_CONF) == image
    assert pbs(app) == {TANK: 4096, IDLE: 4096}
    assert verify_states(app)[IDLE][0] == "applied"
    proc = run(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read(app, module) is None
    loader = read(app, "/mnt/usbkey/boot/loader.conf.local") or b""
    assert b"nvme_conf" not in loader
    app.reboot()
    assert pbs(app) == {TANK: 512, IDLE: 512}
