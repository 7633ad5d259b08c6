# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune's libdiskmgt path end to end: query_libdiskmgt() runs the real
engine (`sdio diskmgt`, plugin/engine/diskmgt.c), which dlopen()s the fake
libdiskmgt (C, in tests/sim/libdiskmgt) and the real libnvpair that Debian
ships; and the Python parser of the engine's JSON on hand-written
documents."""

import ctypes
import errno
import json
import os
import shutil
import sys

import pytest

from sdtune.host import RealHost
from sdtune.inventory import libdiskmgt as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sim", "libdiskmgt"))

import build  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "engine"))
from engine_run import build_engine  # noqa: E402

# dm_who_type_t (libdiskmgt.h), for the checks of the fake itself.
DM_WHO_MKFS, DM_WHO_ZPOOL, DM_WHO_ZPOOL_FORCE, DM_WHO_FORMAT = 0, 1, 2, 3
DM_WHO_ZPOOL_SPARE = 6


# -- the scenario ----------------------------------------------------------

HDD = ("HGST", "HUS724040ALS640", 7814037168, 512, "scsi", 7200)
SSD = ("INTEL", "SSDSC2BA400G3", 781422768, 512, "scsi", None)


def media(name, opath, size, bs, vid, pid, rmv, ssd, ctype, rpm):
    return "\t".join(["media", name, opath, str(size), str(bs), vid, pid,
                      str(rmv), str(ssd), ctype,
                      "-" if rpm is None else str(rpm)])


def rec(*fields):
    return "\t".join(fields)


def plain(name, slices=("s0",), spec=HDD, ssd=0):
    """A fixed disk media record and its slices."""
    vid, pid, size, bs, ctype, rpm = spec
    lines = [media("id-" + name, "/dev/rdsk/%ss2" % name, size, bs, vid,
                   pid, 0, ssd, ctype, rpm)]
    lines += [rec("slice", "id-" + name, name + s) for s in slices]
    return lines


# disk -> [(slice, kind, detail)] in the order dm_inuse reports them
IN_USE = {
    "c0t10d0": [("s0", "mount", "/export/home")],
    "c0t11d0": [("s1", "vfstab", "/data")],
    "c0t12d0": [("s0", "fs", "ufs")],
    "c0t13d0": [("s1", "swap", "")],
    "c0t14d0": [("s1", "dump", "dump")],
    "c0t15d0": [("s0", "lu", "s10u9be")],
    "c0t16d0": [("s0", "vxvm", "vol01")],
    "c0t17d0": [("s3", "active_pool", "tank")],
    "c0t18d0": [("s0", "exported_pool", "oldpool")],
    "c0t19d0": [("s0", "spare", "tank")],
    "c0t20d0": [("s0", "l2cache", "tank")],
    # whole-disk ZFS member (EFI label): only s0 says so
    "c0t21d0": [("s0", "active_pool", "tank")],
    # several reasons, on two slices
    "c0t22d0": [("s0", "mount", "/a"), ("s0", "vfstab", "/a"),
                ("s6", "active_pool", "rpool")],
}

SLICES = {
    "c0t10d0": ("s0", "s1"), "c0t11d0": ("s0", "s1"),
    "c0t13d0": ("s0", "s1"), "c0t14d0": ("s0", "s1"),
    "c0t17d0": ("s0", "s1", "s3"), "c0t21d0": ("s0", "s8"),
    "c0t22d0": ("s0", "s1", "s6"),
}


def scenario():
    lines = ["# sdtune test scenario"]
    lines += plain("c0t5000CCA0496E6F8Dd0", ("s0", "s1", "s2"))  # idle HDD
    lines += plain("c0t55CD2E404C0D8D0Ed0", ("s0",), SSD, ssd=1)  # idle SSD
    for disk, uses in IN_USE.items():
        lines += plain(disk, SLICES.get(disk, ("s0",)))
        for s, kind, detail in uses:
            # The fake ignores DETAIL for swap and dump, as libdiskmgt has
            # no choice there; give it something anyway.
            lines.append(rec("inuse", disk + s, kind, detail or "-"))
    # dm_inuse fails on one slice; the other slice still gets checked
    lines += plain("c0t30d0", ("s0", "s1"))
    lines.append(rec("fail", "c0t30d0s0", str(errno.EIO)))
    lines.append(rec("inuse", "c0t30d0s1", "mount", "/b"))
    # media attributes fail
    lines += plain("c0t31d0")
    lines.append(rec("fail", "id-c0t31d0", str(errno.ENXIO)))
    # removable USB disk: opath on p0 (kept), no controller type given,
    # no rpm, no vendor
    lines.append(media("id-usb", "/dev/rdsk/c2t0d0p0", 31266816, 512, "-",
                       "Cruzer Blade", 1, 0, "usb", None))
    lines.append(rec("slice", "id-usb", "c2t0d0s0"))
    # a drive without opath and without controller
    lines.append(media("id-noname", "-", 1000, 4096, "VIRT", "DISK", 0, 0,
                       "-", None))
    return "\n".join(lines) + "\n"


def message(dev, kind, detail, section="1M"):
    """The facts §10 template, written out independently of the code."""
    see = "(%s)" % section
    return {
        "swap": "%s is currently used by swap. Please see swap%s." % (
            dev, see),
        "mount": "%s is currently mounted on %s. Please see umount%s." % (
            dev, detail, see),
        "vfstab": "%s is normally mounted on %s according to /etc/vfstab. "
                  "Please remove this entry to use this device." % (
                      dev, detail),
        "fs": "%s contains a %s filesystem." % (dev, detail),
        "vxvm": "%s is part of VxVM volume %s." % (dev, detail),
        "lu": "%s is in use for live upgrade %s. Please see ludelete%s." % (
            dev, detail, see),
        "dump": "%s is in use by %s. Please see dumpadm%s." % (
            dev, detail, see),
        "exported_pool": "%s is part of exported or potentially active ZFS "
                         "pool %s. Please see zpool%s." % (dev, detail, see),
        "active_pool": "%s is part of active ZFS pool %s. Please see "
                       "zpool%s." % (dev, detail, see),
        "spare": "%s is reserved as a hot spare for ZFS pool %s.  Please see "
                 "zpool%s." % (dev, detail, see),
        "l2cache": "%s is in use as a cache device for ZFS pool %s.  Please "
                   "see zpool%s." % (dev, detail, see),
    }[kind]


# -- fixtures ---------------------------------------------------------------

@pytest.fixture(scope="session")
def sdio():
    """The engine, built once per session (as tests/engine does)."""
    return build_engine()


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """(libdiskmgt path, libnvpair path, data file path)."""
    root = tmp_path_factory.mktemp("dmroot")
    lib, nvpair = build.libraries_for_tests(str(root))
    return lib, nvpair, str(root / "diskmgt.tsv")


@pytest.fixture
def data(libs):
    """Write diskmgt.tsv; returns the writer."""
    def write(text):
        with open(libs[2], "w") as f:
            f.write(text)
    write(scenario())
    return write


def make_host(sdio_path, libs, **libraries):
    return RealHost(commands={"sdio": sdio_path},
                    libraries=libraries or {"diskmgt": libs[0],
                                            "nvpair": libs[1]})


@pytest.fixture
def host(sdio, libs, data):
    return make_host(sdio, libs)


@pytest.fixture
def result(host):
    return L.query_libdiskmgt(host)


def by_name(result):
    return {d.name: d for d in result.disks}


def outstanding(lib_path):
    """The fake's count in this process (for the fake's own checks)."""
    f = ctypes.CDLL(lib_path)["fake_dm_outstanding"]
    f.restype = ctypes.c_long
    return f()


def script(path, text):
    with open(str(path), "w") as f:
        f.write("#!/bin/sh\n" + text)
    os.chmod(str(path), 0o755)
    return str(path)


# -- enumeration and attributes -------------------------------------------

def test_available_and_every_media_in_order(result):
    assert result.available is True
    assert result.reason == ""
    names = [d.name for d in result.disks]
    assert names == (["c0t5000CCA0496E6F8Dd0", "c0t55CD2E404C0D8D0Ed0"]
                     + list(IN_USE) + ["c0t30d0", "c0t31d0", "c2t0d0p0",
                                       ""])


def test_idle_hdd_every_field(result):
    d = by_name(result)["c0t5000CCA0496E6F8Dd0"]
    assert d == L.DmDisk(
        name="c0t5000CCA0496E6F8Dd0",
        opath="/dev/rdsk/c0t5000CCA0496E6F8Dd0s2",
        size_bytes=7814037168 * 512, block_bytes=512, vendor_id="HGST",
        product_id="HUS724040ALS640", removable=False, solid_state=False,
        rpm=7200, ctype="scsi",
        slices=["/dev/dsk/c0t5000CCA0496E6F8Dd0s0",
                "/dev/dsk/c0t5000CCA0496E6F8Dd0s1",
                "/dev/dsk/c0t5000CCA0496E6F8Dd0s2"],
        inuse=[], error=None)
    assert d.size_bytes == 4000787030016        # facts §9 diskinfo -p


def test_idle_ssd_every_field(result):
    d = by_name(result)["c0t55CD2E404C0D8D0Ed0"]
    assert d == L.DmDisk(
        name="c0t55CD2E404C0D8D0Ed0",
        opath="/dev/rdsk/c0t55CD2E404C0D8D0Ed0s2",
        size_bytes=400088457216, block_bytes=512, vendor_id="INTEL",
        product_id="SSDSC2BA400G3", removable=False, solid_state=True,
        rpm=None, ctype="scsi",
        slices=["/dev/dsk/c0t55CD2E404C0D8D0Ed0s0"], inuse=[], error=None)


def test_removable_usb_disk(result):
    d = by_name(result)["c2t0d0p0"]             # only sN is stripped
    assert d == L.DmDisk(
        name="c2t0d0p0", opath="/dev/rdsk/c2t0d0p0",
        size_bytes=31266816 * 512, block_bytes=512, vendor_id=None,
        product_id="Cruzer Blade", removable=True, solid_state=False,
        rpm=None, ctype="usb", slices=["/dev/dsk/c2t0d0s0"], inuse=[],
        error=None)


def test_drive_without_opath_or_controller_is_undecided(result):
    d = result.disks[-1]
    assert (d.name, d.opath, d.ctype) == ("", None, None)
    assert (d.size_bytes, d.block_bytes) == (4096000, 4096)
    assert (d.vendor_id, d.product_id) == ("VIRT", "DISK")
    assert "opath" in d.error


# -- in use ---------------------------------------------------------------

@pytest.mark.parametrize("disk", list(IN_USE))
def test_every_inuse_kind_is_reported_and_classified(result, disk):
    d = by_name(result)[disk]
    assert d.error is None
    assert d.slices == ["/dev/dsk/%s%s" % (disk, s)
                        for s in SLICES.get(disk, ("s0",))]
    expected = [L.DmInuse("/dev/dsk/%s%s" % (disk, s),
                          message("/dev/dsk/%s%s" % (disk, s), kind, detail))
                for s, kind, detail in IN_USE[disk]]
    assert d.inuse == expected
    assert [(u.kind, u.detail) for u in d.inuse] == [
        (kind, detail) for _, kind, detail in IN_USE[disk]]
    for u in d.inuse:
        assert L.parse_inuse_message(u.message) == (u.kind, u.detail)


def test_each_libdiskmgt_inuse_type_has_a_disk():
    kinds = {k for uses in IN_USE.values() for _, k, _ in uses}
    assert kinds == {"mount", "vfstab", "fs", "swap", "dump", "lu", "vxvm",
                     "active_pool", "exported_pool", "spare", "l2cache"}


def test_whole_disk_member_found_on_s0_only(result):
    d = by_name(result)["c0t21d0"]
    assert d.slices == ["/dev/dsk/c0t21d0s0", "/dev/dsk/c0t21d0s8"]
    assert [(u.slice, u.kind, u.detail) for u in d.inuse] == [
        ("/dev/dsk/c0t21d0s0", "active_pool", "tank")]


def test_failing_inuse_check_sets_error_and_other_slices_still_count(result):
    d = by_name(result)["c0t30d0"]
    assert d.error == ("cannot check '/dev/dsk/c0t30d0s0' for use: "
                       "%s (errno %d)" % (os.strerror(errno.EIO), errno.EIO))
    assert [(u.slice, u.kind, u.detail) for u in d.inuse] == [
        ("/dev/dsk/c0t30d0s1", "mount", "/b")]
    assert d.size_bytes == HDD[2] * HDD[3]


def test_failing_media_attributes_set_error(result):
    d = by_name(result)["c0t31d0"]
    assert d.error == "cannot get media attributes: %s (errno %d)" % (
        os.strerror(errno.ENXIO), errno.ENXIO)
    assert (d.size_bytes, d.block_bytes) == (None, None)
    assert d.vendor_id == "HGST"                # the drive still answered
    assert d.slices == ["/dev/dsk/c0t31d0s0"] and d.inuse == []


def test_no_other_disk_has_an_error(result):
    errors = {d.name for d in result.disks if d.error}
    assert errors == {"c0t30d0", "c0t31d0", ""}


def test_noinuse_check_in_environment_makes_every_disk_undecided(
        host, monkeypatch):
    monkeypatch.setenv("NOINUSE_CHECK", "1")
    result = L.query_libdiskmgt(host)
    assert result.available
    for d in result.disks:
        assert d.inuse == []
        assert d.error and "NOINUSE_CHECK" in d.error


def test_every_array_and_name_is_freed_by_the_engine(libs, host):
    # The fake writes its count of arrays and names not freed into this
    # file when the engine's process exits.
    count_file = os.path.join(os.path.dirname(libs[2]),
                              "diskmgt.outstanding")
    with open(count_file, "w"):
        pass
    try:
        assert L.query_libdiskmgt(host).available
        with open(count_file) as f:
            assert f.read() == "0\n"
    finally:
        os.unlink(count_file)


def test_everything_the_library_allocates_is_freed(sdio, libs, data,
                                                   tmp_path):
    # Attribute lists and in-use messages too: valgrind fails the engine
    # (so the result is unavailable) on any block lost at exit.
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        pytest.skip("no valgrind to check the engine's heap with")
    wrapper = script(tmp_path / "sdio", 'exec %s -q --leak-check=full '
                     '--errors-for-leak-kinds=definite,indirect '
                     '--error-exitcode=97 %s "$@"\n' % (valgrind, sdio))
    result = L.query_libdiskmgt(make_host(wrapper, libs))
    assert result.available, result.reason
    assert by_name(result)["c0t22d0"].inuse         # messages were made
    assert result == L.query_libdiskmgt(make_host(sdio, libs))


# -- unavailable ------------------------------------------------------------

def test_library_not_in_allow_list(sdio, libs):
    result = L.query_libdiskmgt(make_host(sdio, libs, nvpair=libs[1]))
    assert result == L.DiskmgtResult([], False, "cannot load 'diskmgt': not "
                                     "in the [libraries] allow-list")


def test_library_missing_on_disk(sdio, libs, tmp_path):
    missing = str(tmp_path / "libdiskmgt.so.1")
    result = L.query_libdiskmgt(make_host(sdio, libs, diskmgt=missing,
                                          nvpair=libs[1]))
    assert not result.available and result.disks == []
    assert result.reason.startswith("cannot load '%s': " % missing)


def test_libnvpair_missing(sdio, libs, tmp_path):
    result = L.query_libdiskmgt(make_host(
        sdio, libs, diskmgt=libs[0], nvpair=str(tmp_path / "libnvpair.so.1")))
    assert not result.available and "libnvpair.so.1" in result.reason


def test_library_without_the_functions(sdio, libs):
    # libnvpair loads fine but is no libdiskmgt
    result = L.query_libdiskmgt(make_host(sdio, libs, diskmgt=libs[1],
                                          nvpair=libs[1]))
    assert not result.available
    assert "dm_get_descriptors" in result.reason


def test_enumeration_failure_is_unavailable(host, data):
    # (The fake's "media needs 11 fields" on the engine's stderr is checked
    # in tests/engine/test_diskmgt.py.)
    data("media\tbroken\n")
    result = L.query_libdiskmgt(host)
    assert result == L.DiskmgtResult(
        [], False, "cannot list fixed-disk media: %s (errno %d)" % (
            os.strerror(errno.EINVAL), errno.EINVAL))


def test_data_file_changes_are_seen(host, data):
    assert len(L.query_libdiskmgt(host).disks) > 2
    lines = plain("c9t0d0") + [rec("inuse", "c9t0d0s0", "fs", "zfs")]
    data("\n".join(lines) + "\n")
    result = L.query_libdiskmgt(host)
    assert [(d.name, [u.kind for u in d.inuse]) for d in result.disks] == [
        ("c9t0d0", ["fs"])]


# -- the engine's nvlist walker with every type it reads -------------------

def test_walker_reads_each_type_and_ignores_others(host, data):
    lines = plain("c5t0d0") + [
        rec("attr", "id-c5t0d0", "drive", "removable", "boolean_value", "1"),
        rec("attr", "id-c5t0d0", "drive", "solid_state", "boolean_value",
            "0"),
        rec("attr", "id-c5t0d0", "drive", "rpm", "int16", "-2"),
        rec("attr", "id-c5t0d0", "drive", "vendor_id", "uint32", "7"),
        rec("attr", "id-c5t0d0", "media", "size", "uint64",
            str(2 ** 64 - 1)),
        rec("attr", "id-c5t0d0", "media", "blocksize", "uint32",
            "4294967295"),
        rec("attr", "id-c5t0d0", "controller", "ctype", "string", "sata"),
    ]
    lines += plain("c5t1d0") + [
        rec("attr", "id-c5t1d0", "drive", "solid_state", "boolean", "-"),
        rec("attr", "id-c5t1d0", "drive", "rpm", "uint64", "10000"),
        rec("attr", "id-c5t1d0", "media", "size", "uint32", "100"),
        rec("attr", "id-c5t1d0", "media", "blocksize", "string", "512"),
    ]
    data("\n".join(lines) + "\n")
    a, b = L.query_libdiskmgt(host).disks
    assert (a.removable, a.solid_state, a.rpm, a.vendor_id) == (
        True, False, None, None)
    assert (a.size_bytes, a.block_bytes, a.ctype) == (
        (2 ** 64 - 1) * 4294967295, 4294967295, "sata")
    assert a.product_id == HDD[1] and a.error is None
    assert (b.removable, b.solid_state, b.rpm) == (False, True, 10000)
    assert (b.size_bytes, b.block_bytes) == (None, None)
    assert b.error == "media attributes lack 'size' or 'blocksize'"


# -- the engine itself: missing, failing, or talking nonsense -------------

def test_engine_not_configured(libs, data):
    result = L.query_libdiskmgt(RealHost(
        libraries={"diskmgt": libs[0], "nvpair": libs[1]}))
    assert not result.available and result.disks == []
    assert result.reason.startswith("cannot run 'sdio diskmgt': ")


def test_engine_not_executable(libs, tmp_path):
    result = L.query_libdiskmgt(make_host(str(tmp_path / "sdio"), libs))
    assert not result.available
    assert "'sdio diskmgt'" in result.reason


def test_engine_failing_is_unavailable_with_its_last_word(libs, tmp_path):
    fake = script(tmp_path / "sdio", 'echo "sdio: cannot query libdiskmgt:'
                  ' out of memory" >&2\nexit 2\n')
    result = L.query_libdiskmgt(make_host(fake, libs))
    assert result == L.DiskmgtResult(
        [], False, "cannot run 'sdio diskmgt': exit status 2: sdio: cannot "
        "query libdiskmgt: out of memory")


def test_engine_killed_is_unavailable(libs, tmp_path):
    fake = script(tmp_path / "sdio", "kill -9 $$\n")
    result = L.query_libdiskmgt(make_host(fake, libs))
    assert result.reason == ("cannot run 'sdio diskmgt': killed by "
                             "signal 9")


def test_engine_timeout_is_unavailable(libs, tmp_path):
    fake = script(tmp_path / "sdio", "exec sleep 5\n")
    host = make_host(fake, libs)
    host.timeout_s = 0.2
    result = L.query_libdiskmgt(host)
    assert not result.available and "timed out" in result.reason


def test_engine_arguments(libs, tmp_path, monkeypatch):
    argv_file = tmp_path / "argv"
    fake = script(tmp_path / "sdio", 'printf "%%s\\n" "$@" > %s\n'
                  'echo \'{"version": 1, "available": true, "reason": "", '
                  '"disks": []}\'\n' % argv_file)
    monkeypatch.delenv("NOINUSE_CHECK", raising=False)
    assert L.query_libdiskmgt(make_host(fake, libs)) == L.DiskmgtResult(
        [], True, "")
    assert argv_file.read_text().splitlines() == [
        "diskmgt", "--diskmgt", libs[0], "--nvpair", libs[1]]
    monkeypatch.setenv("NOINUSE_CHECK", "")
    L.query_libdiskmgt(make_host(fake, libs))
    assert argv_file.read_text().splitlines()[-1] == "--no-inuse"


def test_relative_library_path_is_refused(sdio, libs):
    result = L.query_libdiskmgt(make_host(sdio, libs, diskmgt="lib.so",
                                          nvpair=libs[1]))
    assert result == L.DiskmgtResult(
        [], False, "cannot load 'lib.so': configured path for 'diskmgt' "
        "is not absolute")


# -- the parser of the engine's document, on hand-written JSON ------------

WHAT = "sdio diskmgt"


def doc(disks=(), available=True, reason="", **extra):
    d = {"version": 1, "available": available, "reason": reason,
         "disks": None if disks is None else list(disks)}
    d.update(extra)
    return json.dumps(d)


def disk_entry(**over):
    d = {"name": "c1t0d0", "opath": "/dev/rdsk/c1t0d0s2",
         "vendor_id": "ATA", "product_id": "SSD", "size_blocks": 1000,
         "block_bytes": 4096, "rpm": None, "removable": False,
         "solid_state": True, "ctype": "sata",
         "slices": ["/dev/dsk/c1t0d0s0"],
         "inuse": [{"slice": "/dev/dsk/c1t0d0s0",
                    "message": message("/dev/dsk/c1t0d0s0", "fs", "zfs")}],
         "errors": []}
    d.update(over)
    return d


def test_parse_a_disk():
    result = L.parse_diskmgt_json(doc([disk_entry()]), WHAT)
    assert result == L.DiskmgtResult([L.DmDisk(
        name="c1t0d0", opath="/dev/rdsk/c1t0d0s2", size_bytes=4096000,
        block_bytes=4096, vendor_id="ATA", product_id="SSD",
        removable=False, solid_state=True, rpm=None, ctype="sata",
        slices=["/dev/dsk/c1t0d0s0"],
        inuse=[L.DmInuse("/dev/dsk/c1t0d0s0", message(
            "/dev/dsk/c1t0d0s0", "fs", "zfs"))], error=None)], True, "")
    assert result.disks[0].inuse[0].kind == "fs"


def test_parse_unavailable():
    result = L.parse_diskmgt_json(doc(available=False, reason="cannot load "
                                      "'/x': gone"), WHAT)
    assert result == L.DiskmgtResult([], False, "cannot load '/x': gone")
    result = L.parse_diskmgt_json(doc(available=False), WHAT)
    assert not result.available and "'sdio diskmgt'" in result.reason


def test_parse_per_disk_errors_are_joined():
    result = L.parse_diskmgt_json(doc([disk_entry(
        errors=["cannot list slices", "cannot check for use: x"],
        size_blocks=None)]), WHAT)
    d = result.disks[0]
    assert d.error == "cannot list slices; cannot check for use: x"
    assert (d.size_bytes, d.block_bytes) == (None, 4096)


@pytest.mark.parametrize("text", [
    "", "{", "not json", "[]", "null", '{"version": 2, "available": true, '
    '"reason": "", "disks": []}', doc(disks=None),
    doc(available="yes"), doc(reason=None), "[" * 100000,
    '{"version": 1, "available": true, "reason": "", "disks": [',
])
def test_parse_malformed_document_is_unavailable(text):
    result = L.parse_diskmgt_json(text, WHAT)
    assert result.available is False and result.disks == []
    assert result.reason.startswith(
        "cannot parse the output of 'sdio diskmgt': ")


@pytest.mark.parametrize("entry", [
    "c1t0d0", None, disk_entry(name=None), disk_entry(opath=7),
    disk_entry(size_blocks="1000"), disk_entry(block_bytes=True),
    disk_entry(rpm=-1), disk_entry(removable=None),
    disk_entry(solid_state=1), disk_entry(slices=None),
    disk_entry(slices=[1]), disk_entry(inuse=[{"slice": "x"}]),
    disk_entry(inuse={}), disk_entry(errors="x"),
    {k: v for k, v in disk_entry().items() if k != "errors"},
])
def test_parse_malformed_disk_is_an_undecided_disk(entry):
    result = L.parse_diskmgt_json(doc([disk_entry(name="c0t0d0"), entry]),
                                  WHAT)
    assert result.available
    good, bad = result.disks
    assert good.name == "c0t0d0" and good.error is None
    assert bad.error.startswith("cannot parse a disk in the output of "
                                "'sdio diskmgt': ")
    assert bad.inuse == [] and bad.size_bytes is None
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        assert bad.name == entry["name"]


# -- the fake honours dm_who_type_t, so DM_WHO_ZPOOL's value is checked ---

def inuse_count(lib, name, who):
    dm = ctypes.CDLL(lib)
    msg, err = ctypes.c_void_p(), ctypes.c_int()
    n = dm.dm_inuse(name, ctypes.byref(msg), who, ctypes.byref(err))
    if msg.value:
        dm.free(msg)
    return n, err.value


@pytest.mark.parametrize("slice_name,who,count", [
    (b"/dev/dsk/c0t12d0s0", DM_WHO_ZPOOL, 1),        # fs
    (b"/dev/dsk/c0t12d0s0", DM_WHO_MKFS, 0),
    (b"/dev/dsk/c0t12d0s0", DM_WHO_ZPOOL_FORCE, 0),
    (b"/dev/dsk/c0t18d0s0", DM_WHO_ZPOOL, 1),        # exported pool
    (b"/dev/dsk/c0t18d0s0", DM_WHO_FORMAT, 0),
    (b"/dev/dsk/c0t19d0s0", DM_WHO_ZPOOL_SPARE, 0),  # spare
    (b"/dev/rdsk/c0t10d0s0", DM_WHO_ZPOOL, 1),       # raw name works
    (b"/dev/dsk/c0t10d0s7", DM_WHO_ZPOOL, 0),        # no such slice
])
def test_fake_dm_inuse_who(libs, data, slice_name, who, count):
    assert inuse_count(libs[0], slice_name, who) == (count, 0)
    assert outstanding(libs[0]) == 0


# -- parse_inuse_message on the exact templates ---------------------------

DEV = "/dev/dsk/c0t5000CCA0496E6F8Dd0s0"


@pytest.mark.parametrize("section", ["1M", "8"])
@pytest.mark.parametrize("kind,detail", [
    ("swap", ""), ("mount", "/export/home"), ("vfstab", "/data"),
    ("fs", "zfs"), ("vxvm", "vol01"), ("lu", "s10u9be"), ("dump", "dump"),
    ("exported_pool", "oldpool"), ("active_pool", "tank"),
    ("spare", "tank"), ("l2cache", "tank"),
])
def test_parse_inuse_message_templates(section, kind, detail):
    msg = message(DEV, kind, detail, section)
    assert L.parse_inuse_message(msg) == (kind, detail)
    assert L.parse_inuse_message(msg + "\n") == (kind, detail)


def test_parse_inuse_message_literal_strings():
    cases = {
        "/dev/dsk/c0t5000CCA0496E6F8Dd0s0 is part of active ZFS pool tank. "
        "Please see zpool(1M).": ("active_pool", "tank"),
        "/dev/dsk/c1t0d0s1 is currently used by swap. Please see swap(8).":
        ("swap", ""),
        "/dev/dsk/c1t0d0s0 is currently mounted on /mnt/my disk. Please see "
        "umount(1M).": ("mount", "/mnt/my disk"),
        "/dev/dsk/c1t0d0s0 is normally mounted on  according to /etc/vfstab."
        " Please remove this entry to use this device.": ("vfstab", ""),
        "/dev/dsk/c1t0d0s0 is in use by dump. Please see dumpadm(8).":
        ("dump", "dump"),
        "/dev/dsk/c1t0d0s0 is reserved as a hot spare for ZFS pool tank.  "
        "Please see zpool(8).": ("spare", "tank"),
        "/dev/dsk/c1t0d0s0 is in use as a cache device for ZFS pool tank.  "
        "Please see zpool(1M).": ("l2cache", "tank"),
        "/dev/dsk/c1t0d0s0 is part of exported or potentially active ZFS "
        "pool tank. Please see zpool(8).": ("exported_pool", "tank"),
    }
    for msg, want in cases.items():
        assert L.parse_inuse_message(msg) == want, msg


def test_parse_inuse_message_unknown_keeps_the_text():
    svm = "/dev/dsk/c1t0d0s7 contains an SVM mdb. Please see metadb(1M)."
    assert L.parse_inuse_message(svm) == ("unknown", svm)
    assert L.parse_inuse_message("") == ("unknown", "")
    # Not the template's man page section: not guessed.
    odd = "/dev/dsk/c1t0d0s0 is part of active ZFS pool tank. See zpool(1M)."
    assert L.parse_inuse_message(odd) == ("unknown", odd)


@pytest.mark.parametrize("opath,name", [
    ("/dev/rdsk/c0t5000CCA0496E6F8Dd0s2", "c0t5000CCA0496E6F8Dd0"),
    ("/dev/rdsk/c1t0d0s0", "c1t0d0"),
    ("/dev/rdsk/c1t0d0p0", "c1t0d0p0"),
    ("/dev/rdsk/c1t0d0s10", "c1t0d0s10"),
    ("c1t0d0s2", "c1t0d0"),
    ("s", "s"),
])
def test_disk_name_as_diskinfo(opath, name):
    assert L.disk_name(opath) == name
