# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""NVMe controllers and namespaces as `nvmeadm` shows them (issue 18).

Four commands, each a query/parse pair (the parsers are pure):

* `nvmeadm list`: one line per controller (model, serial, firmware
  revision with their trailing blanks removed, NVMe version; since 2023
  its capacity where the drive manages namespaces), then one
  two-space-indented line per namespace, naming in parentheses its disk
  (cXtYdZ) when blkdev attached it, else its state (unattached,
  ignored, inactive, unallocated, unknown, invalid state); the disk
  name is how an inventory Disk finds its namespace.  Sizes are "N MB"
  up to 2022 and human-readable since ("931.51 GB", "0 B"); a namespace
  below the active state has none;
* `nvmeadm identify nvmeN`: Identify Controller (model, serial,
  firmware, whether a volatile write cache is present);
* `nvmeadm identify nvmeN/M`: Identify Namespace (the LBA formats, the
  one in use);
* `nvmeadm get-features nvmeN cache`: whether that cache is enabled.
  Only run when a cache is present.  Without one, nvmeadm before 2024
  prints the header alone (and its complaint on stderr) and exits 0,
  later ones exit 255: the state is unknown either way, not an error.

The formats are those of illumos-gate's usr/src/cmd/nvmeadm
(nvmeadm.c, nvmeadm_print.c) from 2017 to 2025; where they changed, both
are read: the pre-2021 Identify Controller prints the cache as one
field, "Volatile Write Cache: present" or "not present"; until 2022-10
(and in every NexentaStor 5.x) a namespace with an EUI64 is named by it
(`nvme0/0025385971b0f5a2`), which is the name nvmeadm takes back; a size
nicenum cannot scale prints as "<overflow>B" (unknown).  LBA formats are
numbered from 0; the nvmeadm(8) Example 2 numbers them from 1 and is
read too.  NexentaStor 5.0-5.1's own earlier nvmeadm (no "model: " and
no disk in `list`, no "<name>: Identify ..." line) is refused by name:
its `list` cannot tie a namespace to a disk.

nvmeadm prints every field as `<indent><name>:` and blanks up to column
44, then the value (nvme_print()); a section header has no colon.  The
identify parsers read the fields they need by their section and name and
let any other line through (nvmeadm prints many more), but a field they
need that is missing, twice, or unreadable is a ParseError naming the
command, the line and the field, never a guess.  NVMe strings are
printable ASCII: anything else (a byte that was not UTF-8) is refused.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import MAX_NAME, excerpt, parse_count
from .runner import output_of

LIST = "nvmeadm list"
IDENTIFY = "nvmeadm identify"
CACHE = "nvmeadm get-features cache"

PERFORMANCE = ("Best", "Better", "Good", "Degraded")
# Instance and namespace numbers are 32-bit: at most 10 digits, so no
# name quoted in a message runs on.  nvme named a namespace with an
# EUI64 by its 16 lower-case hex digits (nvme.c nvme_init_ns(), "%02x"
# eight times) from the first upstream nvmeadm (3d9b1a2a54, 2017-06-24)
# until 670f080b72 (2022-10-11), and in every NexentaStor 5.x; since,
# by its decimal NSID.  A name of 16 characters is never an NSID.
NAMESPACE_ID = r"[0-9]{1,10}|[0-9a-f]{16}"
# NVMe 2.0 allows 64 LBA formats (NLBAF is at most 63).
MAX_LBA_FORMATS = 64

_CONTROLLER = re.compile(r"^(nvme[0-9]{1,10}): model: (.*), serial: (.*), "
                         r"FW rev: (.*), NVMe v([0-9]+\.[0-9]+(?:\.[0-9]+)?)"
                         r"(?:, Capacity = ([^,]*))?"
                         r"(?:, Unallocated = ([^,]*))?$")
# The parenthesised disk or state, then ": " and the sizes, each of
# which may be missing; or nothing after ")" (inactive, unallocated).
_NAMESPACE = re.compile(r"^  (nvme[0-9]{1,10})/(%s)"
                        r"(?: \(([^()]*)\))?(:(?: (.*))?)?$" % NAMESPACE_ID)
