"""Certification records that travel between appliances: `sdtune results
--export FILE` writes the stored records as one document, `sdtune
results --import FILE` checks such a document whole and stores its
records here, marked as imported.

The document (version 1):

    {"format": "sdtune-records", "version": 1,
     "exported_by": {"host", "platform", "sdtune_version", "time",
                     "time_iso"},
     "count": <number of records>,
     "records": [{"sha256", "origin": {"host", "platform",
                  "sdtune_version", "engine_version"},
                  "record": <the stored record document>}, ...],
     "sha256": <hex>}

Each entry's sha256 is that of its canonical JSON without the "sha256"
field, and the document's that of the whole document without its own:
a record edited by hand, a record removed or a file cut short is
refused, naming the record where that can be told.  "count" comes
before the records so that a truncated file says how many it should
have held.

An import stores nothing unless the whole document passes.  It never
replaces a local certification of the same drive (key and serial), and
a record already imported with the same content is left alone, so
importing one file twice changes nothing the second time.  Imported
records are stored beside the local ones under a name no local record
can have ("imported+HOST+...": record_name never writes a "+").

Commands run, through the host: `uname -n` (the node name),
platform/detect.py's sources (the platform), `sdio --version`.
Everything else here is pure.
"""

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .. import __version__
from ..errors import SdtuneError
from ..host import Host
from ..sdconf.match import KEY_LEN
from . import records
from .records import CertRecord, record_problem

FORMAT = "sdtune-records"
VERSION = 1
# Local record names (records.record_name) hold [A-Za-z0-9._-] only.
IMPORTED_PREFIX = "imported+"
ROLE = "certification record"
_HEX64 = re.compile(r"^[0-9a-f]{64}\Z")
_ORIGIN_FIELDS = ("host", "platform", "sdtune_version", "engine_version")


# ------------------------------------------------------------ digests

def canonical(obj: Any) -> bytes:
    """The canonical JSON of ``obj``: sorted keys, no blanks, ASCII.
    ValueError for NaN or an infinity (not JSON)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False).encode("ascii")


def digest(obj: Dict[str, Any]) -> str:
    """The sha256 (hex) of ``obj``'s canonical JSON without its own
    "sha256" field."""
    rest = {k: v for k, v in obj.items() if k != "sha256"}
    return hashlib.sha256(canonical(rest)).hexdigest()


def time_iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# ------------------------------------------------------------ provenance

def parse_node_name(text: str) -> Optional[str]:
    """The node name `uname -n` printed, or None when it printed none.

    Sample:

        fs01
    """
    name = text.strip()
    return name if name and "\n" not in name else None


def parse_engine_version(text: str) -> Optional[str]:
    """The version `sdio --version` printed, or None when the output is
    not "sdio VERSION".

    Sample:

        sdio 0.1.0
    """
    m = re.match(r"^sdio ([!-~]{1,64})\n?\Z", text)
    return m.group(1) if m else None


def node_name(host: Host) -> Optional[str]:
    """This appliance's node name (`uname -n`), None when unknown."""
    try:
        result = host.run("uname", ["-n"])
    except SdtuneError:
        return None
    return parse_node_name(result.stdout) if result.returncode == 0 \
        else None


def engine_version(host: Host) -> Optional[str]:
    """The sdio engine's version (`sdio --version`, run like every other
    sdio run, so also over --host), None when it cannot tell (an engine
    older than --version)."""
    try:
        result = host.run("sdio", ["--version"], timeout_s=30)
    except SdtuneError:
        return None
    return parse_engine_version(result.stdout) if result.returncode == 0 \
        else None


def platform_name(host: Host) -> Optional[str]:
    """What platform/detect.py detects (omnios, smartos, ...)."""
    from ..platform.detect import detect
    try:
        return detect(host).name
    except SdtuneError:
        return None


def local_origin(host: Host, engine: bool = True) -> Dict[str, Any]:
    """The origin certify stores in a record made here."""
    return {"host": node_name(host), "platform": platform_name(host),
            "sdtune_version": __version__,
            "engine_version": engine_version(host) if engine else None}


# ------------------------------------------------------------ export

def exportable(rec: CertRecord) -> bool:
    """A record of a drive (a key, or a driver outside sd): a file
    target's record means nothing on another appliance."""
    return rec.key is not None or rec.driver is not None


