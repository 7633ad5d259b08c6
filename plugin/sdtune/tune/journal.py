"""The journal of sd.conf changes: every change is described before it is
made, and rollback reads only the journal and its saved copies (DESIGN.md
seam 7).

Layout under <state_dir>/journal/:

  NNNNNN.json   one entry per transaction, rewritten atomically as its
                state advances: prepared -> written -> done, or failed /
                undone / recovered
  NNNNNN.old    the sd.conf bytes before the change (saved before it)
  NNNNNN.new    the sd.conf bytes the change writes

All reads and writes go through the host.  Pure otherwise.
"""

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

from ..errors import SdtuneError
from ..host import Host

SUBDIR = "journal"
OPEN_STATES = ("prepared", "written")
_ENTRY = re.compile(r"^([0-9]{6})\.json$")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Entry:
    id: str
    time: float
    user: str
    action: str                 # apply, rollback
    state: str                  # prepared, written, done, failed, undone,
    #                             recovered
    sd_conf: str                # system path, e.g. /kernel/drv/sd.conf
    old_sha256: str
    new_sha256: str
    diff: str = ""
    summary: List[str] = field(default_factory=list)
    rollback_of: Optional[str] = None
    update_drv: Dict[str, object] = field(default_factory=dict)
    verify: List[Dict[str, object]] = field(default_factory=list)
    result: str = ""
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


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
            doc = json.loads(self.host.read_bytes(path))
            return Entry(**doc)
        except (ValueError, TypeError) as e:
            raise SdtuneError("read journal entry", path, str(e)) from e

    def entries(self) -> List[Entry]:
        return [self.load(i) for i in self.ids()]

    def save(self, entry: Entry) -> None:
        self.host.mkdirs(self.dir, 0o700)
        self.host.write_atomic(self._path(entry.id, "json"),
                               (json.dumps(entry.to_json(), indent=2) + "\n")
                               .encode("utf-8"), mode=0o600)

    def save_copy(self, entry_id: str, which: str, data: bytes) -> None:
        self.host.mkdirs(self.dir, 0o700)
        self.host.write_atomic(self._path(entry_id, which), data, mode=0o600)

    def copy(self, entry_id: str, which: str) -> bytes:
        return self.host.read_bytes(self._path(entry_id, which))

    def has_copy(self, entry_id: str, which: str) -> bool:
        return self.host.exists(self._path(entry_id, which))

    def prune(self, generations: int) -> List[str]:
        """Drop the saved copies of all but the newest `generations`
        finished entries; the entries themselves stay as history."""
        done = [e for e in self.entries() if e.state not in OPEN_STATES]
        dropped = []
        for e in done[:-generations] if generations > 0 else done:
            for which in ("old", "new"):
                if self.has_copy(e.id, which):
                    self.host.remove(self._path(e.id, which))
                    dropped.append("%s.%s" % (e.id, which))
        return dropped
