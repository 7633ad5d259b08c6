# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

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
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .. import __version__
from ..errors import SdtuneError
from ..host import Host
from ..sdconf.match import KEY_LEN
from ..records import storage
from .recommend import recommend, recommend_nvme
from ..records.record import (CONTROL, CertRecord, control_problem,
                              parse_record, record_problem)
from .verdict import (TRANSPORT_QUEUE, CacheVerdict, QueueVerdict,
                      SectorVerdict)

FORMAT = "sdtune-records"
VERSION = 1
# Local record names (records.record_name) hold [A-Za-z0-9._-] only.
IMPORTED_PREFIX = "imported+"
ROLE = "certification record"
_HEX64 = re.compile(r"^[0-9a-f]{64}\Z")
_ORIGIN_FIELDS = ("host", "platform", "sdtune_version", "engine_version")
# A file name's limit (NAME_MAX of illumos and Linux), in bytes, less
# what Host.write_atomic's temporary name adds to it (".NAME.sdtune.PID.
# HEX8", local.py and serve_files.c: 1 + 8 + a pid of up to 10 digits + 1 + 8).
NAME_MAX = 255
NAME_LIMIT = NAME_MAX - 28


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


def document_digest(doc: Dict[str, Any]) -> str:
    """The document's sha256: without its own field and without the
    signature, which signs this digest (signed_message)."""
    return digest({k: v for k, v in doc.items() if k != "signature"})


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
    doc["sha256"] = document_digest(doc)
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
    # {"identity", "ssh_signature"}: checked in shape, not verified.
    signature: Optional[Dict[str, str]] = None


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
        value = origin.get(name)
        if not isinstance(value, (str, type(None))):
            return "field 'origin.%s' must be text or null" % name
        if value is not None and CONTROL.search(value):
            return "field 'origin.%s' holds a control character" % name
    return None


def _same(derived: Any, value: Any) -> bool:
    """Equal and of the same JSON type (true is not 1)."""
    return type(derived) is type(value) and derived == value


def unjustified(rec: CertRecord) -> Optional[str]:
    """Why a record's recommendations are not what its own verdicts
    give, or None.  The verdicts are rebuilt from the record's fields
    and given to recommend.recommend (recommend_nvme for a disk outside
    sd), the one place certify derives recommendations: a
    recommendation is never taken as given.  The record need not
    recommend all it could (less is never unsafe), but nothing else.
    The solid-state flag is not stored, so disksort:false is allowed.
    Pure."""
    qd = rec.queue_depth
    tmax, tmin = qd.throttle_max, qd.throttle_min
    if tmax is not None:
        if qd.knee is None and tmax not in TRANSPORT_QUEUE.values():
            return "field 'queue_depth.throttle_max' is %d without a " \
                "knee (only a transport's queue limit, %s, is set " \
                "without one)" % (tmax, ", ".join(
                    str(v) for v in sorted(TRANSPORT_QUEUE.values())))
        if qd.knee is not None and tmax > max(qd.knee, 2):
            return "field 'queue_depth.throttle_max' is %d, deeper than " \
                "the knee (QD%d)" % (tmax, qd.knee)
    if tmin is not None and (tmin != 2 or tmax is None):
        return "field 'queue_depth.throttle_min' is %d: the queue verdict " \
            "sets only 2, with a throttle-max" % tmin
    sector = SectorVerdict(rec.native_sector_bytes,
                           rec.sector_confidence or 0.0, "")
    cache = CacheVerdict(rec.cache or "", rec.cache_confidence or 0.0,
                         rec.cache == "nonvolatile", "")
    queue = QueueVerdict(qd.knee, tmax, tmin, qd.confidence or 0.0, "")
    logical = rec.logical_block_bytes or 512
    derived = recommend(sector, cache, queue, logical, True)
    if rec.outside_sd:
        derived.update(recommend_nvme(sector, logical))
    for name, value in rec.recommended.items():
        if name not in derived:
            return "field 'recommended.%s' is %s, which the record's own " \
                "verdicts (native sector %s, logical %d, cache %s, knee " \
                "%s) do not give" % (
                    name, json.dumps(value), rec.native_sector_bytes,
                    logical, rec.cache or "-", qd.knee)
        if not _same(derived[name], value):
            return "field 'recommended.%s' is %s where the record's own " \
                "verdicts give %s" % (name, json.dumps(value),
                                      json.dumps(derived[name]))
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
    why = control_problem(rec)
    if why:
        raise BadExport("%s: %s" % (where, why))
    record = CertRecord.from_json(rec)
    why = unjustified(record)
    if why:
        raise BadExport("%s: recommends what its verdicts do not: %s"
                        % (where, why))
    return Entry(index, stated, dict(entry["origin"]), record)


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
    if by["host"] is not None and CONTROL.search(by["host"]):
        raise BadExport("field 'exported_by.host' holds a control "
                        "character")
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
    if document_digest(doc) != stated:
        raise BadExport("the document does not match its sha256 (records "
                        "removed, reordered or edited)")
    signature = None
    if "signature" in doc:
        signature = doc["signature"]
        why = _signature_problem(signature)
        if why:
            raise BadExport("field 'signature': %s" % why)
    return Export(dict(by), checked, stated, signature)


