# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The inventory parsers against the exact fixtures of the facts document
(§8, §12, §13, §14) and against truncated or garbled output, which must
raise a ParseError naming the command and the field."""

import os
import re

import pytest

from sdtune.errors import ParseError
from sdtune.inventory import devlinks, diskinfo, iostat, mdb, zdb, zpool
from sdtune.parsing import parse_count

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                   "inventory")


def fixture(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


# -- mdb ::sd_state -----------------------------------------------------------

def test_sd_state_units_and_values():
    units = mdb.parse_sd_state(fixture("mdb-sd_state.txt"))
    assert sorted(units) == [0, 1]
    u0, u1 = units[0], units[1]
    assert u0.address == "fffffe0bd8a76000"
    assert u0.get("un_phy_blocksize") == 512
    assert u0.get("un_saved_throttle") == 256
    assert u0.get("un_min_throttle") == 8
    assert u0.get("un_f_is_rotational") == 1
    assert u0.get("un_blockcount") == 0x1d1c0beb0
    assert u1.get("un_phy_blocksize") == 4096
    assert u1.get("un_saved_throttle") == 32
    assert u1.get("un_f_suppress_cache_flush") == 1
    assert u1.get("un_f_disksort_disabled") == 1
    assert u1.get("un_f_is_solid_state") == 1
    # NexentaStor kernels have un_f_sdconf_phy_blocksize.
    assert u1.flavour == "nexenta"
    # A pointer with a string stays text.
    assert u0.members["un_node_type"].endswith('"ddi_block:channel"')


def test_sd_state_negative_short_throttle():
    text = fixture("mdb-sd_state.txt").replace(
        "    un_saved_throttle = 0x20", "    un_saved_throttle = 0xffff")
    assert mdb.parse_sd_state(text)[1].get("un_saved_throttle") == -1


@pytest.mark.parametrize("cut, field", [
    ("---------------------------\nProcessed", "Processed N UN softstate"),
    ("32 entries in sd_state table", "entries in sd_state table"),
])
def test_sd_state_truncated(cut, field):
    text = fixture("mdb-sd_state.txt")
    text = text[:text.index(cut)]
    with pytest.raises(ParseError) as e:
        mdb.parse_sd_state(text)
    assert "'mdb ::sd_state'" in str(e.value)
    assert field in str(e.value)


def test_sd_state_missing_member_names_it():
    text = fixture("mdb-sd_state.txt").replace(
        "    un_min_throttle = 0x8\n", "", 1)
    with pytest.raises(ParseError) as e:
        mdb.parse_sd_state(text)
    assert "un_min_throttle" in str(e.value) and "un 0" in str(e.value)


def test_sd_state_garbage():
    with pytest.raises(ParseError):
        mdb.parse_sd_state("mdb: failed to initialize target\n")


# -- mdb vid/pid pipeline -----------------------------------------------------

def test_inquiry_pipeline_without_revision_lines_is_truncated():
    # The facts' fixture shows vid and pid only; sdtune asks for the
    # revision too, so without it the records are incomplete.
    with pytest.raises(ParseError) as e:
        mdb.parse_inquiry(fixture("mdb-inquiry.txt"))
    assert "inq_revision" in str(e.value)


def test_inquiry_pipeline_keys():
    text = ""
    for vid, pid, rev in [("HGST    ", "HUS724040ALS640 ", "A1C4"),
                          ("ATA     ", "INTEL SSDSC2BA40", "0270"),
                          ("ATA     ", "SAMSUNG MZ7LM480", "403Q")]:
        text += 'inq_vid = [ "%s" ]\ninq_pid = [ "%s" ]\n' \
            'inq_revision = [ "%s" ]\n' % (vid, pid, rev)
    recs = mdb.parse_inquiry(text)
    assert [r.key for r in recs] == ["HGST    HUS724040ALS640 ",
                                     "ATA     INTEL SSDSC2BA40",
                                     "ATA     SAMSUNG MZ7LM480"]
    assert recs[1].revision == "0270"


def test_inquiry_elementwise_form():
    text = ("inq_vid = [ 'A', 'T', 'A', ' ', ' ', ' ', ' ', ' ' ]\n"
            'inq_pid = [ "X" ]\ninq_revision = [ 0x31, 0x32, 0, 0 ]\n')
    rec = mdb.parse_inquiry(text)[0]
    assert rec.vid == "ATA     " and rec.pid == "X".ljust(16)
    assert rec.revision == "12\0\0"


def test_inquiry_count_must_match_units():
    units = mdb.parse_sd_state(fixture("mdb-sd_state.txt"))
    one = mdb.parse_inquiry('inq_vid = [ "ATA     " ]\ninq_pid = [ "X" ]\n'
                            'inq_revision = [ "1" ]\n')
    with pytest.raises(ParseError) as e:
        mdb.units_with_inquiry(units, one)
    assert "1 records for 2 attached sd units" in str(e.value)


# -- iostat -En ---------------------------------------------------------------

def test_iostat_en_fixture():
    disks = iostat.parse_iostat_en(fixture("iostat-En.txt"))
    assert sorted(disks) == ["c0t5000CCA0496E6F8Dd0",
                             "c0t55CD2E404C0D8D0Ed0", "c1t0d0"]
    intel = disks["c0t55CD2E404C0D8D0Ed0"]
    assert intel.vendor == "ATA     "
    assert intel.product == "INTEL SSDSC2BA40"
    assert intel.revision == "0270"
    assert intel.serial == "BTTV5095012Z400"          # cut to 15
    assert intel.size_bytes == 400088457216
    hgst = disks["c0t5000CCA0496E6F8Dd0"]
    assert hgst.vendor == "HGST    " and hgst.product == "HUS724040ALS640 "
    assert disks["c1t0d0"].serial == "S2UJNX0J101234"


def test_iostat_en_truncated_names_field():
    text = fixture("iostat-En.txt")
    text = text[:text.index("Size: 480.10GB")]
    with pytest.raises(ParseError) as e:
        iostat.parse_iostat_en(text)
    assert "'iostat -En'" in str(e.value) and "'Size'" in str(e.value)


def test_iostat_en_garbage():
    with pytest.raises(ParseError) as e:
        iostat.parse_iostat_en("iostat: cannot open kstat\n")
    assert "Soft Errors" in str(e.value)


# -- diskinfo -cHp ------------------------------------------------------------

CHP = ("SCSI\tc0t5000CCA0496E6F8Dd0\tHGST\tHUS724040ALS640\tP4GB6YEX\t"
       "4000787030016\t??--\t0,0\n"
       "SCSI\tc0t55CD2E404C0D8D0Ed0\tINTEL\tSSDSC2BA400G3\t"
       "BTTV5095012Z400HGN\t400088457216\t??-S\t0,1\n"
       "SATA\tc1t0d0\tSAMSUNG\tMZ7LM480HCHP-00003\tS2UJNX0J101234\t"
       "480103981056\t??RS\t-\n")


def test_diskinfo_chp():
    disks = diskinfo.parse_diskinfo_chp(CHP)
    intel = disks["c0t55CD2E404C0D8D0Ed0"]
    assert intel.serial == "BTTV5095012Z400HGN"       # full serial
    assert intel.ssd is True and intel.removable is False
    assert intel.vendor_id == "INTEL"                   # split ATA model
    assert disks["c1t0d0"].removable is True
    assert disks["c1t0d0"].location is None
    assert disks["c0t5000CCA0496E6F8Dd0"].ssd is False


@pytest.mark.parametrize("line, field", [
    ("SCSI\tc0t0d0\tHGST\n", "line 1"),
    ("SCSI\tc0t0d0\tA\tB\tS\t12x\t??--\t-\n", "SIZE"),
    ("SCSI\tc0t0d0\tA\tB\tS\t12\t?-\t-\n", "FLRS"),
])
def test_diskinfo_garbage(line, field):
    with pytest.raises(ParseError) as e:
        diskinfo.parse_diskinfo_chp(line)
    assert "'diskinfo -cHp'" in str(e.value) and field in str(e.value)


# -- zpool status -------------------------------------------------------------

def test_zpool_status_fixture():
    pools = zpool.parse_zpool_status(fixture("zpool-status.txt"))
    tank = pools["tank"]
    roles = {m.disk: (m.role, m.top) for m in tank.members}
    assert roles["c0t5000CCA0496E6F8Dd0"] == ("data", "mirror-0")
    assert roles["c0t5000CCA0496E7C93d0"] == ("data", "mirror-1")
    assert roles["c0t55CD2E404C0D8D0Ed0"][0] == "log"
    assert roles["c1t0d0"][0] == "cache"
    assert roles["c0t5000CCA0496E8D14d0"] == ("spare",
                                              "c0t5000CCA0496E8D14d0")
    assert len(tank.members) == 7


def test_zpool_status_upstream_class_headers_with_trailing_tab():
    text = fixture("zpool-status.txt").replace("\tlogs\n", "\tlogs\t\n")
    pools = zpool.parse_zpool_status(text)
    assert any(m.role == "log" for m in pools["tank"].members)


def test_zpool_status_no_pools():
    assert zpool.parse_zpool_status("no pools available\n") == {}


def test_zpool_status_truncated():
    text = fixture("zpool-status.txt")
    with pytest.raises(ParseError) as e:
        zpool.parse_zpool_status(text[:text.index("config:")])
    assert "'zpool status'" in str(e.value) and "config" in str(e.value)


# -- zdb -C -------------------------------------------------------------------

def test_zdb_cachefile_form():
    pools = zdb.parse_zdb_cachefile(fixture("zdb-C.txt"))
    tops = pools["tank"]
    assert [(t.index, t.type, t.ashift, t.is_log) for t in tops] == [
        (0, "mirror", 12, False), (1, "disk", 12, True)]
    assert tops[0].disks == ["c0t5000CCA0496E6F8Dd0",
                             "c0t5000CCA0496E7A11d0"]
    by_disk = zdb.ashift_by_disk(pools)
    assert by_disk["c0t55CD2E404C0D8D0Ed0"] == ("tank", 12)


def test_zdb_missing_ashift_names_field():
    text = fixture("zdb-C.txt").replace("            ashift: 12\n", "", 1)
    with pytest.raises(ParseError) as e:
        zdb.parse_zdb_cachefile(text)
    assert "'zdb -C'" in str(e.value) and "'ashift'" in str(e.value)


# -- path_to_inst -------------------------------------------------------------

def test_path_to_inst():
    text = ('"/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"\n'
            '"/pci@0,0/pci15d9,805@1f,2/disk@0,0" 2 "sd"\n'
            '"/pci@0,0/pci8086,2f02@1" 0 "pcieb"\n')
    assert devlinks.parse_path_to_inst(text) == {
        "/scsi_vhci/disk@g5000cca0496e6f8d": 0,
        "/pci@0,0/pci15d9,805@1f,2/disk@0,0": 2}
    with pytest.raises(ParseError) as e:
        devlinks.parse_path_to_inst("garbage\n")
    assert "line 1" in str(e.value)


# -- numbers and names that run on ------------------------------------------

BIG = "9" * 5000        # past the 4300 digits Python's int() reads


@pytest.mark.parametrize("text, kw, value", [
    ("0", {}, 0), ("0012", {}, 12), ("1" * 20, {}, int("1" * 20)),
    ("ff", {"base": 16, "digits": 16}, 255), ("17", {"base": 8}, 15),
])
def test_parse_count_reads_ascii_digits(text, kw, value):
    assert parse_count(text, command="c", field="f", what="a count",
                       **kw) == value


@pytest.mark.parametrize("text, kw, reason", [
    ("", {}, "'' is not a count"),
    ("+1", {}, "'+1' is not a count"),
    (" 1", {}, "' 1' is not a count"),
    ("1_000", {}, "'1_000' is not a count"),
    ("\u0661\u0662", {}, "'\u0661\u0662' is not a count"),
    ("0x10", {}, "'0x10' is not a count"),
    ("-1", {}, "'-1' is not a count"),
    ("fg", {"base": 16}, "'fg' is not a count"),
    ("1" * 21, {}, "'11111111111111111111'... (21 characters) is not a "
     "count: more than 20 digits"),
    ("f" * 17, {"base": 16, "digits": 16}, "'fffffffffffffffff' is not a "
     "count: more than 16 digits"),
])
def test_parse_count_refuses_naming_the_field(text, kw, reason):
    with pytest.raises(ParseError) as e:
        parse_count(text, command="iostat -En", field="Hard Errors",
                    what="a count", **kw)
    assert e.value.field == "Hard Errors"
    assert e.value.reason == reason


def test_parse_count_message_cuts_a_long_number_short():
    with pytest.raises(ParseError) as e:
        parse_count("1234" + BIG, command="iostat -En", field="Size",
                    what="a size", where="line 12")
    assert str(e.value) == (
        "cannot parse 'iostat -En' output: missing or bad field 'Size': "
        "line 12: '12349999999999999999'... (5004 characters) is not a "
        "size: more than 20 digits")


def _shaped(name):
    return fixture(os.path.join("realworld-shaped", name))


ZDB_LABEL = "zdb-l-ec2-v28-annotations-removed.txt"
# (parser, text, field): a number of 5000 digits where the output has
# one.  Each is a ParseError naming the field, never Python's ValueError
# ("Exceeds the limit (4300 digits)") or a value read from it.
LONG_NUMBERS = [
    (iostat.parse_iostat_en, lambda: fixture("iostat-En.txt").replace(
        "Hard Errors: 0", "Hard Errors: " + BIG, 1), "Hard Errors"),
    (iostat.parse_iostat_en, lambda: fixture("iostat-En.txt").replace(
        "<4000787030016 bytes>", "<%s bytes>" % BIG), "Size"),
    (zdb.parse_zdb_cachefile, lambda: fixture("zdb-C.txt").replace(
        "ashift: 12", "ashift: " + BIG, 1), "ashift"),
    # A top-level vdev (8 columns deep); a leaf's number is not read.
    (zdb.parse_zdb_cachefile, lambda: fixture("zdb-C.txt").replace(
        "\n        children[1]:", "\n        children[%s]:" % BIG),
     "children"),
    (zdb.parse_zdb_label, lambda: _shaped(ZDB_LABEL).replace(
        "LABEL 0", "LABEL " + BIG), "LABEL"),
    (zdb.parse_zdb_label, lambda: _shaped(ZDB_LABEL).replace(
        "version: 28", "version: " + BIG), "version"),
    (zdb.parse_zdb_label, lambda: _shaped(ZDB_LABEL).replace(
        "id: 0", "id: " + BIG), "id"),
    (zdb.parse_zdb_ashifts, lambda: "    ashift: %s\n" % BIG, "ashift"),
    (diskinfo.parse_diskinfo_chp, lambda: CHP.replace(
        "400088457216", BIG), "SIZE"),
    (diskinfo.parse_diskinfo_chp, lambda: "SCSI\tc0t0d0\tA\tB\t%s.00 GiB"
     "\tno\tyes\n" % BIG, "SIZE"),
    (mdb.parse_sd_state, lambda: fixture("mdb-sd_state.txt").replace(
        "un 0: ", "un %s: " % BIG), "un"),
    (mdb.parse_sd_state, lambda: fixture("mdb-sd_state.txt").replace(
        "32 entries", BIG + " entries"), "entries in sd_state table"),
    (mdb.parse_sd_state, lambda: fixture("mdb-sd_state.txt").replace(
        "un_tgt_blocksize = 0x200", "un_tgt_blocksize = 0t" + BIG, 1),
     "un_tgt_blocksize"),
    # Hex is no limit for int(), but wider than 64 bits is no member.
    (mdb.parse_sd_state, lambda: fixture("mdb-sd_state.txt").replace(
        "un_tgt_blocksize = 0x200", "un_tgt_blocksize = 0x1" + "0" * 16,
        1), "un_tgt_blocksize"),
    (mdb.parse_inquiry, lambda: "inq_vid = [ 'A', %s ]\n" % BIG, "inq_vid"),
    (devlinks.parse_path_to_inst, lambda: '"/scsi_vhci/disk@g5000cca0496e6'
     'f8d" %s "sd"\n' % BIG, "line 1"),
]


@pytest.mark.parametrize("parse, text, field", LONG_NUMBERS)
def test_number_of_5000_digits_is_refused(parse, text, field):
    with pytest.raises(ParseError) as e:
        parse(text())
    assert e.value.field == field
    assert "more than" in e.value.reason
    # The value is quoted cut short: the message stays one line.
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("parse, text, field", [
    (iostat.parse_iostat_en, fixture("iostat-En.txt").replace(
        "c0t5000CCA0496E6F8Dd0", "c0t" + "5" * 300 + "d0"), "device name"),
    (zpool.parse_zpool_status, fixture("zpool-status.txt").replace(
        "tank", "t" * 300), "pool"),
    (zpool.parse_zpool_status, re.sub(r"mirror-0 .*", "m" * 5000,
                                      fixture("zpool-status.txt")), "STATE"),
    (zdb.parse_zdb_cachefile, "t%s:\n    version: 5000\n" % ("a" * 300),
     "line 1"),
    (diskinfo.parse_diskinfo_chp, CHP.replace("c1t0d0", "c" * 300),
     "DISK"),
    (mdb.parse_inquiry, "inq_vid = [ %s ]\n" % ("'A', " * 2000), "inq_vid"),
])
def test_name_that_runs_on_is_refused_or_quoted_short(parse, text, field):
    with pytest.raises(ParseError) as e:
        parse(text)
    assert e.value.field == field
    assert len(str(e.value)) < 300
