# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Changes that survive the reboot, platform by platform (issue 15),
end to end against the simulated appliance: apply, reboot, verify.

* SmartOS and a Triton head node: the boot module on the USB key or the
  boot pool; without it (the operator's edit of the ramdisk copy, the
  old way) verify says "not persistent", and after the reboot "not
  matched".
* A Triton compute node: the boot module is handed to the operator for
  CNAPI, nothing is written to media it does not have.
* OmniOS and OpenIndiana: bootadm update-archive after every change (its
  failure undoes the change), the boot environment in the journal, a
  warning when another BE boots next.
* A shadowing copy on the module path: plan edits the file the kernel
  reads, verify and audit say so.
* NexentaStor 3, 4 and 5 as they really print themselves (issue 27):
  detected as NexentaStor, and changed the boot-archive way.
"""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.adversarial.support import inject_record  # noqa: E402
from tests.sim.testing import (add_pair, platform_appliance,  # noqa: E402
                               spare_disk)
from tests.sim.testing import read_system_file as read  # noqa: E402

# The idle spare of every platform scenario, and its key.
TUNED = {"throttle-max": 24}


def build(tmp_path, scenario, **platform):
    return platform_appliance(str(tmp_path / scenario), scenario, **platform)


def run(app, *args):
    return app.sdtune(*args)


def states(app):
    proc = run(app, "verify", "-o", "json")
    return {d["name"]: (d["state"], d["details"])
            for d in json.loads(proc.stdout)["disks"]}


def spare(app):
    """The idle spare's name."""
    return spare_disk(app)["name"]


def key_of(app, name):
    return {d["name"]: d for d in app.expected_disks()}[name]["key"]


def throttle(app, name):
    return {d["name"]: d for d in app.expected_disks()}[name]["sd"][
        "throttle_max"]


def tune(app):
    """Certify (a record) the spare's model and apply; the output."""
    inject_record(app, key_of(app, spare(app)), TUNED)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("name", ["smartos-usb", "triton-hn"])
def test_smartos_usb_key_boot_module_survives_the_reboot(tmp_path, name):
    app = build(tmp_path, name)
    doc = json.loads(run(app, "disks", "-o", "json").stdout)
    assert doc["platform"]["name"] == name.split("-usb")[0]
    assert doc["platform"]["boot_media"]["kind"] == "usb key"
    disk = spare(app)
    out = tune(app).stdout
    module = "/mnt/usbkey/boot/bootfs/kernel/drv/sd.conf"
    assert "write %s (boot module (usb key))" % module in out
    assert read(app, module) == read(app, "/kernel/drv/sd.conf")
    loader = read(app, "/mnt/usbkey/boot/loader.conf.local").decode()
    assert 'sd_conf_name="/boot/bootfs/kernel/drv/sd.conf"' in loader
    assert 'sd_conf_flags="name=/kernel/drv/sd.conf"' in loader
    # The platform's own pairs are in the module: it replaces them all.
    assert b"Samsung SSD 850" in read(app, module)
    # sd keeps the list a disk attached with until it attaches again.
    assert states(app)[disk][0] == "pending reboot"
    app.reboot()
    assert app.effective_conf() == "/system/boot/kernel/drv/sd.conf"
    assert states(app)[disk][0] == "applied"
    assert throttle(app, disk) == 24
    assert not [c for c in app.platform_calls() if c[0] == "bootadm"]
    # A second apply, with the module loaded (read-only), goes to the
    # media only, for the next boot; the loader block stays one.
    member = next(d["name"] for d in app.expected_disks()
                  if d["key"] == "ATA     INTEL SSDSC2KB48")
    inject_record(app, key_of(app, member), {"throttle-max": 20},
                  serial="S2")
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "takes effect at the next reboot" in proc.stdout
    assert "run update_drv" not in proc.stdout
    loader = read(app, "/mnt/usbkey/boot/loader.conf.local").decode()
    assert loader.count("# BEGIN sdtune") == 1
    assert states(app)[member][0] == "pending reboot"
    app.reboot()
    assert throttle(app, member) == 20
    assert states(app)[member][0] == "applied"
    # Rolling both back, newest first, removes the module and the
    # loader lines; the ramdisk copy of the first went with the reboot.
    for entry, said in (("2", ""), ("1", "lost at a reboot")):
        proc = run(app, "rollback", entry, "--yes")
        assert proc.returncode == 0, proc.stderr
        assert said in proc.stdout
    assert read(app, module) is None
    assert read(app, "/mnt/usbkey/boot/loader.conf.local") is None
    app.reboot()
    assert states(app)[disk][0] == "not matched"


