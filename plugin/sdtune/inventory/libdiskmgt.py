"""Fixed disks and their in-use state from illumos libdiskmgt, via ctypes.

One job: ask libdiskmgt, the library behind diskinfo(8) and zpool's in-use
check, which fixed disks exist, what their drives report, and whether any
slice of each is in use.  Runs no commands: the libraries "diskmgt" and
"nvpair" come from the host's [libraries] allow-list (``host.load_library``).

What it calls, following illumos usr/src/cmd/diskinfo/diskinfo.c and
usr/src/cmd/zpool/zpool_vdev.c check_disk() (facts §9, §10):

* ``dm_get_descriptors(DM_MEDIA, {DM_DT_FIXED, DM_FILTER_END})``;
* per media: ``dm_get_attributes()`` ("size" uint64 blocks, "blocksize"
  uint32 logical bytes), the associated DM_DRIVE's attributes ("vendor_id",
  "product_id", "opath" strings, "rpm" uint32, "removable" and
  "solid_state" present-when-true booleans) and its DM_CONTROLLER's "ctype";
* per slice of the media (DM_SLICE): ``dm_inuse(name, &msg, DM_WHO_ZPOOL,
  &err)``.  The check is per slice (a whole-disk ZFS member is found on s0),
  and DM_WHO_ZPOOL reports every kind of use.

Whatever the library allocates is freed as libdiskmgt.h requires:
descriptor arrays with dm_free_descriptors(), names with dm_free_name(),
attribute lists with nvlist_free(), in-use messages with free().

Any failure for one disk is recorded in that disk's ``error``; the caller
must then treat the disk as in use.  A library that cannot be loaded gives
``available=False`` and a reason instead of an exception (the caller falls
back to diskinfo and says so).  ``parse_inuse_message()`` classifies one
in-use message; it is pure.
"""

import ctypes
import os
import re
from ctypes import (POINTER, byref, c_char_p, c_int, c_uint32, c_uint64,
                    c_void_p)
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import HostError
from ..host import Host

# dm_desc_type_t, usr/src/lib/libdiskmgt/common/libdiskmgt.h.
DM_DRIVE = 0
DM_CONTROLLER = 1
DM_MEDIA = 2
DM_SLICE = 3
DM_PARTITION = 4
DM_PATH = 5
DM_ALIAS = 6
DM_BUS = 7

# dm_drive_type_t DM_DT_FIXED (libdiskmgt.h).  A DM_MEDIA filter is compared
# with dm_media_type_t in media.c apply_filter(), where DM_MT_FIXED is also
# 1; diskinfo passes DM_DT_FIXED, and so does this module.
DM_DT_FIXED = 1
DM_FILTER_END = -1

# dm_who_type_t (libdiskmgt.h).
DM_WHO_MKFS = 0
DM_WHO_ZPOOL = 1
DM_WHO_ZPOOL_FORCE = 2
DM_WHO_FORMAT = 3
DM_WHO_SWAP = 4
DM_WHO_DUMP = 5
DM_WHO_ZPOOL_SPARE = 6

# Attribute names (libdiskmgt.h).
DM_SIZE = "size"
DM_BLOCKSIZE = "blocksize"
DM_VENDOR_ID = "vendor_id"
DM_PRODUCT_ID = "product_id"
DM_OPATH = "opath"
DM_REMOVABLE = "removable"
DM_SOLIDSTATE = "solid_state"
DM_RPM = "rpm"
DM_CTYPE = "ctype"

# data_type_t, usr/src/uts/common/sys/nvpair.h (the same enum, and ABI, in
# the OpenZFS libnvpair that Linux distributions ship).
DATA_TYPE_UNKNOWN = 0
DATA_TYPE_BOOLEAN = 1
DATA_TYPE_BYTE = 2
DATA_TYPE_INT16 = 3
DATA_TYPE_UINT16 = 4
DATA_TYPE_INT32 = 5
DATA_TYPE_UINT32 = 6
DATA_TYPE_INT64 = 7
DATA_TYPE_UINT64 = 8
DATA_TYPE_STRING = 9
DATA_TYPE_BOOLEAN_VALUE = 21

_DescArray = POINTER(c_uint64)


@dataclass(frozen=True)
class DmInuse:
    """One reason dm_inuse() gave for one slice (a /dev/dsk path)."""

    slice: str
    message: str

    @property
    def kind(self) -> str:
        return parse_inuse_message(self.message)[0]

    @property
    def detail(self) -> str:
        return parse_inuse_message(self.message)[1]


