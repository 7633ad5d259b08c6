# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A certification record: its shape (RECORD_FIELDS), the check every
document passes before plan, audit or results use it (record_problem),
and the record in memory (CertRecord, parsed by parse_record).

A document that does not have the shape is not used: the check is
strict about everything that reaches sd.conf or nvme.conf (the key, the
recommended tunables and the device evidence), because a record that
fails it must never become a recommendation.  CertRecord.from_json
checks a document with these rules and to_json gives back the document
that is stored (storage.py); readers use its attributes, and a field a
stored file leaves out has the default the readers have always used.

Pure: no I/O.
"""

import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ..sdconf.match import KEY_LEN
from ..nvmeconf.edit import check_settings
from ..nvmeconf.model import TUNABLES as NVME_TUNABLES
from ..driverconf.edit import EditError
from ..sdconf.tunables import canonical_value
from .gains import Gains, gains_problem
from .powercuts import PowerCut, powercuts_problem
from .powercuts import from_json as power_cuts_from_json

# The version of the record document.
VERSION = 1
# A verdict whose confidence is below this is not a measurement: what
# certify concludes on, and what plan, audit and the cross-check use.
CONFIDENT = 0.95


# ------------------------------------------------------------ the shape

def _text(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _size(v: Any) -> bool:
    return v is None or (_integer(v) and v > 0)


def _count(v: Any) -> bool:
    return v is None or (_integer(v) and v >= 0)


def _number(v: Any) -> bool:
    return _integer(v) or (isinstance(v, float) and math.isfinite(v))


def _fraction(v: Any) -> bool:
    return _number(v) and 0 <= v <= 1


def _object(v: Any) -> bool:
    return isinstance(v, dict)


def _key(v: Any) -> bool:
    return v is None or (isinstance(v, str) and len(v) == KEY_LEN)


def _sha256(v: Any) -> bool:
    return isinstance(v, str) and re.match(r"^[0-9a-f]{64}\Z", v) is not None


def _version(v: Any) -> bool:
    return _integer(v) and v == VERSION


def outside_sd(key: Optional[str], driver: Optional[str]) -> bool:
    """Whether a record is of a disk outside sd: it has no
    sd-config-list key (no INQUIRY) and names its driver (an NVMe
    namespace under blkdev), so it is keyed by the drive's model and
    recommends for that driver's .conf.  The one place a record's driver
    is told apart."""
    return key is None and driver not in (None, "sd")


def _tunable_problem(name: str, value: Any, nvme: bool = False
                     ) -> Optional[str]:
    """Why a recommended value is not one `sdconf set` would accept, or
    None: plan writes these values into sd.conf, or for a record of a
    disk outside sd (`nvme`) nvme.conf's tunables into nvme.conf.  Such
    a record may also hold sd's names: a virtio disk's does, and so does
    an NVMe namespace's stored before sdtune tuned nvme.conf."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif _integer(value):
        text = str(value)
    else:
        return "must be an integer, true or false"
    if nvme and name in NVME_TUNABLES:
        try:
            check_settings({name: "on" if value is True else "off"
                            if value is False else text})
        except EditError as e:
            return str(e)
        return None
    return canonical_value(name, text)[1] or None


class Field(NamedTuple):
    path: Tuple[str, ...]       # nested: ("evidence", "device", "nv_sup")
    required: bool
    valid: Callable[[Any], bool]
    expected: str               # "must be <expected>"


