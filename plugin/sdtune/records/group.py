# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""How records are grouped, chosen and named in a reason: the latest
record of each certified unit (per key, or of one model), the records of
the drives an operator names, the model a record names, the firmware it
measured and when (and where) it was made.  Pure.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import EXIT_PROBLEMS, SdtuneError
from .record import CertRecord


def latest(records: List[CertRecord]) -> List[CertRecord]:
    """The latest record of each certified serial, oldest first.  A
    record without a serial stands for itself."""
    by_unit: Dict[object, CertRecord] = {}
    for i, rec in enumerate(sorted(records, key=lambda r: r.time)):
        by_unit[rec.unit_serial or ("#", i)] = rec
    return sorted(by_unit.values(), key=lambda r: r.time)


def named(records: List[CertRecord], words: Sequence[str]
          ) -> Tuple[List[CertRecord], List[str]]:
    """The records of the drives `words` name (a target as certify was
    given it, a key with or without its trailing blanks, a serial or a
    model), oldest first, and the words that name none."""
    def names(rec: CertRecord) -> List[str]:
        return [n for n in (rec.target, rec.key, (rec.key or "").rstrip(),
                            rec.unit_serial, (rec.model or "").rstrip())
                if n]
    chosen = [r for r in records if any(w in names(r) for w in words)]
    unmatched = [w for w in words
                 if not any(w in names(r) for r in records)]
    return sorted(chosen, key=lambda r: r.time), unmatched


def named_or_refused(records: List[CertRecord], words: Sequence[str],
                     verb: str) -> List[CertRecord]:
    """named()'s records; the first word that names none is an error
    (exit 1) in the words of the command (``verb``: "show the records
    of", "report on") and of every command that selects by name."""
    chosen, unknown = named(records, words)
    if unknown:
        raise SdtuneError(verb, unknown[0], "no certification record "
                          "names it (sdtune results lists them)",
                          EXIT_PROBLEMS)
    return chosen


def latest_by_serial(records: List[CertRecord]
                     ) -> Dict[str, List[CertRecord]]:
    """Key -> latest() of the records of that key; records without a key
    are left out."""
    by_key: Dict[str, List[CertRecord]] = {}
    for rec in records:
        if rec.key:
            by_key.setdefault(rec.key, []).append(rec)
    return {k: latest(v) for k, v in by_key.items()}


def record_model(rec: CertRecord) -> Optional[str]:
    """The model a record names, when it names one (newer records)."""
    return (rec.model.strip() or None) if isinstance(rec.model, str) \
        else None


def measured_firmware(rec: CertRecord) -> str:
    """What a record says of the firmware it measured, for a reason: a
    record that names none is of an unknown firmware, held like one of
    another (adversarial report 2026-11-27, F3)."""
    fw = (rec.firmware or "").strip()
    return "firmware " + fw if fw else "a firmware it does not name"


def certified_when(rec: CertRecord) -> str:
    """When a record was made and, for one another appliance exported,
    where: every reason that rests on a record says it."""
    host = rec.origin_host
    if host is None:
        return rec.time_iso or "?"
    return "%s imported from %s" % (rec.time_iso or "?", host)
