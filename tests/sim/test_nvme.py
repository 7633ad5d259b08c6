# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Disks under blkdev in the simulated appliance (platforms.md §1.3):
NVMe namespaces and a virtio disk as illumos shows them to the tools
sdtune reads -- path_to_inst, the /dev links and minors, diskinfo,
iostat -E, libdiskmgt's data -- and their absence from sd's soft state
in mdb; the scenario checks of a blkdev disk."""

import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim import scenario as scn  # noqa: E402
from tests.sim import testing as t  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

SAMSUNG = "c3t0025385971B0F5A2d0"
SAMSUNG_PATH = ("/pci@0,0/pci8086,2030@0/pci144d,a801@0/"
                "blkdev@w0025385971B0F5A2,0")
WD = "c4t0014EE83021EAE80d0"
VIRTIO = "c5t0d0"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return Appliance.build("nvme-mixed", str(tmp_path_factory.mktemp("nv")))


def nvme(name="c3t0025385971B0F5A2d0", instance=0, **kw):
    d = {"name": name, "instance": instance, "driver": "blkdev",
         "phys_path": SAMSUNG_PATH, "model": "Samsung SSD 970 EVO 1TB",
         "rev": "2B2QEXE7", "serial": "S467NX0K612345A",
         "blocks": 1953525168}
    d.update(kw)
    return d


def test_path_to_inst_has_each_driver_and_its_parent(app):
    with open(os.path.join(app.root, "etc", "path_to_inst")) as f:
        lines = f.read().splitlines()
    assert '"%s" 0 "blkdev"' % SAMSUNG_PATH in lines
    assert '"/pci@0,0/pci1af4,2@5/blkdev@0,0" 2 "blkdev"' in lines
    assert '"/pci@0,0/pci15d9,805@1f,2/disk@0,0" 3 "sd"' in lines
    # An nvme node's instance is its controller's: nvme0 and nvme1.
    assert '"/pci@0,0/pci8086,2030@0/pci144d,a801@0" 0 "nvme"' in lines
    assert '"/pci@0,0/pci8086,2031@0/pci1b96,2500@0" 1 "nvme"' in lines
    assert '"/pci@0,0/pci1af4,2@5" 3 "vioblk"' in lines


def test_links_and_minors_of_an_efi_labelled_blkdev_disk(app):
    rdsk = os.path.join(app.root, "dev", "rdsk")
    dsk = os.path.join(app.root, "dev", "dsk")
    want = {"s%d" % i: chr(ord("a") + i) for i in range(7)}
    want.update({"p0": "q", "": "wd"})
    for suffix, minor in want.items():
        target = os.readlink(os.path.join(rdsk, SAMSUNG + suffix))
        assert target == "../../devices%s:%s,raw" % (SAMSUNG_PATH, minor)
        target = os.readlink(os.path.join(dsk, SAMSUNG + suffix))
        assert target == "../../devices%s:%s" % (SAMSUNG_PATH, minor)
        assert os.path.exists(os.path.join(rdsk, SAMSUNG + suffix))
    # EFI: no slice 7 ("h"); an sd disk keeps the sim's VTOC minors.
    assert not os.path.lexists(os.path.join(rdsk, SAMSUNG + "s7"))
    assert not os.path.lexists(os.path.join(rdsk, "c1t0d0"))


def test_mdb_shows_no_blkdev_unit(app):
    out, err, rc = t.mdb(app, "::walk sd_state | ::grep '.!=0'\n")
    assert rc == 0 and err == ""
    assert len(out.split()) == 2              # sd3 and sd4 only
    for inst in (0, 1, 2):
        out, err, _ = t.mdb(app, "*sd_state::softstate 0t%d\n" % inst)
        assert "sd_lun" not in out
    out, err, _ = t.mdb(app, "*sd_state::softstate 0t3 | ::print struct "
                        "sd_lun un_sd | ::print struct scsi_device sd_inq "
                        "| ::print struct scsi_inquiry inq_vid\n")
    assert 'inq_vid = [ "ATA     " ]' in out, (out, err)


def test_diskinfo_rows(app):
    out, err, rc = t.run(app, "diskinfo")
    assert rc == 0 and err == ""
    rows = out.splitlines()
    # The two NVMe rows as in the Oxide sample (before its re-indent),
    # and virtio's "-" type as in the SmartOS and OmniOS samples.
    assert ("NVME    c3t0025385971B0F5A2d0   Samsung  SSD 970 EVO 1TB  "
            " 931.51 GiB   no  yes") in rows
    assert ("NVME    c4t0014EE83021EAE80d0   NVMe     WUS4BB019D4M9E4  "
            "1788.50 GiB   no  yes") in rows
    assert ("-       c5t0d0                  Virtio   Block Device     "
            "   8.00 GiB   no  no ") in rows
    out, _, _ = t.run(app, "diskinfo", "-cHp")
    assert ("NVME\t%s\tSamsung\tSSD 970 EVO 1TB\tS467NX0K612345A\t"
            "1000204886016\t??-S\t-1,-1" % SAMSUNG) in out.splitlines()
    assert "-\tc5t0d0\tVirtio\tBlock Device\tETC0M3H0M3\t8589934592\t??--" \
        "\t-1,-1" in out.splitlines()


def test_iostat_blocks_of_blkdev_disks(app):
    out, err, rc = t.run(app, "iostat", "-En", SAMSUNG, VIRTIO)
    assert rc == 0 and err == ""
    # blkdev's string kstats: the NVMe Identify fields with their blanks,
    # Model instead of Vendor and Product; virtio unpadded.
    assert out == (
        "c3t0025385971B0F5A2d0 Soft Errors: 0 Hard Errors: 0 Transport "
        "Errors: 0 \n"
        "Model: Samsung SSD 970 EVO 1TB                  Revision: 2B2QEXE7 "
        "Serial No: S467NX0K612345A      \n"
        "Size: 1000.20GB <1000204886016 bytes>\n"
        "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n"
        "Illegal Request: 0 Predictive Failure Analysis: 0 \n"
        "c5t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: "
        "0 \n"
        "Vendor: Virtio Product: Block Device Revision: 0000 Serial No: "
        "ETC0M3H0M3 \n"
        "Size: 8.59GB <8589934592 bytes>\n"
        "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n"
        "Illegal Request: 0 Predictive Failure Analysis: 0 \n")


def test_iostat_order_and_short_names(app):
    out, _, _ = t.run(app, "iostat", "-E")
    names = [line.split()[0] for line in out.splitlines()
             if "Soft Errors:" in line]
    # iostat sorts by module name, then instance: blkdev before sd.
    assert names == ["blkdev0", "blkdev1", "blkdev2", "sd3", "sd4"]
    out, _, _ = t.run(app, "iostat", "-E", "blkdev1")
    assert out.startswith("blkdev1   Soft Errors: 0 ")
    assert "Model: WUS4BB019D4M9E4" + " " * 25 + " Revision: R1110021" \
        in out


def test_diskmgt_records(app):
    with open(os.path.join(app.dir, "diskmgt.tsv")) as f:
        lines = f.read().splitlines()
    assert "\t".join(["media", SAMSUNG, "/dev/rdsk/%ss0" % SAMSUNG,
                      "1953525168", "512", "Samsung", "SSD 970 EVO 1TB",
                      "0", "1", "nvme", "-"]) in lines
    assert "\t".join(["media", WD, "/dev/rdsk/%ss0" % WD, "468843606",
                      "4096", "NVMe", "WUS4BB019D4M9E4", "0", "1", "nvme",
                      "-"]) in lines
    assert "\t".join(["media", VIRTIO, "/dev/rdsk/%ss0" % VIRTIO,
                      "16777216", "512", "Virtio", "Block Device", "0",
                      "0", "-", "-"]) in lines
    assert "inuse\t%ss0\tactive_pool\tfast" % SAMSUNG in lines
    assert not any(line.startswith("inuse\t%s" % WD) for line in lines)


def test_zpool_names_the_nvme_member(app):
    out, _, rc = t.run(app, "zpool", "status", "fast")
    assert rc == 0 and SAMSUNG in out
    out, _, _ = t.run(app, "zdb", "-C", "fast")
    assert "ashift: 9" in out
    assert "devid: 'id1,blkd@w0025385971b0f5a2/a'" in out


def test_sdio_sends_no_scsi_command_to_blkdev(app):
    out, err, rc = t.run(app, "sdio", "scsi", "vpd", "0x86",
                         app.root + "/dev/rdsk/%sp0" % WD, "--json")
    assert (out, rc) == ("", 4)
    assert "does not take SCSI commands" in err


@pytest.mark.parametrize("change,why", [
    ({"vid": "NVMe"}, "an NVMe namespace has a model of 1-40 characters "
     "and no vid"),
    ({"model": "M" * 41}, "of 1-40 characters"),
    ({"rev": "123456789"}, "firmware is at most 8 characters"),
    ({"serial": "S" * 21}, "serial at most 20"),
    ({"driver": "nvme"}, "driver must be sd or blkdev"),
    ({"model": None, "vendor_id": "Virtio"},
     "a virtio disk has vendor_id and product_id"),
    ({"dtype": "cdrom"}, "blkdev disks are disks"),
])
def test_scenario_checks_a_blkdev_disk(change, why):
    d = nvme(**change)
    if d.get("model") is None:
        d.pop("model")
    with pytest.raises(scn.ScenarioError) as e:
        scn.load({"disks": [d]})
    assert why in str(e.value)


def test_scenario_splits_the_model_as_nvme_does():
    s = scn.load({"disks": [nvme(), nvme(
        "c4t0014EE83021EAE80d0", 1, model="WUS4BB019D4M9E4")]})
    a, b = s["disks"]
    assert (a["vendor_id"], a["product_id"]) == ("Samsung",
                                                 "SSD 970 EVO 1TB")
    assert (b["vendor_id"], b["product_id"]) == ("NVMe", "WUS4BB019D4M9E4")
    assert a["ctype"] == "nvme" and a["solid_state"] is True
    assert a["firmware"] == "2B2QEXE7" and a["driver"] == "blkdev"
    with pytest.raises(scn.ScenarioError):
        scn.load({"disks": [dict(t.SAMSUNG_AHCI, model="X")]})