@dataclass
class DmDisk:
    """One fixed disk as libdiskmgt sees it.

    ``name`` is cXtYdZ as diskinfo prints it ("" when the drive reports no
    opath; ``error`` then says so).  ``size_bytes`` is size x blocksize;
    ``block_bytes`` is the logical block size (libdiskmgt never reports the
    physical one).  ``slices`` are the /dev/dsk paths that were checked.
    """

    name: str
    opath: Optional[str]
    size_bytes: Optional[int]
    block_bytes: Optional[int]
    vendor_id: Optional[str]
    product_id: Optional[str]
    removable: bool
    solid_state: bool
    rpm: Optional[int]
    ctype: Optional[str]
    slices: List[str] = field(default_factory=list)
    inuse: List[DmInuse] = field(default_factory=list)
    error: Optional[str] = None


@dataclass
class DiskmgtResult:
    """All fixed disks, or why libdiskmgt could not be asked."""

    disks: List[DmDisk]
    available: bool
    reason: str = ""


class _DmError(Exception):
    """A libdiskmgt call failed; str() is a sentence for DmDisk.error."""

    def __init__(self, what: str, errno_: int = 0) -> None:
        if errno_:
            text = "cannot %s: %s (errno %d)" % (what, os.strerror(errno_),
                                                 errno_)
        else:
            text = "cannot %s" % what
        super().__init__(text)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


class _Api:
    """The libdiskmgt and libnvpair entry points, with their C types."""

    def __init__(self, dm: ctypes.CDLL, nv: ctypes.CDLL) -> None:
        def fn(lib, name, restype, argtypes):
            # lib[name] is a fresh function object, so setting its types
            # cannot disturb another user of the same library.
            f = lib[name]
            f.restype = restype
            f.argtypes = argtypes
            return f

        pint = POINTER(c_int)
        self.get_descriptors = fn(dm, "dm_get_descriptors", _DescArray,
                                  [c_int, pint, pint])
        self.get_associated = fn(dm, "dm_get_associated_descriptors",
                                 _DescArray, [c_uint64, c_int, pint])
        self.free_descriptors = fn(dm, "dm_free_descriptors", None,
                                   [_DescArray])
        self.get_attributes = fn(dm, "dm_get_attributes", c_void_p,
                                 [c_uint64, pint])
        self.get_name = fn(dm, "dm_get_name", c_void_p, [c_uint64, pint])
        self.free_name = fn(dm, "dm_free_name", None, [c_void_p])
        self.inuse = fn(dm, "dm_inuse", c_int,
                        [c_char_p, POINTER(c_void_p), c_int, pint])
        # dm_inuse()'s message comes from malloc() in the library's libc;
        # the library's own lookup scope finds that libc's free().
        self.free = fn(dm, "free", None, [c_void_p])
        self.nvlist_free = fn(nv, "nvlist_free", None, [c_void_p])
        self.next_nvpair = fn(nv, "nvlist_next_nvpair", c_void_p,
                              [c_void_p, c_void_p])
        self.nvpair_name = fn(nv, "nvpair_name", c_char_p, [c_void_p])
        self.nvpair_type = fn(nv, "nvpair_type", c_int, [c_void_p])
        self.value_string = fn(nv, "nvpair_value_string", c_int,
                               [c_void_p, POINTER(c_char_p)])
        self.value_uint32 = fn(nv, "nvpair_value_uint32", c_int,
                               [c_void_p, POINTER(c_uint32)])
        self.value_uint64 = fn(nv, "nvpair_value_uint64", c_int,
                               [c_void_p, POINTER(c_uint64)])
        self.value_boolean_value = fn(nv, "nvpair_value_boolean_value",
                                      c_int, [c_void_p, pint])

    # -- descriptors ------------------------------------------------------

    def _take(self, array, err: c_int, what: str) -> List[int]:
        """Copy a 0-terminated descriptor array, then free it."""
        try:
            if err.value != 0:
                raise _DmError(what, err.value)
            if not array:
                raise _DmError(what + " (no list returned)")
            out = []
            i = 0
            while array[i] != 0:
                out.append(array[i])
                i += 1
            return out
        finally:
            if array:
                self.free_descriptors(array)

    def descriptors(self, dtype: int, filter_: List[int],
                    what: str) -> List[int]:
        err = c_int(0)
        cfilter = (c_int * len(filter_))(*filter_)
        return self._take(self.get_descriptors(dtype, cfilter, byref(err)),
                          err, what)

    def associated(self, desc: int, dtype: int, what: str) -> List[int]:
        err = c_int(0)
        return self._take(self.get_associated(desc, dtype, byref(err)),
                          err, what)

    def name(self, desc: int, what: str) -> bytes:
        err = c_int(0)
        ptr = self.get_name(desc, byref(err))
        try:
            if err.value != 0 or not ptr:
                raise _DmError(what, err.value)
            return ctypes.string_at(ptr)
        finally:
            if ptr:
                self.free_name(ptr)

    # -- attributes -------------------------------------------------------

    def attributes(self, desc: int, what: str) -> Dict[str, object]:
        err = c_int(0)
        nvl = self.get_attributes(desc, byref(err))
        try:
            if err.value != 0 or not nvl:
                raise _DmError(what, err.value)
            return self.walk(nvl)
        finally:
            if nvl:
                self.nvlist_free(nvl)

    def walk(self, nvl: int) -> Dict[str, object]:
        """The pairs of an nvlist whose types libdiskmgt attributes use:
        a DATA_TYPE_BOOLEAN pair has no value, its presence means true."""
        out: Dict[str, object] = {}
        pair = self.next_nvpair(nvl, None)
        while pair:
            name = _text(self.nvpair_name(pair) or b"")
            dtype = self.nvpair_type(pair)
            if dtype == DATA_TYPE_BOOLEAN:
                out[name] = True
            elif dtype == DATA_TYPE_BOOLEAN_VALUE:
                b = c_int()
                if self.value_boolean_value(pair, byref(b)) == 0:
                    out[name] = bool(b.value)
            elif dtype == DATA_TYPE_UINT32:
                u32 = c_uint32()
                if self.value_uint32(pair, byref(u32)) == 0:
                    out[name] = u32.value
            elif dtype == DATA_TYPE_UINT64:
                u64 = c_uint64()
                if self.value_uint64(pair, byref(u64)) == 0:
                    out[name] = u64.value
            elif dtype == DATA_TYPE_STRING:
                s = c_char_p()
                if self.value_string(pair, byref(s)) == 0 and \
                        s.value is not None:
                    out[name] = _text(s.value)
            pair = self.next_nvpair(nvl, pair)
        return out

    # -- in use -----------------------------------------------------------

    def inuse_messages(self, slice_name: bytes) -> List[str]:
        """dm_inuse() for one slice: its reasons, one message each."""
        msg = c_void_p()
        err = c_int(0)
        count = self.inuse(slice_name, byref(msg), DM_WHO_ZPOOL, byref(err))
        try:
            text = _text(ctypes.string_at(msg.value)) if msg.value else ""
        finally:
            if msg.value:
                self.free(msg.value)
        what = "check '%s' for use" % _text(slice_name)
        if err.value != 0:
            raise _DmError(what, err.value)
        if count < 0:
            raise _DmError(what + " (dm_inuse returned %d)" % count)
        lines = [line for line in text.split("\n") if line.strip()]
        if count > 0 and not lines:
            raise _DmError(what + " (%d uses reported without a message)"
                           % count)
        return lines