# Every field that plan, audit and results read, parents before their
# children.  A missing optional field is fine (they use a default).
RECORD_FIELDS = (
    Field(("key",), True, _key,
          "null or a drive key of exactly %d characters" % KEY_LEN),
    Field(("time",), True, _number, "a number (seconds since 1970)"),
    Field(("version",), False, _version, str(VERSION)),
    Field(("target",), False, _text, "text"),
    Field(("device",), False, _text, "text"),
    Field(("driver",), False, _text, "text or null"),
    Field(("model",), False, _text, "text or null"),
    Field(("serial",), False, _text, "text or null"),
    Field(("firmware",), False, _text, "text or null"),
    Field(("time_iso",), False, _text, "text"),
    Field(("source",), False, _text, "text"),
    Field(("logical_block_bytes",), False, _size,
          "a positive integer or null"),
    Field(("native_sector_bytes",), False, _size,
          "a positive integer or null"),
    Field(("sector_confidence",), False, _fraction, "a number from 0 to 1"),
    Field(("sector_reason",), False, _text, "text"),
    Field(("cache",), False, _text, "text"),
    Field(("cache_confidence",), False, _fraction, "a number from 0 to 1"),
    Field(("cache_reason",), False, _text, "text"),
    Field(("queue_depth",), False, _object, "an object"),
    Field(("queue_depth", "knee"), False, _count,
          "a non-negative integer or null"),
    Field(("queue_depth", "throttle_max"), False, _count,
          "a non-negative integer or null"),
    Field(("queue_depth", "throttle_min"), False, _count,
          "a non-negative integer or null"),
    Field(("queue_depth", "confidence"), False,
          lambda v: v is None or _fraction(v), "a number from 0 to 1 or null"),
    Field(("queue_depth", "reason"), False, _text, "text"),
    # Each of its values is checked by _tunable_problem.
    Field(("recommended",), False, _object, "an object"),
    Field(("evidence",), False, _object, "an object"),
    Field(("evidence", "device"), False, _object, "an object"),
    Field(("evidence", "device", "nv_sup"), False,
          lambda v: v is None or isinstance(v, bool), "true, false or null"),
    # Where the record was made (certify writes it) and, for a record
    # another appliance exported, how it came here (results --import):
    # plan names the host in its reasons.  Their fields are checked by
    # _part_problem.
    Field(("origin",), False, _object, "an object"),
    Field(("imported",), False, _object, "an object"),
)

# The fields of the objects above: (name, required, valid, expected).
PART_FIELDS = {
    "origin": (
        ("host", False, _text, "text or null"),
        ("platform", False, _text, "text or null"),
        ("sdtune_version", False, _text, "text or null"),
        ("engine_version", False, _text, "text or null")),
    "imported": (
        ("from_host", True, _text, "text or null"),
        ("exported_by", False, _text, "text or null"),
        ("file", False, _text, "text or null"),
        ("time", False, _number, "a number (seconds since 1970)"),
        ("sha256", True, _sha256, "64 lowercase hexadecimal digits"),
        # The identity (allowed-signers principal) whose signature of the
        # export this appliance verified at import; absent: unsigned.
        ("signed_by", False, _text, "text or null")),
}


def _part_problem(record: dict) -> Optional[str]:
    """Why the origin or imported object of a record (checked to be an
    object) does not have its shape, or None."""
    for part, fields in PART_FIELDS.items():
        doc = record.get(part)
        if doc is None:
            continue
        for name, required, valid, expected in fields:
            if name not in doc:
                if required:
                    return "field '%s.%s' is missing" % (part, name)
                continue
            if not valid(doc[name]):
                return "field '%s.%s' must be %s" % (part, name, expected)
    return None


_MISSING = object()


# Text that reaches a terminal: no control character (C0, DEL or C1) is
# part of a drive's name, a host name or a version.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# The record's fields that name the drive, which plan, results and the
# import print (INQUIRY and the parsers give printable text; a no-break
# space is not a control character).
DRIVE_TEXT_FIELDS = ("key", "serial", "firmware", "model", "driver",
                     "target", "device")
# Where an imported record came from, as plan and results print it.
_PROVENANCE_FIELDS = (("origin", "host"), ("origin", "platform"),
                      ("origin", "sdtune_version"),
                      ("origin", "engine_version"),
                      ("imported", "from_host"), ("imported", "exported_by"))


