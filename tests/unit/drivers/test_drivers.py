# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The driver interface (drivers/): every Driver keeps the same contract,
whichever kernel driver it speaks for.  Each test runs against every
driver in DRIVERS, so that a third one is held to it the day it is
added: which disks it attaches (exactly one driver, or none, per disk),
what keys it takes, that an edit it makes is read back by its own rules
and lint, that what it proposes for its disks verifies as pending
reboot before the kernel has read it, and "not supported" as an
answer."""

import pytest

from sdtune.driverconf.parser import parse
from sdtune.drivers import DEFAULT, DRIVERS, NAMES, for_disk, for_file
from sdtune.drivers.base import NotSupported
from sdtune.drivers.planning import Evidence, Overrides
from sdtune.inventory.disks import Inventory
from sdtune.inventory.nvmeadm import LbaFormat, NvmeInfo
from tests import builders

# One setting each driver's .conf can hold for a key of its own.
SETTING = {"sd": ("physical-block-size", "4096"),
           "nvme": ("min-phys-block-size", "4096")}
NVME_MODEL = "ACME NVMe 2TB"


def sd_disk():
    return builders.disk("c1t1d0", serial="S1")


def nvme_disk(reported=512):
    # The best format is 512 B: blkdev reports 512 until nvme.conf
    # raises the minimum.
    formats = [LbaFormat(0, 512, 0, "Best"), LbaFormat(1, 4096, 0, "Good")]
    return builders.disk(
        "c2t1d0", driver="blkdev", serial="N1", model=NVME_MODEL,
        firmware="F1", physical_block_bytes=reported,
        nvme=NvmeInfo("nvme0", "1", "1.3", formats, 0, False, None))


def virtio_disk():
    return builders.disk("c3t0d0", driver="blkdev", serial="V1")


def own_disk(name):
    return {"sd": sd_disk, "nvme": nvme_disk}[name]()


def test_every_disk_has_at_most_one_driver():
    for disk, expected in ((sd_disk(), "sd"), (nvme_disk(), "nvme"),
                           (virtio_disk(), None)):
        attached = [d.name for d in DRIVERS.values() if d.attaches(disk)]
        assert attached == ([expected] if expected else [])
        found = for_disk(disk)
        assert (found.name if found else None) == expected


def test_names_default_and_files():
    assert NAMES[0] == DEFAULT.name == "sd"
    for name, driver in DRIVERS.items():
        assert driver.name == name
        assert driver.conf_name == name + ".conf"
        assert for_file("/kernel/drv/" + driver.conf_name) is driver
    assert for_file("/tmp/sd.conf.copy") is DEFAULT


@pytest.mark.parametrize("name", NAMES)
def test_a_disk_of_its_own_has_a_key_that_fits(name):
    driver = DRIVERS[name]
    key = driver.key_of(own_disk(name))
    assert key and driver.key_fits(key)
    assert not driver.key_fits("")
    assert driver.key_rule
    others = [own_disk(n) for n in NAMES if n != name] + [virtio_disk()]
    assert [driver.key_of(d) for d in others] == [None] * len(others)


@pytest.mark.parametrize("name", NAMES)
def test_set_claim_is_read_back_by_its_own_rules(name):
    driver = DRIVERS[name]
    key = driver.key_of(own_disk(name))
    tunable, value = SETTING[name]
    assert tunable in driver.tunables
    text = driver.set_claim("", key, {tunable: value}, "upstream")
    assert driver.list_property in text
    conf = parse(text)
    assert [d for d in driver.lint(conf, "upstream")
            if d.severity == "error"] == []
    report = driver.show_report(conf, "/tmp/x.conf", "upstream")
    assert key in driver.render_show(report)
    # The same edit through the sdconf verbs' path.
    edit = driver.set_edit("", "/tmp/x.conf", key,
                           ["%s=%s" % (tunable, value)], "upstream")
    assert edit.new_text == text
    gone = driver.unset_edit(text, "/tmp/x.conf", key, [], "upstream")
    assert key not in gone.new_text


@pytest.mark.parametrize("name", NAMES)
def test_split_key_takes_the_first_word(name):
    driver = DRIVERS[name]
    key = driver.key_of(own_disk(name))
    assert driver.split_key("set", "/tmp/x.conf", [key, "a=1"], None,
                            None) == (key, ["a=1"])


def test_nvme_answers_not_supported_for_inquiry_ids():
    with pytest.raises(NotSupported) as refused:
        DRIVERS["nvme"].split_key("set", "/tmp/nvme.conf", ["a=1"], "ATA",
                                  None)
    assert "nvme.conf is keyed by the controller's model" in \
        refused.value.reason


@pytest.mark.parametrize("name", NAMES)
def test_what_it_proposes_verifies_pending_until_the_kernel_reads_it(name):
    driver = DRIVERS[name]
    disk = own_disk(name)
    key = driver.key_of(disk)
    tunable, value = SETTING[name]
    record = builders.cert_record(
        disk.key, disk.serial, firmware=disk.firmware, native=4096,
        recommended={tunable: 4096},
        **({} if name == "sd" else {"driver": "blkdev",
                                    "model": NVME_MODEL}))
    proposed = driver.propose("", "upstream",
                              Evidence(Inventory([disk]), [record], []),
                              Overrides())
    assert [(c.key, c.set) for c in proposed.changes] == \
        [(key, {tunable: value})]
    conf = parse(proposed.new_text)
    # sd: the kernel's values were not read (mdb), so "unknown"; nvme:
    # blkdev still reports 512 B.
    state = driver.verify_disk(conf, disk, "upstream")
    assert state.state in ("pending reboot", "unknown")
    assert state.key == key
