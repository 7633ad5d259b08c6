# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fixed disks and their in-use state from illumos libdiskmgt, via the
engine.

One job: ask libdiskmgt, the library behind diskinfo(8) and zpool's in-use
check, which fixed disks exist, what their drives report, and whether any
slice of each is in use.  The library is asked by sdtune's C engine,
``sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH [--no-inuse]``
(plugin/engine/diskmgt.c), run through ``host.run("sdio", ...)``, so it
works the same on the machine itself and over SSH, where the appliance has
no Python.  The library paths are the host's [libraries] "diskmgt" and
"nvpair" (``host.libraries``); the engine dlopen()s them.

What the engine calls, following illumos usr/src/cmd/diskinfo/diskinfo.c
and usr/src/cmd/zpool/zpool_vdev.c check_disk() (facts §9, §10):

* ``dm_get_descriptors(DM_MEDIA, {DM_DT_FIXED, DM_FILTER_END})``;
* per media: ``dm_get_attributes()`` ("size" uint64 blocks, "blocksize"
  uint32 logical bytes), the associated DM_DRIVE's attributes ("vendor_id",
  "product_id", "opath" strings, "rpm" uint32, "removable" and
  "solid_state" present-when-true booleans) and its DM_CONTROLLER's "ctype";
* per slice of the media (DM_SLICE): ``dm_inuse(name, &msg, DM_WHO_ZPOOL,
  &err)``.  The check is per slice (a whole-disk ZFS member is found on s0),
  and DM_WHO_ZPOOL reports every kind of use.

Whatever the library allocates the engine frees as libdiskmgt.h requires:
descriptor arrays with dm_free_descriptors(), names with dm_free_name(),
attribute lists with nvlist_free(), in-use messages with free().

Any failure for one disk is recorded in that disk's ``error``; the caller
must then treat the disk as in use.  A library that cannot be loaded, an
engine that cannot be run or that answers with anything but its JSON
document gives ``available=False`` and a reason instead of an exception
(the caller falls back to diskinfo and says so).  NOINUSE_CHECK in
sdtune's environment makes libdiskmgt skip its check in-process, so the
engine is then told not to check (--no-inuse) and every disk is
undecided.  ``parse_diskmgt_json()`` and ``parse_inuse_message()`` are
pure.
"""

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import HostError
from ..host import Host

ENGINE = "sdio"
_JSON_VERSION = 1


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


class _BadDisk(Exception):
    """A disk entry of the engine's document is malformed; str() says
    how, in our words."""


def _unavailable(reason: str) -> "DiskmgtResult":
    return DiskmgtResult([], False, reason)


def _library(host: Host, name: str) -> str:
    """The configured absolute path of library ``name``; raises HostError
    as the [libraries] allow-list refuses anything else."""
    path = host.libraries.get(name)
    if path is None:
        raise HostError("load", name, "not in the [libraries] allow-list")
    if not os.path.isabs(path):
        raise HostError("load", path,
                        "configured path for '%s' is not absolute" % name)
    return path


def _opt_str(d: Dict[str, Any], key: str) -> Optional[str]:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise _BadDisk("'%s' is not a string" % key)
    return value


def _opt_int(d: Dict[str, Any], key: str) -> Optional[int]:
    value = d.get(key)
    if value is not None and (not isinstance(value, int) or
                              isinstance(value, bool) or value < 0):
        raise _BadDisk("'%s' is not a count" % key)
    return value


def _bool(d: Dict[str, Any], key: str) -> bool:
    value = d.get(key)
    if not isinstance(value, bool):
        raise _BadDisk("'%s' is not a boolean" % key)
    return value


def _str_list(d: Dict[str, Any], key: str) -> List[str]:
    value = d.get(key)
    if not isinstance(value, list) or \
            not all(isinstance(v, str) for v in value):
        raise _BadDisk("'%s' is not a list of strings" % key)
    return value


def _disk(entry: Any) -> DmDisk:
    """One disk of the engine's document; raises _BadDisk."""
    if not isinstance(entry, dict):
        raise _BadDisk("a disk is not an object")
    name = entry.get("name")
    if not isinstance(name, str):
        raise _BadDisk("'name' is not a string")
    blocks = _opt_int(entry, "size_blocks")
    block_bytes = _opt_int(entry, "block_bytes")
    inuse = entry.get("inuse")
    if not isinstance(inuse, list):
        raise _BadDisk("'inuse' is not a list")
    uses = []
    for use in inuse:
        if not isinstance(use, dict) or \
                not isinstance(use.get("slice"), str) or \
                not isinstance(use.get("message"), str):
            raise _BadDisk("an 'inuse' entry lacks 'slice' or 'message'")
        uses.append(DmInuse(use["slice"], use["message"]))
    errors = _str_list(entry, "errors")
    return DmDisk(
        name=name, opath=_opt_str(entry, "opath"),
        size_bytes=(blocks * block_bytes if blocks is not None and
                    block_bytes is not None else None),
        block_bytes=block_bytes, vendor_id=_opt_str(entry, "vendor_id"),
        product_id=_opt_str(entry, "product_id"),
        removable=_bool(entry, "removable"),
        solid_state=_bool(entry, "solid_state"), rpm=_opt_int(entry, "rpm"),
        ctype=_opt_str(entry, "ctype"), slices=list(_str_list(entry,
                                                              "slices")),
        inuse=uses, error="; ".join(errors) if errors else None)