def build_export(recs: List[CertRecord], exported_by: Dict[str, Any]
                 ) -> Dict[str, Any]:
    """The export document of ``recs``.  A record without an origin (made
    before records had one) is said to come from the exporting host,
    where it is stored, with its versions unknown.  BadExport naming a
    record whose document holds NaN or an infinity: Python's json
    stores and reads them, JSON has no such numbers.  Pure."""
    entries = []
    for index, rec in enumerate(recs, 1):
        doc = rec.as_stored()
        origin = doc.get("origin")
        if not isinstance(origin, dict):
            origin = {"host": exported_by.get("host"),
                      "platform": exported_by.get("platform"),
                      "sdtune_version": None, "engine_version": None}
        entry: Dict[str, Any] = {"origin": origin, "record": doc}
        try:
            entry = dict({"sha256": digest(entry)}, **entry)
        except ValueError:
            raise BadExport("record %d (%s) holds a number JSON cannot "
                            "carry (NaN or infinity)"
                            % (index, describe(doc))) from None
        entries.append(entry)
    doc = {"format": FORMAT, "version": VERSION,
           "exported_by": exported_by, "count": len(entries),
           "records": entries}
    doc["sha256"] = digest(doc)
    return doc


def render_export(doc: Dict[str, Any]) -> bytes:
    """The file's bytes: readable JSON whose parse gives ``doc`` back
    exactly (the digests are of that parse)."""
    return (json.dumps(doc, indent=2, allow_nan=False) + "\n") \
        .encode("ascii")


# ------------------------------------------------------------ checking

class BadExport(ValueError):
    """A document that is not an intact export; ``why`` says where."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass
class Entry:
    """One checked record of an export (index counts from 1)."""

    index: int
    sha256: str
    origin: Dict[str, Any]
    record: CertRecord

    @property
    def origin_host(self) -> Optional[str]:
        return self.origin.get("host")


@dataclass
class Export:
    """A checked export document."""

    exported_by: Dict[str, Any]
    entries: List[Entry]
    sha256: str


def describe(rec: Any) -> str:
    """'key "...", serial S' of a record document, however damaged."""
    if not isinstance(rec, dict):
        return "not an object"
    key, serial = rec.get("key"), rec.get("serial")
    if isinstance(key, str):
        ident = 'key "%s"' % key
    elif isinstance(rec.get("driver"), str):
        ident = "driver %s" % rec["driver"]
    else:
        ident = "no key"
    if not isinstance(serial, str) or not serial.strip():
        serial = "-"
    return "%s, serial %s" % (ident, serial.strip())


def _no_constants(name: str) -> Any:
    raise ValueError("%s is not JSON" % name)


def _truncated(text: str, err: json.JSONDecodeError) -> bool:
    """Whether more text could have completed the document: the parse
    ran out of text rather than into a wrong character."""
    return err.pos >= len(text.rstrip()) or \
        err.msg.startswith("Unterminated string")


def _where_cut(text: str) -> str:
    """Where a truncated document ends: in which record, of how many
    its header announced."""
    start = re.search(r'"records"\s*:\s*\[', text)
    if start is None:
        return "truncated before its records"
    count = re.search(r'"count"\s*:\s*([0-9]+)', text[:start.start()])
    of = " of %s" % count.group(1) if count else ""
    decoder = json.JSONDecoder(parse_constant=_no_constants)
    pos, done = start.end(), 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            return "truncated after record %d%s" % (done, of) if done \
                else "truncated before its first record"
        if text[pos] == "]":
            return "truncated after its records (the document's sha256 " \
                "is missing)"
        try:
            _, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return "truncated in record %d%s" % (done + 1, of)
        done += 1


def parse_document(data: bytes) -> Any:
    """The JSON of an export file; BadExport saying why not (for a file
    cut short: where).  Pure."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadExport("not UTF-8 text (byte %d)" % e.start) from None
    if not text.strip():
        raise BadExport("empty file")
    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        if text.lstrip().startswith("{") and _truncated(text, e):
            raise BadExport(_where_cut(text)) from None
        raise BadExport("not valid JSON (line %d, column %d)"
                        % (e.lineno, e.colno)) from None
    except (ValueError, RecursionError) as e:
        raise BadExport("not valid JSON (%s)" % e) from None


def _check_origin(origin: Any) -> Optional[str]:
    if not isinstance(origin, dict):
        return "field 'origin' must be an object"
    for name in _ORIGIN_FIELDS:
        if not isinstance(origin.get(name), (str, type(None))):
            return "field 'origin.%s' must be text or null" % name
    return None


