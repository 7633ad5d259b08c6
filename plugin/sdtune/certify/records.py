"""Certification records: one JSON file per drive model, serial and
firmware under <state_dir>/certify/, written atomically through the host.
"""

import json
import re
from typing import List, Optional

from ..errors import SdtuneError
from ..host import Host

SUBDIR = "certify"


def record_name(key: Optional[str], serial: Optional[str],
                firmware: Optional[str], target: str) -> str:
    """A file name that keeps the three identifying fields readable."""
    def safe(text: Optional[str]) -> str:
        return re.sub(r"[^A-Za-z0-9.-]+", "_", (text or "").strip()) or "-"
    if key is None:
        return "path--%s.json" % safe(target)
    return "%s--%s--%s.json" % (safe(key), safe(serial), safe(firmware))


def store(host: Host, state_dir: str, record: dict) -> str:
    directory = host.sys_path(state_dir.rstrip("/") + "/" + SUBDIR)
    host.mkdirs(directory)
    path = directory + "/" + record_name(record.get("key"),
                                         record.get("serial"),
                                         record.get("firmware"),
                                         record.get("target", ""))
    host.write_atomic(path, (json.dumps(record, indent=2) + "\n")
                      .encode("utf-8"))
    return path


def load_all(host: Host, state_dir: str) -> List[dict]:
    directory = host.sys_path(state_dir.rstrip("/") + "/" + SUBDIR)
    if not host.exists(directory):
        return []
    records = []
    for name in host.listdir(directory):
        if not name.endswith(".json"):
            continue
        path = directory + "/" + name
        try:
            records.append(json.loads(host.read_bytes(path)))
        except ValueError as e:
            raise SdtuneError("read", path, "not a certification record: %s"
                              % e) from e
    records.sort(key=lambda r: (r.get("key") or "", r.get("time", 0)))
    return records