def parse_diskmgt_json(text: str, what: str) -> DiskmgtResult:
    """The result the engine's JSON document ``text`` describes.  Never
    raises: a document that cannot be read is ``available=False`` with a
    reason naming ``what`` (the command); a disk entry that cannot be read
    is a disk with an ``error`` (undecided), named when its name can be."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return _unavailable("cannot parse the output of '%s': not JSON "
                            "(at character %d)" % (what, e.pos))
    except (ValueError, RecursionError):
        return _unavailable("cannot parse the output of '%s': not JSON"
                            % what)
    if not isinstance(doc, dict) or doc.get("version") != _JSON_VERSION \
            or not isinstance(doc.get("available"), bool) \
            or not isinstance(doc.get("reason"), str) \
            or not isinstance(doc.get("disks"), list):
        return _unavailable("cannot parse the output of '%s': not a "
                            "version %d diskmgt document" % (
                                what, _JSON_VERSION))
    if not doc["available"]:
        return _unavailable(doc["reason"] or "cannot query libdiskmgt: "
                            "'%s' gave no reason" % what)
    disks = []
    for entry in doc["disks"]:
        try:
            disks.append(_disk(entry))
        except _BadDisk as e:
            name = entry.get("name") if isinstance(entry, dict) else None
            disks.append(DmDisk(
                name=name if isinstance(name, str) else "", opath=None,
                size_bytes=None, block_bytes=None, vendor_id=None,
                product_id=None, removable=False, solid_state=False,
                rpm=None, ctype=None,
                error="cannot parse a disk in the output of '%s': %s"
                      % (what, e)))
    return DiskmgtResult(disks, True, "")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def disk_name(opath: str) -> str:
    """cXtYdZ from an opath, as diskinfo derives its DISK column: the
    basename, less a trailing 's' and one digit (p0 and s10 stay).  The
    engine names disks by the same rule."""
    base = opath.rsplit("/", 1)[-1]
    if len(base) >= 2 and base[-2] == "s" and base[-1] in "0123456789":
        return base[:-2]
    return base


def query_libdiskmgt(host: Host) -> DiskmgtResult:
    """Every fixed disk with its attributes and in-use reasons.

    Never raises for a missing or unusable library or engine: the result
    then has ``available=False`` and ``reason`` says why.
    """
    what = ENGINE + " diskmgt"
    try:
        args = ["diskmgt", "--diskmgt", _library(host, "diskmgt"),
                "--nvpair", _library(host, "nvpair")]
    except HostError as e:
        return _unavailable(str(e))
    if os.environ.get("NOINUSE_CHECK") is not None:
        args.append("--no-inuse")
    if not host.can_run(ENGINE):
        return _unavailable("cannot run '%s': the engine is not configured "
                            "in [commands] or not executable" % what)
    try:
        res = host.run(ENGINE, args)
    except HostError as e:
        return _unavailable(str(e))
    if res.returncode != 0:
        detail = _last_line(res.stderr)
        status = ("killed by signal %d" % -res.returncode
                  if res.returncode < 0 else
                  "exit status %d" % res.returncode)
        return _unavailable("cannot run '%s': %s%s" % (
            what, status, ": " + detail if detail else ""))
    return parse_diskmgt_json(res.stdout, what)


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
