# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The journal of sd.conf changes: every change is described before it is
made, and rollback reads only the journal and its saved copies (DESIGN.md
seam 7).

Layout under <state_dir>/journal/:

  NNNNNN.json   one entry per transaction, rewritten atomically as its
                state advances: prepared -> written -> done, or failed /
                undone / recovered
  NNNNNN.old    the bytes of the change's first file before it (saved
                before it): sd.conf, or on SmartOS maybe the boot module
  NNNNNN.new    the bytes the change writes there
  NNNNNN.K.old  the same for its file K (K >= 1: the boot module, the
  NNNNNN.K.new  loader lines); a file that does not exist on that side
                has no copy

All reads and writes go through the host.  Pure otherwise.
"""

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Dict, List, Optional, Tuple

from ..drivers import DEFAULT, DRIVERS, NAMES
from ..errors import SdtuneError
from ..host import Host
from ..host.wire import is_time

SUBDIR = "journal"
OPEN_STATES = ("prepared", "written")
STATES = OPEN_STATES + ("done", "failed", "undone", "recovered",
                        "accepted")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_ENTRY = re.compile(r"^([0-9]{6})\.json$")
# An entry holds a diff and the verify results of every disk: a few MiB
# at most even for 240 disks.
_ENTRY_LIMIT = 16 << 20


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class FileRecord:
    """One file a transaction writes; a checksum is None where the file
    does not exist (before: created; after: removed)."""

    path: str                   # system path
    role: str
    old_sha256: Optional[str]
    new_sha256: Optional[str]
    volatile: bool = False      # lost at reboot (SmartOS ramdisk)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: object) -> "FileRecord":
        if not isinstance(doc, dict) or set(doc) - {f.name for f in
                                                    fields(cls)}:
            raise ValueError("field 'files' holds a bad record")
        for name in ("path", "role"):
            if not isinstance(doc.get(name), str):
                raise ValueError("field 'files' holds a record without %s"
                                 % name)
        for name in ("old_sha256", "new_sha256"):
            value = doc.get(name)
            if value is not None and not (isinstance(value, str) and
                                          _SHA.match(value)):
                raise ValueError("field 'files' holds a bad %s" % name)
        if not isinstance(doc.get("volatile", False), bool):
            raise ValueError("field 'files' holds a bad volatile flag")
        return cls(**doc)


@dataclass
class Entry:
    id: str
    time: float
    user: str
    action: str                 # apply, rollback
    state: str                  # prepared, written, done, failed, undone,
    #                             recovered
    conf_path: str              # system path, e.g. /kernel/drv/sd.conf
    old_sha256: str
    new_sha256: str
    diff: str = ""
    summary: List[str] = field(default_factory=list)
    rollback_of: Optional[str] = None
    update_drv: Dict[str, object] = field(default_factory=dict)
    verify: List[Dict[str, object]] = field(default_factory=list)
    result: str = ""
    notes: List[str] = field(default_factory=list)
    # Every file written, in order (entries from before platforms: none,
    # file_records() then describes sd.conf alone).
    files: List[FileRecord] = field(default_factory=list)
    # The activation steps, in order: bootadm, update_drv.
    steps: List[str] = field(default_factory=lambda: ["update_drv"])
    bootadm: Dict[str, object] = field(default_factory=dict)
    # The platform's name and the boot environment changed.
    platform: Dict[str, object] = field(default_factory=dict)
    # Triton compute node: the boot module for CNAPI.
    handoff: Optional[Dict[str, str]] = None
    # The driver whose .conf the entry changed (conf_path above holds
    # its path, whatever the driver): entries from before NVMe are sd's.
    driver: str = DEFAULT.name

    def file_records(self) -> List[FileRecord]:
        if self.files:
            return list(self.files)
        return [FileRecord(self.conf_path, "%s.conf" % self.driver,
                           self.old_sha256,
                           self.new_sha256)]

    def to_json(self) -> dict:
        # The file keeps the key of the days when only sd.conf was
        # changed.
        return {_JSON_NAMES.get(k, k): v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, doc: object) -> "Entry":
        """An entry from its JSON, every field checked: a wrong type is
        ValueError naming the field (history prints it, recovery and
        rollback must not act on it)."""
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        known = {_JSON_NAMES.get(f.name, f.name) for f in fields(cls)}
        extra = sorted(set(doc) - known)
        if extra:
            raise ValueError("unknown field '%s'" % extra[0])
        for name, types in _FIELD_TYPES.items():
            if name not in doc:
                if name in _REQUIRED:
                    raise ValueError("field '%s' is missing" % name)
                continue
            value = doc[name]
            if not isinstance(value, types) or isinstance(value, bool):
                raise ValueError("field '%s' has the wrong type" % name)
        # The rule the SSH host also applies to the appliance's clock.
        if not is_time(doc["time"]):
            raise ValueError("field 'time' is not a time")
        if doc["state"] not in STATES:
            raise ValueError("field 'state' is not one of %s"
                             % ", ".join(STATES))
        for name in ("old_sha256", "new_sha256"):
            if not _SHA.match(doc[name]):
                raise ValueError("field '%s' is not a sha256" % name)
        if not _ID.match(doc["id"]):
            raise ValueError("field 'id' is not six digits")
        for name in ("summary", "notes"):
            if not all(isinstance(x, str) for x in doc.get(name, [])):
                raise ValueError("field '%s' must list strings" % name)
        if not all(isinstance(x, dict) for x in doc.get("verify", [])):
            raise ValueError("field 'verify' must list objects")
        if not all(isinstance(x, str) and x in ("bootadm", "update_drv")
                   for x in doc.get("steps", [])):
            raise ValueError("field 'steps' must list bootadm, update_drv")
        handoff = doc.get("handoff")
        if handoff is not None and not (
                isinstance(handoff, dict) and
                all(isinstance(v, str) for v in handoff.values())):
            raise ValueError("field 'handoff' is not a boot module")
        if doc.get("driver", DEFAULT.name) not in DRIVERS:
            raise ValueError("field 'driver' is not one of %s"
                             % ", ".join(NAMES))
        doc = dict(doc, files=[FileRecord.from_json(x)
                               for x in doc.get("files", [])])
        return cls(**{_FIELD_NAMES.get(k, k): v for k, v in doc.items()})


# Field -> the key of an entry's file where the two differ (the files
# keep the names of the days when only sd.conf was changed).
_JSON_NAMES = {"conf_path": "sd_conf"}
_FIELD_NAMES = {v: k for k, v in _JSON_NAMES.items()}
_REQUIRED = ("id", "time", "user", "action", "state", "sd_conf",
             "old_sha256", "new_sha256")
_FIELD_TYPES: Dict[str, Tuple[type, ...]] = {
    "id": (str,), "time": (int, float), "user": (str,), "action": (str,),
    "state": (str,), "sd_conf": (str,), "old_sha256": (str,),
    "new_sha256": (str,), "diff": (str,), "summary": (list,),
    "rollback_of": (str, type(None)), "update_drv": (dict,),
    "verify": (list,), "result": (str,), "notes": (list,),
    "files": (list,), "steps": (list,), "bootadm": (dict,),
    "platform": (dict,), "handoff": (dict, type(None)), "driver": (str,),
}
_ID = re.compile(r"^[0-9]{6}$")


@dataclass
class BadEntry:
    """A journal file that cannot be read as an entry: reported, never
    acted on."""

    id: str
    path: str
    reason: str


class Journal:
    """The journal directory of one system root."""

    def __init__(self, host: Host, state_dir: str) -> None:
        self.host = host
        self.dir = host.sys_path(state_dir.rstrip("/") + "/" + SUBDIR)

    def _path(self, entry_id: str, ext: str) -> str:
        return "%s/%s.%s" % (self.dir, entry_id, ext)

    def ids(self) -> List[str]:
        if not self.host.exists(self.dir):
            return []
        return sorted(m.group(1) for m in
                      (_ENTRY.match(n) for n in self.host.listdir(self.dir))
                      if m)

    def next_id(self) -> str:
        ids = self.ids()
        return "%06d" % (int(ids[-1]) + 1 if ids else 1)

    def load(self, entry_id: str) -> Entry:
        path = self._path(entry_id, "json")
        try:
            raw = self.host.read_bytes(path, limit=_ENTRY_LIMIT)
        except SdtuneError as e:
            raise SdtuneError("read journal entry", path, e.reason) from e
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise SdtuneError("read journal entry", path, "not JSON") from e
        try:
            entry = Entry.from_json(doc)
        except ValueError as e:
            raise SdtuneError("read journal entry", path, str(e)) from e
        if entry.id != entry_id:
            raise SdtuneError("read journal entry", path, "its id is %s"
                              % entry.id)
        return entry

    def scan(self) -> Tuple[List[Entry], List[BadEntry]]:
        """Every entry, and the files that are not readable entries."""
        good, bad = [], []
        for i in self.ids():
            try:
                good.append(self.load(i))
            except SdtuneError as e:
                bad.append(BadEntry(i, e.obj, e.reason))
        return good, bad

    def entries(self) -> List[Entry]:
        """The readable entries; unreadable ones are left out (scan()
        says which)."""
        return self.scan()[0]

    # Readable by everyone, like sd.conf itself: history, verify, audit
    # and plan are for ordinary users too.
    def save(self, entry: Entry) -> None:
        self.host.mkdirs(self.dir, 0o755)
        self.host.write_atomic(self._path(entry.id, "json"),
                               (json.dumps(entry.to_json(), indent=2) + "\n")
                               .encode("utf-8"), mode=0o644)

    def save_copy(self, entry_id: str, which: str, data: bytes) -> None:
        self.host.mkdirs(self.dir, 0o755)
        self.host.write_atomic(self._path(entry_id, which), data, mode=0o644)

    def _copies(self, entry_id: str) -> List[str]:
        """The names of an entry's saved copies."""
        if not self.host.exists(self.dir):
            return []
        pattern = re.compile(r"^%s\.([0-9]+\.)?(old|new)$" % entry_id)
        return [n for n in self.host.listdir(self.dir) if pattern.match(n)]

    def discard(self, entry_id: str) -> None:
        """Remove what a transaction that never started left behind."""
        for name in self._copies(entry_id) + ["%s.json" % entry_id]:
            path = "%s/%s" % (self.dir, name)
            if self.host.exists(path):
                self.host.remove(path)

    def copy(self, entry_id: str, which: str) -> bytes:
        return self.host.read_bytes(self._path(entry_id, which))

    def has_copy(self, entry_id: str, which: str) -> bool:
        return self.host.exists(self._path(entry_id, which))

    def copy_of(self, entry_id: str, index: int, which: str,
                rec: FileRecord) -> Optional[bytes]:
        """File `index`'s saved bytes on side `which` (None: the file
        does not exist on that side), checked against its checksum."""
        sha = rec.old_sha256 if which == "old" else rec.new_sha256
        if sha is None:
            return None
        ext = which if index == 0 else "%d.%s" % (index, which)
        data = self.copy(entry_id, ext)
        if sha256(data) != sha:
            raise SdtuneError("read journal copy", self._path(entry_id, ext),
                              "it does not match the journal's checksum")
        return data

    def copies_intact(self, entry: "Entry", which: str) -> Optional[str]:
        """Why the entry's copies on side `which` cannot be used, or
        None when every one is there and matches."""
        for i, rec in enumerate(entry.file_records()):
            ext = which if i == 0 else "%d.%s" % (i, which)
            sha = rec.old_sha256 if which == "old" else rec.new_sha256
            if sha is None:
                continue
            if not self.has_copy(entry.id, ext):
                return "its saved copy was pruned (only the newest " \
                    "generations are kept)"
            if sha256(self.copy(entry.id, ext)) != sha:
                return "the saved copy does not match the journal's checksum"
        return None

    def prune(self, generations: int) -> List[str]:
        """Drop the saved copies of all but the newest `generations`
        finished entries; the entries themselves stay as history."""
        done = [e for e in self.entries() if e.state not in OPEN_STATES]
        dropped = []
        for e in done[:-generations] if generations > 0 else done:
            for name in sorted(self._copies(e.id)):
                self.host.remove("%s/%s" % (self.dir, name))
                dropped.append(name)
        return dropped