# ------------------------------------------------------------ signing
#
# A digest shows that an export was not damaged, never who wrote it:
# anyone can recompute it.  An export may carry a signature of its
# document digest by OpenSSH's `ssh-keygen -Y sign` (namespace
# sdtune-records); the importer verifies it with `ssh-keygen -Y verify`
# against its allowed-signers file, and only then stores the records as
# signed by that identity (CertRecord.signed_by).

NAMESPACE = "sdtune-records"
_ARMOR = re.compile(r"^-----BEGIN SSH SIGNATURE-----\n"
                    r"(?:[A-Za-z0-9+/=]{1,76}\n){1,200}"
                    r"-----END SSH SIGNATURE-----\n?\Z")
_IDENTITY = re.compile(r"^[!-~]{1,256}\Z")


def signed_message(sha256: str) -> bytes:
    """What is signed: the document's digest, named."""
    return ("%s %s\n" % (NAMESPACE, sha256)).encode("ascii")


def parse_ssh_signature(text: str) -> Optional[str]:
    """The armored signature `ssh-keygen -Y sign` printed, or None.

    Sample:

        -----BEGIN SSH SIGNATURE-----
        U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgFPaN0bo7eoCjkvmpoZuJwq
        ...
        -----END SSH SIGNATURE-----
    """
    text = text.replace("\r\n", "\n")
    return text if _ARMOR.match(text) else None


def _signature_problem(sig: Any) -> Optional[str]:
    if not isinstance(sig, dict) or set(sig) != {"identity",
                                                 "ssh_signature"}:
        return "must be an object with an identity and an ssh_signature"
    if not isinstance(sig["identity"], str) or \
            not _IDENTITY.match(sig["identity"]):
        return "the identity must be printable text without blanks"
    if not isinstance(sig["ssh_signature"], str) or \
            parse_ssh_signature(sig["ssh_signature"]) is None:
        return "not an armored SSH signature"
    return None


def _said(result: Any) -> str:
    text = (result.stderr or result.stdout or "").strip()
    return text.splitlines()[-1] if text else "no message"


def sign_export(host: Host, doc: Dict[str, Any], key: str,
                identity: str) -> None:
    """Sign the document's digest with the private key ``key`` (a path
    on the host) and add the signature to ``doc``.  SdtuneError "cannot
    sign ..." when ssh-keygen cannot."""
    result = host.run("ssh-keygen", ["-Y", "sign", "-f", key, "-n",
                                     NAMESPACE],
                      stdin=signed_message(doc["sha256"]), timeout_s=60)
    armored = parse_ssh_signature(result.stdout) \
        if result.returncode == 0 else None
    if armored is None:
        raise SdtuneError("sign the export with", key, "ssh-keygen -Y sign "
                          "exited %d: %s" % (result.returncode,
                                             _said(result)))
    doc["signature"] = {"identity": identity, "ssh_signature": armored}