# What nvmeadm prints in place of a disk name (2017-2025).
_STATES = ("unattached", "ignored", "inactive", "unallocated", "unknown",
           "invalid state")
_SIZE_ITEM = re.compile(r"^(Size|Capacity|Used) = (.*)$")
# "953869 MB" (to 2022), or nicenum's "931.51 GB", "1 GB", "0 B"; and
# "<overflow>B" when nicenum_scale() cannot scale it: a size unknown.
OVERFLOW = "<overflow>B"
_SIZE = re.compile(r"^([0-9]{1,20})(?:\.([0-9]{1,2}))? ?([KMGTPE]?)B$")
_UNITS = "BKMGTPE"
_DISK = re.compile(r"^c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+$")
_CONTROLLER_NAME = re.compile(r"^nvme[0-9]{1,10}$")
_NAMESPACE_NAME = re.compile(r"^(nvme[0-9]{1,10})/(%s)$" % NAMESPACE_ID)
_BYTES = re.compile(r"^([0-9]+) ?bytes$")
_MB = re.compile(r"^([0-9]+) ?MB$")
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")
# NexentaStor 5.0-5.1 shipped its own earlier nvmeadm (NEX-4431,
# 2016-01-27, until NEX-15967 took upstream's, 2018-01-24): `list`
# without "model: " and without the namespaces' disks, `identify`
# without the "<name>: Identify ..." line, at indents 0/2/4, LBA formats
# from 1.
_NEXENTA_CONTROLLER = re.compile(r"^nvme[0-9]{1,10}: (?!model: ).*, "
                                 r"serial: .*, FW rev: ")
_NEXENTA_SECTIONS = ("Controller Capabilities and Features",
                     "Namespace Capabilities and Features",
                     "Volatile Write Cache")
NEXENTA_5_0 = "NexentaStor 5.0-5.1's own nvmeadm (2016-2018)"
# LBA Data Size is 1 << LBADS: a power of two, at least 512 for a format
# a namespace can use; nvmeadm prints an unused format (LBADS 0) as
# "1 bytes", which is kept but never a block size (nvme_init_ns() stops
# at it).  LBADS 31 and more overflow nvmeadm's int: not a size.
UNUSED_LBA_BYTES = 1
MAX_LBA_BYTES = 1 << 30


@dataclass
class NvmeNamespace:
    """One namespace line of `nvmeadm list`."""

    controller: str             # nvme0
    # As nvmeadm names it: the NSID ("1"), or the EUI64 ("0025385971b0f5a2",
    # 2017-2022): a string, the argument nvmeadm takes back.
    namespace: str
    disk: Optional[str]         # cXtYdZ; None when blkdev has not got it
    # Bytes, as nvmeadm rounds them (to a MiB, or to 3 digits since
    # 2022); None when not printed.
    size_bytes: Optional[int]
    capacity_bytes: Optional[int]
    used_bytes: Optional[int]
    state: Optional[str] = None  # unattached, ... (None: a disk, or none)

    @property
    def name(self) -> str:
        return "%s/%s" % (self.controller, self.namespace)

    @property
    def nsid(self) -> Optional[int]:
        """The NSID when nvmeadm named the namespace by it, else None."""
        return int(self.namespace) if len(self.namespace) <= 10 else None


@dataclass
class NvmeController:
    """One controller line of `nvmeadm list` and its namespaces."""

    name: str                   # nvme0
    model: str                  # trailing blanks removed
    serial: str
    firmware: str
    version: str                # "1.3"
    namespaces: List[NvmeNamespace] = field(default_factory=list)


@dataclass
class ControllerIdentity:
    """What `nvmeadm identify nvmeN` says that sdtune uses."""

    name: str
    model: str
    serial: str
    firmware: str
    namespace_count: Optional[int]
    cache_present: bool


