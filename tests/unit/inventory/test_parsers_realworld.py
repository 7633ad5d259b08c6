# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The illumos command parsers against what real systems printed and
people published (tests/fixtures/realworld/, described in its INDEX.md),
and against constructed variants (tests/fixtures/inventory/realworld-shaped/);
tests/e2e/test_inventory_sim.py runs them on what the simulator prints,
the exact illumos formats.

Every corpus file of these kinds has one test with its exact outcome:
the records read, or the exact refusal.  Ground truth (INDEX.md
"Ground truth collected") is asserted exactly as the source states it.
Pastes that lost what the parser needs (grep-filtered, indentation or
blanks collapsed, annotated, markdown emphasis) are refused with a
ParseError naming the line and field; nothing is guessed, and no value
ever lands on another disk.
"""

import os
import re
import sys

import pytest

from sdtune.errors import ParseError
from sdtune.inventory import devlinks, diskinfo, iostat, mdb, zdb, zpool

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))

from tests.sim import facts_fixtures as fx  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
REAL = os.path.join(FIXTURES, "realworld")
SHAPED = os.path.join(FIXTURES, "inventory", "realworld-shaped")


def real(path):
    with open(os.path.join(REAL, path), encoding="utf-8") as f:
        return f.read()


def shaped(name):
    with open(os.path.join(SHAPED, name), encoding="utf-8") as f:
        return f.read()


def refusal(parse, text):
    with pytest.raises(ParseError) as e:
        parse(text)
    return str(e.value)


def unexpand(text):
    """What a terminal copy or `unexpand -a` makes of blanks: runs of
    two or more that reach a tab stop become TABs."""
    out = []
    for line in text.split("\n"):
        cells = [line[i:i + 8] for i in range(0, len(line), 8)]
        new = []
        for k, cell in enumerate(cells):
            stripped = cell.rstrip(" ")
            if k + 1 < len(cells) and len(cell) == 8 and \
                    len(cell) - len(stripped) >= 2:
                new.append(stripped + "\t")
            else:
                new.append(cell)
        out.append("".join(new))
    return "\n".join(out)


def strip_trailing(text):
    return "\n".join(line.rstrip() for line in text.split("\n"))


# =========================================================================
# iostat -En
# =========================================================================

OMNIOS_INTEL = "iostat-En/omnios-r151046-2024-illumos-omnios-pr1483-" \
    "intel-ssdsc2kb24.txt"
GOZOINKS = "iostat-En/smartos-2017-gozoinks-seagate-st2000nm0011-errors.txt"
ZERO_ERRORS = {"Soft Errors": 0, "Hard Errors": 0, "Transport Errors": 0,
               "Media Error": 0, "Device Not Ready": 0, "No Device": 0,
               "Recoverable": 0, "Illegal Request": 0,
               "Predictive Failure Analysis": 0}


def test_iostat_omnios_two_intel_ssds_ground_truth():
    # Ground truth: two `Vendor: ATA Product: INTEL SSDSC2KB24` SSDs, the
    # values exactly as printed (trailing blanks on most lines).
    disks = iostat.parse_iostat_en(real(OMNIOS_INTEL))
    assert sorted(disks) == ["c1t4d0", "c1t5d0"]
    for name, serial in (("c1t4d0", "BTYS817407RE240"),
                         ("c1t5d0", "BTYS817409YS240")):
        d = disks[name]
        assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) \
            == ("ATA     ", "INTEL SSDSC2KB24", "0121", serial,
                240057409536)
        assert d.inquiry == ("ATA     ", "INTEL SSDSC2KB24")
        assert d.errors == ZERO_ERRORS


def test_iostat_gozoinks_failed_seagate_error_counts():
    # Ground truth: the failed disk is a Seagate ST2000NM0011, 2 TB;
    # Soft/Hard/Transport 3/1/11, Illegal Request 71.  The prompt line
    # above the record is not iostat's and is skipped.
    disks = iostat.parse_iostat_en(real(GOZOINKS))
    assert list(disks) == ["c1t4d0"]
    d = disks["c1t4d0"]
    assert (d.soft_errors, d.hard_errors, d.transport_errors) == (3, 1, 11)
    assert d.errors == dict(ZERO_ERRORS, **{
        "Soft Errors": 3, "Hard Errors": 1, "Transport Errors": 11,
        "Illegal Request": 71})
    assert (d.vendor, d.product, d.revision, d.serial) == \
        ("ATA     ", "ST2000NM0011    ", "SN03", "Z1P3DF18")
    assert d.product.strip() == "ST2000NM0011"
    assert d.size_bytes == 2000398934016


def test_iostat_virtio_unpadded_vendor_and_product():
    # blkdev does not pad: `Vendor: Virtio Product: Block Device`; the
    # fields are split at the names, and are not INQUIRY bytes.
    disks = iostat.parse_iostat_en(real(
        "iostat-En/kvmadm-pr106-2017-omnios-r151024-virtio-first-block-"
        "truncated.txt"))
    assert list(disks) == ["c2t0d0"]
    d = disks["c2t0d0"]
    assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) == \
        ("Virtio", "Block Device", "0000", "ETC0M3H0M3", 322122547200)
    assert d.inquiry is None
    assert d.errors == ZERO_ERRORS


def test_iostat_grep_filtered_errors_only_is_refused():
    # `iostat -En | grep -i errors`: only the counters line of each
    # device, so vendor, product and size are unknown.
    assert refusal(iostat.parse_iostat_en, real(
        "iostat-En/danubecloud-esdc-docs-2017-iostat-En-grep-errors-"
        "only.txt")) == (
        "cannot parse 'iostat -En' output: missing or bad field 'Vendor': "
        "missing for c1t0d0: its record (line 2) ends after 'Transport "
        "Errors'; was the output cut short or filtered?")


def test_iostat_markdown_emphasis_around_a_name_is_refused():
    assert refusal(iostat.parse_iostat_en, real(
        "iostat-En/github-notes-solaris11.3-vbox-non-aligned-writes-"
        "markdown-emphasis.txt")) == (
        "cannot parse 'iostat -En' output: missing or bad field 'device "
        "name': line 7: '*c2t0d0*' is not a device name as iostat prints "
        "it")


def test_iostat_solaris11_without_the_emphasis():
    # Oracle Solaris 11.3: Non-Aligned Writes, an empty Serial No,
    # `Revision: 1.0  Serial No:`, prompts before and after.
    disks = iostat.parse_iostat_en(shaped(
        "iostat-En-solaris11.3-vbox-emphasis-removed.txt"))
    assert sorted(disks) == ["c1t0d0", "c2t0d0"]
    hd, cd = disks["c1t0d0"], disks["c2t0d0"]
    assert (hd.vendor, hd.product, hd.revision, hd.serial, hd.size_bytes) \
        == ("ATA     ", "VBOX HARDDISK   ", "1.0 ", None, 26843545600)
    assert (cd.vendor, cd.product, cd.revision, cd.serial, cd.size_bytes) \
        == ("VBOX    ", "CD-ROM          ", "1.0 ", None, 59262976)
    assert hd.errors == dict(ZERO_ERRORS, **{"Illegal Request": 4,
                                             "Non-Aligned Writes": 0})
    assert cd.errors["Non-Aligned Writes"] == 0


def test_iostat_record_on_one_line_reads_by_names():
    # The page lost the line breaks (and collapsed the blanks): every
    # name is still there once and in order, so the values are known;
    # the vendor's padding is not, so it is no INQUIRY key.
    disks = iostat.parse_iostat_en(real(
        "iostat-En/kohju-jp-2017-sandisk-sdssdxps-errors-line-breaks-"
        "lost.txt"))
    assert list(disks) == ["c0t5001B44F1C7C0C93d0"]
    d = disks["c0t5001B44F1C7C0C93d0"]
    assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) == \
        ("ATA", "SanDisk SDSSDXPS", "00RL", "154902401171", 480103981056)
    assert d.inquiry is None
    assert d.errors == {
        "Soft Errors": 39022, "Hard Errors": 1, "Transport Errors": 9,
        "Media Error": 0, "Device Not Ready": 0, "No Device": 1,
        "Recoverable": 39022, "Illegal Request": 0,
        "Predictive Failure Analysis": 0, "Non-Aligned Writes": 0}


def test_iostat_lowercase_en_error_table_is_not_iostat_En():
    assert refusal(iostat.parse_iostat_en, real(
        "other/smartos-2017-gozoinks-iostat-en-lowercase.txt")) == (
        "cannot parse 'iostat -En' output: missing or bad field 'Soft "
        "Errors': no device record (a line '<device> Soft Errors: ...') in "
        "the output")


@pytest.mark.parametrize("path", [
    "other/smartos-2017-gozoinks-cfgadm-l.txt",
    "other/smartos-live-issue635-2016-format-virtio-blkdev.txt",
    "other/omnios-2020-migrate-rpool-format-disk-selections-vbox.txt",
    "other/openindiana-hcl-drives-table-ground-truth.md",
])
def test_iostat_other_commands_are_refused(path):
    assert refusal(iostat.parse_iostat_en, real(path)).endswith(
        "no device record (a line '<device> Soft Errors: ...') in the "
        "output")


@pytest.mark.parametrize("variant", [strip_trailing, unexpand],
                         ids=["trailing-blanks-stripped", "tabs"])
def test_iostat_copies_with_other_blanks_read_the_same(variant):
    text = real(OMNIOS_INTEL)
    assert iostat.parse_iostat_en(variant(text)) == \
        iostat.parse_iostat_en(text)
    facts = fx.IOSTAT_EN
    assert iostat.parse_iostat_en(variant(facts)) == \
        iostat.parse_iostat_en(facts)


def _show_disk_errors(name, stats, pretty=True):
    """iostat.c show_disk_errors() for one device, for the layouts no
    public copy shows: (label, value) with int or str values, Size as
    ("Size", bytes)."""
    out, line, col = [], [], 0
    n = len(name)
    if n > 20:
        line.append("%s " % name)
    elif n > 16:
        line.append("%-20.20s " % name)
    else:
        line.append(("%-16.16s " if pretty else "%-9.9s ") % name)
    for i, (label, value) in enumerate(stats):
        col += len(label)
        if label == "Size":
            line.append("%s: %2.2fGB <%d bytes>\n" % (label, value / 1e9,
                                                      value))
            col = 0
        elif isinstance(value, str):
            # "%-.16s", but a devid is printed whole.
            line.append("%s: %s " % (label, value if label == "Device Id"
                                     else value[:16]))
            col += len(value)
        else:
            line.append("%s: %u " % (label, value))
            col += 4
        if col >= 62 or i == 2:
            out.append("".join(line) + "\n")
            line, col = [], 0
    if line:
        out.append("".join(line) + "\n")
    return "".join(out).replace("\n\n", "\n")


SD_STATS = [("Soft Errors", 0), ("Hard Errors", 0), ("Transport Errors", 0),
            ("Vendor", "SEAGATE "), ("Product", "ST4000NM0023    "),
            ("Revision", "0003"), ("Serial No", "Z1Z"),
            ("Size", 4000787030016), ("Media Error", 0),
            ("Device Not Ready", 0), ("No Device", 0), ("Recoverable", 0),
            ("Illegal Request", 2), ("Predictive Failure Analysis", 0)]
CMDK_STATS = [("Soft Errors", 0), ("Hard Errors", 0),
              ("Transport Errors", 0), ("Model", "ST380011A"),
              ("Revision", "3.06"), ("Serial No", "5JV8Y3AS"),
              ("Size", 80026361856), ("Media Error", 0),
              ("Device Not Ready", 0), ("No Device", 0),
              ("Recoverable", 0), ("Illegal Request", 0)]
VDC_STATS = [("Soft Errors", 0), ("Transport Errors", 0),
             ("Protocol Errors", 0), ("Vendor", "SUN"),
             ("Product", "VDSK"), ("Size", 21474836480)]
ST_STATS = [("Soft Errors", 0), ("Hard Errors", 0), ("Transport Errors", 0),
            ("Vendor", "HP      "), ("Product", "Ultrium 5-SCSI  "),
            ("Revision", "Z6ED"), ("Serial No", "HU1234ABCD")]


def test_iostat_every_driver_layout_and_name_form():
    # sd with a short serial (Size then follows on the same line), sdN
    # names (iostat -E without -n), a WWN name longer than 20, cmdk
    # (Model), vdc (no Hard Errors, ends at Size), st (ends at Serial).
    text = (_show_disk_errors("sd3", SD_STATS, pretty=False)
            + _show_disk_errors("c0t5000C500A1B2C3D4d0", SD_STATS)
            + _show_disk_errors("c0d0", CMDK_STATS)
            + _show_disk_errors("c0d1", VDC_STATS)
            + _show_disk_errors("rmt/0", ST_STATS))
    assert "Serial No: Z1Z Size: 4000.79GB" in text
    disks = iostat.parse_iostat_en(text)
    assert list(disks) == ["sd3", "c0t5000C500A1B2C3D4d0", "c0d0", "c0d1",
                           "rmt/0"]
    for name in ("sd3", "c0t5000C500A1B2C3D4d0"):
        d = disks[name]
        assert (d.vendor, d.product, d.revision, d.serial, d.size_bytes) \
            == ("SEAGATE ", "ST4000NM0023    ", "0003", "Z1Z",
                4000787030016)
        assert d.errors["Illegal Request"] == 2
    cmdk = disks["c0d0"]
    assert (cmdk.model, cmdk.vendor, cmdk.product, cmdk.serial,
            cmdk.size_bytes) == ("ST380011A", None, None, "5JV8Y3AS",
                                 80026361856)
    vdc = disks["c0d1"]
    assert (vdc.vendor, vdc.product, vdc.hard_errors, vdc.revision,
            vdc.size_bytes) == ("SUN", "VDSK", None, None, 21474836480)
    assert vdc.errors["Protocol Errors"] == 0
    tape = disks["rmt/0"]
    assert (tape.product, tape.serial, tape.size_bytes) == \
        ("Ultrium 5-SCSI  ", "HU1234ABCD", None)


def test_iostat_Ei_device_id_in_place_of_the_serial():
    stats = [(label, value) if label != "Serial No" else
             ("Device Id", "id1,sd@n5000c500a1b2c3d4") for label, value in
             SD_STATS]
    d = iostat.parse_iostat_en(_show_disk_errors("c0t0d0", stats))["c0t0d0"]
    assert (d.serial, d.device_id, d.size_bytes) == \
        (None, "id1,sd@n5000c500a1b2c3d4", 4000787030016)


def test_iostat_record_cut_after_serial_is_not_taken_for_a_tape():
    # A disk record cut before Size ends like a tape's: only tape names
    # may end there.
    text = _show_disk_errors("c0t0d0", SD_STATS[:7])
    assert refusal(iostat.parse_iostat_en, text).startswith(
        "cannot parse 'iostat -En' output: missing or bad field 'Size': "
        "missing for c0t0d0")


def test_iostat_no_cut_or_dropped_line_moves_a_value():
    # Cut the two-disk output at every line, or drop any one line: the
    # result is a refusal or records equal to the full output's.
    full = iostat.parse_iostat_en(fx.IOSTAT_EN)
    lines = fx.IOSTAT_EN.splitlines(True)
    variants = ["".join(lines[:k]) for k in range(1, len(lines))]
    variants += ["".join(lines[:k] + lines[k + 1:])
                 for k in range(len(lines))]
    for text in variants:
        try:
            got = iostat.parse_iostat_en(text)
        except ParseError:
            continue
        for name, disk in got.items():
            assert disk == full[name], text


@pytest.mark.parametrize("text, field", [
    ("c0t0d0 Soft Errors: 0 Hard Errors: 0 Transport Errors: 0 \n"
     "Vendor: ATA      Product: X Revision: 1 Serial No: 1 "
     "Product: Y \n", "Product"),                       # twice
    (fx.IOSTAT_EN.replace("Hard Errors: 0", "Hard Errors: x", 1),
     "Hard Errors"),                                    # not a count
    ("Vendor: ATA      Product: X \n" + fx.IOSTAT_EN,
     "Vendor"),                                         # no device line
    (fx.IOSTAT_EN.replace("Revision: 0270", "Revision: 0270 (fw)"),
     "Revision"),                                       # annotated
])
def test_iostat_garbled_records_name_the_field(text, field):
    assert "'%s'" % field in refusal(iostat.parse_iostat_en, text)


def test_iostat_size_must_agree_with_its_bytes():
    text = fx.IOSTAT_EN.replace("400.09GB <400088457216", "400.09GB "
                                "<480103981056")
    assert "'Size'" in refusal(iostat.parse_iostat_en, text)


# =========================================================================
# zpool status
# =========================================================================

def members(pool):
    return [(m.disk, m.slice, m.role, m.top, m.state) for m in pool.members]


def tops(pool):
    return [(v.name, v.role, v.state) for v in pool.vdevs]


def test_zpool_gozoinks_raidz2_faulted_without_errors_line():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/smartos-2017-gozoinks-raidz2-faulted.txt"))
    assert list(pools) == ["zones"]
    zones = pools["zones"]
    assert zones.state == "DEGRADED"
    assert tops(zones) == [("raidz2-0", "data", "DEGRADED")]
    assert members(zones) == [
        ("c1t%dd0" % n, None, "data", "raidz2-0",
         "FAULTED" if n == 4 else "ONLINE") for n in range(6)]


def test_zpool_bhyve_single_disk_rpool():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/omnios-2018-bhyve-migrate-rpool-single-disk.txt"))
    assert list(pools) == ["rpool"]
    assert tops(pools["rpool"]) == [("c2t0d0", "data", "ONLINE")]
    assert members(pools["rpool"]) == [
        ("c2t0d0", None, "data", "c2t0d0", "ONLINE")]


def test_zpool_three_way_mirror_resilvering_multiline_scan():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/omnios-2020-migrate-rpool-3way-mirror-"
        "resilvering.txt"))
    assert list(pools) == ["rpool"]
    assert tops(pools["rpool"]) == [("mirror-0", "data", "ONLINE")]
    assert members(pools["rpool"]) == [
        ("c1t%dd0" % n, None, "data", "mirror-0", "ONLINE")
        for n in (1, 2, 3)]


def test_zpool_mirror_followed_by_zpool_list():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/omnios-2020-migrate-rpool-advanced-mirror-plus-"
        "zpool-list.txt"))
    assert list(pools) == ["rpool"]
    assert members(pools["rpool"]) == [
        ("c1t1d0", None, "data", "mirror-0", "ONLINE"),
        ("c1t2d0", None, "data", "mirror-0", "ONLINE")]


def test_zpool_two_pools_in_one_output():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/omnios-2020-migrate-entire-pool-two-pools.txt"))
    assert list(pools) == ["tank1", "tank2"]
    assert members(pools["tank1"]) == [
        ("c1t3d0", None, "data", "c1t3d0", "ONLINE")]
    assert members(pools["tank2"]) == [
        ("c1t4d0", None, "data", "c1t4d0", "ONLINE")]


def test_zpool_rst_copy_with_inconsistent_indentation():
    # The header lines carry the reST indent, the table does not: the
    # tree is read relative to the NAME header.
    pools = zpool.parse_zpool_status(real(
        "zpool-status/danubecloud-esdc-docs-2017-smartos-raidz1-rst-"
        "indented.txt"))
    assert list(pools) == ["zones"]
    assert tops(pools["zones"]) == [("raidz1-0", "data", "ONLINE")]
    assert members(pools["zones"]) == [
        ("c0t%dd0" % n, None, "data", "raidz1-0", "ONLINE")
        for n in range(4)]


def test_zpool_mirror_zones_output_ends_after_the_table():
    pools = zpool.parse_zpool_status(real(
        "zpool-status/smartos-docs-2013-migrate-from-oi-mirror-zones.txt"))
    assert list(pools) == ["zones"]
    assert members(pools["zones"]) == [
        ("c1t0d0", None, "data", "mirror-0", "ONLINE"),
        ("c1t1d0", None, "data", "mirror-0", "ONLINE")]


def test_zpool_whitespace_collapsed_copy_is_refused():
    assert refusal(zpool.parse_zpool_status, real(
        "zpool-status/smartos-docs-confluence-whitespace-collapsed-"
        "raidz1.txt")) == (
        "cannot parse 'zpool status' output: missing or bad field 'NAME': "
        "line 9: 'raidz1-0' at the indentation of the pool name in pool "
        "zones; the vdev tree cannot be told (was the indentation lost?)")


def test_zpool_every_vdev_kind():
    pools = zpool.parse_zpool_status(shaped(
        "zpool-status-every-vdev-kind.txt"))
    assert list(pools) == ["tank", "rpool"]
    tank = pools["tank"]
    assert tank.state == "DEGRADED"
    assert tops(tank) == [
        ("raidz1-0", "data", "ONLINE"), ("raidz2-2", "data", "DEGRADED"),
        ("raidz3-4", "data", "DEGRADED"), ("mirror-5", "data", "ONLINE"),
        ("mirror-1", "log", "ONLINE"), ("mirror-6", "special", "ONLINE"),
        ("c4t2d0", "dedup", "ONLINE"), ("c5t0d0", "cache", "ONLINE"),
        ("c5t1d0", "cache", "ONLINE"), ("c0t9d0", "spare", "INUSE"),
        ("c0t10d0", "spare", "AVAIL")]
    assert [(m.disk, m.slice, m.role, m.top, m.state, m.name, m.parent)
            for m in tank.members] == [
        ("c0t0d0", None, "data", "raidz1-0", "ONLINE", "c0t0d0",
         "raidz1-0"),
        ("c0t1d0", None, "data", "raidz1-0", "ONLINE", "c0t1d0",
         "raidz1-0"),
        ("c0t2d0", None, "data", "raidz1-0", "ONLINE", "c0t2d0",
         "raidz1-0"),
        ("c0t3d0", None, "data", "raidz2-2", "ONLINE", "c0t3d0",
         "raidz2-2"),
        ("c0t4d0", None, "data", "raidz2-2", "UNAVAIL", "c0t4d0/old",
         "replacing-1"),
        ("c0t4d0", None, "data", "raidz2-2", "ONLINE", "c0t4d0",
         "replacing-1"),
        ("c0t5d0", None, "data", "raidz2-2", "ONLINE", "c0t5d0",
         "raidz2-2"),
        ("c0t6d0", None, "data", "raidz2-2", "FAULTED", "c0t6d0",
         "spare-3"),
        ("c0t9d0", None, "data", "raidz2-2", "ONLINE", "c0t9d0",
         "spare-3"),
        ("c1t0d0", None, "data", "raidz3-4", "ONLINE", "c1t0d0",
         "raidz3-4"),
        ("c1t1d0", None, "data", "raidz3-4", "ONLINE", "c1t1d0",
         "raidz3-4"),
        ("c1t2d0", None, "data", "raidz3-4", "ONLINE", "c1t2d0",
         "raidz3-4"),
        # A missing device: its guid, and where it was.
        ("c1t3d0", "s0", "data", "raidz3-4", "UNAVAIL",
         "4712386091934725718", "raidz3-4"),
        ("c1t4d0", None, "data", "raidz3-4", "ONLINE", "c1t4d0",
         "raidz3-4"),
        ("c2t0d0", "s0", "data", "mirror-5", "ONLINE", "c2t0d0s0",
         "mirror-5"),
        ("c2t1d0", "s0", "data", "mirror-5", "ONLINE", "c2t1d0s0",
         "mirror-5"),
        ("c3t0d0", None, "log", "mirror-1", "ONLINE", "c3t0d0",
         "mirror-1"),
        ("c3t1d0", None, "log", "mirror-1", "ONLINE", "c3t1d0",
         "mirror-1"),
        ("c4t0d0", None, "special", "mirror-6", "ONLINE", "c4t0d0",
         "mirror-6"),
        ("c4t1d0", None, "special", "mirror-6", "ONLINE", "c4t1d0",
         "mirror-6"),
        ("c4t2d0", None, "dedup", "c4t2d0", "ONLINE", "c4t2d0", None),
        ("c5t0d0", None, "cache", "c5t0d0", "ONLINE", "c5t0d0", None),
        ("c5t1d0", None, "cache", "c5t1d0", "ONLINE", "c5t1d0", None),
        ("c0t9d0", None, "spare", "c0t9d0", "INUSE", "c0t9d0", None),
        ("c0t10d0", None, "spare", "c0t10d0", "AVAIL", "c0t10d0", None)]
    assert members(pools["rpool"]) == [
        ("c6t0d0", "s0", "data", "c6t0d0s0", "ONLINE")]


@pytest.mark.parametrize("variant", [
    lambda s: s.expandtabs(8), lambda s: s.expandtabs(4),
    lambda s: "".join("    " + line for line in s.splitlines(True)),
    strip_trailing,
], ids=["tabs-expanded", "tabs-4", "indented-as-a-whole",
        "trailing-blanks-stripped"])
def test_zpool_copies_with_other_blanks_read_the_same(variant):
    text = shaped("zpool-status-every-vdev-kind.txt")
    assert zpool.parse_zpool_status(variant(text)) == \
        zpool.parse_zpool_status(text)


def status_text(pool, rows):
    """A `zpool status` section laid out as print_status_config() does:
    rows of (depth, name, note); a name of None prints a class header."""
    width = max(10, *(len(name) + depth for depth, name, _ in rows
                      if name))
    out = ["  pool: %s\n state: ONLINE\n  scan: none requested\n"
           "config:\n\n" % pool,
           "\t%-*s  %-8s %5s %5s %5s\n" % (width, "NAME", "STATE", "READ",
                                           "WRITE", "CKSUM")]
    for depth, name, note in rows:
        if name is None:
            out.append("\t%s\n" % note)
            continue
        out.append("\t%*s%-*s  %-8s %5s %5s %5s%s\n" % (
            depth, "", width - depth, name, "ONLINE", "0", "0", "0",
            "  " + note if note else ""))
    return "".join(out) + "\nerrors: No known data errors\n"


def test_zpool_full_paths():
    # zpool status -P: leaves as /dev/dsk/ paths.
    text = status_text("tank", [
        (0, "tank", ""), (2, "mirror-0", ""),
        (4, "/dev/dsk/c0t5000CCA0496E6F8Dd0s0", ""),
        (4, "/dev/dsk/c0t5000CCA0496E7A11d0s0", ""),
        (0, None, "logs"), (2, "/dev/dsk/c0t55CD2E404C0D8D0Ed0s0", "")])
    assert members(zpool.parse_zpool_status(text)["tank"]) == [
        ("c0t5000CCA0496E6F8Dd0", "s0", "data", "mirror-0", "ONLINE"),
        ("c0t5000CCA0496E7A11d0", "s0", "data", "mirror-0", "ONLINE"),
        ("c0t55CD2E404C0D8D0Ed0", "s0", "log",
         "/dev/dsk/c0t55CD2E404C0D8D0Ed0s0", "ONLINE")]


def test_zpool_file_vdevs_are_no_disks():
    text = status_text("narf", [(0, "narf", ""),
                                (2, "/export/home/jmoekamp/test", "")])
    pool = zpool.parse_zpool_status(text)["narf"]
    assert tops(pool) == [("/export/home/jmoekamp/test", "data", "ONLINE")]
    assert pool.members == []


@pytest.mark.parametrize("cut, field", [
    ("\t  mirror-0", "NAME"),       # a child indented one column off
    ("\tlogs", "NAME"),             # a class header indented
])
def test_zpool_misindented_rows_are_refused(cut, field):
    text = fx.ZPOOL_STATUS.replace(cut, cut[:1] + " " + cut[1:], 1)
    assert "'%s'" % field in refusal(zpool.parse_zpool_status, text)


def test_zpool_config_that_cannot_be_determined_is_refused():
    text = ("  pool: tank\n state: UNAVAIL\nstatus: The pool metadata is "
            "corrupted and the pool cannot be opened.\n"
            "config: The configuration cannot be determined.\n")
    assert "'config'" in refusal(zpool.parse_zpool_status, text)


# =========================================================================
# zdb
# =========================================================================

def test_zdb_bhyve_grep_ashift_ground_truth():
    # Ground truth: the original KVM disk used 512 B sectors: ashift 9.
    text = real("zdb/omnios-2018-bhyve-migrate-zdb-grep-ashift9.txt")
    assert zdb.parse_zdb_ashifts(text) == [9]
    # Without the dump around it, no pool or vdev can own the value.
    assert refusal(zdb.parse_zdb_cachefile, text) == (
        "cannot parse 'zdb -C' output: missing or bad field 'line 1': "
        "'bloody$ zdb | grep ashift' is not a pool name")


def test_zdb_solaris_allocunit_ground_truth():
    # Ground truth: allocunit 512, 4096, 8192 give ashift 9, 12, 13 (three
    # `zdb -v narf | grep ashift` runs, in that order).
    text = real("zdb/c0t0d0s0-blog-solaris11.4-allocunit-zdb-v-grep-"
                "ashift-9-12-13.txt")
    assert zdb.parse_zdb_ashifts(text) == [9, 12, 13]
    assert refusal(zdb.parse_zdb_cachefile, text) == (
        "cannot parse 'zdb -C' output: missing or bad field 'line 1': "
        "'root@solaris:~# zpool create -o allocunit=512 narf /export/h' is "
        "not part of a pool's configuration")
    assert refusal(zdb.parse_zdb_label, text) == (
        "cannot parse 'zdb -l' output: missing or bad field 'LABEL': no "
        "'LABEL n' banner in the output")


def test_zdb_annotated_label_dump_is_refused():
    text = real("zdb/omnios-wiki-ec2ami-zdb-C-l-label-v28-annotated.txt")
    expected = ("missing or bad field 'path': line 19: text after the "
                "quoted value: '<--- HERE'")
    assert refusal(zdb.parse_zdb_label, text) == \
        "cannot parse 'zdb -l' output: " + expected
    assert refusal(zdb.parse_zdb_cachefile, text) == \
        "cannot parse 'zdb -C' output: " + expected
    # The ashift line itself is clean.
    assert zdb.parse_zdb_ashifts(text) == [9]


def test_zdb_label_v28_without_the_annotations():
    labels = zdb.parse_zdb_label(shaped(
        "zdb-l-ec2-v28-annotations-removed.txt"))
    assert labels == {0: zdb.ZdbLabel(
        number=0, pool="syspool", version=28, top_index=0, type="disk",
        ashift=9, is_log=False, paths=["/dev/dsk/c3t2048d0s0"])}


def test_zdb_label_elision_is_refused():
    text = shaped("zdb-l-ec2-v28-annotations-removed.txt") + "...\n"
    assert refusal(zdb.parse_zdb_label, text) == (
        "cannot parse 'zdb -l' output: missing or bad field 'line 29': "
        "'...' is not part of label 0 (was the copy cut or annotated?)")


def test_zdb_label_four_labels_and_unreadable_ones():
    one = shaped("zdb-l-ec2-v28-annotations-removed.txt").split("\n", 1)[1]
    banner = "-" * 36 + "\n"
    text = one
    for n in (1, 2):
        text += one.replace("LABEL 0", "LABEL %d" % n)
    text += banner + "LABEL 3\n" + banner + "failed to unpack label 3\n"
    labels = zdb.parse_zdb_label(text)
    assert sorted(labels) == [0, 1, 2]
    assert {label.ashift for label in labels.values()} == {9}


def test_zdb_cachefile_old_pool_line_without_colon():
    # Older zdb printed the pool name alone, then the config.
    text = fx.ZDB_C_TANK.replace("\nMOS Configuration:\n", "tank\n")
    text = "\n".join(line[4:] if line.startswith("    ") else line
                     for line in text.splitlines())
    assert zdb.parse_zdb_cachefile(text) == \
        zdb.parse_zdb_cachefile(fx.ZDB_C_TANK)


def test_zdb_mos_configuration_and_cachefile_agree():
    mos = zdb.parse_zdb_cachefile(fx.ZDB_C_TANK)
    assert [(v.index, v.type, v.ashift, v.is_log) for v in mos["tank"]] == [
        (0, "mirror", 12, False), (1, "disk", 12, True)]
    # Feature-name lines without `: value` stay plain booleans.
    root = zdb.parse_nvlist_dump(fx.ZDB_C_TANK)
    config = root.child("MOS Configuration")
    assert config.values["com.delphix:has_per_vdev_zaps"] == "true"


@pytest.mark.parametrize("old, new, field", [
    ("ashift: 12", "ashift: twelve", "ashift"),
    ("path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0'",
     "path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0' (ok)", "path"),
])
def test_zdb_bad_values_name_line_and_field(old, new, field):
    text = fx.ZDB_C_TANK.replace(old, new, 1)
    message = refusal(zdb.parse_zdb_cachefile, text)
    assert "'%s'" % field in message and "line " in message


# =========================================================================
# diskinfo
# =========================================================================

def rows_of(disks):
    return [(d.name, d.ctype, d.vendor_id, d.product_id, d.size_gib,
             d.removable, d.ssd) for d in disks.values()]


def test_diskinfo_danube_scsi_unknown_usb_and_22_column_names():
    # Ground truth: SSD yes for the three SSDs, no for the TOSHIBA HDDs;
    # the Intel SSD shows VID INTEL / PID SSDSC2BB160G4 here.
    disks = diskinfo.parse_diskinfo_chp(real(
        "diskinfo/danubecloud-esdc-docs-2017-smartos-default-toshiba-intel-"
        "kingston.txt"))
    toshiba = ["c4t50000394F8D1162Ad0", "c10t50000394F8D8201Ad0",
               "c8t50000394F8D81CAAd0", "c11t5000039508CBF8DEd0",
               "c9t50000394F8D115F2d0", "c1t5000039508CBF892d0",
               "c2t5000039508CBF89Ad0", "c3t5000039508CBF856d0"]
    assert rows_of(disks) == [
        (name, "SCSI", "TOSHIBA", "MG03SCA200", 1863.02, False, False)
        for name in toshiba] + [
        ("c6t0d0", "UNKNOWN", "INTEL", "SSDSC2BB160G4", 149.05, False, True),
        ("c6t1d0", "UNKNOWN", "INTEL", "SSDSC2BB160G4", 149.05, False, True),
        ("c6t2d0", "UNKNOWN", "KINGSTON", "SKC300S37A60G", 55.90, False,
         True),
        ("c1t0d0", "USB", "Kingston", "DT Micro", 7.32, True, False)]
    # The default table prints neither serials nor byte counts.
    assert {(d.serial, d.size_bytes) for d in disks.values()} == \
        {(None, None)}


def test_diskinfo_kvmadm_virtio_dash_type():
    disks = diskinfo.parse_diskinfo_chp(real(
        "diskinfo/kvmadm-pr106-2017-omnios-r151024-virtio-dash-type.txt"))
    assert rows_of(disks) == [
        ("c2t0d0", None, "Virtio", "Block Device", 300.00, False, False),
        ("c4t0d0", None, "Virtio", "Block Device", 8.00, False, False)]


def test_diskinfo_smartos_issue635_lists_one_of_four_virtio_disks():
    # Ground truth: `format` in the same comment lists four disks;
    # diskinfo (the identical-devid bug) shows only c4t0d0.
    disks = diskinfo.parse_diskinfo_chp(real(
        "diskinfo/smartos-live-issue635-2016-virtio-dash-type-one-of-"
        "four.txt"))
    assert rows_of(disks) == [
        ("c4t0d0", None, "Virtio", "Block Device", 10.00, False, False)]
    fmt = real("other/smartos-live-issue635-2016-format-virtio-blkdev.txt")
    assert re.findall(r"^ +[0-9]+\. (c[0-9]t0d0) ", fmt, re.M) == [
        "c1t0d0", "c2t0d0", "c3t0d0", "c4t0d0"]


def test_diskinfo_oxide_doc_edit_nvme():
    # The doc edit shifted TYPE and indented the rows; DISK to VID to
    # PID still line up, so the columns read the same.
    disks = diskinfo.parse_diskinfo_chp(real(
        "diskinfo/oxide-helios-engvm-2026-HEAD-same-output-doc-"
        "reindented.txt"))
    assert rows_of(disks) == [
        ("c1t0025385C9150D623d0", "NVME", "Samsung", "SSD 970 EVO 1TB",
         931.51, False, True),
        ("c2t0014EE83021EAE80d0", "NVME", "NVMe", "WUS4BB019D4M9E4",
         1788.50, False, True)]


DANUBE = "diskinfo/danubecloud-esdc-docs-2017-smartos-default-toshiba-" \
    "intel-kingston.txt"


@pytest.mark.parametrize("variant", [strip_trailing, unexpand],
                         ids=["trailing-blanks-stripped", "tabs"])
def test_diskinfo_copies_with_other_blanks_read_the_same(variant):
    for text in (real(DANUBE), fx.DISKINFO, fx.DISKINFO_C,
                 fx.DISKINFO_BIG_P):
        assert diskinfo.parse_diskinfo_chp(variant(text)) == \
            diskinfo.parse_diskinfo_chp(text)


def test_diskinfo_names_longer_than_the_disk_column():
    # diskinfo.c: "%-7s %-22s  %-8s %-16s %-13s %-3s %-3s"; a longer name
    # (a multipath LUN, 37 characters) pushes the rest of its row right.
    lun = "c0t600A0B800029E5EE000012A94E7A51A2d0"
    rows = [("SCSI", lun, "SUN", "LCSM100_F", "%7.2f GiB" % 1024.0, "no",
             "no"),
            ("SATA", "c1t0d0", "SAMSUNG", "MZ7LM480HCHP-00003",
             "%7.2f GiB" % 447.13, "no", "yes")]
    text = "TYPE    DISK                    VID      PID              " \
        "SIZE          RMV SSD\n" + "".join(
            "%-7s %-22s  %-8s %-16s %-13s %-3s %-3s\n" % r for r in rows)
    assert rows_of(diskinfo.parse_diskinfo_chp(text)) == [
        (lun, "SCSI", "SUN", "LCSM100_F", 1024.0, False, False),
        ("c1t0d0", "SATA", "SAMSUNG", "MZ7LM480HCHP-00003", 447.13, False,
         True)]
    condensed = "TYPE    DISK                    VID      PID              " \
        "SERIAL\n\tSIZE          FLRS LOCATION\n" + \
        "%-7s %-22s  %-8s %-16s %-20s\n\t%-13s %-4s %s\n" % (
            "SCSI", lun, "SUN", "LCSM100_F", "SV12345678", "1099511627776",
            "??--", "-")
    got = diskinfo.parse_diskinfo_chp(condensed)[lun]
    assert (got.vendor_id, got.product_id, got.serial, got.size_bytes) == \
        ("SUN", "LCSM100_F", "SV12345678", 1099511627776)


@pytest.mark.parametrize("path", [
    "other/smartos-2017-gozoinks-cfgadm-l.txt",
    "other/smartos-live-issue635-2016-format-virtio-blkdev.txt",
    "other/omnios-2020-migrate-rpool-format-disk-selections-vbox.txt",
    "other/smartos-2017-gozoinks-iostat-en-lowercase.txt",
    "other/openindiana-hcl-drives-table-ground-truth.md",
])
def test_diskinfo_other_commands_are_refused(path):
    assert refusal(diskinfo.parse_diskinfo_chp, real(path)) == (
        "cannot parse 'diskinfo -cHp' output: missing or bad field 'line "
        "1': 1 TAB-separated fields, expected 8 (-cHp) or 7 (-H, -PH), and "
        "no diskinfo table header above")


def test_diskinfo_collapsed_blanks_are_refused():
    text = re.sub(r" +", " ", real(
        "diskinfo/kvmadm-pr106-2017-omnios-r151024-virtio-dash-type.txt"))
    assert refusal(diskinfo.parse_diskinfo_chp, text) == (
        "cannot parse 'diskinfo -cHp' output: missing or bad field 'VID': "
        "line 3: the VID of c2t0d0 does not start 2 columns after the "
        "22-column DISK field (columns not aligned: blanks collapsed?)")


def test_diskinfo_every_mode_of_the_facts_host_agrees():
    # The facts' fixtures of every mode: each field a mode prints is the
    # same in every mode that prints it.
    def field(mode, attr):
        return {d.name: getattr(d, attr) for d in
                diskinfo.parse_diskinfo_chp(getattr(fx, mode)).values()}
    modes = ("DISKINFO", "DISKINFO_H", "DISKINFO_HP", "DISKINFO_P",
             "DISKINFO_C", "DISKINFO_BIG_P")
    for attr in ("vendor_id", "product_id"):
        assert len({tuple(field(m, attr).items()) for m in modes}) == 1
    assert field("DISKINFO_C", "serial") == field("DISKINFO_BIG_P",
                                                  "serial") == {
        "c0t5000CCA0496E6F8Dd0": "P4GB6YEX",
        "c0t55CD2E404C0D8D0Ed0": "BTTV5095012Z400HGN",
        "c1t0d0": "S2UJNX0J101234"}
    size = field("DISKINFO_HP", "size_bytes")
    assert field("DISKINFO_P", "size_bytes") == size
    for mode in ("DISKINFO", "DISKINFO_H", "DISKINFO_C"):
        assert field(mode, "size_gib") == {
            k: round(v / 2 ** 30, 2) for k, v in size.items()}
    assert field("DISKINFO", "ssd") == field("DISKINFO_C", "ssd") == {
        "c0t5000CCA0496E6F8Dd0": False, "c0t55CD2E404C0D8D0Ed0": True,
        "c1t0d0": True}
    assert field("DISKINFO_C", "location")["c0t5000CCA0496E6F8Dd0"] == \
        "[0] Slot 00"


# =========================================================================
# mdb
# =========================================================================

def sd_state_fixture():
    with open(os.path.join(FIXTURES, "inventory", "mdb-sd_state.txt")) as f:
        return f.read()


def test_mdb_sd_state_lines_padded_to_80_columns():
    text = sd_state_fixture()
    padded = "\n".join(line.ljust(80) for line in text.split("\n"))
    assert mdb.parse_sd_state(padded) == mdb.parse_sd_state(text)


def test_mdb_sd_state_print_d_decimal_values():
    # `::print -d` prints integers as 0t<decimal>; a short -1 as -0t1.
    text = sd_state_fixture()
    numbers = ("un_tgt_blocksize", "un_phy_blocksize", "un_throttle",
               "un_saved_throttle", "un_min_throttle")

    def decimal(m):
        return "%s0t%d" % (m.group(1), int(m.group(3), 16))
    dec = re.sub(r"^(    (%s) = )0x([0-9a-f]+)$" % "|".join(numbers),
                 decimal, text, flags=re.M)
    assert "un_phy_blocksize = 0t4096" in dec
    assert mdb.parse_sd_state(dec) == mdb.parse_sd_state(text)
    minus = dec.replace("un_saved_throttle = 0t32", "un_saved_throttle = "
                        "-0t1")
    assert mdb.parse_sd_state(minus)[1].get("un_saved_throttle") == -1


def test_mdb_print_pipeline_without_sd_state_headers_is_refused():
    # SPARTA's `::walk sd_state | ... | ::print -d struct sd_lun
    # un_throttle ...` has no `un N:` lines: the instance is unknown.
    text = ("un_throttle = 0t256\nun_saved_throttle = 0t256\n"
            "un_phy_blocksize = 0t512\n")
    assert refusal(mdb.parse_sd_state, text) == (
        "cannot parse 'mdb ::sd_state' output: missing or bad field "
        "'entries in sd_state table': no table header")


def test_mdb_inquiry_lines_padded_to_80_columns():
    text = ('inq_vid = [ "ATA     " ]\ninq_pid = [ "INTEL SSDSC2BA40" ]\n'
            'inq_revision = [ "0270" ]\n')
    padded = "\n".join(line.ljust(80) for line in text.split("\n"))
    assert mdb.parse_inquiry(padded) == mdb.parse_inquiry(text)


# =========================================================================
# /etc/path_to_inst
# =========================================================================

def test_path_to_inst_blanks_and_repeats():
    text = ('#path_to_inst_bootstrap_1\n'
            '"/scsi_vhci/disk@g5000cca0496e6f8d"\t0\t"sd"\n'
            '"/pci@0,0/pci15d9,805@1f,2/disk@0,0"  2 "sd"   \n')
    assert devlinks.parse_path_to_inst(text) == {
        "/scsi_vhci/disk@g5000cca0496e6f8d": 0,
        "/pci@0,0/pci15d9,805@1f,2/disk@0,0": 2}
    again = text + '"/pci@0,0/pci15d9,805@1f,2/disk@1,0" 2 "sd"\n'
    assert refusal(devlinks.parse_path_to_inst, again) == (
        "cannot parse '/etc/path_to_inst' output: missing or bad field "
        "'line 4': instance 2 listed twice")
