# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Disks outside sd (blkdev: NVMe namespaces, virtio) in the inventory's
parsers: path_to_inst and the /dev/rdsk links give (driver, instance)
with instances counted per driver, iostat -En's blkdev records (an NVMe
Model with its blanks, 20-character serials) are read, and an sd-only
caller still gets sd instances only."""

import os

import pytest

from sdtune.errors import ParseError
from sdtune.host import RealHost
from sdtune.inventory import devlinks, iostat

NVME_PATH = ("/pci@0,0/pci8086,2030@0/pci144d,a801@0/"
             "blkdev@w0025385971B0F5A2,0")
PATH_TO_INST = (
    '"/pci@0,0/pci8086,2030@0/pci144d,a801@0" 0 "nvme"\n'
    '"%s" 0 "blkdev"\n'
    '"/pci@0,0/pci1af4,2@5/blkdev@0,0" 1 "blkdev"\n'
    '"/pci@0,0/pci15d9,805@1f,2/disk@0,0" 0 "sd"\n'
    '"/pci@0,0/pci15d9,805@1f,2/disk@1,0" 1 "sd"\n' % NVME_PATH)


def test_both_drivers_with_the_same_instance_numbers():
    got = devlinks.parse_path_to_inst_drivers(PATH_TO_INST,
                                              devlinks.DISK_DRIVERS)
    assert got == {
        NVME_PATH: ("blkdev", 0),
        "/pci@0,0/pci1af4,2@5/blkdev@0,0": ("blkdev", 1),
        "/pci@0,0/pci15d9,805@1f,2/disk@0,0": ("sd", 0),
        "/pci@0,0/pci15d9,805@1f,2/disk@1,0": ("sd", 1)}
    # The sd-only reader of old is unchanged.
    assert devlinks.parse_path_to_inst(PATH_TO_INST) == {
        "/pci@0,0/pci15d9,805@1f,2/disk@0,0": 0,
        "/pci@0,0/pci15d9,805@1f,2/disk@1,0": 1}
    assert devlinks.parse_path_to_inst(PATH_TO_INST, "blkdev") == {
        NVME_PATH: 0, "/pci@0,0/pci1af4,2@5/blkdev@0,0": 1}


@pytest.mark.parametrize("extra,why", [
    ('"/pci@0,0/pci1af4,2@6/blkdev@0,0" 1 "blkdev"\n', "instance 1 listed "
     "twice"),
    ('"%s" 5 "blkdev"\n' % NVME_PATH, "path %s listed twice" % NVME_PATH),
    ('"/pci@0,0/x" one "blkdev"\n', "not '\"path\" instance \"driver\"'"),
    # A line of a driver nobody asked for is still checked.
    ('"/pci@0,0/x" 0 nvme\n', "not '\"path\" instance \"driver\"'"),
])
def test_repeats_and_garbage_are_refused(extra, why):
    with pytest.raises(ParseError) as e:
        devlinks.parse_path_to_inst_drivers(PATH_TO_INST + extra,
                                            devlinks.DISK_DRIVERS)
    assert why in str(e.value)


def _root(tmp_path):
    """A root with path_to_inst and the /dev/rdsk links of one NVMe
    namespace (slices, p0 and the EFI whole-disk link), a virtio disk and
    two SATA disks."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "path_to_inst").write_text(PATH_TO_INST)
    rdsk = tmp_path / "dev" / "rdsk"
    rdsk.mkdir(parents=True)
    disks = {"c3t0025385971B0F5A2d0": NVME_PATH,
             "c5t0d0": "/pci@0,0/pci1af4,2@5/blkdev@0,0",
             "c1t0d0": "/pci@0,0/pci15d9,805@1f,2/disk@0,0",
             "c1t1d0": "/pci@0,0/pci15d9,805@1f,2/disk@1,0"}
    for name, phys in disks.items():
        for suffix, minor in (("s0", "a"), ("s1", "b"), ("p0", "q"),
                              ("", "wd")):
            os.symlink("../../devices%s:%s,raw" % (phys, minor),
                       str(rdsk / (name + suffix)))
    return RealHost(str(tmp_path))


def test_disk_units_and_the_sd_view(tmp_path):
    host = _root(tmp_path)
    assert devlinks.disk_units(host) == {
        "c3t0025385971B0F5A2d0": ("blkdev", 0), "c5t0d0": ("blkdev", 1),
        "c1t0d0": ("sd", 0), "c1t1d0": ("sd", 1)}
    # sd callers (trace) see sd instances only, never blkdev's 0 and 1.
    assert devlinks.disk_names(host) == {0: "c1t0d0", 1: "c1t1d0"}


NVME_RECORD = (
    "c3t0025385971B0F5A2d0 Soft Errors: 0 Hard Errors: 0 Transport "
    "Errors: 0 \n"
    "Model: Samsung SSD 970 EVO 1TB                  Revision: 2B2QEXE7 "
    "Serial No: S467NX0K612345A      \n"
    "Size: 1000.20GB <1000204886016 bytes>\n"
    "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n"
    "Illegal Request: 0 Predictive Failure Analysis: 0 \n")
VIRTIO_RECORD = (
    "c2t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: 0\n"
    "Vendor: Virtio Product: Block Device Revision: 0000 Serial No: "
    "ETC0M3H0M3\n"
    "Size: 322.12GB <322122547200 bytes>\n"
    "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0\n"
    "Illegal Request: 0 Predictive Failure Analysis: 0\n")


def test_iostat_reads_an_nvme_record():
    disks = iostat.parse_iostat_en(NVME_RECORD + VIRTIO_RECORD)
    d = disks["c3t0025385971B0F5A2d0"]
    assert d.model == "Samsung SSD 970 EVO 1TB" + " " * 17
    assert (d.vendor, d.product, d.inquiry) == (None, None, None)
    assert d.revision == "2B2QEXE7"
    assert d.serial == "S467NX0K612345A"
    assert d.size_bytes == 1000204886016
    assert d.errors["Predictive Failure Analysis"] == 0
    v = disks["c2t0d0"]
    # Unpadded: never taken for an INQUIRY key.
    assert (v.vendor, v.product, v.inquiry) == ("Virtio", "Block Device",
                                                None)


def test_a_cmdk_record_still_has_no_failure_analysis():
    cut = NVME_RECORD.replace(" Predictive Failure Analysis: 0 ", "")
    # Without PFA the Model record is cmdk's, whose strings are at most
    # 16 characters: the 40-character NVMe model does not fit it.
    with pytest.raises(ParseError) as e:
        iostat.parse_iostat_en(cut)
    assert "longer than the 16 characters" in str(e.value)


def test_an_nvme_record_with_vendor_too_is_refused():
    # Model and Vendor together: sd's layout (Model optional), whose
    # Product is then missing.
    bad = NVME_RECORD.replace("Revision:", "Vendor: NVMe Revision:")
    with pytest.raises(ParseError) as e:
        iostat.parse_iostat_en(bad)
    assert "field 'Product': missing for c3t0025385971B0F5A2d0" in \
        str(e.value)