def check_entry(index: int, entry: Any) -> Entry:
    """One record of the document, checked: its digest first (a record
    edited by hand), then its shape (records.record_problem).  Pure."""
    if not isinstance(entry, dict):
        raise BadExport("record %d: not a JSON object" % index)
    rec = entry.get("record")
    where = "record %d (%s)" % (index, describe(rec))
    if not isinstance(rec, dict):
        raise BadExport("record %d: field 'record' must be an object"
                        % index)
    stated = entry.get("sha256")
    if not isinstance(stated, str) or not _HEX64.match(stated):
        raise BadExport("%s: no sha256 of its content" % where)
    try:
        actual = digest(entry)
    except ValueError:
        raise BadExport("%s: holds a number JSON has no room for" % where)
    if actual != stated:
        raise BadExport("%s: content does not match its sha256" % where)
    why = _check_origin(entry.get("origin"))
    if why:
        raise BadExport("%s: %s" % (where, why))
    why = record_problem(rec)
    if why:
        raise BadExport("%s: not a certification record: %s" % (where, why))
    return Entry(index, stated, dict(entry["origin"]),
                 CertRecord.from_json(rec))


def check_export(data: bytes) -> Export:
    """The whole document checked before anything is stored: format,
    version, every record, then the document's own digest (a record
    removed or reordered).  BadExport names what is wrong.  Pure."""
    doc = parse_document(data)
    if not isinstance(doc, dict):
        raise BadExport("not an sdtune records export (not a JSON object)")
    if "format" not in doc:
        raise BadExport("not an sdtune records export (no \"format\")")
    if doc["format"] != FORMAT:
        raise BadExport("not an sdtune records export (format %s, not "
                        "\"%s\")" % (json.dumps(doc["format"])[:40],
                                     FORMAT))
    version = doc.get("version")
    if version != VERSION or isinstance(version, bool):
        raise BadExport("export version %s: this sdtune reads version %d "
                        "only" % (json.dumps(version)[:20], VERSION))
    by = doc.get("exported_by")
    if not isinstance(by, dict) or \
            not isinstance(by.get("host"), (str, type(None))):
        raise BadExport("field 'exported_by' must be an object with a "
                        "host")
    entries = doc.get("records")
    if not isinstance(entries, list):
        raise BadExport("field 'records' must be a list")
    count = doc.get("count", len(entries))
    if count != len(entries):
        raise BadExport("holds %d records where its header says %s "
                        "(records removed or added)"
                        % (len(entries), json.dumps(count)[:20]))
    checked = [check_entry(i, e) for i, e in enumerate(entries, 1)]
    stated = doc.get("sha256")
    if not isinstance(stated, str) or not _HEX64.match(stated):
        raise BadExport("no sha256 of the document")
    if digest(doc) != stated:
        raise BadExport("the document does not match its sha256 (records "
                        "removed, reordered or edited)")
    return Export(dict(by), checked, stated)


# ------------------------------------------------------------ importing

def _safe(text: Optional[str]) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", (text or "").strip()) or "-"


def imported_name(from_host: Optional[str], rec: CertRecord) -> str:
    """The file name of an imported record: the host it came from and
    the name the record has where it was certified."""
    return "%s%s+%s" % (IMPORTED_PREFIX, _safe(from_host or "unknown"),
                        records.record_name(rec.key, rec.serial,
                                            rec.firmware, rec.target or "",
                                            rec.driver, rec.model))


def _identity(rec: CertRecord) -> Tuple:
    """What names one drive unit: its key (or driver and model) and
    serial."""
    return (rec.key or "", "" if rec.key else rec.driver or "",
            "" if rec.key else (rec.model or "").strip(), rec.unit_serial)


def from_host(entry: Entry, by_host: Optional[str]) -> Optional[str]:
    """The appliance a record is said to come from: where it was
    certified, else the one that exported it."""
    return entry.origin_host or by_host


def imported_document(entry: Entry, by_host: Optional[str], source: str,
                      now: float) -> Dict[str, Any]:
    """The document stored for an imported record: the record as it was
    exported, its origin, and how it came here."""
    doc = dict(entry.record.as_stored())
    doc["origin"] = entry.origin
    doc["imported"] = {"from_host": from_host(entry, by_host),
                       "exported_by": by_host, "file": source,
                       "time": now, "sha256": entry.sha256}
    return doc


@dataclass
class Step:
    """What an import does with one record: "imported" (stored),
    "unchanged" (already imported with this content) or "skipped" (with
    the reason)."""

    action: str
    entry: Entry
    from_host: Optional[str]
    path: Optional[str] = None
    data: Optional[bytes] = None
    before: Optional[bytes] = None
    reason: str = ""


