# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Vendor, product, revision, serial, size and error counts per device,
from `iostat -En` (facts §14).

iostat prints each named kstat of a device's error kstat as
`Name: value ` in the driver's order (iostat.c show_disk_errors()): the
device name padded to 9, 16 or 20 columns (or followed by one blank
when longer), a line break after the third counter, after Size, and
whenever some 62 columns of names and values have been printed.
Character values (sd's, cmdk's, vdc's, st's: KSTAT_DATA_CHAR) are
printed as the driver stored them, at most 16 characters (`%-.16s`):
sd keeps the blank padding of the INQUIRY fields (8 and 16 characters).
blkdev's are string kstats (KSTAT_DATA_STRING since blkdev first had
the kstat, illumos 6305, 2015-11-05), printed whole (`%s`): a virtio
disk's Vendor and Product are not padded and its Serial No is up to 20
characters (bhyve's BHYVE-xxxx-xxxx-xxxx); an NVMe namespace's Model
(the 40 characters of Identify Controller), Revision (8) and Serial No
(20) keep the blanks that pad the NVMe fields.  A virtio record has the
names of an sd record, so a value longer than 16 characters is what
tells it is blkdev's: only a string kstat can print one.

Which names a record holds depends on the driver:

* sd and blkdev without a model (virtio): Soft/Hard/Transport Errors,
  Vendor, Product, Revision, Serial No, Size, Media Error ...
  Predictive Failure Analysis (Oracle Solaris 11 adds Non-Aligned
  Writes);
* blkdev with a model (NVMe, blkdev.c bd_create_errstats()): Model
  instead of Vendor and Product, then the same names as sd;
* cmdk (legacy ATA): Model instead of Vendor and Product, and no
  Predictive Failure Analysis;
* vdc (SPARC LDoms): Soft and Transport Errors, Protocol Errors, Vendor,
  Product, Size;
* st (tape): up to Serial No;
* `iostat -Ei` prints Device Id where Serial No would be.

The record is therefore read as a sequence of those names wherever the
line breaks fall, so copies whose trailing blanks were stripped or
whose tabs were expanded still read the same.  A record that stops
early, holds a name twice or out of order, or has text iostat does not
print is refused (ParseError), never completed by guessing.  Text
before the first record (a shell prompt) and after the last one is
ignored unless it holds one of the names above.  Runs `iostat -En`
through the host; the parser is pure.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..errors import ParseError
from ..host import Host
from ..parsing import MAX_NAME, excerpt, parse_count
from .runner import output_of

COMMAND = "iostat -En"

# Every name iostat prints for the drivers above, in kstat order.
LABELS = ("Soft Errors", "Hard Errors", "Transport Errors", "Protocol Errors",
          "Model", "Vendor", "Product", "Revision", "Serial No", "Device Id",
          "Size", "Media Error", "Device Not Ready", "No Device",
          "Recoverable", "Illegal Request", "Predictive Failure Analysis",
          "Non-Aligned Writes")
TEXT_LABELS = ("Model", "Vendor", "Product", "Revision", "Serial No")
# What iostat prints of a character kstat (`%-.16s`).
CHAR_MAX = 16
# A string kstat is printed whole.  The longest value of a blkdev driver
# in illumos-gate is the NVMe Model (40); other drivers may supply more,
# so the bound is a name's (a longer "value" is text run together).
STRING_MAX = MAX_NAME
_ORDER = {label: i for i, label in enumerate(LABELS)}

# The records each driver prints: (required names, optional names).
_SD = ("Soft Errors", "Hard Errors", "Transport Errors", "Vendor",
       "Product", "Revision", "Serial No", "Size", "Media Error",
       "Device Not Ready", "No Device", "Recoverable", "Illegal Request",
       "Predictive Failure Analysis")
LAYOUTS = {
    "sd": (_SD, ("Model", "Non-Aligned Writes")),
    "blkdev": (_SD[:3] + ("Model",) + _SD[5:], ()),
    "cmdk": (("Soft Errors", "Hard Errors", "Transport Errors", "Model",
              "Revision", "Serial No", "Size", "Media Error",
              "Device Not Ready", "No Device", "Recoverable",
              "Illegal Request"), ()),
    "vdc": (("Soft Errors", "Transport Errors", "Protocol Errors", "Vendor",
             "Product", "Size"), ()),
    "st": (_SD[:7], ()),
}

_LABEL = re.compile(r"(?<!\S)(%s):(?!\S)"
                    % "|".join(re.escape(label) for label in LABELS))
_START = re.compile(r"^\s*(\S+)\s+Soft Errors:(?!\S)")
# A device name as iostat prints it: sd12, c0t5000CCA0496E6F8Dd0, rmt/0.
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.,:@/+-]*$")
_TAPE = re.compile(r"^(?:rmt/[0-9]+|st[0-9]+)$")
_SIZE = re.compile(r"^([0-9]+\.[0-9]+)GB <([0-9]+) bytes>$")