def control_problem(record: Dict[str, Any]) -> Optional[str]:
    """The first field of a record from another appliance that holds a
    control character, in the words of record_problem, or None: its
    drive's names and, once imported, where it came from.  Pure."""
    for name in DRIVE_TEXT_FIELDS:
        value = record.get(name)
        if isinstance(value, str) and CONTROL.search(value):
            return "field '%s' holds a control character" % name
    for part, name in _PROVENANCE_FIELDS:
        section = record.get(part)
        value = section.get(name) if isinstance(section, dict) else None
        if isinstance(value, str) and CONTROL.search(value):
            return "field '%s.%s' holds a control character" % (part, name)
    return None


def _text_problem(value: Any, where: str) -> Optional[str]:
    """The first text under ``value`` that holds a control character,
    named as record_problem names fields: a record's gains are printed
    by plan and results, and one from another appliance is not ours."""
    if isinstance(value, str):
        return "field '%s' holds a control character" % where \
            if CONTROL.search(value) else None
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        why = _text_problem(v, "%s[%d]" % (where, k) if isinstance(k, int)
                            else "%s.%s" % (where, k))
        if why:
            return why
    return None


def record_problem(record: Any) -> Optional[str]:
    """Why ``record`` is not a certification record that plan, audit and
    results can use, or None.  Pure."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for f in RECORD_FIELDS:
        value: Any = record
        for part in f.path:
            # Parents are checked first, so every parent here is an object.
            value = value.get(part, _MISSING)
            if value is _MISSING:
                break
        name = ".".join(f.path)
        if value is _MISSING:
            if f.required:
                return "field '%s' is missing" % name
            continue
        if not f.valid(value):
            return "field '%s' must be %s" % (name, f.expected)
    # A record of a disk outside sd: its recommendations are
    # nvme.conf's.
    nvme = outside_sd(record.get("key"), record.get("driver"))
    for tunable, value in record.get("recommended", {}).items():
        why = _tunable_problem(tunable, value, nvme)
        if why:
            return "field 'recommended.%s': %s" % (tunable, why)
    if record.get("imported") is not None:
        # An import refuses these; one stored by an sdtune that did not
        # must not reach a terminal through plan or results either.
        why = control_problem(record)
        if why:
            return why + " (imported by an older sdtune, which took it)"
    if record.get("gains") is not None:
        why = gains_problem(record["gains"]) or \
            _text_problem(record["gains"], "gains")
        if why:
            return why
    if "power_cuts" in record:
        why = powercuts_problem(record["power_cuts"]) or \
            _text_problem(record["power_cuts"], "power_cuts")
        if why:
            return why
    return _part_problem(record)


# ------------------------------------------------------------ the record

class NotARecord(ValueError):
    """A document that is not a certification record; ``why`` says
    which field is wrong, in the words of record_problem."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass
class QueueDepth:
    """The queue-depth verdict of a record.  The defaults are what
    readers assume for a field a stored file leaves out."""

    knee: Optional[int] = None
    knees: Dict[str, Optional[int]] = field(default_factory=dict)
    throttle_max: Optional[int] = None
    throttle_min: Optional[int] = None
    confidence: Optional[float] = None
    reason: Optional[str] = ""

    def to_json(self) -> dict:
        return {"knee": self.knee, "knees": self.knees,
                "throttle_max": self.throttle_max,
                "throttle_min": self.throttle_min,
                "confidence": self.confidence, "reason": self.reason}

    @classmethod
    def from_json(cls, doc: dict) -> "QueueDepth":
        """From a checked record's "queue_depth" object."""
        return cls(doc.get("knee"), doc.get("knees", {}),
                   doc.get("throttle_max"), doc.get("throttle_min"),
                   doc.get("confidence"), doc.get("reason", ""))


