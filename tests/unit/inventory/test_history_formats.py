# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Every format the inventory's commands have printed across their
history, and the field widths their source allows (issue 27, "Real
formats: classes, not cases").  The fixtures are in
tests/fixtures/inventory/history/, each with its source and date in the
README there; each test names the printing code it follows.
"""

import os
from types import SimpleNamespace

import pytest

from sdtune.errors import ParseError
from sdtune.host.base import CommandResult
from sdtune.inventory import diskinfo, disks, iostat, mdb, nvmeadm, zdb, \
    zpool
from sdtune.nvmeconf.model import best_block_size
from sdtune.drivers.nvme import propose as nvmeplan

HISTORY = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                       "inventory", "history")


def history(name):
    with open(os.path.join(HISTORY, name), encoding="utf-8") as f:
        return f.read()


def nvme(name):
    with open(os.path.join(HISTORY, "..", "nvme", name),
              encoding="utf-8") as f:
        return f.read()


def refused(parse, text, *args):
    with pytest.raises(ParseError) as e:
        parse(text, *args)
    return e.value


# -- iostat -En: character kstats print 16, string kstats whole ---------

def test_iostat_virtio_serial_of_20_omnios_2018():
    # blkdev's string kstats (vioblk: Vendor Virtio, Product Block
    # Device, Serial No up to 20) are printed whole: not sd's 16.
    got = iostat.parse_iostat_en(
        history("iostat-En-omnios-kvm-virtio-serial20-2018.txt"))
    d = got["c2t0d0"]
    assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) == (
        "Virtio", "Block Device", "0000", "BHYVE-B066-A256-5589",
        322122547200)
    assert d.model is None and d.inquiry is None


def test_iostat_empty_serial_sysstat30_2014():
    got = iostat.parse_iostat_en(
        history("iostat-En-sysstat30-idrac-empty-serial-2014.txt"))
    d = got["c1t0d0"]
    assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) == (
        "iDRAC   ", "LCDRIVE         ", "0323", None, 0)
    assert d.inquiry == ("iDRAC   ", "LCDRIVE         ")


SD_RECORD = (
    "c1t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: 0 \n"
    "Vendor: ATA      Product: INTEL SSDSC2BA40 Revision: 0270 Serial No: "
    "BTTV5095012Z400HGN \n"
    "Size: 400.09GB <400088457216 bytes>\n"
    "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n"
    "Illegal Request: 0 Predictive Failure Analysis: 0 \n")


def test_iostat_sd_inquiry_record_keeps_the_16_character_limit():
    # An sd record (the padded 8 and 16 INQUIRY bytes) is sd's: its
    # character kstats never print more than 16.
    e = refused(iostat.parse_iostat_en, SD_RECORD)
    assert e.field == "Serial No"
    assert "longer than the 16 characters" in str(e)
    assert "padded INQUIRY" in str(e)
    assert iostat.parse_iostat_en(SD_RECORD.replace(
        "BTTV5095012Z400HGN", "BTTV5095012Z400"))["c1t0d0"].inquiry == (
        "ATA     ", "INTEL SSDSC2BA40")


def test_iostat_string_value_is_bounded():
    text = history("iostat-En-omnios-kvm-virtio-serial20-2018.txt")
    e = refused(iostat.parse_iostat_en,
                text.replace("BHYVE-B066-A256-5589", "S" * 256))
    assert e.field == "Serial No" and "longer than 255" in str(e)


# -- diskinfo tables: widths are minimums, a PID may hold blanks --------

@pytest.mark.parametrize("name", ["diskinfo-c-long-pid-constructed.txt",
                                  "diskinfo-P-long-pid-constructed.txt"])
def test_diskinfo_tables_with_long_pids_holding_blanks(name):
    got = diskinfo.parse_diskinfo_chp(history(name))
    assert [(d.name, d.vendor_id, d.product_id, d.serial)
            for d in got.values()] == [
        ("c1t0d0", "Samsung", "SSD 860 EVO 500GB", "S3Z1NB0K123456A"),
        ("c3t0025385971B0F5A2d0", "Samsung", "SSD 970 EVO Plus 1TB",
         "S4EWNX0R123456M"),
        ("c1t1d0", "ATA", "SuperMicro SSD", "SMC0515D90719C2E1234"),
        ("c0t5000CCA26B8F1234d0", "HGST", "HUH721010AL5200", "7JH5ABCD")]
    if "-P-" in name:
        assert [(d.faulty, d.locate, d.location) for d in got.values()][
            :2] == [(False, None, "[0] Slot 0"), (False, None, None)]
    else:
        assert [(d.size_gib, d.ssd, d.location) for d in got.values()][
            :2] == [(465.76, True, "[0] Slot 0"), (931.51, True, None)]


@pytest.mark.parametrize("name", ["diskinfo-c-long-pid-constructed.txt",
                                  "diskinfo-P-long-pid-constructed.txt"])
def test_diskinfo_table_with_a_serial_out_of_its_column_is_refused(name):
    text = history(name).replace("500GB S3Z1", "500GB  S3Z1")
    e = refused(diskinfo.parse_diskinfo_chp, text)
    line = "line 3: " if "-c-" in name else "line 2: "
    assert e.field == "SERIAL" and line + "no PID and SERIAL where they " \
        "belong for c1t0d0" in str(e)


def test_diskinfo_chp_serial_loses_its_padding_like_iostat():
    got = diskinfo.parse_diskinfo_chp(
        "SCSI\tc0t5000CCA26B8F1234d0\tHGST\tHUH721010AL5200\t7JH5ABCD    "
        "\t10000831348736\t----\t0,-1\n"
        "SCSI\tc0t5000CCA26B8F5678d0\tHGST\tHUH721010AL5200\t    "
        "\t10000831348736\t----\t0,-1\n")
    assert [d.serial for d in got.values()] == ["7JH5ABCD", None]


# -- nvmeadm: EUI64 names, the man page's numbering, NexentaStor 5.0 ----

def test_nvmeadm_list_names_namespaces_by_eui64_2017_to_2022():
    got = nvmeadm.parse_nvmeadm_list(
        history("nvmeadm-list-eui64-names-2017-constructed.txt"))
    assert [(n.name, n.nsid, n.disk, n.state)
            for c in got.values() for n in c.namespaces] == [
        ("nvme0/0025385971b0f5a2", None, "c3t0025385971B0F5A2d0", None),
        ("nvme1/0014ee83021eae80", None, "c4t0014EE83021EAE80d0", None),
        ("nvme1/2", 2, None, "unattached")]
    assert nvmeadm.namespaces_by_disk(got)[
        "c3t0025385971B0F5A2d0"].name == "nvme0/0025385971b0f5a2"
    # Upper case is not what nvme prints; 11 to 15 digits name nothing.
    for bad in ("nvme0/0025385971B0F5A2", "nvme0/00253859710"):
        e = refused(nvmeadm.parse_nvmeadm_list, history(
            "nvmeadm-list-eui64-names-2017-constructed.txt").replace(
                "nvme0/0025385971b0f5a2", bad))
        assert "line 2: not a controller or namespace line" in str(e)


def test_nvmeadm_identify_namespace_by_eui64_with_an_unused_format():
    name = "nvme0/0025385971b0f5a2"
    got = nvmeadm.parse_nvmeadm_identify_namespace(history(
        "nvmeadm-identify-namespace-eui64-name-2017-constructed.txt"), name)
    assert got.name == name
    assert [(f.index, f.data_bytes) for f in got.lba_formats] == [
        (0, 512), (1, 4096), (2, 1)]
    # The unused format (1 byte) ends the kernel's search: never chosen.
    assert best_block_size([(512, 0, 0), (4096, 0, 2), (1, 0, 0)],
                           512, 512) == 512


class EuiHost:
    """nvmeadm of 2017-2022: namespaces named by their EUI64."""

    def __init__(self):
        self.runs = []

    def can_run(self, name):
        return name == "nvmeadm"

    def run(self, name, args, timeout_s=None, stdin=None):
        self.runs.append(" ".join(args))
        out, rc = "", 0
        if args == ["list"]:
            out = history("nvmeadm-list-eui64-names-2017-constructed.txt")
        elif args[0] == "identify" and "/" in args[1]:
            out = history("nvmeadm-identify-namespace-eui64-name-2017-"
                          "constructed.txt").replace(
                              "nvme0/0025385971b0f5a2", args[1])
        elif args[0] == "identify":
            out = ("%s: Identify Controller\n"
                   "  Controller Capabilities and Features\n"
                   "    Model:                                  M\n"
                   "    Serial:                                 S\n"
                   "    Firmware Revision:                      F\n"
                   "    Volatile Write Cache:                   "
                   "not present\n" % args[1])
        else:
            rc = 1
        return CommandResult([name, *args], rc, out, "", 0)


def test_inventory_asks_nvmeadm_for_a_namespace_by_its_eui64_name():
    host = EuiHost()
    src = disks._Sources(host)
    found = disks._nvme_namespaces(src, ["c3t0025385971B0F5A2d0"])
    assert src.notes == []
    assert host.runs == ["list", "identify nvme0",
                         "identify nvme0/0025385971b0f5a2"]
    info, _ = found["c3t0025385971B0F5A2d0"]
    assert info.to_json()["namespace"] == "0025385971b0f5a2"
    assert info.lba_format_in_use == 0
    # The reformat option names the namespace as nvmeadm takes it.
    disk = SimpleNamespace(name="c3t0025385971B0F5A2d0", nvme=info,
                           pool=None)
    assert "'nvmeadm format nvme0/0025385971b0f5a2 1'" in \
        nvmeplan._format_options([disk], 4096)[0]


def test_nvmeadm_man_page_examples_number_formats_from_1():
    # illumos nvmeadm(8) Examples 1 and 2 (2017-2024): 1-based, which
    # upstream nvmeadm never printed; read as format 0 of 1.
    got = nvmeadm.parse_nvmeadm_list(
        history("nvmeadm-list-illumos-man-example1.txt"))
    assert [(n.name, n.disk) for c in got.values()
            for n in c.namespaces] == [("nvme1/1", "c1t1d0"),
                                       ("nvme4/1", "c2t2d0")]
    ns = nvmeadm.parse_nvmeadm_identify_namespace(
        history("nvmeadm-identify-namespace-illumos-man-example2.txt"),
        "nvme4/1")
    assert (ns.lba_format_count, ns.lba_format_in_use) == (1, 0)
    assert [(f.index, f.data_bytes) for f in ns.lba_formats] == [(0, 512)]
    assert ns.format_in_use().data_bytes == 512


def test_nvmeadm_numbering_with_both_0_and_the_count_is_refused():
    text = history("nvmeadm-identify-namespace-illumos-man-example2.txt")
    e = refused(nvmeadm.parse_nvmeadm_identify_namespace,
                text.replace("LBA Format 1", "LBA Format 0"), "nvme4/1")
    assert (e.field, "line 10: format 1 of 1 (numbered from 0)") == (
        "LBA Format", str(e).split("output: missing or bad field "
                                   "'LBA Format': ")[1])


@pytest.mark.parametrize("name, field", [
    ("nvmeadm-list-nexentastor-5.1-man-example1.txt", "model"),
    ("nvmeadm-identify-namespace-nexentastor-5.1-man-example2.txt",
     "Identify Namespace")])
def test_nexentastor_5_0_nvmeadm_is_refused_by_name(name, field):
    parse = nvmeadm.parse_nvmeadm_list if "list" in name else \
        nvmeadm.parse_nvmeadm_identify_namespace
    e = refused(parse, history(name))
    assert e.field == field and "line 1" in str(e)
    assert "NexentaStor 5.0-5.1's own nvmeadm" in str(e)


@pytest.mark.parametrize("size", ["4000", "256", "2", "0", "2147483648",
                                  "18446744071562067968"])
def test_nvmeadm_lba_data_size_is_a_power_of_two_from_512(size):
    text = nvme("nvmeadm-identify-namespace.txt").replace(
        "4096 bytes", size + " bytes")
    e = refused(nvmeadm.parse_nvmeadm_identify_namespace, text)
    assert e.field == "LBA Data Size" and "line 20: %s bytes is not an " \
        "LBA size" % size in str(e)
    # An unused format prints as 1 byte: read, never a block size.
    got = nvmeadm.parse_nvmeadm_identify_namespace(
        nvme("nvmeadm-identify-namespace.txt").replace("4096 bytes",
                                                       "1 bytes"))
    assert [f.data_bytes for f in got.lba_formats] == [512, 1]


def test_nvmeadm_list_overflow_size_is_unknown():
    text = nvme("nvmeadm-list.txt").replace(
        "Size = 953869 MB", "Size = <overflow>B")
    ns = nvmeadm.parse_nvmeadm_list(text)["nvme0"].namespaces[0]
    assert (ns.size_bytes, ns.capacity_bytes) == (None, 953869 << 20)


# -- mdb: every escape strchr2esc prints; the timeout id is a pointer ---

def test_mdb_reads_the_bell_backspace_formfeed_and_vtab_escapes():
    text = ("inq_vid = [ 'A', '\\a', '\\b', '\\f', '\\v', '\\t', '\\001', "
            "'\\'' ]\n"
            'inq_pid = [ "INTEL SSDSC2BA40" ]\n'
            'inq_revision = [ "0270" ]\n')
    got = mdb.parse_inquiry(text)
    assert got[0].vid == "A\a\b\f\v\t\x01'"


def test_mdb_un_reset_throttle_timeid_is_a_pointer():
    text = ("1 entries in sd_state table\n\nun 0: fffffe0bd8a76000\n"
            "--------------\n{\n"
            "    un_tgt_blocksize = 0x200\n"
            "    un_phy_blocksize = 0x1000\n"
            "    un_saved_throttle = 0xffff\n"
            "    un_min_throttle = 0x8\n"
            "    un_reset_throttle_timeid = 0xfffffe0bd88fd000\n"
            "    un_f_disksort_disabled = 0\n"
            "    un_f_suppress_cache_flush = 0\n}\n"
            "---------------------------\n"
            "Processed 1 UN softstate entries\n"
            "---------------------------\n")
    unit = mdb.parse_sd_state(text)[0]
    assert unit.get("un_reset_throttle_timeid") == 0xfffffe0bd88fd000
    assert unit.get("un_saved_throttle") == -1


# -- zpool status: a pool name may hold blanks --------------------------

def test_zpool_pool_name_with_blanks_is_read_not_skipped():
    got = zpool.parse_zpool_status(
        history("zpool-status-pool-name-with-blank-constructed.txt"))
    assert list(got) == ["my pool", "tank"]
    assert [(m.disk, m.role, m.top) for m in got["my pool"].members] == [
        ("c1t0d0", "data", "mirror-0"), ("c1t1d0", "data", "mirror-0"),
        ("c1t2d0", "log", "c1t2d0")]
    assert [m.disk for m in got["tank"].members] == ["c2t0d0"]


@pytest.mark.parametrize("line, why", [
    ("  pool: 1tank", "'1tank' is not a pool name"),
    ("  pool: my/pool", "'my/pool' is not a pool name"),
    ("  pool:", "'' is not a pool name"),
    ("  pool:tank", "'pool:tank' is not a line '  pool: <name>'"),
    ("  pool: " + "p" * 240, "at most 239 characters")])
def test_zpool_unreadable_pool_line_is_an_error_not_skipped(line, why):
    text = history("zpool-status-pool-name-with-blank-constructed.txt")
    e = refused(zpool.parse_zpool_status,
                text.replace("  pool: tank", line))
    assert e.field == "pool" and "line 16: " in str(e) and why in str(e)


def test_zpool_pool_row_must_start_with_the_whole_name():
    text = history("zpool-status-pool-name-with-blank-constructed.txt")
    e = refused(zpool.parse_zpool_status,
                text.replace("\tmy pool     ONLINE", "\tmy  pool    ONLINE"))
    assert e.field == "NAME" and "line 7" in str(e)


def test_zpool_and_zdb_read_pool_names_by_one_rule():
    assert zdb.is_pool_name is zpool.is_pool_name
    assert zpool.is_pool_name("my pool.2:a_b-c")
    assert zpool.is_pool_name("p" * 239)
    for bad in ("p" * 240, "2pool", " pool", "my/pool", ""):
        assert not zpool.is_pool_name(bad)
