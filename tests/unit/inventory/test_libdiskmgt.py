"""The libdiskmgt ctypes layer against the fake libdiskmgt (C, in
tests/sim/libdiskmgt) and the real libnvpair that Debian ships."""

import ctypes
import errno
import gc
import os
import sys

import pytest

from sdtune.host import RealHost
from sdtune.inventory import libdiskmgt as L

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sim", "libdiskmgt"))

import build  # noqa: E402


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

@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """(libdiskmgt path, libnvpair path, data file path)."""
    root = tmp_path_factory.mktemp("dmroot")
    try:
        nvpair = build.nvpair_path()
        lib = build.build_library(str(root / "lib" / "libdiskmgt.so.1"))
    except build.BuildError as e:
        if os.environ.get("CI"):
            raise       # CI installs both (tests/deps.sh): never skip there
        pytest.skip("fake libdiskmgt cannot be built here: %s" % e)
    return lib, nvpair, str(root / "diskmgt.tsv")


@pytest.fixture
def data(libs):
    """Write diskmgt.tsv; returns the writer."""
    def write(text):
        with open(libs[2], "w") as f:
            f.write(text)
    write(scenario())
    return write


@pytest.fixture
def host(libs, data):
    return RealHost(libraries={"diskmgt": libs[0], "nvpair": libs[1]})


@pytest.fixture
def result(host):
    return L.query_libdiskmgt(host)


def by_name(result):
    return {d.name: d for d in result.disks}


def outstanding(lib_path):
    f = ctypes.CDLL(lib_path)["fake_dm_outstanding"]
    f.restype = ctypes.c_long
    return f()


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


def test_everything_the_library_allocates_is_freed(libs, host):
    before = outstanding(libs[0])
    L.query_libdiskmgt(host)
    assert outstanding(libs[0]) == before == 0      # arrays and names
    try:
        libc = ctypes.CDLL(None)
        libc.mallinfo2
    except (OSError, AttributeError):
        pytest.skip("no glibc mallinfo2() to measure the heap with")

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
            "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc.mallinfo2.restype = MallInfo2
    for _ in range(20):
        L.query_libdiskmgt(host)
    gc.collect()
    start = libc.mallinfo2().uordblks
    for _ in range(200):
        L.query_libdiskmgt(host)
    gc.collect()
    grown = libc.mallinfo2().uordblks - start
    # One leaked message or attribute list per query would be well over
    # 200 x 100 bytes; Python's own noise here is a few kilobytes.
    assert grown < 16384, grown


# -- unavailable ------------------------------------------------------------

def test_library_not_in_allow_list(libs):
    result = L.query_libdiskmgt(RealHost(libraries={"nvpair": libs[1]}))
    assert result == L.DiskmgtResult([], False, "cannot load 'diskmgt': not "
                                     "in the [libraries] allow-list")


def test_library_missing_on_disk(libs, tmp_path):
    missing = str(tmp_path / "libdiskmgt.so.1")
    result = L.query_libdiskmgt(RealHost(
        libraries={"diskmgt": missing, "nvpair": libs[1]}))
    assert not result.available and result.disks == []
    assert result.reason.startswith("cannot load '%s': " % missing)


def test_libnvpair_missing(libs, tmp_path):
    result = L.query_libdiskmgt(RealHost(
        libraries={"diskmgt": libs[0],
                   "nvpair": str(tmp_path / "libnvpair.so.1")}))
    assert not result.available and "libnvpair.so.1" in result.reason


def test_library_without_the_functions(libs):
    # libnvpair loads fine but is no libdiskmgt
    result = L.query_libdiskmgt(RealHost(
        libraries={"diskmgt": libs[1], "nvpair": libs[1]}))
    assert not result.available
    assert "dm_get_descriptors" in result.reason


def test_enumeration_failure_is_unavailable(host, data, capfd):
    data("media\tbroken\n")
    result = L.query_libdiskmgt(host)
    assert result == L.DiskmgtResult(
        [], False, "cannot list fixed-disk media: %s (errno %d)" % (
            os.strerror(errno.EINVAL), errno.EINVAL))
    assert "media needs 11 fields" in capfd.readouterr().err


def test_data_file_changes_are_seen(host, data):
    assert len(L.query_libdiskmgt(host).disks) > 2
    lines = plain("c9t0d0") + [rec("inuse", "c9t0d0s0", "fs", "zfs")]
    data("\n".join(lines) + "\n")
    result = L.query_libdiskmgt(host)
    assert [(d.name, [u.kind for u in d.inuse]) for d in result.disks] == [
        ("c9t0d0", ["fs"])]