@dataclass
class IostatDisk:
    name: str
    vendor: Optional[str]       # as printed, blank padding kept
    product: Optional[str]      # as printed (sd: at most 16 characters)
    revision: Optional[str]
    # Blanks around it removed; sd: at most 15 characters, blkdev: as
    # the driver gave it (NVMe and virtio: 20); None: none.
    serial: Optional[str]
    size_bytes: Optional[int]
    hard_errors: Optional[int]
    transport_errors: int
    soft_errors: int = 0
    model: Optional[str] = None     # cmdk, blkdev (NVMe): blanks kept
    errors: Dict[str, int] = field(default_factory=dict)   # every counter
    device_id: Optional[str] = None                # iostat -Ei only

    @property
    def inquiry(self) -> Optional[Tuple[str, str]]:
        """(vendor, product) when they are the 8 and 16 INQUIRY bytes as
        sd holds them; None for unpadded values (blkdev, or a copy whose
        blanks were collapsed), which must not be used as a key."""
        if self.vendor is not None and self.product is not None and \
                len(self.vendor) == 8 and len(self.product) == 16:
            return self.vendor, self.product
        return None


def _fail(field_name: str, reason: str) -> ParseError:
    return ParseError(COMMAND, field_name, reason)


def _check_free(line: str, number: int, where: str) -> None:
    """A line outside every record must not hold a record's names."""
    m = _LABEL.search(line)
    if m:
        raise _fail(m.group(1), "line %d: '%s' %s, outside any device "
                    "record (the line naming the device is missing)"
                    % (number, m.group(1), where))


def _layout(name: str, labels: List[str]) -> str:
    if "Protocol Errors" in labels:
        return "vdc"
    if "Model" in labels and "Vendor" not in labels:
        # blkdev (NVMe) keeps the counters cmdk never had.
        return "blkdev" if "Predictive Failure Analysis" in labels \
            else "cmdk"
    if _TAPE.match(name):
        return "st"
    return "sd"


def _text_value(raw: str, label: str, name: str, line: int) -> str:
    """The value between `Label:` and the next name: iostat prints one
    blank after the colon and one after the value, then maybe a line
    break; everything else belongs to the value."""
    head, _, tail = raw.partition("\n")
    if tail.strip():
        raise _fail(label, "unexpected text %r after the %s of %s "
                    "(line %d)" % (tail.strip()[:40], label, name, line))
    if head.startswith(" "):
        head = head[1:]
    if head.endswith(" "):
        head = head[:-1]
    return head