@dataclass
class CertRecord:
    """One certification: what was measured, the verdicts and the
    tunables they recommend.  ``evidence`` is free-form (the numbers
    behind each verdict); only evidence.device.nv_sup is read.

    ``stored`` is the document a record was read from, kept so that
    `results -o json` shows a stored file as it is, keys this version
    does not know included; None for a record made in this run.  A
    stored file that leaves optional fields out gets them back, with
    their defaults, from to_json: a real stored record round-trips
    exactly.
    """

    key: Optional[str] = None           # None: a file, or not under sd
    time: float = 0.0
    target: Optional[str] = None
    device: Optional[str] = None
    serial: Optional[str] = None
    firmware: Optional[str] = None
    time_iso: Optional[str] = ""
    source: Optional[str] = None
    logical_block_bytes: Optional[int] = None
    native_sector_bytes: Optional[int] = None
    sector_confidence: Optional[float] = None
    sector_reason: Optional[str] = ""
    cache: Optional[str] = None
    cache_confidence: Optional[float] = None
    cache_reason: Optional[str] = ""
    queue_depth: QueueDepth = field(default_factory=QueueDepth)
    recommended: Dict[str, object] = field(default_factory=dict)
    evidence: Dict[str, Any] = field(default_factory=dict)
    stored: Optional[dict] = field(default=None, repr=False,
                                   compare=False)
    # The disk's driver ("sd", "blkdev") and, outside sd, its model;
    # None for a file target and in records older than these fields.
    driver: Optional[str] = None
    model: Optional[str] = None
    # Where it was certified ({"host", "platform", "sdtune_version",
    # "engine_version"}), and for a record another appliance exported,
    # how it came here ({"from_host", "exported_by", "file", "time",
    # "sha256"}); None in records older than these fields and, for
    # imported, in local ones.
    origin: Optional[Dict[str, Any]] = None
    imported: Optional[Dict[str, Any]] = None
    # What each recommended tunable buys on this drive (gains.py); None
    # where certify did not measure it (infer, older records).
    gains: Optional[Gains] = None
    # The witnessed power cuts of this drive (powercuts.py), oldest
    # first; empty where none was made.
    power_cuts: List[PowerCut] = field(default_factory=list)

    @property
    def outside_sd(self) -> bool:
        """Of a disk outside sd, keyed by its model (outside_sd())."""
        return outside_sd(self.key, self.driver)

    @property
    def unit_serial(self) -> str:
        """The serial the unit is known by wherever records are matched
        to units and to disks: without surrounding blanks (INQUIRY pads
        it); "" when the record has none."""
        return (self.serial or "").strip()

    @property
    def origin_host(self) -> Optional[str]:
        """The appliance an imported record was certified on (else the
        one it came from); None for a local record."""
        if self.imported is None:
            return None
        host = (self.origin or {}).get("host") or \
            self.imported.get("from_host")
        return host if isinstance(host, str) and host else "?"

    @property
    def signed_by(self) -> Optional[str]:
        """For an imported record, the identity whose signature of its
        export was verified when it was imported (`ssh-keygen -Y
        verify` against the allowed-signers file); None for an unsigned
        import and for a local record."""
        if self.imported is None:
            return None
        signer = self.imported.get("signed_by")
        return signer if isinstance(signer, str) and signer.strip() \
            else None

    @property
    def authenticated(self) -> bool:
        """Whether this appliance may take the record's claims as
        evidence: a local certification, or an imported one whose export
        carried a signature it trusts (signed_by).  An unauthenticated
        record is stored and shown, but never makes plan write
        cache-nonvolatile:true (as_evidence)."""
        return self.imported is None or self.signed_by is not None

    def as_evidence(self) -> "CertRecord":
        """The record as plan may act on it: itself when authenticated;
        else a copy that recommends no cache-nonvolatile and holds no
        NV_SUP evidence (a digest shows an export was not damaged, not
        who wrote it: anyone can claim a non-volatile cache)."""
        if self.authenticated:
            return self
        device = dict(self.evidence.get("device") or {})
        device.pop("nv_sup", None)
        return replace(self, recommended={
            k: v for k, v in self.recommended.items()
            if k != "cache-nonvolatile"},
            evidence=dict(self.evidence, device=device))

    @property
    def nv_sup(self) -> Optional[bool]:
        """The drive's NV_SUP bit (a non-volatile cache), None when
        unknown."""
        return self.evidence.get("device", {}).get("nv_sup")

    def to_json(self) -> dict:
        """The document stored for the record: the keys in the order
        every version of sdtune has written them, then "driver" and
        "model" for a disk certified by a version that knows them (a
        file target's and an older record's document are unchanged),
        then "origin" and "imported" where the record has them,
        "gains" where certify measured them, and "power_cuts" where
        the drive's power was cut."""
        doc = {
            "version": VERSION,
            "target": self.target,
            "device": self.device,
            "key": self.key,
            "serial": self.serial,
            "firmware": self.firmware,
            "time": self.time,
            "time_iso": self.time_iso,
            "source": self.source,
            "logical_block_bytes": self.logical_block_bytes,
            "native_sector_bytes": self.native_sector_bytes,
            "sector_confidence": self.sector_confidence,
            "sector_reason": self.sector_reason,
            "cache": self.cache,
            "cache_confidence": self.cache_confidence,
            "cache_reason": self.cache_reason,
            "queue_depth": self.queue_depth.to_json(),
            "recommended": self.recommended,
            "evidence": self.evidence,
        }
        if self.driver is not None:
            doc["driver"] = self.driver
            doc["model"] = self.model
        # Only where known: an older record's document stays unchanged.
        if self.origin is not None:
            doc["origin"] = self.origin
        if self.imported is not None:
            doc["imported"] = self.imported
        if self.gains is not None:
            doc["gains"] = self.gains.to_json()
        if self.power_cuts:
            doc["power_cuts"] = [c.to_json() for c in self.power_cuts]
        return doc

    def as_stored(self) -> dict:
        """The document as read from its file, or as it would be
        stored."""
        return self.stored if self.stored is not None else self.to_json()

    @classmethod
    def from_json(cls, doc: Any) -> "CertRecord":
        """The record of a stored document, checked against
        RECORD_FIELDS; NotARecord (with record_problem's words) when it
        does not have that shape.  Pure."""
        why = record_problem(doc)
        if why:
            raise NotARecord(why)
        return cls(
            key=doc["key"], time=doc["time"], target=doc.get("target"),
            device=doc.get("device"), serial=doc.get("serial"),
            firmware=doc.get("firmware"),
            time_iso=doc.get("time_iso", ""), source=doc.get("source"),
            logical_block_bytes=doc.get("logical_block_bytes"),
            native_sector_bytes=doc.get("native_sector_bytes"),
            sector_confidence=doc.get("sector_confidence"),
            sector_reason=doc.get("sector_reason", ""),
            cache=doc.get("cache"),
            cache_confidence=doc.get("cache_confidence"),
            cache_reason=doc.get("cache_reason", ""),
            queue_depth=QueueDepth.from_json(doc.get("queue_depth", {})),
            recommended=doc.get("recommended", {}),
            evidence=doc.get("evidence", {}), stored=doc,
            driver=doc.get("driver"), model=doc.get("model"),
            origin=doc.get("origin"), imported=doc.get("imported"),
            gains=Gains.from_json(doc["gains"])
            if doc.get("gains") is not None else None,
            power_cuts=power_cuts_from_json(doc.get("power_cuts")))


def parse_record(data: bytes) -> Tuple[Optional[CertRecord], Optional[str]]:
    """(record, None) or (None, why it is not one).  Pure."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, "not UTF-8 text (byte %d)" % e.start
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        return None, "not valid JSON (line %d, column %d)" % (e.lineno,
                                                              e.colno)
    except (ValueError, RecursionError):
        return None, "not valid JSON"
    try:
        return CertRecord.from_json(record), None
    except NotARecord as e:
        return None, e.why