def plan_import(export: Export, local: List[CertRecord],
                existing: Dict[str, Optional[bytes]], directory: str,
                source: str, now: float) -> List[Step]:
    """One step per record of a checked export.  ``local`` are the
    records certified here (never replaced); ``existing`` maps each
    imported record's path to its current bytes (None: no file).
    Pure."""
    locals_by_id: Dict[Tuple, CertRecord] = {}
    for rec in local:
        if rec.imported is None:
            locals_by_id[_identity(rec)] = rec
    by_host = export.exported_by.get("host")
    steps: List[Step] = []
    taken: Dict[str, Step] = {}
    for entry in export.entries:
        rec = entry.record
        origin = from_host(entry, by_host)

        def skip(reason: str) -> None:
            steps.append(Step("skipped", entry, origin, reason=reason))
        if not exportable(rec):
            skip("a file target's record names no drive")
            continue
        if not rec.unit_serial:
            skip("no serial: the unit cannot be told from a local one")
            continue
        mine = locals_by_id.get(_identity(rec))
        if mine is not None:
            skip("a local certification of this serial exists (%s, "
                 "firmware %s): local records are never replaced"
                 % (mine.time_iso or "?", mine.firmware or "-"))
            continue
        path = directory + "/" + imported_name(origin, rec)
        if path in taken:
            skip("record %d of this file names the same drive and "
                 "firmware" % taken[path].entry.index)
            continue
        before = existing.get(path)
        if before is not None and _imported_sha256(before) == entry.sha256:
            step = Step("unchanged", entry, origin, path,
                        reason="already imported")
        else:
            doc = imported_document(entry, by_host, source, now)
            why = record_problem(doc)
            if why:
                # A from_host that is not text, say: the record is fine.
                raise BadExport("record %d (%s): cannot be stored: %s"
                                % (entry.index, describe(doc), why))
            step = Step("imported", entry, origin, path,
                        (json.dumps(doc, indent=2) + "\n").encode("utf-8"),
                        before)
        taken[path] = step
        steps.append(step)
    return steps


def _imported_sha256(data: bytes) -> Optional[str]:
    rec, _ = records.parse_record(data)
    if rec is None or rec.imported is None:
        return None
    return rec.imported.get("sha256")


def sha256_of(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class ImportResult:
    """What an import did, for its text and its change document."""

    source: str
    steps: List[Step] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)

    def of(self, action: str) -> List[Step]:
        return [s for s in self.steps if s.action == action]

    @property
    def changed(self) -> bool:
        return bool(self.of("imported"))

    def files(self) -> List[Dict[str, Any]]:
        return [{"path": s.path, "role": ROLE,
                 "before_sha256": sha256_of(s.before),
                 "after_sha256": sha256_of(s.data)}
                for s in self.of("imported")]


def import_file(host: Host, state_dir: str, source: str, data: bytes,
                store: bool = True) -> ImportResult:
    """Check the document ``data`` (read from ``source``) whole, then
    store its new records (with ``store`` false, only say what would
    be stored: a dry run).  SdtuneError "cannot import 'SOURCE': ..."
    (exit 4) with nothing stored when any part of it is refused."""
    try:
        export = check_export(data)
    except BadExport as e:
        raise SdtuneError("import", source, e.why) from None
    local, problems = records.load_checked(host, state_dir)
    directory = records.records_dir(host, state_dir)
    existing: Dict[str, Optional[bytes]] = {}
    for entry in export.entries:
        path = directory + "/" + imported_name(
            from_host(entry, export.exported_by.get("host")), entry.record)
        existing[path] = host.read_bytes(path) if host.exists(path) \
            else None
    try:
        steps = plan_import(export, local, existing, directory, source,
                            host.now())
    except BadExport as e:
        raise SdtuneError("import", source, e.why) from None
    result = ImportResult(source, steps, problems)
    if not store:
        return result
    if result.changed:
        records.check_storable(host, state_dir)
    for step in result.of("imported"):
        assert step.path is not None and step.data is not None
        host.write_atomic(step.path, step.data)
    return result


def entry_json(step: Step) -> Dict[str, Any]:
    """A record in the import's change document."""
    rec = step.entry.record
    doc: Dict[str, Any] = {"key": rec.key, "serial": rec.serial,
                           "firmware": rec.firmware}
    if step.action == "skipped":
        doc["reason"] = step.reason
    else:
        doc["from_host"] = step.from_host
    return doc


def check_key(key: str) -> Optional[str]:
    """Why ``key`` cannot be an sd-config-list key, or None."""
    if len(key) != KEY_LEN:
        return "a key has exactly %d characters (VID padded to 8, then " \
            "the PID), as in sd.conf and `sdtune disks -H`" % KEY_LEN
    return None
