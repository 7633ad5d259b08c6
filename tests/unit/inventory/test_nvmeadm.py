# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""NVMe inventory (issue 18): the nvmeadm parsers and the mdb blkdev
pipeline on the formats illumos-gate's nvmeadm printed from 2017 to 2025
(fixtures in tests/fixtures/inventory/nvme: MB and human-readable
sizes, namespace states, the pre-2021 cache field, a get-features with
no cache), hostile copies of them (truncated, blank
lines, unknown lines, CRLF, bytes that were not UTF-8) ending in a
ParseError that names the line and the field, and how the inventory
finds a namespace's data with a bounded number of nvmeadm runs."""

import os

import pytest

from sdtune.errors import ParseError
from sdtune.host.base import CommandResult
from sdtune.inventory import disks, mdb, nvmeadm

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                        "inventory", "nvme")


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


LIST = fixture("nvmeadm-list.txt")
CONTROLLER = fixture("nvmeadm-identify-controller.txt")
NAMESPACE = fixture("nvmeadm-identify-namespace.txt")
CACHE = fixture("nvmeadm-get-features-cache.txt")
BLKDEV = fixture("mdb-blkdev.txt")


def refused(parse, text, *args) -> ParseError:
    with pytest.raises(ParseError) as e:
        parse(text, *args)
    message = str(e.value)
    assert message.startswith("cannot parse '")
    assert "Traceback" not in message
    return e.value


# -- nvmeadm list ------------------------------------------------------

def test_list_controllers_and_namespaces():
    got = nvmeadm.parse_nvmeadm_list(LIST)
    assert list(got) == ["nvme0", "nvme1", "nvme2"]
    c = got["nvme0"]
    assert (c.model, c.serial, c.firmware, c.version) == (
        "Samsung SSD 970 EVO 1TB", "S467NX0K612345A", "2B2QEXE7", "1.3")
    ns = c.namespaces[0]
    assert (ns.name, ns.disk, ns.size_bytes, ns.capacity_bytes,
            ns.used_bytes) == ("nvme0/1", "c3t0025385971B0F5A2d0",
                               953869 << 20, 953869 << 20, 120044 << 20)
    # A namespace blkdev has not attached: no disk, its state.
    assert [(n.nsid, n.disk, n.state)
            for n in got["nvme1"].namespaces] == [
        (1, "c4t0014EE83021EAE80d0", None), (2, None, "unattached")]
    # A controller without namespaces.
    assert got["nvme2"].namespaces == []
    assert got["nvme2"].version == "1.2"
    assert sorted(nvmeadm.namespaces_by_disk(got)) == [
        "c3t0025385971B0F5A2d0", "c4t0014EE83021EAE80d0"]