def verify_export(host: Host, export: Export, allowed_signers: str,
                  scratch_dir: str) -> str:
    """The identity that signed ``export``, verified with `ssh-keygen -Y
    verify` against ``allowed_signers`` (a path on the host); the
    signature goes through a scratch file in ``scratch_dir``, removed
    afterwards.  BadExport when it does not verify (a forged or edited
    export, or a signer this appliance does not trust)."""
    assert export.signature is not None
    identity = export.signature["identity"]
    scratch = "%s/.sdtune-signature.%d" % (scratch_dir, os.getpid())
    host.mkdirs(scratch_dir)
    host.create_new(scratch, export.signature["ssh_signature"]
                    .encode("ascii"))
    try:
        result = host.run("ssh-keygen", [
            "-Y", "verify", "-f", allowed_signers, "-I", identity, "-n",
            NAMESPACE, "-s", scratch], stdin=signed_message(export.sha256),
            timeout_s=60)
    finally:
        host.remove(scratch)
    if result.returncode != 0:
        raise BadExport("the signature of %s does not verify against %s "
                        "(ssh-keygen: %s): a forged export, or a signer "
                        "this appliance does not trust"
                        % (identity, allowed_signers, _said(result)))
    return identity


# ------------------------------------------------------------ importing

def _safe(text: Optional[str]) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", (text or "").strip()) or "-"


def imported_name(from_host: Optional[str], rec: CertRecord) -> str:
    """The file name of an imported record: the host it came from and
    the name the record has where it was certified.  A name longer than
    NAME_MAX bytes (a long host or serial) keeps its beginning and ends
    in a hash of the whole, so that it (and the temporary file it is
    written through) fits NAME_MAX and two long names stay apart."""
    name = "%s%s+%s" % (IMPORTED_PREFIX, _safe(from_host or "unknown"),
                        storage.record_name(rec.key, rec.serial,
                                            rec.firmware, rec.target or "",
                                            rec.driver, rec.model))
    if len(name) <= NAME_LIMIT:     # _safe leaves ASCII only
        return name
    tail = "~%s.json" % hashlib.sha256(name.encode("ascii")) \
        .hexdigest()[:32]
    return name[:NAME_LIMIT - len(tail)] + tail


def same_unit_serial(serial: Optional[str]) -> str:
    """The serial as units are compared: blanks around it trimmed
    (INQUIRY pads it; a no-break space too) and case folded (one unit's
    serial is printed in upper case by one tool, lower by another)."""
    return (serial or "").strip().casefold()


def _identity(rec: CertRecord) -> Tuple:
    """What names one drive unit: its key (or driver and model) and
    serial, compared as same_unit_serial says, and the key case
    folded, as sd matches it (strncasecmp)."""
    return ((rec.key or "").casefold(), "" if rec.key else rec.driver or "",
            "" if rec.key else (rec.model or "").strip(),
            same_unit_serial(rec.unit_serial))


def from_host(entry: Entry, by_host: Optional[str]) -> Optional[str]:
    """The appliance a record is said to come from: where it was
    certified, else the one that exported it."""
    return entry.origin_host or by_host