# -- the nvlist walker with every type it reads ---------------------------

def test_walk_reads_each_type_from_a_real_nvlist(libs):
    nv = ctypes.CDLL(libs[1])
    api = L._Api(ctypes.CDLL(libs[0]), nv)
    nvl = ctypes.c_void_p()
    assert nv.nvlist_alloc(ctypes.byref(nvl), 3, 0) == 0
    try:
        nv.nvlist_add_boolean(nvl, b"present")
        nv.nvlist_add_boolean_value(nvl, b"yes", 1)
        nv.nvlist_add_boolean_value(nvl, b"no", 0)
        nv.nvlist_add_uint32(nvl, b"u32", ctypes.c_uint32(4294967295))
        nv.nvlist_add_uint64(nvl, b"u64", ctypes.c_uint64(2 ** 64 - 1))
        nv.nvlist_add_string(nvl, b"str", b"SSDSC2BA400G3")
        nv.nvlist_add_int16(nvl, b"i16", ctypes.c_int16(-2))   # not read
        assert api.walk(nvl) == {"present": True, "yes": True, "no": False,
                                 "u32": 4294967295, "u64": 2 ** 64 - 1,
                                 "str": "SSDSC2BA400G3"}
    finally:
        nv.nvlist_free(nvl)


def test_data_type_values_match_libnvpair(libs):
    nv = ctypes.CDLL(libs[1])
    nvl = ctypes.c_void_p()
    nv.nvlist_alloc(ctypes.byref(nvl), 3, 0)
    nv.nvpair_type.restype = ctypes.c_int
    nv.nvlist_next_nvpair.restype = ctypes.c_void_p
    nv.nvlist_next_nvpair.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    nv.nvpair_type.argtypes = [ctypes.c_void_p]
    try:
        nv.nvlist_add_boolean(nvl, b"a")
        nv.nvlist_add_uint32(nvl, b"b", 1)
        nv.nvlist_add_uint64(nvl, b"c", ctypes.c_uint64(1))
        nv.nvlist_add_string(nvl, b"d", b"x")
        nv.nvlist_add_boolean_value(nvl, b"e", 1)
        types = []
        pair = nv.nvlist_next_nvpair(nvl, None)
        while pair:
            types.append(nv.nvpair_type(pair))
            pair = nv.nvlist_next_nvpair(nvl, pair)
        assert types == [L.DATA_TYPE_BOOLEAN, L.DATA_TYPE_UINT32,
                         L.DATA_TYPE_UINT64, L.DATA_TYPE_STRING,
                         L.DATA_TYPE_BOOLEAN_VALUE]
    finally:
        nv.nvlist_free(nvl)


# -- the fake honours dm_who_type_t, so DM_WHO_ZPOOL's value is checked ---

def inuse_count(lib, name, who):
    dm = ctypes.CDLL(lib)
    msg, err = ctypes.c_void_p(), ctypes.c_int()
    n = dm.dm_inuse(name, ctypes.byref(msg), who, ctypes.byref(err))
    if msg.value:
        dm.free(msg)
    return n, err.value


@pytest.mark.parametrize("slice_name,who,count", [
    (b"/dev/dsk/c0t12d0s0", L.DM_WHO_ZPOOL, 1),        # fs
    (b"/dev/dsk/c0t12d0s0", L.DM_WHO_MKFS, 0),
    (b"/dev/dsk/c0t12d0s0", L.DM_WHO_ZPOOL_FORCE, 0),
    (b"/dev/dsk/c0t18d0s0", L.DM_WHO_ZPOOL, 1),        # exported pool
    (b"/dev/dsk/c0t18d0s0", L.DM_WHO_FORMAT, 0),
    (b"/dev/dsk/c0t19d0s0", L.DM_WHO_ZPOOL_SPARE, 0),  # spare
    (b"/dev/rdsk/c0t10d0s0", L.DM_WHO_ZPOOL, 1),       # raw name works
    (b"/dev/dsk/c0t10d0s7", L.DM_WHO_ZPOOL, 0),        # no such slice
])
def test_fake_dm_inuse_who(libs, data, slice_name, who, count):
    assert inuse_count(libs[0], slice_name, who) == (count, 0)


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
