# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the kernel's sd driver holds for each disk, read with `mdb -k`.

Two invocations cover any number of disks (facts §8):

* `::sd_state` prints every slot of the sd soft-state array as
  `un N: addr` followed by the whole `struct sd_lun`, so it gives the
  instance number and every un_* value sdtune cares about;
* the vid/pid pipeline prints the INQUIRY vendor, product and revision of
  every attached instance, in the same instance order but without numbers.

A third, the blkdev pipeline, gives the logical and physical block shift
of every attached blkdev instance (NVMe namespaces, virtio disks), which
sd's soft state does not hold: the physical block size blkdev reports is
what ZFS takes its ashift from (issue 18).

mdb may pad its lines with blanks to the terminal width; integers are
hex (`0x200`) by default and decimal (`0t512`) under `::print -d`.  Runs
`mdb -k` (through the host) and parses; the parsers are pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import excerpt, parse_count
from .runner import output_of

SD_STATE = "mdb ::sd_state"
INQUIRY = "mdb inquiry pipeline"
SD_STATE_CMD = "::sd_state\n"
INQUIRY_CMD = ("::walk sd_state | ::grep '.!=0' | ::print struct sd_lun un_sd"
               " | ::print struct scsi_device sd_inq"
               " | ::print struct scsi_inquiry inq_vid inq_pid inq_revision\n")

# Members every sd_lun dump must show; a block without them is truncated.
REQUIRED = ("un_tgt_blocksize", "un_phy_blocksize", "un_saved_throttle",
            "un_min_throttle", "un_f_disksort_disabled",
            "un_f_suppress_cache_flush")
# `short` members: mdb prints them in hex at their width (0xffff is -1).
# un_reset_throttle_timeid is not one: it is a timeout_id_t, a pointer
# (sddef.h), printed whole.
SHORT_MEMBERS = {"un_throttle", "un_saved_throttle", "un_min_throttle",
                 "un_busy_throttle"}

_UNIT = re.compile(r"^un ([0-9]+): ([0-9a-fA-F]+)$")
_NUMBER = re.compile(r"^(-?)(0[xX][0-9a-fA-F]+|0[tT][0-9]+|[0-9]+)$")
_MEMBER = re.compile(r"^    (un_[a-z0-9_]+) = (.*)$")
_FOOTER = re.compile(r"^Processed (\d+) UN softstate entries$")
_ENTRIES = re.compile(r"^(\d+) entries in sd_state table$")


@dataclass
class SdUnit:
    """One attached sd instance as ::sd_state shows it."""

    instance: int
    address: str
    members: Dict[str, object] = field(default_factory=dict)

    def get(self, name: str) -> Optional[int]:
        value = self.members.get(name)
        return value if isinstance(value, int) else None

    @property
    def flavour(self) -> str:
        """NexentaStor kernels have un_f_sdconf_phy_blocksize (facts §8.3)."""
        if "un_f_sdconf_phy_blocksize" in self.members:
            return "nexenta"
        return "upstream"


@dataclass
class Inquiry:
    vid: str
    pid: str
    revision: str

    @property
    def key(self) -> str:
        return self.vid + self.pid


def _int(text: str, short: bool, command: str, field: str,
         where: str) -> Optional[int]:
    """An mdb ::print integer: `0`, hex `0x1f` (the default), decimal
    `0t31` (`::print -d`), or a plain decimal (signed bitfields); None
    for anything else (pointers with strings, structs).  A number with
    more digits than a 64-bit value has is no member's: a ParseError."""
    m = _NUMBER.match(text.strip())
    if m is None:
        return None
    digits = m.group(2)
    base = {"0x": 16, "0t": 10}.get(digits[:2].lower())
    value = parse_count(digits[2:] if base else digits, command=command,
                        field=field, what="a 64-bit integer", where=where,
                        base=base or 10, digits=16 if base == 16 else 20)
    if m.group(1):
        value = -value
    if short:
        value &= 0xFFFF
        value = value - 0x10000 if value & 0x8000 else value
    return value


