# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The known-drives table (conf/known-drives.tsv): drives whose physical
sector size or cache kind is known from OpenZFS, FreeBSD, illumos,
SmartOS and smartmontools tables and vendor documents, each row with
its source.

The cache column says yes (a power-loss-protected, non-volatile write
cache), no (volatile), data-at-rest (the vendor protects only data
already in flash: the write cache is volatile, whatever a list of
"power-loss protected" drives says) or - (unknown).

Matching follows each row's kind: the exact 24-byte INQUIRY key, a
prefix of it or a *substring* of the product id (sd's own rules, via
sdconf.match), or a glob / regular expression over the full ATA model
of a SATA disk.  Every row is checked when the table is read: a bad
row is an error naming the file and line, never a row that silently
matches nothing.  Reads the table through the host; pure otherwise.
"""

import fnmatch
import re
from dataclasses import dataclass
from typing import List, Optional

from . import layout
from .errors import EXIT_FAILED, EXIT_USAGE, SdtuneError
from .host import Host
from .sdconf.match import Identity, key_matches
from .sdconf.tunables import canonical_value


@dataclass(frozen=True)
class KnownDrive:
    match: str
    pattern: str
    physical_block: Optional[int]
    nonvolatile: Optional[bool]
    vendor: str
    source: str
    # The vendor's power-loss protection covers data at rest only: the
    # write cache is volatile (nonvolatile is then False).
    data_at_rest: bool = False

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
            # The prefix test first: most rows fail it, and fnmatch
            # compiles a regular expression for every pattern it sees
            # (some 140 rows, 7 ms a disk).
            return ata_model.startswith(_glob_prefix(self.pattern)) and \
                fnmatch.fnmatchcase(ata_model, self.pattern)
        if self.match == "ata-regex":
            return re.fullmatch(self.pattern, ata_model) is not None
        return False


def _glob_prefix(pattern: str) -> str:
    """What every name a glob matches starts with: its characters before
    the first wildcard (fnmatch has no escape character)."""
    for i, ch in enumerate(pattern):
        if ch in "*?[":
            return pattern[:i]
    return pattern


def default_table_path() -> str:
    return layout.conf_file("known-drives.tsv")


MATCH_KINDS = ("inquiry", "inquiry-prefix", "pid-substring", "ata-glob",
               "ata-regex")
HEADER = ("match", "pattern", "physical_block_bytes", "nonvolatile_cache",
          "vendor", "source")
UNKNOWN = ("-", "")
NV_VALUES = ("yes", "no", "data-at-rest")


def _row_problem(kind: str, pattern: str, pbs: str, nv: str
                 ) -> Optional[str]:
    """Why a row cannot be used, or None: a bad row must not silently
    match nothing, nor crash the lookup later."""
    if kind not in MATCH_KINDS:
        return "match '%s' is not one of %s" % (kind, ", ".join(MATCH_KINDS))
    if not pattern:
        return "empty pattern"
    if kind == "ata-regex":
        try:
            re.compile(pattern)
        except re.error:
            return "pattern '%s' is not a regular expression" % pattern
    if pbs not in UNKNOWN:
        why = canonical_value("physical-block-size", pbs)[1] \
            if pbs.isascii() and pbs.isdigit() else "must be a number"
        if why:
            return "physical_block_bytes '%s': %s" % (pbs, why)
    if nv not in UNKNOWN + NV_VALUES:
        return "nonvolatile_cache '%s': must be yes, no, data-at-rest or -" \
            % nv
    return None


def parse_table(text: str, path: str = "known-drives.tsv",
                exit_code: Optional[int] = None) -> List[KnownDrive]:
    """The rows of the table; SdtuneError naming ``path`` and the line
    (with ``exit_code``) for anything that is not a valid row."""
    def bad(n: int, why: str) -> SdtuneError:
        return SdtuneError("read", path, "line %d: %s" % (n, why), exit_code)

    rows = []
    header_seen = False
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if fields[:2] != list(HEADER[:2]):
                raise bad(n, "no header line (%s, separated by TABs)"
                          % ", ".join(HEADER))
            header_seen = True
            continue
        if len(fields) != len(HEADER):
            raise bad(n, "%d fields, expected %d" % (len(fields),
                                                     len(HEADER)))
        kind, pattern, pbs, nv, vendor, source = fields
        why = _row_problem(kind, pattern, pbs, nv)
        if why:
            raise bad(n, why)
        rows.append(KnownDrive(kind, pattern,
                               None if pbs in UNKNOWN else int(pbs),
                               {"yes": True, "no": False,
                                "data-at-rest": False}.get(nv),
                               vendor, source, nv == "data-at-rest"))
    if not header_seen:
        raise SdtuneError("read", path, "no header line (%s, separated by "
                          "TABs)" % ", ".join(HEADER), exit_code)
    return rows


def load_table(host: Host, path: Optional[str] = None) -> List[KnownDrive]:
    """The table at ``path`` ([data] known_drives), or the shipped one.

    A configured file with bad content is a configuration error (exit
    2); a bad shipped table is a broken installation (exit 4)."""
    exit_code = EXIT_USAGE if path else EXIT_FAILED
    path = path or default_table_path()
    data = host.read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SdtuneError("read", path, "line %d: not UTF-8 text"
                          % (data.count(b"\n", 0, e.start) + 1),
                          exit_code) from e
    return parse_table(text, path, exit_code)


def lookup(table: List[KnownDrive], ident: Identity,
           ata_model: Optional[str]) -> List[KnownDrive]:
    return [row for row in table if row.applies(ident, ata_model)]
