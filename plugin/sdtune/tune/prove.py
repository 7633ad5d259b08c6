# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune prove`: does the kernel now do what was applied, through the
paths ZFS uses?  Writes no byte, so it runs on pool members too.

Per disk, for each tunable its driver can prove (Driver.proves) and
its .conf asks for (Driver.asked):

  physical-block-size  the physical block DKIOCGMEDIAINFOEXT reports
                       (dki_pbsize, which vdev_disk.c makes the ashift)
                       equals the configured size
  cache-nonvolatile    DKIOCFLUSHWRITECACHE through the driver costs
                       microseconds: sd answers it without sending
                       SYNCHRONIZE CACHE.  The rule (flush_ceiling_ns):
                       the median of N timed calls is at most a quarter
                       of the flush cost certify measured on this drive
                       (the record's write + flush minus write), or, when
                       no record measured at least 40 us, at most 10 us.
                       A flush the drive sees costs about what certify
                       measured; one sd answers is a system call.  The
                       4x margin leaves room for a loaded host and a
                       noisy record both ways.
  throttle-max         the throttle sd keeps (un_saved_throttle, as mdb
                       shows it to verify) equals the configured value
  min-phys-block-size  (nvme) dki_pbsize equals the block blkdev must
                       report with the minimum nvme.conf sets

States: "proven" (configured, in effect by verify, every measurement
agrees), "pending reboot" (verify: the disk attached before the .conf
changed), "not in effect" (nothing prove can check is configured for
the disk, or its driver has nothing to prove), "contradicted"
(configured and in effect by verify, but a kernel path shows
otherwise).  The measurements are taken and shown in every state, so
that the numbers before apply stand beside those after.

The sd.conf evaluation and the kernel-state comparison are verify's
(tune/verify.py, drivers/*/verify.py); the ioctls are the engine's
(`sdio prove`, run through the host like certify's runs, so --host
works unchanged); the certified flush cost is the drive's latest record
(records/).  decide() is pure.
"""

import json
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..drivers import for_disk
from ..drivers.base import Driver, NotSupported
from ..driverconf.parser import ConfFile, parse_bytes
from ..drivers.diskstate import DiskState
from ..errors import SdtuneError
from ..host import Host
from ..inventory.disks import Disk, Inventory
from ..records.record import CertRecord
from ..sdconf.tunables import value_text
from .verify import Source, verify_all

STATES = ("proven", "pending reboot", "not in effect", "contradicted")
# The state prove exits 1 for (verify's rule: pending reboot is the
# normal state between apply and reboot, not a problem).
PROBLEMS = ("contradicted",)
# Verify states in which the kernel attached the disk with the .conf it
# reads now, so that what it asks for must be in effect.
IN_EFFECT = ("applied", "ignored by sd", "ignored by nvme",
             "not persistent", "shadowed")

FLUSHES = 64
# A flush sd answers itself is a system call: microseconds.
FLUSH_FLOOR_NS = 10_000
# The margin between what certify measured and what counts as answered
# by the driver.
FLUSH_MARGIN = 4.0
RAW_DIR = "/dev/rdsk"


@dataclass(frozen=True)
class Measured:
    """What `sdio prove` read from one disk; None where it failed."""

    lbsize_bytes: Optional[int] = None
    pbsize_bytes: Optional[int] = None
    flush_calls: int = 0
    flush_median_ns: Optional[int] = None
    flush_p99_ns: Optional[int] = None
    media_error: Optional[str] = None
    flush_error: Optional[str] = None


@dataclass
class Check:
    """One tunable: what was applied (None: not configured), what the
    kernel's path shows, whether they agree (None: nothing to agree
    with), and the numbers, units in their names."""

    tunable: str
    expected: object
    measured: object
    agrees: Optional[bool]
    numbers: Dict[str, object] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict:
        out = {"tunable": self.tunable, "expected": self.expected,
               "measured": self.measured, "agrees": self.agrees}
        out.update(self.numbers)
        out["note"] = self.note
        return out


@dataclass
class Proof:
    name: str
    key: Optional[str]
    state: str
    checks: List[Check] = field(default_factory=list)
    details: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "key": self.key, "state": self.state,
                "checks": [c.to_json() for c in self.checks],
                "details": "; ".join(self.details)}


# -- the engine's answer --------------------------------------------------

def parse_prove(text: str) -> Measured:
    """`sdio prove` output, e.g.::

        {"target": "/dev/rdsk/c1t0d0p0", "media": {"lbsize_bytes": 512,
         "pbsize_bytes": 4096, "capacity_blocks": 1953525168},
         "media_error": null, "flush": {"calls": 64, "median_ns": 1840,
         "p99_ns": 5210, "min_ns": 1702, "max_ns": 5210},
         "flush_error": null, "flush_calls_done": 64}

    ValueError naming the missing or bad field when it is not that (its
    words only: the engine's output is not ours to quote)."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise ValueError("sdio prove: output is not JSON") from None
    if not isinstance(doc, dict) or "media" not in doc or "flush" not in doc:
        raise ValueError("sdio prove: no media or flush in its output")
    media = _part(doc, "media")
    flush = _part(doc, "flush")
    return Measured(
        lbsize_bytes=None if media is None
        else _count(media, "media", "lbsize_bytes"),
        pbsize_bytes=None if media is None
        else _count(media, "media", "pbsize_bytes"),
        flush_calls=0 if flush is None else _count(flush, "flush", "calls"),
        flush_median_ns=None if flush is None
        else _count(flush, "flush", "median_ns"),
        flush_p99_ns=None if flush is None
        else _count(flush, "flush", "p99_ns"),
        media_error=_said_error(doc, "media_error"),
        flush_error=_said_error(doc, "flush_error"))


def _bad(name: str) -> ValueError:
    return ValueError("sdio prove: missing or bad field '%s'" % name)


def _part(doc: dict, name: str) -> Optional[dict]:
    value = doc[name]
    if value is not None and not isinstance(value, dict):
        raise _bad(name)
    return value


def _count(part: dict, where: str, name: str) -> int:
    value = part.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad("%s.%s" % (where, name))
    return value


def _said_error(doc: dict, name: str) -> Optional[str]:
    value = doc.get(name)
    if value is not None and not isinstance(value, str):
        raise _bad(name)
    return value


def measure(host: Host, disk: Disk, flushes: int = FLUSHES) -> Measured:
    """Run `sdio prove` on the disk's whole-disk raw node through the
    host; SdtuneError("prove", disk) when it cannot run or open it."""
    target = host.sys_path("%s/%sp0" % (RAW_DIR, disk.name))
    result = host.run("sdio", ["prove", "--flushes", str(flushes), target],
                      timeout_s=60 + flushes)
    if result.returncode not in (0, 4) or not result.stdout.strip():
        why = result.stderr.strip().splitlines()
        raise SdtuneError("prove", disk.name, "sdio prove failed (exit %d)"
                          "%s" % (result.returncode,
                                  ": " + why[-1][:300] if why else ""))
    try:
        return parse_prove(result.stdout)
    except ValueError as e:
        raise SdtuneError("prove", disk.name, str(e)) from None


# -- the certified flush cost ---------------------------------------------

def certified_flush_ns(disk: Disk, records: Sequence[CertRecord]
                       ) -> Optional[float]:
    """What a flush cost the drive when certify measured it: write +
    flush minus write, from the latest record of this unit (its serial),
    else of its model (its key); None when no record measured it.  A
    record of another key is never the disk's, whatever its serial."""
    def cost(rec: CertRecord) -> Optional[float]:
        ev = rec.evidence.get("cache") if isinstance(rec.evidence, dict) \
            else None
        if not isinstance(ev, dict):
            return None
        w, wf = ev.get("write_lat_ns"), ev.get("write_flush_lat_ns")
        if not isinstance(w, (int, float)) or \
                not isinstance(wf, (int, float)):
            return None
        return float(wf) - float(w)
    ordered = sorted(records, key=lambda r: r.time, reverse=True)
    ordered = [r for r in ordered if disk.key is not None and
               r.key == disk.key]
    for same in (lambda r: disk.serial is not None and
                 r.unit_serial == disk.serial, lambda r: True):
        for rec in ordered:
            if same(rec) and cost(rec) is not None:
                return cost(rec)
    return None


def flush_ceiling_ns(certified: Optional[float]) -> float:
    """The slowest median flush that counts as answered by the driver."""
    if certified is not None and certified >= FLUSH_MARGIN * FLUSH_FLOOR_NS:
        return certified / FLUSH_MARGIN
    return float(FLUSH_FLOOR_NS)


# -- the decision ---------------------------------------------------------

def _true(value: Optional[str]) -> Optional[bool]:
    if value is None:
        return None
    return value.strip().lower() in ("true", "on", "1")


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value, 0) if value is not None else None
    except ValueError:
        return None


def checks_of(asked: Mapping[str, str], provable: Sequence[str],
              m: Measured, certified: Optional[float],
              throttle: Optional[int]) -> List[Check]:
    """One check per tunable the driver can prove, configured or not."""
    out = []
    # The block the kernel reports: sd's physical-block-size, or (nvme)
    # the block blkdev must report with the minimum nvme.conf sets
    # (drivers/nvme/verify.asked).
    for tunable, source in (
            ("physical-block-size", "DKIOCGMEDIAINFOEXT dki_pbsize"),
            ("min-phys-block-size", "DKIOCGMEDIAINFOEXT dki_pbsize "
             "(blkdev: the best LBA format raised to the minimum)")):
        if tunable not in provable:
            continue
        want = _int(asked.get(tunable))
        out.append(Check(
            tunable, want, m.pbsize_bytes,
            None if want is None or m.pbsize_bytes is None
            else m.pbsize_bytes == want,
            {"expected_bytes": want, "pbsize_bytes": m.pbsize_bytes,
             "lbsize_bytes": m.lbsize_bytes},
            "DKIOCGMEDIAINFOEXT failed: %s" % m.media_error
            if m.media_error else source))
    if "cache-nonvolatile" in provable:
        want_b = _true(asked.get("cache-nonvolatile"))
        ceiling = flush_ceiling_ns(certified)
        answered = None if m.flush_median_ns is None else \
            m.flush_median_ns <= ceiling
        if want_b is None or answered is None:
            agrees = None
        else:
            agrees = answered == want_b
        out.append(Check(
            "cache-nonvolatile", want_b,
            None if answered is None else answered, agrees,
            {"flush_calls": m.flush_calls,
             "flush_median_ns": m.flush_median_ns,
             "flush_p99_ns": m.flush_p99_ns,
             "certified_flush_ns": None if certified is None
             else round(certified),
             "ceiling_ns": round(ceiling)},
            "DKIOCFLUSHWRITECACHE failed: %s" % m.flush_error
            if m.flush_error else
            "answered by the driver when the median is at most %s"
            % ("a quarter of the certified flush cost"
               if ceiling != FLUSH_FLOOR_NS else "10 us (no certified "
               "flush cost of 40 us or more)")))
    if "throttle-max" in provable:
        want = _int(asked.get("throttle-max"))
        out.append(Check(
            "throttle-max", want, throttle,
            None if want is None or throttle is None else throttle == want,
            {"expected_throttle": want, "kernel_throttle": throttle},
            "un_saved_throttle (mdb)"))
    return out


def decide(verified: DiskState, asked: Mapping[str, str],
           checks: List[Check]) -> Proof:
    """The disk's state from verify's and the checks (pure)."""
    configured = [c for c in checks if c.expected is not None]
    p = Proof(verified.name, verified.key, "", checks)
    if not configured:
        p.state = "not in effect"
        p.details = ["nothing prove can check is configured for it"]
        if verified.details and verified.state != "applied":
            p.details.append("verify: %s" % verified.state)
        return p
    if verified.state == "pending reboot":
        p.state = "pending reboot"
        p.details = list(verified.details)
        return p
    wrong = [c for c in configured if c.agrees is False]
    unmeasured = [c for c in configured if c.agrees is None]
    if verified.state in IN_EFFECT and not wrong and not unmeasured:
        p.state = "proven"
        return p
    if verified.state in IN_EFFECT:
        p.state = "contradicted"
        p.details = ["%s: %s" % (c.tunable, _said(c)) for c in wrong] + \
            ["%s: not measured: %s" % (c.tunable, c.note)
             for c in unmeasured]
        return p
    p.state = "not in effect"
    p.details = ["verify: %s" % verified.state] + list(verified.details)
    return p


def _said(c: Check) -> str:
    if c.tunable == "cache-nonvolatile":
        return ("flushes reach the drive: median %s ns, more than the "
                "%s ns ceiling" % (c.numbers.get("flush_median_ns"),
                                   c.numbers.get("ceiling_ns"))
                if c.expected else "flushes are answered by the driver")
    return "kernel %s, applied %s" % (c.measured, c.expected)


# -- every disk -----------------------------------------------------------

def prove_all(host: Host, flavour: str, sources: Mapping[str, Source],
              inv: Inventory, names: Sequence[str],
              records: Sequence[CertRecord], flushes: int = FLUSHES
              ) -> Tuple[List[Proof], List[str]]:
    """Proofs of the named disks (none: every disk), and one error line
    per disk that could not be proven ("cannot prove 'NAME': why")."""
    states = {s.name: s for s in verify_all(host, flavour, sources, inv)}
    disks = {d.name: d for d in inv.disks}
    errors = ["cannot prove '%s': no such disk" % n for n in names
              if n not in disks]
    chosen = [disks[n] for n in names if n in disks] if names \
        else list(inv.disks)
    proofs = []
    confs: Dict[str, ConfFile] = {}

    def conf_of(driver: Driver) -> ConfFile:
        # The .conf the kernel reads, as verify reads it (checker()).
        if driver.name not in confs:
            source = sources[driver.name]
            platform = source() if callable(source) else source
            confs[driver.name] = parse_bytes(platform.base_text())
        return confs[driver.name]

    for disk in chosen:
        verified = states[disk.name]
        if verified.state == "unknown":
            errors.append("cannot prove '%s': %s"
                          % (disk.name, "; ".join(verified.details)))
            continue
        driver = for_disk(disk)
        if driver is None or driver.name not in sources:
            proofs.append(Proof(disk.name, disk.key, "not in effect", [],
                                ["attached by %s: nothing to prove"
                                 % disk.driver]))
            continue
        try:
            asked = driver.asked(conf_of(driver), disk, flavour)
        except NotSupported as e:
            proofs.append(Proof(disk.name, disk.key, "not in effect", [],
                                [e.reason]))
            continue
        try:
            m = measure(host, disk, flushes)
        except SdtuneError as e:
            errors.append("cannot prove '%s': %s" % (disk.name, e.reason))
            continue
        checks = checks_of(asked, sorted(driver.proves), m,
                           certified_flush_ns(disk, records),
                           disk.kernel_values.get("un_saved_throttle"))
        proofs.append(decide(verified, asked, checks))
    return proofs, errors


# -- the last proof, kept for the report ----------------------------------

# The last `sdtune prove` run's proofs, in the state directory, for
# `sdtune report` (which draws from what is stored, and runs nothing).
PROOFS_NAME = "prove.json"
PROOFS_VERSION = 1
PROOFS_LIMIT = 4 << 20


def proofs_path(host: Host, state_dir: str) -> str:
    return host.sys_path(state_dir.rstrip("/") + "/" + PROOFS_NAME)


def save_proofs(host: Host, state_dir: str, proofs: Sequence[Proof],
                time_iso: str) -> None:
    """Keep this run's proofs (replacing the last run's, all or
    nothing): {"version", "time", "disks": [Proof.to_json()]}."""
    host.mkdirs(host.sys_path(state_dir))
    doc = {"version": PROOFS_VERSION, "time": time_iso,
           "disks": [p.to_json() for p in proofs]}
    host.write_atomic(proofs_path(host, state_dir),
                      (json.dumps(doc, indent=1) + "\n").encode("utf-8"),
                      mode=0o644)


def load_proofs(host: Host, state_dir: str
                ) -> Tuple[Optional[List[Dict[str, object]]], Optional[str]]:
    """The last run's proofs as the report's rows ({"disk", "state",
    "details", "proved"}), or (None, why not) when there is none or it
    cannot be read (a report is still made without them)."""
    path = proofs_path(host, state_dir)
    if not host.exists(path):
        return None, None
    try:
        doc = json.loads(host.read_bytes(path, limit=PROOFS_LIMIT)
                         .decode("utf-8"))
    except SdtuneError as e:
        return None, "cannot read '%s': %s" % (path, e.reason)
    except (UnicodeDecodeError, ValueError):
        return None, "'%s' is not a proof sdtune wrote: not JSON" % path
    try:
        if doc["version"] != PROOFS_VERSION:
            raise ValueError
        rows = [{"disk": str(d["name"]), "state": str(d["state"]),
                 "details": "; ".join(
                     [check_text(c) for c in d["checks"]] +
                     ([str(d["details"])] if d.get("details") else [])),
                 "proved": str(doc["time"])} for d in doc["disks"]]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None, "'%s' is not a proof sdtune wrote" % path
    return rows, None


def _us(ns: object) -> str:
    return "%.3g us" % (ns / 1000.0) \
        if isinstance(ns, (int, float)) and not isinstance(ns, bool) \
        else "-"


def check_text(c: Mapping[str, object]) -> str:
    """One check of a stored proof in words, with its numbers."""
    name = c.get("tunable")
    applied = "not configured" if c.get("expected") is None \
        else "applied %s" % value_text(c.get("expected"))
    if name == "cache-nonvolatile":
        seen = "flush median %s, p99 %s (certified %s, ceiling %s)" % (
            _us(c.get("flush_median_ns")), _us(c.get("flush_p99_ns")),
            _us(c.get("certified_flush_ns")), _us(c.get("ceiling_ns")))
    else:
        seen = "kernel %s" % value_text(c.get("measured"))
    agrees = c.get("agrees")
    verdict = "" if agrees is None else \
        ": agrees" if agrees else ": disagrees"
    return "%s %s, %s%s" % (name, applied, seen, verdict)