def parse_sd_state(text: str) -> Dict[int, SdUnit]:
    """Parse `::sd_state` output into units keyed by instance.

    Sample (facts §8.3, excerpt):

        walk_addr = fffffe0bc4b1e9c0
        walking sd_state units via ptr: fffffe0bd0a1c000
        32 entries in sd_state table

        un 0: fffffe0bd8a76000
        --------------
        {
            un_sd = 0xfffffe0bd8731d40
            un_tgt_blocksize = 0x200
            un_phy_blocksize = 0x1000
            un_saved_throttle = 0x20
        ...
        }
        ---
        ...
        ---------------------------
        Processed 2 UN softstate entries
        ---------------------------
    """
    units: Dict[int, SdUnit] = {}
    current: Optional[SdUnit] = None
    seen_header = seen_footer = False
    slots = None
    for number, line in enumerate(text.splitlines(), 1):
        where = "line %d" % number
        # mdb may pad lines with blanks to the terminal width.
        line = line.rstrip()
        m = _UNIT.match(line)
        if m:
            instance = parse_count(m.group(1), command=SD_STATE, field="un",
                                   what="an instance number", where=where)
            addr = m.group(2)
            current = None
            if addr != "0":
                current = SdUnit(instance, addr)
                units[instance] = current
            continue
        m = _MEMBER.match(line)
        if m and current is not None:
            name, raw = m.group(1), m.group(2)
            value = _int(raw, name in SHORT_MEMBERS, SD_STATE, name, where)
            current.members[name] = value if value is not None else raw
            continue
        m = _ENTRIES.match(line)
        if m:
            seen_header = True
            slots = parse_count(m.group(1), command=SD_STATE,
                                field="entries in sd_state table",
                                what="a number of slots", where=where)
            continue
        if _FOOTER.match(line):
            seen_footer = True
            current = None
    if not seen_header:
        raise ParseError(SD_STATE, "entries in sd_state table",
                         "no table header")
    if not seen_footer:
        raise ParseError(SD_STATE, "Processed N UN softstate "
                         "entries", "output is truncated")
    for unit in units.values():
        for name in REQUIRED:
            if unit.get(name) is None:
                raise ParseError(SD_STATE, name,
                                 "missing for un %d" % unit.instance)
        if slots is not None and unit.instance >= slots:
            raise ParseError(SD_STATE, "un %d" % unit.instance,
                             "beyond the %d-slot table" % slots)
    return units


_ARRAY_STRING = re.compile(r'^(inq_vid|inq_pid|inq_revision) = \[ "(.*)" \]$')
_ARRAY_ELEMS = re.compile(r"^(inq_vid|inq_pid|inq_revision) = \[ (.*) \]$")
_LENGTHS = {"inq_vid": 8, "inq_pid": 16, "inq_revision": 4}


# The escapes mdb prints (mdb_string.c strchr2esc(): \0 \a \b \f \n \r
# \t \v \" \\, other bytes as \ooo); \' is read too, as C writes it.
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'",
            '"': '"'}


def _element(item: str, name: str, where: str) -> str:
    """One element of array `name`: a character `'A'` (C notation for
    the others: `'\\0'`, `'\\n'`, `'\\001'`, `'\\x01'`) or a number
    `0x1`, `0`, `-1` (a signed char)."""
    body = item[1:-1] if len(item) >= 3 and item[0] == item[-1] == "'" \
        else None
    value = None
    if body is not None and len(body) == 1:
        return body
    if body is not None and body[:1] == "\\":
        if body[1:] in _ESCAPES:
            return _ESCAPES[body[1:]]
        octal = re.fullmatch(r"[0-7]{1,3}", body[1:])
        if octal or re.fullmatch(r"x[0-9a-fA-F]{1,2}", body[1:]):
            value = parse_count(body[1:] if octal else body[2:],
                                command=INQUIRY, field=name,
                                what="a character", where=where,
                                base=8 if octal else 16)
    elif body is None and _NUMBER.match(item):
        value = _int(item, False, INQUIRY, name, where)
    # A char holds a byte: a wider number is not one of its bytes.
    if value is not None and -0x80 <= value <= 0xFF:
        return chr(value & 0xFF)
    raise ParseError(INQUIRY, name, "%s: cannot read %s as a character"
                     % (where, excerpt(item, 40)))


def _elements(raw: str, name: str, where: str) -> str:
    """mdb's element-wise form `'A', 'T', 0x1, ...` back into bytes."""
    out = []
    for item in raw.split(", "):
        item = item.strip()
        if item == "...":
            break
        out.append(_element(item, name, where))
    return "".join(out)


