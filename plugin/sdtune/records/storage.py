# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Where certification records are kept: one JSON file per drive model,
serial and firmware under <state_dir>/certify/, written atomically
through the host; reading them back checks each (record.py), and a file
that is not a record is reported, naming it, while the others stay
usable.
"""

import json
import os
import re
from dataclasses import replace
from typing import List, Optional, Tuple

from ..errors import SdtuneError
from ..host import Host
from .powercuts import PowerCut
from .record import CertRecord, outside_sd, parse_record

SUBDIR = "certify"


def record_name(key: Optional[str], serial: Optional[str],
                firmware: Optional[str], target: str,
                driver: Optional[str] = None,
                model: Optional[str] = None) -> str:
    """A file name that keeps the three identifying fields readable: the
    key (or, for a disk outside sd, its driver and model), serial and
    firmware; a file target's path."""
    def safe(text: Optional[str]) -> str:
        return re.sub(r"[^A-Za-z0-9.-]+", "_", (text or "").strip()) or "-"
    if outside_sd(key, driver):
        # No sd-config-list key (no INQUIRY): the driver's name keeps
        # these apart from key and path records.
        return "%s--%s--%s--%s.json" % (safe(driver), safe(model),
                                        safe(serial), safe(firmware))
    if key is None:
        return "path--%s.json" % safe(target)
    return "%s--%s--%s.json" % (safe(key), safe(serial), safe(firmware))


def records_dir(host: Host, state_dir: str) -> str:
    """The directory of the records, as a path on the host."""
    return host.sys_path(state_dir.rstrip("/") + "/" + SUBDIR)


def check_storable(host: Host, state_dir: str) -> str:
    """Create the records directory and write and remove a probe file in
    it, so that a certification never destroys a target's data only to
    find that its result cannot be kept.  Raises SdtuneError naming the
    directory (exit 4, or 3 where the host refused for safety, e.g. a
    symbolic link on the way); returns the directory."""
    directory = records_dir(host, state_dir)
    # Not a *.json name: a probe left by a crash is never read as a
    # record.  One per process: two certify runs must not remove each
    # other's probe.
    probe = "%s/.sdtune-probe.%d" % (directory, os.getpid())
    try:
        host.mkdirs(directory)
        host.write_atomic(probe, b"")
        host.remove(probe)
    except SdtuneError as e:
        raise SdtuneError("store certification records in", directory,
                          "%s; nothing was written to the targets"
                          % e.reason, e.exit_code) from e
    return directory


def _path_of(host: Host, state_dir: str, record: CertRecord) -> str:
    """Where the record of ``record``'s drive and firmware is kept (its
    directory created)."""
    directory = records_dir(host, state_dir)
    host.mkdirs(directory)
    return directory + "/" + record_name(record.key, record.serial,
                                         record.firmware,
                                         record.target or "",
                                         record.driver, record.model)


def _write(host: Host, path: str, record: CertRecord) -> str:
    host.write_atomic(path, (json.dumps(record.to_json(), indent=2) + "\n")
                      .encode("utf-8"))
    return path


def store(host: Host, state_dir: str, record: CertRecord) -> str:
    path = _path_of(host, state_dir, record)
    return _write(host, path, _with_earlier_cuts(host, path, record))


def add_power_cut(host: Host, state_dir: str, base: CertRecord,
                  cut: PowerCut) -> str:
    """Add a witnessed cut to the record of ``base``'s drive and
    firmware: the stored one when there is one (its verdicts and cuts
    kept), else ``base``.  The path written."""
    path = _path_of(host, state_dir, base)
    record = base
    if host.exists(path):
        stored, why = parse_record(host.read_bytes(path))
        if stored is None:
            raise SdtuneError("store the power cut in", path, "not a "
                              "certification record (%s): move it away "
                              "and run --verify again" % why)
        record = replace(stored, stored=None)
    # The stored record read here already holds the earlier cuts: no
    # second read of it (store's merge) is needed.
    return _write(host, path, replace(
        record, power_cuts=list(record.power_cuts) + [cut]))


def _with_earlier_cuts(host: Host, path: str, record: CertRecord
                       ) -> CertRecord:
    """The record with the witnessed power cuts of the record it replaces
    (the same drive and firmware): cuts accumulate, and a certification
    run after a power-cut check must not forget what the cut showed.  A
    file that is not a readable record has none to keep."""
    if not host.exists(path):
        return record
    try:
        old, _ = parse_record(host.read_bytes(path))
    except SdtuneError:
        return record
    if old is None or not old.power_cuts:
        return record
    runs = {c.run for c in record.power_cuts}
    cuts = sorted([c for c in old.power_cuts if c.run not in runs] +
                  list(record.power_cuts), key=lambda c: c.time)
    return replace(record, power_cuts=cuts)


def load_checked(host: Host, state_dir: str
                 ) -> Tuple[List[CertRecord], List[str]]:
    """The usable records, sorted by key and time, and one problem text
    per file that is not used ("<path>: not a certification record:
    <why>; ignored").  Writes nothing: callers print the problems, each
    as ``sdtune: warning: <problem>``.  A records directory that cannot
    be listed is an error (HostError, exit 4)."""
    directory = records_dir(host, state_dir)
    if not host.exists(directory):
        return [], []
    records, problems = [], []
    for name in host.listdir(directory):
        if not name.endswith(".json"):
            continue
        path = directory + "/" + name
        try:
            data = host.read_bytes(path)
        except SdtuneError as e:
            problems.append("%s: not readable: %s; ignored"
                            % (path, e.reason))
            continue
        record, why = parse_record(data)
        if record is None:
            problems.append("%s: not a certification record: %s; ignored"
                            % (path, why))
            continue
        records.append(record)
    records.sort(key=lambda r: (r.key or "", r.time))
    return records, problems