@dataclass
class LbaFormat:
    index: int
    data_bytes: int
    metadata_bytes: int
    relative_performance: str   # one of PERFORMANCE

    def to_json(self) -> dict:
        return {"index": self.index, "data_bytes": self.data_bytes,
                "metadata_bytes": self.metadata_bytes,
                "relative_performance": self.relative_performance}


@dataclass
class NamespaceIdentity:
    """What `nvmeadm identify nvmeN/M` says that sdtune uses.  Formats
    with metadata are not printed without -v: `lba_formats` may hold
    fewer than `lba_format_count`, and may miss the one in use."""

    name: str                   # nvme0/1
    size_mb: Optional[int]
    lba_format_count: int
    lba_format_in_use: int
    extended_lba: Optional[bool]
    lba_formats: List[LbaFormat]

    def format_in_use(self) -> Optional[LbaFormat]:
        for fmt in self.lba_formats:
            if fmt.index == self.lba_format_in_use:
                return fmt
        return None


@dataclass
class NvmeInfo:
    """An NVMe namespace behind a Disk (the "nvme" object of the disks
    JSON); unknown parts None."""

    controller: str
    namespace: str              # as NvmeNamespace.namespace
    version: Optional[str]
    lba_formats: List[LbaFormat]
    lba_format_in_use: Optional[int]
    cache_present: Optional[bool]
    cache_enabled: Optional[bool]

    def to_json(self) -> dict:
        # The NSID as a number; a namespace nvmeadm named by its EUI64
        # (2017-2022) by that name, the only identity list gives.
        return {"controller": self.controller,
                "namespace": int(self.namespace)
                if len(self.namespace) <= 10 else self.namespace,
                "version": self.version,
                "lba_formats": [f.to_json() for f in self.lba_formats],
                "lba_format_in_use": self.lba_format_in_use,
                "volatile_write_cache": {"present": self.cache_present,
                                         "enabled": self.cache_enabled}}