def parse_inquiry(text: str) -> List[Inquiry]:
    """Parse the vid/pid pipeline: records in instance order.

    Sample (facts §8.2):

        inq_vid = [ "ATA     " ]
        inq_pid = [ "INTEL SSDSC2BA40" ]
        inq_revision = [ "0270" ]
    """
    records: List[Inquiry] = []
    pending: Dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line.strip():
            continue
        m = _ARRAY_STRING.match(line)
        if m:
            name, value = m.group(1), m.group(2)
        else:
            m = _ARRAY_ELEMS.match(line)
            if not m:
                raise ParseError(INQUIRY, "inq_vid", "line %d: unexpected "
                                 "line %s" % (number, excerpt(line, 60)))
            name = m.group(1)
            value = _elements(m.group(2), name, "line %d" % number)
        if name in pending:
            missing = sorted(set(_LENGTHS) - set(pending))[0]
            raise ParseError(INQUIRY, missing,
                             "missing from record %d" % (len(records) + 1))
        # A NUL inside the field ends mdb's string early; the bytes after
        # it cannot be seen, so the key is padded the way sd compares it.
        pending[name] = value.ljust(_LENGTHS[name])[:_LENGTHS[name]]
        if len(pending) == 3:
            records.append(Inquiry(pending["inq_vid"], pending["inq_pid"],
                                   pending["inq_revision"]))
            pending = {}
    if pending:
        missing = sorted(set(_LENGTHS) - set(pending))[0]
        raise ParseError(INQUIRY, missing,
                         "output is truncated")
    return records


def _mdb(host: Host, commands: str, what: str) -> str:
    return output_of(host, "mdb", ["-k"], what,
                     stdin=commands.encode("ascii"))


def query_sd_state(host: Host) -> Dict[int, SdUnit]:
    return parse_sd_state(_mdb(host, SD_STATE_CMD, "::sd_state"))


def query_inquiry(host: Host) -> List[Inquiry]:
    return parse_inquiry(_mdb(host, INQUIRY_CMD, "inq_vid"))


BLKDEV = "mdb blkdev pipeline"
BLKDEV_CMD = ("*bd_state::walk softstate | ::print -d bd_t "
              "d_dip->devi_instance d_blkshift d_pblkshift\n")
_BLKDEV_MEMBERS = ("d_dip->devi_instance", "d_blkshift", "d_pblkshift")
_BLKDEV_LINE = re.compile(r"^(d_dip->devi_instance|d_blkshift|d_pblkshift)"
                          r" = (.*)$")


def parse_blkdev(text: str) -> Dict[int, Tuple[int, int]]:
    """Parse the blkdev pipeline: {instance: (blkshift, pblkshift)}, the
    logical and physical block size blkdev reports being 1 << each.

    Sample (issue 18 contract), one record per attached instance:

        d_dip->devi_instance = 0t0
        d_blkshift = 0t9
        d_pblkshift = 0t12
    """
    found: Dict[int, Tuple[int, int]] = {}
    pending: List[Tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line.strip():
            continue
        where = "line %d" % number
        m = _BLKDEV_LINE.match(line)
        if m is None:
            raise ParseError(BLKDEV, _BLKDEV_MEMBERS[len(pending)],
                             "%s: unexpected line %s"
                             % (where, excerpt(line, 60)))
        name = m.group(1)
        if name != _BLKDEV_MEMBERS[len(pending)]:
            raise ParseError(BLKDEV, _BLKDEV_MEMBERS[len(pending)],
                             "%s: %s where mdb prints %s (record %d)"
                             % (where, name, _BLKDEV_MEMBERS[len(pending)],
                                len(found) + 1))
        value = _int(m.group(2), False, BLKDEV, name, where)
        if value is None or value < 0:
            raise ParseError(BLKDEV, name, "%s: %s is not a number"
                             % (where, excerpt(m.group(2), 40)))
        # A shift beyond 31 is no block size blkdev keeps (uint32_t).
        if name != _BLKDEV_MEMBERS[0] and not 9 <= value <= 31:
            raise ParseError(BLKDEV, name, "%s: %d is not the shift of a "
                             "block size (9 to 31)" % (where, value))
        pending.append((name, value))
        if len(pending) == 3:
            instance = pending[0][1]
            if instance in found:
                raise ParseError(BLKDEV, _BLKDEV_MEMBERS[0], "%s: instance "
                                 "%d printed twice" % (where, instance))
            found[instance] = (pending[1][1], pending[2][1])
            pending = []
    if pending:
        raise ParseError(BLKDEV, _BLKDEV_MEMBERS[len(pending)],
                         "output is truncated")
    return found


def query_blkdev(host: Host) -> Dict[int, Tuple[int, int]]:
    return parse_blkdev(_mdb(host, BLKDEV_CMD, "d_pblkshift"))


def units_with_inquiry(units: Dict[int, SdUnit],
                       inquiries: List[Inquiry]) -> Dict[int, Inquiry]:
    """Pair the two outputs: both list the attached instances in order."""
    order = sorted(units)
    if len(order) != len(inquiries):
        raise ParseError(INQUIRY, "inq_vid",
                         "%d records for %d attached sd units (a disk "
                         "attached or detached in between?)"
                         % (len(inquiries), len(order)))
    return dict(zip(order, inquiries))