def imported_document(entry: Entry, by_host: Optional[str], source: str,
                      now: float, signed_by: Optional[str] = None
                      ) -> Dict[str, Any]:
    """The document stored for an imported record: the record as it was
    exported, its origin, and how it came here (with ``signed_by``, the
    identity whose signature of the export was verified)."""
    doc = dict(entry.record.as_stored())
    doc["origin"] = entry.origin
    doc["imported"] = {"from_host": from_host(entry, by_host),
                       "exported_by": by_host, "file": source,
                       "time": now, "sha256": entry.sha256}
    if signed_by is not None:
        doc["imported"]["signed_by"] = signed_by
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
                source: str, now: float,
                signed_by: Optional[str] = None) -> List[Step]:
    """One step per record of a checked export.  ``local`` are the
    records certified here (never replaced); ``existing`` maps each
    imported record's path to its current bytes (None: no file);
    ``signed_by``: the verified signer of the export, if any (a record
    imported unsigned is stored again when a signed export brings it).
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
        if before is not None and \
                _imported_as(before) == (entry.sha256, signed_by):
            step = Step("unchanged", entry, origin, path,
                        reason="already imported")
        else:
            doc = imported_document(entry, by_host, source, now, signed_by)
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


def _imported_as(data: bytes) -> Tuple[Optional[str], Optional[str]]:
    """(sha256, signed_by) of a stored imported record."""
    rec, _ = parse_record(data)
    if rec is None or rec.imported is None:
        return None, None
    return rec.imported.get("sha256"), rec.signed_by


def sha256_of(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class ImportResult:
    """What an import did, for its text and its change document."""

    source: str
    steps: List[Step] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    # The identity whose signature was verified; None: unsigned.
    signed_by: Optional[str] = None

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
                store: bool = True,
                allowed_signers: Optional[str] = None) -> ImportResult:
    """Check the document ``data`` (read from ``source``) whole, then
    store its new records (with ``store`` false, only say what would
    be stored: a dry run).  A signed export is verified against
    ``allowed_signers`` (a path under the root; None or no such file:
    its records are stored unsigned, with a warning).  SdtuneError
    "cannot import 'SOURCE': ..." (exit 4) with nothing stored when any
    part of it is refused, a signature that does not verify included."""
    try:
        export = check_export(data)
    except BadExport as e:
        raise SdtuneError("import", source, e.why) from None
    local, problems = storage.load_checked(host, state_dir)
    directory = storage.records_dir(host, state_dir)
    signed_by = None
    if export.signature is not None:
        allowed = host.sys_path(allowed_signers) if allowed_signers \
            else None
        if allowed is None or not host.exists(allowed):
            problems = problems + [
                "'%s' is signed by %s, but there is no allowed-signers "
                "file (%s) to verify it with: imported as unsigned"
                % (source, export.signature["identity"],
                   allowed or "[signing] allowed_signers is empty")]
        else:
            try:
                signed_by = verify_export(host, export, allowed, directory)
            except BadExport as e:
                raise SdtuneError("import", source, e.why) from None
    existing: Dict[str, Optional[bytes]] = {}
    for entry in export.entries:
        path = directory + "/" + imported_name(
            from_host(entry, export.exported_by.get("host")), entry.record)
        existing[path] = host.read_bytes(path) if host.exists(path) \
            else None
    try:
        steps = plan_import(export, local, existing, directory, source,
                            host.now(), signed_by)
    except BadExport as e:
        raise SdtuneError("import", source, e.why) from None
    result = ImportResult(source, steps, problems, signed_by)
    if not store:
        return result
    if result.changed:
        storage.check_storable(host, state_dir)
        # Every name is checked before anything is written.
        for step in result.of("imported"):
            assert step.path is not None
            host.check_replaceable(step.path)
    store_all(host, source, result.of("imported"))
    return result


def store_all(host: Host, source: str, steps: List[Step]) -> None:
    """Write every step's record, or none: when record k cannot be
    written, the records 1..k-1 this import wrote are removed (or their
    earlier content put back) and SdtuneError says so; if even that
    fails, it names the files left behind."""
    done: List[Step] = []
    for step in steps:
        assert step.path is not None and step.data is not None
        try:
            host.write_atomic(step.path, step.data)
        except SdtuneError as e:
            left = []
            for prev in reversed(done):
                assert prev.path is not None
                try:
                    if prev.before is None:
                        host.remove(prev.path)
                    else:
                        host.write_atomic(prev.path, prev.before)
                except SdtuneError:
                    left.append(prev.path)
            why = "record %d: cannot write '%s': %s; " % (
                step.entry.index, step.path, e.reason)
            if left:
                why += "stored in part: %s left as written" % ", ".join(
                    "'%s'" % p for p in reversed(left))
            else:
                why += "nothing stored (%d record%s already written "\
                    "removed)" % (len(done), "" if len(done) == 1 else "s")
            raise SdtuneError("import", source, why, e.exit_code) from e
        done.append(step)


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