def _lines(text: str, command: str, field_name: str) -> List[str]:
    """The lines of text, trailing blanks removed; a character that is
    not printable ASCII is refused (nvmeadm prints none)."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not _PRINTABLE.match(line):
            bad = next(c for c in line if not _PRINTABLE.match(c))
            raise ParseError(command, field_name, "line %d: character "
                             "U+%04X is not printable ASCII, the only "
                             "text nvmeadm prints" % (number, ord(bad)))
        lines.append(line)
    return lines


def parse_size(text: str, where: str, label: str) -> int:
    """A size of `nvmeadm list` in bytes: "953869 MB" or nicenum's
    "931.51 GB" (base 1024, rounded as printed)."""
    m = _SIZE.match(text)
    if m is None:
        raise ParseError(LIST, label, "%s: %s is not a size like '953869 "
                         "MB' or '931.51 GB'" % (where, excerpt(text, 30)))
    whole = parse_count(m.group(1), command=LIST, field=label,
                        what="a size", where=where)
    hundredths = int((m.group(2) or "0").ljust(2, "0"))
    scale = 1 << (10 * _UNITS.index(m.group(3) or "B"))
    return whole * scale + hundredths * scale // 100


def _sizes(summary: Optional[str], where: str
           ) -> Tuple[Optional[int], Optional[int], Optional[int]]:
    """Size, Capacity and Used of a namespace line's summary; each may
    be missing (newer nvmeadm prints what it can read) or unknown
    (nicenum's "<overflow>B")."""
    got: Dict[str, Optional[int]] = {}
    for item in (summary or "").split(", ") if summary else []:
        m = _SIZE_ITEM.match(item)
        if m is None or m.group(1) in got:
            raise ParseError(LIST, "namespace", "%s: %s is not 'Size = "
                             "...', 'Capacity = ...' or 'Used = ...' "
                             "(once each)" % (where, excerpt(item, 40)))
        got[m.group(1)] = None if m.group(2) == OVERFLOW else \
            parse_size(m.group(2), where, m.group(1))
    return got.get("Size"), got.get("Capacity"), got.get("Used")


def parse_nvmeadm_list(text: str) -> Dict[str, NvmeController]:
    """Parse `nvmeadm list`: controllers by name, in the order printed.

    Samples (illumos-gate nvmeadm, before and since 2022-09):

        nvme0: model: Samsung SSD 970 EVO 1TB, serial: S467NX0K612345A, \
FW rev: 2B2QEXE7, NVMe v1.3
          nvme0/1 (c3t0025385971B0F5A2d0): Size = 953869 MB, ...
          nvme0/2 (unattached): Size = 1024 MB, Capacity = 1024 MB, ...
        nvme1: model: WUS4BB019D4M9E4, serial: A06AF9B1, FW rev: R1110021, \
NVMe v1.3, Capacity = 1831420 MB
          nvme1/1 (c4t0014EE83021EAE80d0): Size = 1.75 TB, Capacity = \
1.75 TB, Used = 117.23 GB
          nvme1/3 (inactive)
    """
    controllers: Dict[str, NvmeController] = {}
    disks: Dict[str, str] = {}
    current: Optional[NvmeController] = None
    for number, line in enumerate(_lines(text, LIST, "model"), 1):
        where = "line %d" % number
        if not line:
            continue
        m = _CONTROLLER.match(line)
        if m:
            name = m.group(1)
            if name in controllers:
                raise ParseError(LIST, "controller", "%s: %s listed "
                                 "twice" % (where, name))
            current = NvmeController(name, m.group(2), m.group(3),
                                     m.group(4), m.group(5))
            controllers[name] = current
            continue
        m = _NAMESPACE.match(line)
        if not m and _NEXENTA_CONTROLLER.match(line):
            raise ParseError(LIST, "model", "%s: %s: the format of %s, "
                             "which sdtune does not read: it names no "
                             "disk for a namespace, and the disk is what "
                             "sdtune reads `list` for" % (
                                 where, excerpt(line, 40), NEXENTA_5_0))
        if not m:
            raise ParseError(LIST, "controller" if not line.startswith(" ")
                             else "namespace", "%s: not a controller or "
                             "namespace line: %s" % (where,
                                                     excerpt(line, 60)))
        if current is None or m.group(1) != current.name:
            raise ParseError(LIST, "namespace", "%s: %s/%s is not under "
                             "its controller's line" % (where, m.group(1),
                                                        m.group(2)))
        number_ = m.group(2)
        if len(number_) <= 10 and parse_count(
                number_, command=LIST, field="namespace",
                what="a namespace number", where=where, digits=10) == 0:
            raise ParseError(LIST, "namespace", "%s: namespace 0 does not "
                             "exist (NSIDs count from 1)" % where)
        if any(ns.namespace == number_ for ns in current.namespaces):
            raise ParseError(LIST, "namespace", "%s: %s/%s listed twice"
                             % (where, current.name, number_))
        disk, state = m.group(3), None
        if disk in _STATES:
            disk, state = None, disk
        if disk is not None:
            if not _DISK.match(disk) or len(disk) > MAX_NAME:
                raise ParseError(LIST, "disk", "%s: %s is neither a disk "
                                 "name nor a namespace state (%s)"
                                 % (where, excerpt(disk, 40),
                                    ", ".join(_STATES)))
            if disk in disks:
                raise ParseError(LIST, "disk", "%s: %s is both %s and "
                                 "%s/%s" % (where, disk, disks[disk],
                                            current.name, number_))
            disks[disk] = "%s/%s" % (current.name, number_)
        if m.group(4) is None and state not in ("inactive",
                                                "unallocated"):
            raise ParseError(LIST, "namespace", "%s: %s/%s has no sizes"
                             % (where, current.name, number_))
        current.namespaces.append(NvmeNamespace(
            current.name, number_, disk, *_sizes(m.group(5), where),
            state=state))
    return controllers


def namespaces_by_disk(controllers: Dict[str, NvmeController]
                       ) -> Dict[str, NvmeNamespace]:
    """The namespaces blkdev attached, by disk name."""
    return {ns.disk: ns for c in controllers.values()
            for ns in c.namespaces if ns.disk is not None}


@dataclass
class _Field:
    section: Tuple[str, ...]    # the headers above it, outermost first
    name: str
    value: Optional[str]        # None for a section header
    line: int


def _fields(text: str, command: str, header: str,
            subject: Optional[str], subject_re) -> Tuple[str, List[_Field]]:
    """The subject named in the first line (`nvme0: Identify
    Controller`) and every line after it as a field in its section."""
    lines = _lines(text, command, header)
    first = next((i for i, line in enumerate(lines) if line), None)
    if first is None:
        raise ParseError(command, header, "no output")
    name, sep, title = lines[first].partition(": ")
    if lines[first] in _NEXENTA_SECTIONS:
        raise ParseError(command, header, "line %d: %s without a '<name>: "
                         "%s' line above: the format of %s, which sdtune "
                         "does not read (its LBA formats count from 1)"
                         % (first + 1, lines[first], header, NEXENTA_5_0))
    if not sep or title != header or not subject_re.match(name):
        raise ParseError(command, header, "line %d: %s is not the "
                         "'<name>: %s' line" % (first + 1,
                                                excerpt(lines[first], 60),
                                                header))
    if subject is not None and name != subject:
        raise ParseError(command, header, "line %d: about %s, not %s"
                         % (first + 1, excerpt(name, 40), subject))
    fields: List[_Field] = []
    stack: List[Tuple[int, str]] = []
    for number, line in enumerate(lines[first + 1:], first + 2):
        if not line:
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line[indent:]
        if indent == 0:
            raise ParseError(command, header, "line %d: %s after the "
                             "output of %s" % (number, excerpt(body, 60),
                                               name))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        section = tuple(h for _, h in stack)
        label, sep, rest = body.partition(":")
        if not sep:
            stack.append((indent, body))
            fields.append(_Field(section, body, None, number))
            continue
        # The blanks before the value only align it (at column 44, or
        # one after the colon of a long name): NVMe strings are padded
        # on the right, never on the left.
        fields.append(_Field(section, label, rest.strip(" "), number))
    return name, fields


def _one(fields: List[_Field], command: str, section: Optional[str],
         name: str, required: bool = True) -> Optional[_Field]:
    """The field `name` whose nearest section is `section` (any when
    None); missing (when required) or twice: ParseError."""
    found = [f for f in fields if f.name == name and f.value is not None
             and (section is None or (f.section and
                                      f.section[-1] == section))]
    if len(found) > 1:
        raise ParseError(command, name, "line %d: given twice (also line "
                         "%d)" % (found[1].line, found[0].line))
    if not found:
        if required:
            raise ParseError(command, name, "missing: the output is "
                             "truncated or not nvmeadm's")
        return None
    return found[0]


def _yes_no(f: _Field, command: str, yes: str, no: str) -> bool:
    if f.value not in (yes, no):
        raise ParseError(command, f.name, "line %d: %s is neither %s nor "
                         "%s" % (f.line, excerpt(f.value or ""), yes, no))
    return f.value == yes


def _size(f: _Field, command: str, unit, what: str) -> int:
    m = unit.match(f.value or "")
    if m is None:
        raise ParseError(command, f.name, "line %d: %s is not %s"
                         % (f.line, excerpt(f.value or ""), what))
    return parse_count(m.group(1), command=command, field=f.name,
                       what=what, where="line %d" % f.line)


def parse_nvmeadm_identify_controller(
        text: str, controller: Optional[str] = None) -> ControllerIdentity:
    """Parse `nvmeadm identify nvmeN` (of `controller` when given).

    Sample (issue 18 contract; nvmeadm prints more in between):

        nvme0: Identify Controller
          Controller Capabilities and Features
            Model:                                   Samsung SSD 970 ...
            Serial:                                  S467NX0K612345A
            Firmware Revision:                       2B2QEXE7
          NVM Command Set Attributes
            Number of Namespaces:                    1
            Volatile Write Cache
              Present:                               yes
    """
    command = IDENTIFY + (" " + controller if controller else "")
    name, fields = _fields(text, command, "Identify Controller",
                           controller, _CONTROLLER_NAME)
    values = {}
    for label in ("Model", "Serial", "Firmware Revision"):
        values[label] = _one(fields, command, None, label).value or ""
    count = _one(fields, command, None, "Number of Namespaces",
                 required=False)
    # Since 2021 a section with "Present: yes|no"; before, one field
    # "Volatile Write Cache: present|not present".
    present = _one(fields, command, "Volatile Write Cache", "Present",
                   required=False)
    if present is not None:
        cache = _yes_no(present, command, "yes", "no")
    else:
        old = _one(fields, command, None, "Volatile Write Cache",
                   required=False)
        if old is None:
            raise ParseError(command, "Volatile Write Cache", "missing: "
                             "neither 'Present' under it nor its own "
                             "value: the output is truncated or not "
                             "nvmeadm's")
        cache = _yes_no(old, command, "present", "not present")
    return ControllerIdentity(
        name, values["Model"], values["Serial"], values["Firmware Revision"],
        parse_count(count.value or "", command=command, field=count.name,
                    what="a number of namespaces",
                    where="line %d" % count.line, digits=10)
        if count else None, cache)


def parse_nvmeadm_identify_namespace(
        text: str, namespace: Optional[str] = None) -> NamespaceIdentity:
    """Parse `nvmeadm identify nvmeN/M` (of `namespace` when given).

    Sample (issue 18 contract, excerpt):

        nvme0/1: Identify Namespace
          Namespace Capabilities and Features
            Namespace Size:                          953869MB
            Number of LBA Formats:                   2
            Formatted LBA Size
              LBA Format:                            0
              Extended Data LBA:                     no
            LBA Format 0
              Metadata Size:                         0 bytes
              LBA Data Size:                         512 bytes
              Relative Performance:                  Best
    """
    command = IDENTIFY + (" " + namespace if namespace else "")
    name, fields = _fields(text, command, "Identify Namespace", namespace,
                           _NAMESPACE_NAME)
    size = _one(fields, command, None, "Namespace Size", required=False)
    count_f = _one(fields, command, None, "Number of LBA Formats")
    count = parse_count(count_f.value or "", command=command,
                        field=count_f.name, what="a number of LBA formats",
                        where="line %d" % count_f.line, digits=3)
    if not 1 <= count <= MAX_LBA_FORMATS:
        raise ParseError(command, count_f.name, "line %d: %d is not "
                         "between 1 and %d" % (count_f.line, count,
                                               MAX_LBA_FORMATS))
    in_use_f = _one(fields, command, "Formatted LBA Size", "LBA Format")
    in_use = parse_count(in_use_f.value or "", command=command,
                         field="LBA Format", what="an LBA format index",
                         where="line %d" % in_use_f.line, digits=3)
    extended = _one(fields, command, "Formatted LBA Size",
                    "Extended Data LBA", required=False)
    headers = [f for f in fields if f.value is None and
               f.name.startswith("LBA Format ")]
    for header in headers:
        twice = [f for f in headers if f.name == header.name]
        if len(twice) > 1:
            raise ParseError(command, header.name, "line %d: printed "
                             "twice (also line %d)"
                             % (twice[1].line, twice[0].line))
    indexes = [parse_count(header.name[len("LBA Format "):],
                           command=command, field="LBA Format",
                           what="an LBA format index",
                           where="line %d" % header.line, digits=3)
               for header in headers]
    # Every nvmeadm of illumos-gate numbers the formats from 0 (the
    # loop from 0 to NLBAF, whose count is NLBAF + 1), so it never
    # prints an index equal to the count.  The nvmeadm(8) Example 2
    # (2017-2024) numbers them from 1, as NexentaStor's first nvmeadm
    # did: an index equal to the count can only mean that, and then a
    # 0 is not one.  Indexes are kept from 0, as `nvmeadm format` takes
    # them.  Output that holds both a 0 and the count is read from 0,
    # and refused at the index beyond the count.
    base = 1 if (count in indexes or in_use == count) and \
        0 not in indexes and in_use != 0 else 0
    if in_use - base not in range(count):
        raise ParseError(command, "LBA Format", "line %d: format %d of %d "
                         "(numbered from %d)" % (in_use_f.line, in_use,
                                                 count, base))
    formats: List[LbaFormat] = []
    for header, index in zip(headers, indexes):
        if index - base not in range(count):
            raise ParseError(command, header.name, "line %d: beyond the "
                             "%d LBA formats (numbered from %d)"
                             % (header.line, count, base))
        index -= base
        if any(f.index == index for f in formats):
            raise ParseError(command, header.name, "line %d: format %d "
                             "printed twice" % (header.line, index))
        mine = [f for f in fields if f.section and
                f.section[-1] == header.name and f.line > header.line]
        meta = _one(mine, command, None, "Metadata Size")
        data = _one(mine, command, None, "LBA Data Size")
        perf = _one(mine, command, None, "Relative Performance")
        if perf.value not in PERFORMANCE:
            raise ParseError(command, perf.name, "line %d: %s is not one "
                             "of %s" % (perf.line, excerpt(perf.value or ""),
                                        ", ".join(PERFORMANCE)))
        data_bytes = _size(data, command, _BYTES, "a size in bytes")
        if data_bytes != UNUSED_LBA_BYTES and (
                data_bytes < 512 or data_bytes > MAX_LBA_BYTES or
                data_bytes & (data_bytes - 1)):
            raise ParseError(command, data.name, "line %d: %d bytes is "
                             "not an LBA size (a power of two from 512 to "
                             "%d, or 1 for an unused format)"
                             % (data.line, data_bytes, MAX_LBA_BYTES))
        formats.append(LbaFormat(
            index, data_bytes,
            _size(meta, command, _BYTES, "a size in bytes"), perf.value))
    in_use -= base
    return NamespaceIdentity(
        name, _size(size, command, _MB, "a size in MB") if size else None,
        count, in_use,
        _yes_no(extended, command, "yes", "no") if extended else None,
        sorted(formats, key=lambda f: f.index))


def parse_nvmeadm_cache(text: str, controller: Optional[str] = None
                        ) -> Optional[bool]:
    """Parse `nvmeadm get-features nvmeN cache`: whether the volatile
    write cache is enabled; None when nvmeadm printed its header alone
    (before 2024, what a controller without the feature gives, exit 0).

    Sample (illumos-gate nvmeadm_print.c):

        nvme0: Get Features
          Volatile Write Cache
            Volatile Write Cache:                    enabled
    """
    command = CACHE if controller is None else \
        "nvmeadm get-features %s cache" % controller
    _, fields = _fields(text, command, "Get Features", controller,
                        _CONTROLLER_NAME)
    if not fields:
        return None
    state = _one(fields, command, "Volatile Write Cache",
                 "Volatile Write Cache")
    return _yes_no(state, command, "enabled", "disabled")


def query_nvmeadm_list(host: Host) -> Dict[str, NvmeController]:
    return parse_nvmeadm_list(output_of(host, "nvmeadm", ["list"], "model"))


def query_nvmeadm_identify_controller(host: Host, controller: str
                                      ) -> ControllerIdentity:
    return parse_nvmeadm_identify_controller(
        output_of(host, "nvmeadm", ["identify", controller], "Model"),
        controller)


def query_nvmeadm_identify_namespace(host: Host, namespace: str
                                     ) -> NamespaceIdentity:
    return parse_nvmeadm_identify_namespace(
        output_of(host, "nvmeadm", ["identify", namespace],
                  "LBA Format"), namespace)


def query_nvmeadm_cache(host: Host, controller: str) -> Optional[bool]:
    """Whether the controller's volatile write cache is enabled; None
    when nvmeadm cannot tell (it fails, or prints its header alone, when
    there is no cache)."""
    result = host.run("nvmeadm", ["get-features", controller, "cache"])
    if result.returncode != 0:
        return None
    return parse_nvmeadm_cache(result.stdout, controller)
