"""Vendor, product, revision, serial and size per disk from `iostat -En`.

The values are copied by sd from the INQUIRY data (blank padding kept) and
the `inquiry-serial-no` property (cut to 15 characters), facts §14.  Runs
`iostat -En` through the host; the parser is pure.
"""

import re
from dataclasses import dataclass
from typing import Dict, Optional

from ..errors import ParseError
from ..host import Host
from .command import output_of

# The named kstats iostat prints, in sd_create_errstats() order.
KEYS = ("Soft Errors", "Hard Errors", "Transport Errors", "Vendor",
        "Product", "Revision", "Serial No", "Size", "Media Error",
        "Device Not Ready", "No Device", "Recoverable", "Illegal Request",
        "Predictive Failure Analysis")
_START = re.compile(r"^(\S+) +Soft Errors: ")
_SIZE = re.compile(r"^[0-9.]+GB <([0-9]+) bytes>$")


@dataclass
class IostatDisk:
    name: str
    vendor: str
    product: str
    revision: str
    serial: str             # at most 15 characters
    size_bytes: Optional[int]
    hard_errors: int
    transport_errors: int


def _record(name: str, text: str) -> IostatDisk:
    values: Dict[str, str] = {}
    pos = text.index("Soft Errors: ")
    for i, key in enumerate(KEYS):
        label = key + ": "
        at = text.find(label, pos)
        if at < 0:
            raise ParseError("iostat -En", key, "missing for %s" % name)
        start = at + len(label)
        if i + 1 < len(KEYS):
            nxt = text.find(KEYS[i + 1] + ": ", start)
            if nxt < 0:
                raise ParseError("iostat -En", KEYS[i + 1],
                                 "missing for %s" % name)
        else:
            nxt = len(text)
        raw = text[start:nxt]
        # Every entry ends with one blank, and a line break may follow.
        if raw.endswith("\n"):
            raw = raw[:-1]
        if raw.endswith(" "):
            raw = raw[:-1]
        values[key] = raw
        pos = nxt
    size = _SIZE.match(values["Size"])
    try:
        hard = int(values["Hard Errors"])
        transport = int(values["Transport Errors"])
    except ValueError:
        raise ParseError("iostat -En", "Hard Errors",
                         "not a number for %s" % name)
    if size is None:
        raise ParseError("iostat -En", "Size", "unreadable for %s: %r"
                         % (name, values["Size"][:40]))
    return IostatDisk(name, values["Vendor"], values["Product"],
                      values["Revision"], values["Serial No"],
                      int(size.group(1)), hard, transport)


def parse_iostat_en(text: str) -> Dict[str, IostatDisk]:
    """Parse `iostat -En`: five lines per disk.

    Sample (facts §14):

        c1t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: 0
        Vendor: ATA      Product: SAMSUNG MZ7LM480 Revision: 403Q \
            Serial No: S2UJNX0J101234   (one line in the real output)
        Size: 480.10GB <480103981056 bytes>
        Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0
        Illegal Request: 0 Predictive Failure Analysis: 0
    """
    disks: Dict[str, IostatDisk] = {}
    name: Optional[str] = None
    chunk = []
    for line in text.splitlines(True):
        m = _START.match(line)
        if m:
            if name is not None:
                disks[name] = _record(name, "".join(chunk))
            name, chunk = m.group(1), []
        elif name is None and line.strip():
            raise ParseError("iostat -En", "Soft Errors",
                             "unexpected line %r" % line[:60])
        chunk.append(line)
    if name is not None:
        disks[name] = _record(name, "".join(chunk))
    return disks


def query_iostat_en(host: Host) -> Dict[str, IostatDisk]:
    return parse_iostat_en(output_of(host, "iostat", ["-En"],
                                     "Soft Errors"))