def test_list_since_2022_sizes_states_and_controller_capacity():
    got = nvmeadm.parse_nvmeadm_list(fixture("nvmeadm-list-2023.txt"))
    ns = got["nvme0"].namespaces[0]
    # 931.51 GB, 117.23 GB (base 1024, as printed: three digits).
    assert (ns.size_bytes, ns.used_bytes) == (
        931 * (1 << 30) + 51 * (1 << 30) // 100,
        117 * (1 << 30) + 23 * (1 << 30) // 100)
    c = got["nvme1"]
    assert (c.model, c.firmware, c.version) == ("WUS4BB019D4M9E4",
                                                "R1110021", "1.3")
    assert [(n.nsid, n.disk, n.state, n.size_bytes)
            for n in c.namespaces] == [
        (1, "c4t0014EE83021EAE80d0", None, 1924145348608),
        (2, None, "unattached", 1 << 30), (3, None, "ignored", 512),
        (4, None, "inactive", None), (5, None, "unallocated", None)]
    assert sorted(nvmeadm.namespaces_by_disk(got)) == [
        "c3t0025385971B0F5A2d0", "c4t0014EE83021EAE80d0"]


def test_identify_controller_before_2021_prints_the_cache_as_one_field():
    text = fixture("nvmeadm-identify-controller-2018.txt")
    got = nvmeadm.parse_nvmeadm_identify_controller(text, "nvme0")
    assert (got.model, got.firmware, got.namespace_count,
            got.cache_present) == ("INTEL SSDPE2KX020T8", "VDV10131", 128,
                                   False)
    present = text.replace("not present", "present")
    assert nvmeadm.parse_nvmeadm_identify_controller(present).cache_present
    e = refused(nvmeadm.parse_nvmeadm_identify_controller,
                text.replace("not present", "maybe"))
    assert (e.field, e.reason) == (
        "Volatile Write Cache", "line 16: 'maybe' is neither present nor "
        "not present")


def test_get_features_of_a_controller_without_the_cache_is_unknown():
    """nvmeadm before 2024 prints the header alone and exits 0."""
    assert nvmeadm.parse_nvmeadm_cache(
        fixture("nvmeadm-get-features-cache-absent.txt"), "nvme0") is None


def test_list_empty_output_is_no_controller():
    assert nvmeadm.parse_nvmeadm_list("") == {}


def test_list_blank_lines_and_crlf_read_the_same():
    expected = nvmeadm.parse_nvmeadm_list(LIST)
    assert nvmeadm.parse_nvmeadm_list("\n" + LIST.replace("\n", "\n\n")) \
        == expected
    assert nvmeadm.parse_nvmeadm_list(LIST.replace("\n", "\r\n")) == expected
    # mdb-like blank padding at the end of lines.
    assert nvmeadm.parse_nvmeadm_list(LIST.replace("\n", "   \n")) == \
        expected


@pytest.mark.parametrize("text,field,why", [
    (LIST.replace(", NVMe v1.3", ""), "controller",
     "line 1: not a controller or namespace line"),
    (LIST + "nvme3: unknown header\n", "controller", "line 7: not a "),
    ("  nvme0/1 (c1t0d0): Size = 1 MB, Capacity = 1 MB, Used = 0 MB\n",
     "namespace", "line 1: nvme0/1 is not under its controller's line"),
    (LIST.replace("  nvme1/1", "  nvme0/1"), "namespace", "line 4: "
     "nvme0/1 is not under"),
    (LIST.replace("nvme1/2 ", "nvme1/1 "), "namespace", "line 5: nvme1/1 "
     "listed twice"),
    (LIST.replace("nvme1:", "nvme0:").replace("nvme1/", "nvme0/"),
     "controller", "line 3: nvme0 listed twice"),
    (LIST.replace("nvme0/1", "nvme0/0"), "namespace", "namespace 0"),
    (LIST.replace("(c4t0014EE83021EAE80d0)", "(c3t0025385971B0F5A2d0)"),
     "disk", "line 4: c3t0025385971B0F5A2d0 is both nvme0/1 and nvme1/1"),
    (LIST.replace("(c4t0014EE83021EAE80d0)", "(/dev/dsk/x)"), "disk",
     "line 4: '/dev/dsk/x' is neither a disk name nor a namespace state"),
    (LIST.replace("(unattached)", "(detached)"), "disk",
     "line 5: 'detached' is neither a disk name nor a namespace state "
     "(unattached, ignored, inactive, unallocated, unknown, invalid "
     "state)"),
    (LIST.replace("(unattached): Size = 1024 MB, Capacity = 1024 MB, Used "
                  "= 0 MB", "(unattached)"), "namespace",
     "line 5: nvme1/2 has no sizes"),
    (LIST.replace("Used = 0 MB", "Used = 0 MB, Used = 0 MB"), "namespace",
     "line 4: 'Used = 0 MB' is not 'Size = ...', 'Capacity = ...' or "
     "'Used = ...' (once each)"),
    (LIST.replace("Size = 953869 MB", "Size = 953869 MiB"), "Size",
     "line 2: '953869 MiB' is not a size like '953869 MB' or '931.51 GB'"),
    (LIST.replace("Size = 953869", "Size = " + "9" * 30), "Size",
     "line 2: '" + "9" * 20),
    # Truncated in the middle of a namespace line.
    (LIST[:LIST.index("Capacity = 953869")], "Size", "line 2: '953869 MB,' "
     "is not a size"),
    (LIST.replace("Samsung", "Sams\ufffdng"), "model", "line 1: character "
     "U+FFFD is not printable ASCII"),
])
def test_list_refusals(text, field, why):
    e = refused(nvmeadm.parse_nvmeadm_list, text)
    assert e.command == "nvmeadm list"
    assert e.field == field
    assert why in e.reason


def test_list_non_utf8_bytes_as_the_host_decodes_them():
    raw = LIST.encode("ascii").replace(b"EVO", b"EV\xff")
    e = refused(nvmeadm.parse_nvmeadm_list, raw.decode("utf-8", "replace"))
    assert "line 1" in e.reason and e.field == "model"


# -- nvmeadm identify nvmeN --------------------------------------------

def test_identify_controller():
    got = nvmeadm.parse_nvmeadm_identify_controller(CONTROLLER, "nvme0")
    assert got == nvmeadm.ControllerIdentity(
        "nvme0", "Samsung SSD 970 EVO 1TB", "S467NX0K612345A", "2B2QEXE7",
        1, True)
    absent = CONTROLLER.replace("yes", "no")
    assert nvmeadm.parse_nvmeadm_identify_controller(absent).cache_present \
        is False


def test_identify_controller_tolerates_blank_lines_crlf_and_long_names():
    text = CONTROLLER.replace("\n", "\r\n\r\n")
    got = nvmeadm.parse_nvmeadm_identify_controller(text, "nvme0")
    assert got.model == "Samsung SSD 970 EVO 1TB"
    # A name past column 43 gets one blank; unknown sections pass.
    extra = CONTROLLER.replace(
        "  Admin Command Set Attributes\n",
        "  Power State Descriptors\n    A Very Long Name Of Some Field "
        "Nobody Reads: 12\n  Admin Command Set Attributes\n")
    assert nvmeadm.parse_nvmeadm_identify_controller(extra) == \
        nvmeadm.parse_nvmeadm_identify_controller(CONTROLLER)


@pytest.mark.parametrize("text,field,why", [
    ("", "Identify Controller", "no output"),
    (CONTROLLER.replace("nvme0:", "nvme1:"), "Identify Controller",
     "about 'nvme1', not nvme0"),
    (CONTROLLER.replace("Identify Controller", "Identify Namespace"),
     "Identify Controller", "line 1: "),
    (CONTROLLER[:CONTROLLER.index("    Number of Namespaces")],
     "Volatile Write Cache", "missing: neither 'Present' under it nor its "
     "own value"),
    (CONTROLLER.replace("      Present", "    Present"),
     "Volatile Write Cache", "missing"),
    (CONTROLLER.replace("yes", "maybe"), "Present",
     "line 16: 'maybe' is neither yes nor no"),
    (CONTROLLER.replace("    Serial:", "    Model: X\n    Serial:"),
     "Model", "line 4: given twice (also line 3)"),
    (CONTROLLER + "nvme1: Identify Controller\n", "Identify Controller",
     "line 18: 'nvme1: Identify Controller' after the output of nvme0"),
    (CONTROLLER.replace("Samsung", "Sams\ufffdng"), "Identify Controller",
     "line 3: character U+FFFD is not printable ASCII"),
    (CONTROLLER.replace("Namespaces:                   1",
                        "Namespaces:                   one"),
     "Number of Namespaces", "line 14: 'one' is not a number"),
])
def test_identify_controller_refusals(text, field, why):
    e = refused(nvmeadm.parse_nvmeadm_identify_controller, text, "nvme0")
    assert e.command == "nvmeadm identify nvme0"
    assert e.field == field
    assert why in e.reason


# -- nvmeadm identify nvmeN/M ------------------------------------------

def test_identify_namespace():
    got = nvmeadm.parse_nvmeadm_identify_namespace(NAMESPACE, "nvme0/1")
    assert (got.name, got.size_mb, got.lba_format_count,
            got.lba_format_in_use, got.extended_lba) == (
        "nvme0/1", 953869, 2, 0, False)
    assert got.lba_formats == [nvmeadm.LbaFormat(0, 512, 0, "Best"),
                               nvmeadm.LbaFormat(1, 4096, 0, "Good")]
    assert got.format_in_use() == got.lba_formats[0]


def test_identify_namespace_without_the_metadata_formats():
    # Without -v a format with metadata is not printed but counted; the
    # one in use may be among them.
    text = NAMESPACE.replace("LBA Formats:                  2",
                             "LBA Formats:                  4")
    text = text.replace("LBA Format:                           0",
                        "LBA Format:                           3")
    got = nvmeadm.parse_nvmeadm_identify_namespace(text)
    assert (got.lba_format_count, got.lba_format_in_use) == (4, 3)
    assert got.format_in_use() is None and len(got.lba_formats) == 2


@pytest.mark.parametrize("text,field,why", [
    (NAMESPACE.replace("nvme0/1:", "nvme0:"), "Identify Namespace",
     "line 1: "),
    (NAMESPACE[:NAMESPACE.rindex("      Relative Performance")],
     "Relative Performance", "missing"),
    (NAMESPACE.replace("Good", "Great"), "Relative Performance",
     "line 21: 'Great' is not one of Best, Better, Good, Degraded"),
    (NAMESPACE.replace("4096 bytes", "4 KiB"), "LBA Data Size",
     "line 20: '4 KiB' is not a size in bytes"),
    (NAMESPACE.replace("LBA Format 1", "LBA Format 0"), "LBA Format 0",
     "line 18: printed twice (also line 14)"),
    (NAMESPACE.replace("LBA Format 1", "LBA Format 7"), "LBA Format 7",
     "line 18: beyond the 2 LBA formats"),
    (NAMESPACE.replace("LBA Formats:                  2",
                       "LBA Formats:                  0"),
     "Number of LBA Formats", "0 is not between 1 and 64"),
    (NAMESPACE.replace("LBA Format:                           0",
                       "LBA Format:                           2"),
     "LBA Format", "line 10: format 2 of 2"),
    (NAMESPACE.replace("953869MB", "953869 GB", 1), "Namespace Size",
     "line 3: '953869 GB' is not a size in MB"),
])
def test_identify_namespace_refusals(text, field, why):
    e = refused(nvmeadm.parse_nvmeadm_identify_namespace, text, "nvme0/1")
    assert e.command == "nvmeadm identify nvme0/1"
    assert e.field == field
    assert why in e.reason


# -- nvmeadm get-features nvmeN cache -----------------------------------

def test_cache_enabled_and_disabled():
    assert nvmeadm.parse_nvmeadm_cache(CACHE, "nvme0") is True
    assert nvmeadm.parse_nvmeadm_cache(CACHE.replace("enabled",
                                                     "disabled")) is False


@pytest.mark.parametrize("text,field,why", [
    (CACHE.replace("enabled", "on"), "Volatile Write Cache",
     "line 3: 'on' is neither enabled nor disabled"),
    (CACHE[:CACHE.index("    Volatile")], "Volatile Write Cache",
     "missing"),
    ("nvme0: Get Features\nVolatile Write Cache: enabled\n", "Get Features",
     "line 2: "),
])
def test_cache_refusals(text, field, why):
    e = refused(nvmeadm.parse_nvmeadm_cache, text, "nvme0")
    assert e.field == field and why in e.reason


# -- mdb blkdev pipeline ------------------------------------------------

def test_blkdev_shifts():
    assert mdb.parse_blkdev(BLKDEV) == {0: (9, 9), 1: (12, 12), 2: (9, 9)}
    assert mdb.parse_blkdev("") == {}
    # Hex (no -d) and blank padding read the same; CRLF too.
    hexed = BLKDEV.replace("0t12", "0xc").replace("\n", "    \r\n")
    assert mdb.parse_blkdev(hexed) == mdb.parse_blkdev(BLKDEV)


@pytest.mark.parametrize("text,field,why", [
    (BLKDEV.rsplit("d_pblkshift", 1)[0], "d_pblkshift",
     "output is truncated"),
    (BLKDEV.replace("d_blkshift = 0t12\n", ""), "d_blkshift",
     "line 5: d_pblkshift where mdb prints d_blkshift (record 2)"),
    (BLKDEV.replace("d_pblkshift = 0t12", "d_pblkshift = 0t40"),
     "d_pblkshift", "line 6: 40 is not the shift of a block size"),
    (BLKDEV.replace("devi_instance = 0t1", "devi_instance = 0t0"),
     "d_dip->devi_instance", "line 6: instance 0 printed twice"),
    (BLKDEV + "mdb: failed to dereference symbol\n", "d_dip->devi_instance",
     "line 10: unexpected line"),
    (BLKDEV.replace("0t9", "nine", 1), "d_blkshift",
     "line 2: 'nine' is not a number"),
    (BLKDEV.replace("0t0", "0t\ufffd"), "d_dip->devi_instance",
     "line 1: '0t\ufffd' is not a number"),
])
def test_blkdev_refusals(text, field, why):
    e = refused(mdb.parse_blkdev, text)
    assert e.command == "mdb blkdev pipeline"
    assert e.field == field
    assert why in e.reason


# -- the inventory's nvmeadm runs -------------------------------------

class NvmeHost:
    """Answers nvmeadm as the fixtures say and counts the runs."""

    def __init__(self, installed=True, cache_fails=False):
        self.installed = installed
        self.cache_fails = cache_fails
        self.runs = []

    def can_run(self, name):
        return self.installed and name == "nvmeadm"

    def run(self, name, args, timeout_s=None, stdin=None):
        self.runs.append(" ".join(args))
        out, rc, err = "", 0, ""
        if args == ["list"]:
            out = LIST
        elif args[0] == "identify" and "/" in args[1]:
            out = NAMESPACE.replace("nvme0/1", args[1])
        elif args[0] == "identify":
            out = CONTROLLER.replace("nvme0", args[1])
        elif args[0] == "get-features" and not self.cache_fails:
            out = CACHE.replace("nvme0", args[1])
        else:
            rc, err = 1, "nvmeadm: failed to get feature\n"
        return CommandResult([name, *args], rc, out, err, 0)


def test_inventory_runs_nvmeadm_once_per_controller_and_namespace():
    host = NvmeHost()
    src = disks._Sources(host)
    names = ["c3t0025385971B0F5A2d0", "c4t0014EE83021EAE80d0", "c5t0d0"]
    found = disks._nvme_namespaces(src, names)
    assert src.notes == []
    assert sorted(found) == names[:2]
    info, ctl = found["c4t0014EE83021EAE80d0"]
    assert info.to_json() == {
        "controller": "nvme1", "namespace": 1, "version": "1.3",
        "lba_formats": [{"index": 0, "data_bytes": 512,
                         "metadata_bytes": 0,
                         "relative_performance": "Best"},
                        {"index": 1, "data_bytes": 4096,
                         "metadata_bytes": 0,
                         "relative_performance": "Good"}],
        "lba_format_in_use": 0,
        "volatile_write_cache": {"present": True, "enabled": True}}
    assert ctl.firmware == "2B2QEXE7"
    # nvme1/2 has no disk, nvme2 no namespace: neither is asked about.
    assert host.runs == [
        "list", "identify nvme0", "get-features nvme0 cache",
        "identify nvme0/1", "identify nvme1", "get-features nvme1 cache",
        "identify nvme1/1"]


def test_inventory_without_nvmeadm_or_its_cache():
    host = NvmeHost(installed=False)
    src = disks._Sources(host)
    assert disks._nvme_namespaces(src, ["c3t0025385971B0F5A2d0"]) == {}
    assert host.runs == [] and src.notes == []
    # A failing get-features is no error: enabled unknown.
    host = NvmeHost(cache_fails=True)
    src = disks._Sources(host)
    info, _ = disks._nvme_namespaces(src, ["c3t0025385971B0F5A2d0"])[
        "c3t0025385971B0F5A2d0"]
    assert (info.cache_present, info.cache_enabled) == (True, None)
    assert src.notes == []


def test_a_disk_gets_the_controller_identity():
    host = NvmeHost()
    src = disks._Sources(host)
    info, ctl = disks._nvme_namespaces(src, ["c3t0025385971B0F5A2d0"])[
        "c3t0025385971B0F5A2d0"]
    disk = disks._blkdev_disk("c3t0025385971B0F5A2d0", 0, None, None, None,
                              [], (None, None), None)
    assert disk.to_json()["nvme"] is None
    disks._add_nvme(disk, info, ctl)
    got = disk.to_json()
    assert (got["model"], got["serial"], got["firmware"]) == (
        "Samsung SSD 970 EVO 1TB", "S467NX0K612345A", "2B2QEXE7")
    assert got["nvme"]["controller"] == "nvme0"