def test_smartos_ramdisk_edit_is_not_persistent(tmp_path):
    """The old way: edit /kernel/drv/sd.conf, update_drv, and lose it."""
    app = build(tmp_path, "smartos-usb")
    disk = spare(app)
    add_pair(app, "/kernel/drv/sd.conf", key_of(app, disk), "throttle-max:24")
    assert app.run("update_drv", "-vf", "sd").returncode == 0
    app.hotplug(disk)           # attaches again, with the new list
    assert throttle(app, disk) == 24
    state, details = states(app)[disk]
    assert state == "not persistent", details
    assert "changed since boot" in details
    assert run(app, "verify").returncode == 1
    app.reboot()
    assert states(app)[disk][0] == "not matched"
    assert throttle(app, disk) != 24


def test_smartos_without_boot_media_refuses(tmp_path):
    app = build(tmp_path, "smartos-usb")
    app.unmount_usbkey()
    before = read(app, "/kernel/drv/sd.conf")
    inject_record(app, key_of(app, spare(app)), TUNED)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 3, proc.stdout
    assert "boot media" in proc.stderr and "Traceback" not in proc.stderr
    assert read(app, "/kernel/drv/sd.conf") == before


def test_smartos_pool_boot_module_in_custom(tmp_path):
    app = build(tmp_path, "smartos-pool")
    disk = spare(app)
    tune(app)
    module = read(app, "/zones/boot/custom/bootfs/kernel/drv/sd.conf")
    assert module == read(app, "/kernel/drv/sd.conf")
    custom = read(app, "/zones/boot/custom/loader.conf.local").decode()
    assert "/custom/bootfs/kernel/drv/sd.conf" in custom
    app.reboot()
    assert app.effective_conf() == "/system/boot/kernel/drv/sd.conf"
    assert states(app)[disk][0] == "applied"
    assert throttle(app, disk) == 24


def test_triton_compute_node_gets_the_boot_module_to_hand_over(tmp_path):
    app = build(tmp_path, "triton-cn")
    disk = spare(app)
    proc = tune(app)
    assert proc.returncode == 0, proc.stderr
    assert "CNAPI" in proc.stdout
    assert not os.path.exists(os.path.join(app.root, "mnt", "usbkey",
                                           "boot", "bootfs"))
    entry = json.loads(run(app, "history", "-o", "json").stdout)[
        "entries"][-1]
    handoff = entry["handoff"]
    assert [f["path"] for f in entry["files"]] == ["/kernel/drv/sd.conf"]
    assert handoff["path"] == "kernel/drv/sd.conf"
    app.hotplug(disk)
    assert throttle(app, disk) == 24
    state, details = states(app)[disk]
    assert state == "not persistent", details
    # The operator sets it in CNAPI; the node reboots with it.
    app.set_boot_modules([handoff])
    app.reboot()
    assert states(app)[disk][0] == "applied"
    assert throttle(app, disk) == 24


@pytest.mark.parametrize("name", ["omnios", "openindiana", "nexentastor",
                                  "illumos"])