def _record(name: str, lines: List[str], first: int,
            last_record: bool) -> IostatDisk:
    """One device's record: `lines` from the line naming the device up to
    the next record; `first` is the 0-based number of that line."""
    text = "\n".join(lines)
    found = list(_LABEL.finditer(text))
    labels = [m.group(1) for m in found]

    def line_of(pos: int) -> int:
        return first + text.count("\n", 0, pos) + 1

    for i, m in enumerate(found):
        if labels.count(m.group(1)) > 1:
            raise _fail(m.group(1), "line %d: '%s' twice in the record of "
                        "%s: two records run together?"
                        % (line_of(m.start()), m.group(1), name))
        if i and _ORDER[m.group(1)] < _ORDER[labels[i - 1]]:
            raise _fail(m.group(1), "line %d: '%s' after '%s' in the "
                        "record of %s, iostat prints it before"
                        % (line_of(m.start()), m.group(1), labels[i - 1],
                           name))
    # iostat -Ei prints the devid where the serial would be.
    kinds = ["Serial No" if x == "Device Id" else x for x in labels]
    driver = _layout(name, kinds)
    required, optional = LAYOUTS[driver]
    for label in kinds:
        if label not in required and label not in optional:
            raise _fail(label, "'%s' does not belong in the %s-style "
                        "record of %s (line %d)"
                        % (label, driver, name, first + 1))
    missing = [label for label in required if label not in kinds]
    if missing:
        raise _fail(missing[0], "missing for %s: its record (line %d) "
                    "ends after '%s'; was the output cut short or "
                    "filtered?" % (name, first + 1, labels[-1]))

    values: Dict[str, str] = {}
    value_lines: Dict[str, int] = {}
    for i, m in enumerate(found):
        line = line_of(m.start())
        if i + 1 < len(found):
            raw = text[m.end():found[i + 1].start()]
        else:
            # The last value ends with its line; what follows is not
            # iostat's (a prompt after the output is let through).
            raw = text[m.end():].partition("\n")[0]
            rest = lines[line - first:]
            for j, extra in enumerate(rest):
                if extra.strip() and not last_record:
                    raise _fail("line %d" % (line + j + 1), "unexpected "
                                "text between device records: %r"
                                % extra.strip()[:60])
        values[labels[i]] = _text_value(raw, m.group(1), name, line)
        value_lines[labels[i]] = line

    # sd's padded INQUIRY vendor and product (the sd-config-list key)
    # are character kstats: no value of such a record is longer than 16.
    sd_key = len(values.get("Vendor", "")) == 8 and \
        len(values.get("Product", "")) == 16
    counters: Dict[str, int] = {}
    for label, value in values.items():
        if label in TEXT_LABELS:
            if len(value) > CHAR_MAX and (sd_key or driver not in
                                          ("sd", "blkdev")):
                raise _fail(label, "%r is longer than the %d characters "
                            "iostat prints for the %s of %s (a character "
                            "kstat%s)" % (value[:40], CHAR_MAX, label, name,
                                          ", sd's: its Vendor and Product "
                                          "are the padded INQUIRY fields"
                                          if sd_key else ""))
            if len(value) > STRING_MAX:
                raise _fail(label, "%s for %s is longer than %d "
                            "characters: not one value"
                            % (excerpt(value, 40), name, STRING_MAX))
        elif label not in ("Size", "Device Id"):
            counters[label] = parse_count(
                value.strip(), command=COMMAND, field=label,
                what="a count for " + name,
                where="line %d" % value_lines[label])
    revision = values.get("Revision")
    if revision is not None and len(revision) > 4 and sd_key:
        # sd copies the 4 INQUIRY revision bytes next to the padded
        # vendor and product: more is text that is not iostat's.
        raise _fail("Revision", "%r is longer than the 4 INQUIRY "
                    "characters sd keeps for %s" % (revision[:40], name))
    size = _size(name, values.get("Size"), value_lines.get("Size", 0))
    serial = values.get("Serial No")
    return IostatDisk(name, values.get("Vendor"), values.get("Product"),
                      values.get("Revision"),
                      serial.strip() or None if serial is not None else None,
                      size, counters.get("Hard Errors"),
                      counters["Transport Errors"],
                      counters["Soft Errors"], values.get("Model"),
                      counters, (values.get("Device Id") or "").strip()
                      or None)


def _size(name: str, value: Optional[str], line: int) -> Optional[int]:
    """`Size: 480.10GB <480103981056 bytes>`: iostat computes the GB from
    the same byte count, so the two must agree."""
    if value is None:
        return None
    m = _SIZE.match(value.strip())
    if m is None:
        raise _fail("Size", "line %d: unreadable for %s: %s"
                    % (line, name, excerpt(value, 40)))
    size = parse_count(m.group(2), command=COMMAND, field="Size",
                       what="a size in bytes for " + name,
                       where="line %d" % line)
    # float() of a decimal too long for a double is inf: a disagreement.
    if abs(float(m.group(1)) * 1e9 - size) > max(1e7, size * 1e-6):
        raise _fail("Size", "line %d: %s GB and %d bytes disagree for %s"
                    % (line, excerpt(m.group(1)), size, name))
    return size


def parse_iostat_en(text: str) -> Dict[str, IostatDisk]:
    """Parse `iostat -En` (or `-E`, sdN names): one record per device.

    Sample (facts §14; every line but Size's ends with one blank):

        c0t55CD2E404C0D8D0Ed0 Soft Errors: 0 Hard Errors: 0 Transport ...
        Vendor: ATA      Product: INTEL SSDSC2BA40 Revision: 0270 ...
        Size: 400.09GB <400088457216 bytes>
        Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0
        Illegal Request: 0 Predictive Failure Analysis: 0
    """
    # A copy from a web page may carry no-break spaces for blanks.
    lines = text.replace("\u00a0", " ").expandtabs(8).splitlines()
    starts = [i for i, line in enumerate(lines) if _START.match(line)]
    if not starts:
        raise _fail("Soft Errors", "no device record (a line '<device> "
                    "Soft Errors: ...') in the output")
    for n in range(starts[0]):
        _check_free(lines[n], n + 1, "before the first record")
    disks: Dict[str, IostatDisk] = {}
    for k, start in enumerate(starts):
        name = _START.match(lines[start]).group(1)
        if not _NAME.match(name) or len(name) > MAX_NAME:
            raise _fail("device name", "line %d: %s is not a device name "
                        "as iostat prints it" % (start + 1, excerpt(name, 40)))
        if name in disks:
            raise _fail("device name", "line %d: %s has two records"
                        % (start + 1, name))
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        disks[name] = _record(name, lines[start:end], start,
                              k + 1 == len(starts))
    return disks


def query_iostat_en(host: Host) -> Dict[str, IostatDisk]:
    return parse_iostat_en(output_of(host, "iostat", ["-En"],
                                     "Soft Errors"))