def _str_attr(attrs: Dict[str, object], name: str) -> Optional[str]:
    value = attrs.get(name)
    return value if isinstance(value, str) else None


def _int_attr(attrs: Dict[str, object], name: str) -> Optional[int]:
    value = attrs.get(name)
    return value if isinstance(value, int) and \
        not isinstance(value, bool) else None


def disk_name(opath: str) -> str:
    """cXtYdZ from an opath, as diskinfo derives its DISK column: the
    basename, less a trailing 's' and one digit (p0 and s10 stay)."""
    base = opath.rsplit("/", 1)[-1]
    if len(base) >= 2 and base[-2] == "s" and base[-1] in "0123456789":
        return base[:-2]
    return base


def _query_media(api: _Api, media: int, inuse_disabled: bool) -> DmDisk:
    disk = DmDisk(name="", opath=None, size_bytes=None, block_bytes=None,
                  vendor_id=None, product_id=None, removable=False,
                  solid_state=False, rpm=None, ctype=None)
    errors: List[str] = []

    # Each step goes on after another fails, so the record says as much as
    # can be known; any error marks the disk as undecided.
    try:
        drives = api.associated(media, DM_DRIVE, "find the drive of a media")
        if not drives:
            raise _DmError("find the drive of a media (none)")
        dattrs = api.attributes(drives[0], "get drive attributes")
        disk.opath = _str_attr(dattrs, DM_OPATH)
        disk.vendor_id = _str_attr(dattrs, DM_VENDOR_ID)
        disk.product_id = _str_attr(dattrs, DM_PRODUCT_ID)
        disk.removable = dattrs.get(DM_REMOVABLE) is True
        disk.solid_state = dattrs.get(DM_SOLIDSTATE) is True
        disk.rpm = _int_attr(dattrs, DM_RPM)
        if disk.opath:
            disk.name = disk_name(disk.opath)
        else:
            errors.append("the drive reports no opath, so the disk has no "
                          "name")
        controllers = api.associated(drives[0], DM_CONTROLLER,
                                     "find the controller of a drive")
        if controllers:
            cattrs = api.attributes(controllers[0],
                                    "get controller attributes")
            disk.ctype = _str_attr(cattrs, DM_CTYPE)
    except _DmError as e:
        errors.append(str(e))

    try:
        mattrs = api.attributes(media, "get media attributes")
        blocks = _int_attr(mattrs, DM_SIZE)
        disk.block_bytes = _int_attr(mattrs, DM_BLOCKSIZE)
        if blocks is None or disk.block_bytes is None:
            errors.append("media attributes lack '%s' or '%s'"
                          % (DM_SIZE, DM_BLOCKSIZE))
        else:
            disk.size_bytes = blocks * disk.block_bytes
    except _DmError as e:
        errors.append(str(e))

    try:
        slices = api.associated(media, DM_SLICE, "list slices")
        if inuse_disabled:
            # dm_inuse() returns 0 at once when NOINUSE_CHECK is set.
            errors.append("cannot check for use: NOINUSE_CHECK is set in "
                          "the environment")
        for desc in slices:
            try:
                raw = api.name(desc, "get a slice name")
                disk.slices.append(_text(raw))
                if not inuse_disabled:
                    for message in api.inuse_messages(raw):
                        disk.inuse.append(DmInuse(_text(raw), message))
            except _DmError as e:
                errors.append(str(e))
    except _DmError as e:
        errors.append(str(e))

    disk.error = "; ".join(errors) if errors else None
    return disk