def test_boot_archive_is_updated_with_every_change(tmp_path, name):
    # NexentaStor and other illumos: the OmniOS machine, renamed.
    app = build(tmp_path, name) if name in ("omnios", "openindiana") else \
        build(tmp_path, "omnios", name=name)
    doc = json.loads(run(app, "disks", "-o", "json").stdout)
    assert doc["platform"]["name"] == name
    disk = spare(app)
    out = tune(app).stdout
    assert "run bootadm" in out and "run update_drv" in out
    root_copy = read(app, "/kernel/drv/sd.conf").decode("latin-1")
    assert app.archive()["/kernel/drv/sd.conf"] == root_copy
    entry = json.loads(run(app, "history", "-o", "json").stdout)[
        "entries"][-1]
    assert entry["steps"] == ["bootadm", "update_drv"]
    assert entry["platform"]["name"] == name
    assert entry["platform"]["boot_environment"]
    # A power loss right after the change boots the new file too.
    assert states(app)[disk][0] == "pending reboot"
    app.reboot(clean=False)
    assert states(app)[disk][0] == "applied"
    assert throttle(app, disk) == 24
    proc = run(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert app.archive()["/kernel/drv/sd.conf"] == \
        read(app, "/kernel/drv/sd.conf").decode("latin-1")
    app.reboot(clean=False)
    assert states(app)[disk][0] == "not matched"


@pytest.mark.parametrize("scenario, release, version", [
    ("nexentastor-3", None, "3.1.6"),
    ("nexentastor-4", None, "4.0.3-FP2"),
    # No verbatim NexentaStor 5 /etc/release is known: none, uname decides.
    ("omnios", "nexentastor-5.3-inferred", "5.3.0.20"),
])
def test_nexentastor_is_detected_by_what_it_prints(tmp_path, scenario,
                                                   release, version):
    """NexentaStor 3 and 4 say "Open Storage Appliance" in /etc/release,
    never "NexentaStor"; uname -v names them (NexentaOS_134f,
    NexentaOS_4:<rev>, NexentaStor_5.x).  Detected, they get the boot
    archive rebuilt with every change, as every NexentaStor."""
    if release is None:
        app = platform_appliance(str(tmp_path / scenario), scenario)
    else:
        app = build(tmp_path, scenario, name="nexentastor", release=release,
                    boot_environments=[{"name": "nexentastor",
                                        "active": "NR"}])
    doc = json.loads(run(app, "disks", "-o", "json").stdout)
    assert doc["platform"]["name"] == "nexentastor"
    assert doc["platform"]["version"] == version
    assert doc["platform"]["notes"] == ([] if release is None else
                                        ["no /etc/release"])
    proc = run(app, "disks")
    assert proc.returncode == 0, proc.stderr
    assert "nexentastor" in proc.stdout
    disk = spare(app)
    out = tune(app).stdout
    assert "run bootadm" in out and "run update_drv" in out
    entry = json.loads(run(app, "history", "-o", "json").stdout)[
        "entries"][-1]
    assert entry["steps"] == ["bootadm", "update_drv"]
    assert entry["platform"]["name"] == "nexentastor"
    app.reboot(clean=False)
    assert states(app)[disk][0] == "applied"
    assert throttle(app, disk) == 24


def test_bootadm_failure_undoes_the_change(tmp_path):
    app = build(tmp_path, "omnios")
    before = read(app, "/kernel/drv/sd.conf")
    archive = app.archive()
    app.set_bootadm_fail(True)
    inject_record(app, key_of(app, spare(app)), TUNED)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 4
    assert "bootadm update-archive" in proc.stderr
    assert "sd.conf was restored" in proc.stderr
    assert read(app, "/kernel/drv/sd.conf") == before
    assert app.archive() == archive
    hist = json.loads(run(app, "history", "-o", "json").stdout)
    assert hist["entries"][-1]["state"] == "undone"
    assert throttle(app, spare(app)) != 24


def test_another_boot_environment_boots_next(tmp_path):
    app = build(tmp_path, "omnios")
    disk = spare(app)
    other = next(b["name"] for b in app.boot_environments()
                 if "N" not in b["active"])
    app.activate_be(other)
    inject_record(app, key_of(app, disk), TUNED)
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "boots next (%s)" % other in proc.stderr
    state, details = states(app)[disk]
    assert state == "not persistent" and other in details
    app.reboot()
    assert states(app)[disk][0] == "not matched"


def test_shadowing_copy_is_found_and_the_effective_file_edited(tmp_path):
    app = build(tmp_path, "omnios", extra_conf={
        "/platform/i86pc/kernel/drv/sd.conf": "upstream"})
    disk = spare(app)
    shadowed = read(app, "/kernel/drv/sd.conf")
    inject_record(app, key_of(app, disk), TUNED)
    plan = json.loads(run(app, "plan", "-o", "json").stdout)
    assert plan["sd_conf"] == "/platform/i86pc/kernel/drv/sd.conf"
    proc = run(app, "apply", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read(app, "/kernel/drv/sd.conf") == shadowed
    app.hotplug(disk)
    assert throttle(app, disk) == 24
    out = run(app, "disks").stdout
    assert "shadows /kernel/drv/sd.conf" in out
    # The operator's edit of the shadowed copy changes nothing: said.
    add_pair(app, "/kernel/drv/sd.conf", key_of(app, disk), "throttle-max:8")
    state, details = states(app)[disk]
    assert state == "shadowed", details
    assert "/kernel/drv/sd.conf" in details
    audit = json.loads(run(app, "audit", "-o", "json").stdout)
    assert any(f["subject"] == "/kernel/drv/sd.conf"
               for f in audit["findings"])


def test_entry_from_before_platforms_rolls_back_with_todays_steps(tmp_path):
    """A journal entry written before platforms (no files, no steps) is
    rolled back with the platform's steps: the boot archive too."""
    app = build(tmp_path, "omnios")
    before = read(app, "/kernel/drv/sd.conf")
    tune(app)
    journal = os.path.join(app.root, "var", "sdtune", "journal")
    path = os.path.join(journal, "000001.json")
    with open(path) as f:
        entry = json.load(f)
    for name in ("files", "steps", "bootadm", "platform", "handoff"):
        entry.pop(name)
    with open(path, "w") as f:
        json.dump(entry, f)
    calls = len(app.platform_calls())
    proc = run(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read(app, "/kernel/drv/sd.conf") == before
    assert [c[0] for c in app.platform_calls()[calls:]] == ["bootadm"]
    assert app.archive()["/kernel/drv/sd.conf"] == before.decode("latin-1")


@pytest.mark.parametrize("scenario, flavour", [
    ("omnios", "upstream"), ("smartos-usb", "upstream"),
    ("nexentastor-3", "nexenta"), ("nexentastor-4", "nexenta")])
def test_auto_flavour_is_the_platforms(tmp_path, scenario, flavour):
    """With no [sdconf] flavour (auto, the default) the sd.conf rules
    are those of the platform detected: an OmniOS box is not modelled as
    NexentaStor."""
    app = build(tmp_path, scenario)
    config = str(tmp_path / "auto.conf")
    with open(app.config) as f:
        text = f.read()
    assert "\nflavour = " in text
    with open(config, "w") as f:
        f.write("".join(line for line in text.splitlines(True)
                        if not line.startswith("flavour = ")))
    conf = str(tmp_path / "sd.conf")
    with open(conf, "w") as f:
        f.write('sd-config-list = "ATA     X", "slow-io-threshold:30";\n')
    proc = app.sdtune("sdconf", "check", "-o", "json", conf, config=config)
    codes = [d["code"] for d in json.loads(proc.stdout)["diagnostics"]]
    # NexentaStor's sd knows slow-io-threshold; illumos-gate's does not.
    assert ("nexenta-only" in codes) == (flavour == "upstream"), proc.stdout
    proc = app.sdtune("sdconf", "show", "-o", "json", conf, config=config)
    assert json.loads(proc.stdout)["flavour"] == flavour, proc.stderr
