"""The known-drives table (conf/known-drives.tsv): drives whose physical
sector size or cache kind is known from OpenZFS, FreeBSD, illumos,
SmartOS and smartmontools tables, each row with its source.

Matching follows each row's kind: the exact 24-byte INQUIRY key, a
prefix of it or a *substring* of the product id (sd's own rules, via
sdconf.match), or a glob / regular expression over the full ATA model
of a SATA disk.  Reads the table through the host; pure otherwise.
"""

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import List, Optional

from .errors import SdtuneError
from .host import Host
from .sdconf.match import Identity, key_matches


@dataclass(frozen=True)
class KnownDrive:
    match: str
    pattern: str
    physical_block: Optional[int]
    nonvolatile: Optional[bool]
    vendor: str
    source: str

    def applies(self, ident: Identity, ata_model: Optional[str]) -> bool:
        if self.match == "inquiry":
            return ident.key.lower() == self.pattern.lower()
        if self.match == "inquiry-prefix":
            return key_matches(self.pattern, ident)
        if self.match == "pid-substring":
            return key_matches(self.pattern, ident)
        if ata_model is None:
            return False
        if self.match == "ata-glob":
            return fnmatch.fnmatchcase(ata_model, self.pattern)
        if self.match == "ata-regex":
            return re.fullmatch(self.pattern, ata_model) is not None
        return False


def default_table_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "conf",
                                         "known-drives.tsv"))


def parse_table(text: str, path: str = "known-drives.tsv") -> List[KnownDrive]:
    rows = []
    header_seen = False
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if fields[:2] != ["match", "pattern"]:
                raise SdtuneError("read", path, "line %d: no header" % n)
            header_seen = True
            continue
        if len(fields) != 6:
            raise SdtuneError("read", path, "line %d: %d fields, expected 6"
                              % (n, len(fields)))
        kind, pattern, pbs, nv, vendor, source = fields
        rows.append(KnownDrive(kind, pattern,
                               int(pbs) if pbs.isdigit() else None,
                               {"yes": True, "no": False}.get(nv),
                               vendor, source))
    return rows


def load_table(host: Host, path: Optional[str] = None) -> List[KnownDrive]:
    path = path or default_table_path()
    return parse_table(host.read_bytes(path).decode("utf-8"), path)


def lookup(table: List[KnownDrive], ident: Identity,
           ata_model: Optional[str]) -> List[KnownDrive]:
    return [row for row in table if row.applies(ident, ata_model)]