def query_libdiskmgt(host: Host) -> DiskmgtResult:
    """Every fixed disk with its attributes and in-use reasons.

    Never raises for a missing or unusable library: the result then has
    ``available=False`` and ``reason`` says why.
    """
    try:
        dm = host.load_library("diskmgt")
        nv = host.load_library("nvpair")
    except HostError as e:
        return DiskmgtResult([], False, str(e))
    try:
        api = _Api(dm, nv)
    except AttributeError as e:
        return DiskmgtResult([], False, "libdiskmgt or libnvpair lacks a "
                             "function: %s" % e)
    try:
        media = api.descriptors(DM_MEDIA, [DM_DT_FIXED, DM_FILTER_END],
                                "list fixed-disk media")
    except _DmError as e:
        return DiskmgtResult([], False, str(e))
    inuse_disabled = os.environ.get("NOINUSE_CHECK") is not None
    return DiskmgtResult([_query_media(api, m, inuse_disabled)
                          for m in media], True, "")


# -- in-use messages (facts §10, entry.c dm_get_usage_string()) -----------

_SEE = r"\((?:1M|8)\)"      # NexentaStor and old illumos (1M), upstream (8)
_TEMPLATE_TEXT = [
    ("swap", r"{dev} is currently used by swap\. Please see swap{see}\."),
    ("mount", r"{dev} is currently mounted on (?P<detail>.+)\. "
              r"Please see umount{see}\."),
    ("vfstab", r"{dev} is normally mounted on (?P<detail>.*) according to "
               r"/etc/vfstab\. Please remove this entry to use this "
               r"device\."),
    ("fs", r"{dev} contains a (?P<detail>.+) filesystem\."),
    ("vxvm", r"{dev} is part of VxVM volume (?P<detail>.+)\."),
    ("lu", r"{dev} is in use for live upgrade (?P<detail>.+)\. "
           r"Please see ludelete{see}\."),
    ("dump", r"{dev} is in use by (?P<detail>.+)\. "
             r"Please see dumpadm{see}\."),
    ("exported_pool", r"{dev} is part of exported or potentially active ZFS "
                      r"pool (?P<detail>.+)\. Please see zpool{see}\."),
    ("active_pool", r"{dev} is part of active ZFS pool (?P<detail>.+)\. "
                    r"Please see zpool{see}\."),
    # Two blanks before "Please" in the source; one is accepted too.
    ("spare", r"{dev} is reserved as a hot spare for ZFS pool "
              r"(?P<detail>.+)\.  ?Please see zpool{see}\."),
    ("l2cache", r"{dev} is in use as a cache device for ZFS pool "
                r"(?P<detail>.+)\.  ?Please see zpool{see}\."),
]
_TEMPLATES = [(kind, re.compile(text.format(dev=r"\S+", see=_SEE)))
              for kind, text in _TEMPLATE_TEXT]


def parse_inuse_message(msg: str) -> Tuple[str, str]:
    """Classify one dm_inuse() message as (kind, detail).

    kind is one of swap, mount, vfstab, fs, vxvm, lu, dump, exported_pool,
    active_pool, spare, l2cache, or unknown (detail is then the whole
    message; an unknown reason still means "in use").  detail is the
    message's second field: mount point, file system type, VxVM volume, LU
    name, "dump", or pool name; "" for swap.  Sample (NexentaStor; the
    message is one line):

        /dev/dsk/c0t5000CCA0496E6F8Dd0s0 is part of active ZFS pool tank.
        Please see zpool(1M).
    """
    text = msg.rstrip("\r\n")
    for kind, pattern in _TEMPLATES:
        m = pattern.fullmatch(text)
        if m:
            return kind, m.groupdict().get("detail") or ""
    return "unknown", text.strip()
