# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What `sdtune certify` and `sdtune infer` do, apart from printing.

certify measures each target with sdio (destroying its data), decides
native sector size, cache and queue depth, measures what each tunable it
recommends buys (gains.py) and builds the record that is stored.
Safety comes first and is settled for ALL targets before the first
write (prepare): every target needs its own `--confirm`, a disk
that is in use, or whose state cannot be determined, is refused (exit
3), the path written is the path checked, and the records directory
must be writable.  infer builds the same record from vdbench or fio
output.

Prints nothing: progress goes to a callback, warnings come back as
text, and render_verdict returns the text of a verdict.
"""

import contextlib
import hashlib
import math
import posixpath
import re
import stat as statmod
import time
from dataclasses import dataclass, replace
from typing import Dict, Iterator, List, Optional, Tuple

from ..errors import (EXIT_FAILED, LockedError, ParseError, RefusedError,
                      SdtuneError, UsageError)
from ..host import Host
from ..inventory.devlinks import DISK_NAME, SLICE
from ..inventory.disks import Disk, Inventory, take_inventory
from ..records import storage
from .charts import gain_chart, queue_latency_lines
from .costs import Costs, IndependentCosts
from .evidence import DeviceEvidence, query_evidence
from .gains import measure_gains
from .importers import Imported, classify, read_benchmark
from .recommend import nvme_queue, recommend, recommend_nvme
from ..records.gains import Gains
from ..records.powercuts import (NOT_MEASURED, POWERCUT_SOURCE,
                                 power_cut_lines)
from ..records.record import CertRecord, QueueDepth
from ..sdconf.tunables import settings_text
from .reports import StepResult
from .runner import (Progress, ProgressEvent, run_paired, run_step,
                     run_steps)
from .workload import (MIN_REGION_BYTES, CertifySettings, Step,
                       build_plan, logical_block_problem, region_for)
from .verdict import (CONFIDENT, CacheVerdict, QueueVerdict, SectorVerdict,
                      decide_cache, decide_queue_depth, decide_sector,
                      flush_timing)

_DEV_NAME = re.compile(r"^(%s)(?:%s)?$" % (DISK_NAME, SLICE))
RAW_DIR = "/dev/rdsk"


@dataclass
class Target:
    arg: str
    device: str                 # path sdio opens
    disk: Optional[Disk]


def _normalized(arg: str) -> str:
    """An absolute path without "//" or "." components.  Pure: a path
    with ".." is refused before this (what ".." means depends on the
    symbolic links on the way)."""
    return "/" + posixpath.normpath(arg).lstrip("/")


def _needs_inventory(targets: List[str]) -> bool:
    return any("/" not in t or _normalized(t).startswith("/dev/")
               for t in targets)


def resolve_targets(host: Host, targets: List[str], confirm: List[str],
                    inventory: Optional[Inventory],
                    verb: str = "certify") -> List[Target]:
    """Check consent and safety for every target; no I/O happens here.

    A target given twice is certified once.  Two different names for one
    disk (c0t1d0 and /dev/rdsk/c0t1d0s0) or one file are a usage error:
    they may name different regions (the whole disk or a slice), and
    guessing which one the operator meant could measure the wrong one.
    Errors name ``verb``, the command that would write.
    """
    for extra in sorted(set(confirm) - set(targets)):
        raise UsageError(verb, extra, "--confirm names a target that "
                         "is not being certified")
    out = []
    seen: Dict[Tuple, str] = {}
    for arg in dict.fromkeys(targets):
        if arg not in confirm:
            raise RefusedError(verb, arg, "certification destroys all "
                               "data on it; repeat the target with "
                               "--confirm %s" % arg)
        target, identity = _resolve(host, arg, inventory, verb)
        if identity in seen:
            raise UsageError(verb, arg, "names the same %s as '%s'; "
                             "give it once" % (identity[0], seen[identity]))
        seen[identity] = arg
        out.append(target)
    return out


def _resolve(host: Host, arg: str, inventory: Optional[Inventory],
             verb: str) -> Tuple[Target, Tuple]:
    """The target, and what it is (("disk", name) or ("file", device,
    inode)) to find two names for the same thing."""
    if "/" not in arg:
        disk = inventory.by_name(arg) if inventory else None
        if disk is None:
            raise UsageError(verb, arg, "no such disk (see sdtune "
                             "disks)")
        _refuse_in_use(verb, arg, disk)
        return (Target(arg, host.sys_path("%s/%sp0" % (RAW_DIR, disk.name)),
                       disk), ("disk", disk.name))
    if ".." in arg.split("/"):
        raise RefusedError(verb, arg, "a path with '..' in it: the "
                           "disk checked for use might not be the one "
                           "written; give the path without '..'")
    if not arg.startswith("/"):
        raise UsageError(verb, arg, "not an absolute path")
    path = _normalized(arg)
    directory, name = posixpath.split(path)
    m = _DEV_NAME.match(name)
    if directory == RAW_DIR and m:
        disk = inventory.by_name(m.group(1)) if inventory else None
        if disk is None:
            raise RefusedError(verb, arg, "not a disk sdtune can check"
                               " for use: in-use state unknown")
        _refuse_in_use(verb, arg, disk)
        # sdio opens exactly the normalized path whose disk was checked.
        device = host.sys_path(path)
        if not host.exists(device):
            raise UsageError(verb, arg, "no such device")
        return Target(arg, device, disk), ("disk", disk.name)
    # A lab target: a plain file (an emulated drive, a scratch file).
    try:
        st = host.stat(path)
    except SdtuneError:
        raise UsageError(verb, arg, "no such file")
    if not statmod.S_ISREG(st.st_mode):
        raise RefusedError(verb, arg, "a device node outside %s: "
                           "in-use state unknown" % RAW_DIR)
    return Target(arg, path, None), ("file", st.st_dev, st.st_ino)


def _refuse_in_use(verb: str, arg: str, disk: Disk) -> None:
    if disk.rejected_reasons:
        raise RefusedError(verb, arg, "in use: %s"
                           % "; ".join(disk.rejected_reasons))


def _device_size(host: Host, target: Target,
                 evidence: DeviceEvidence) -> Tuple[Optional[int], str]:
    """The target's size in bytes and where it came from."""
    if target.disk is not None and target.disk.size_bytes:
        return target.disk.size_bytes, "the inventory"
    if target.disk is None:
        try:
            return host.stat(target.device).st_size, "the file's size"
        except SdtuneError:
            pass
    if evidence.capacity_bytes:
        return evidence.capacity_bytes, "READ CAPACITY(16)"
    return None, ""


def measure_region(host: Host, target: Target, evidence: DeviceEvidence,
                   timing: CertifySettings) -> dict:
    """The region the writes stay in, clamped to the device; a device
    too small (or of unknown size) is refused before any write."""
    size, source = _device_size(host, target, evidence)
    if size is None:
        raise RefusedError("certify", target.arg, "its size is unknown (not"
                           " in the inventory and no READ CAPACITY answer):"
                           " the writes could run past its end")
    region = region_for(size, timing)
    if not region:
        raise RefusedError("certify", target.arg, "%d bytes (%s) is too "
                           "small for a meaningful test: at least %d MiB "
                           "needed" % (size, source, MIN_REGION_BYTES >> 20))
    return {"bytes": region, "device_bytes": size, "size_from": source}


class Certification:
    """One target measured phase by phase (destroying its data), and the
    record its verdicts make.  A phase may be measured again (a shelf
    re-runs a phase measured while the host was the bottleneck): the new
    measurement replaces the old.  ``progress`` is told of every look and
    step."""

    def __init__(self, host: Host, target: Target, timing: CertifySettings,
                 trust_timing: bool, logical_override: Optional[int],
                 progress: Optional[Progress] = None) -> None:
        self.host, self.target, self.timing = host, target, timing
        self.trust_timing = trust_timing
        self.progress = progress
        self.evidence = query_evidence(host, target.device)
        disk = target.disk
        self.logical = logical_override or (
            disk.logical_block_bytes if disk else None) or \
            self.evidence.logical_block or 512
        self.region = measure_region(host, target, self.evidence, timing)
        self.plan = build_plan(self.logical, timing.phases)
        self.suppressed = bool(disk and disk.sd.suppress_cache_flush)
        self.sector: Optional[SectorVerdict] = None
        self.cache_costs: Optional[Costs] = None
        self.qd_steps: List[StepResult] = []
        self.gains: Optional[Gains] = None
        self.phases: Dict[str, dict] = {}

    def phase_names(self) -> List[str]:
        """The phases this target is measured in, in order.  Flush
        timing means nothing where sd already suppresses flushes."""
        names = []
        if self.plan.sector:
            names.append("sector")
        if self.plan.cache and not self.suppressed:
            names.append("cache")
        if self.plan.qd:
            names.append("qd")
        if "gain" in self.timing.phases:
            names.append("gain")
        return names

    def run_phase(self, name: str) -> None:
        """Measure phase ``name`` (again)."""
        host, dev, label = self.host, self.target.device, self.target.arg
        nbytes = self.region["bytes"]
        if name == "sector":
            costs = run_paired(host, dev, label, self.plan.sector,
                               self.timing, nbytes,
                               lambda c: decide_sector(c).confidence,
                               self.progress)
            self.sector = decide_sector(costs)
            self.phases["sector"] = costs.progress()
        elif name == "cache":
            self.cache_costs = run_paired(host, dev, label, self.plan.cache,
                                          self.timing, nbytes,
                                          _flush_confidence, self.progress)
            self.phases["cache"] = self.cache_costs.progress()
        elif name == "gain":
            # What the verdicts so far recommend is what is measured.
            recommended = self._verdicts().recommended
            self.gains = measure_gains(host, dev, label, recommended,
                                       self.logical, self.cache_costs,
                                       self.timing, nbytes, self.progress)
            self.phases["gain"] = {"seconds": self.gains.seconds}
        else:
            t0 = host.monotonic_ns()
            self.qd_steps = run_steps(host, dev, label, self.plan.qd,
                                      self.timing, nbytes, self.progress)
            self.phases["qd"] = {"steps": len(self.plan.qd),
                                 "seconds": round(
                                     (host.monotonic_ns() - t0) / 1e9, 2)}

    def decided(self, name: str) -> bool:
        """Whether phase ``name`` has a verdict that load cannot have
        made: a sector or cache verdict reached with confidence (its
        arms were measured in the same rounds, so load that slows all of
        them alike only lowers the confidence).  The queue-depth knee
        never is: a host that cannot keep up flattens the IOPS curve as
        a drive's own limit does."""
        if name == "sector":
            return self.sector is not None and \
                self.sector.native is not None and \
                self.sector.confidence >= CONFIDENT
        if name == "cache":
            return self._cache().cache != "inconclusive"
        return False

    def _cache(self) -> CacheVerdict:
        return decide_cache(self.cache_costs, self.evidence.nv_sup,
                            self.evidence.wce, self.suppressed,
                            self.trust_timing)

    def probe(self) -> StepResult:
        """A short run of QD1 random writes of one page (PROBE_S): the
        per-I/O cost a shelf compares alone and in the crowd."""
        step = Step("probe", "probe", max(4096, self.logical),
                    pattern="rand", qd=1, rw="write")
        timing = replace(self.timing, step_max_s=PROBE_S,
                         interval_s=PROBE_S / PROBE_INTERVALS,
                         min_intervals=PROBE_INTERVALS - 1,
                         warmup_intervals=1)
        res = run_step(self.host, self.target.device, self.target.arg,
                       step, timing, self.region["bytes"])
        if self.progress is not None:
            self.progress(ProgressEvent("probe", "probe", res.iops, None))
        return res

    def _verdicts(self) -> CertRecord:
        cache = self._cache()
        queue = decide_queue_depth(self.qd_steps,
                                   self.timing.warmup_intervals,
                                   transport_of(self.target.disk))
        return build_record(self.target, self.evidence, self.sector, cache,
                            queue, self.logical, self.host.now())

    def record(self) -> CertRecord:
        """The verdicts of the phases measured, as the record to store,
        with the gains measured for what they recommend (a gain measured
        for a value the final verdicts no longer recommend is dropped:
        it would be the gain of something else)."""
        rec = self._verdicts()
        rec.evidence["region"] = self.region
        rec.evidence["phases"] = self.phases
        if self.gains is not None:
            rec.gains = replace(self.gains, tunables=tuple(
                g for g in self.gains.tunables
                if rec.recommended.get(g.tunable, None) == g.value))
        return rec


# The solo and crowd probe of a shelf (Certification.probe): long enough
# for ten interval means, short beside a phase.
PROBE_S = 0.6
PROBE_INTERVALS = 10


def certify_one(host: Host, target: Target, timing: CertifySettings,
                trust_timing: bool, logical_override: Optional[int],
                progress: Optional[Progress] = None) -> CertRecord:
    """Measure one target (destroying its data) and decide; the record,
    not yet stored."""
    cert = Certification(host, target, timing, trust_timing,
                         logical_override, progress)
    for name in cert.phase_names():
        cert.run_phase(name)
    return cert.record()


def _flush_confidence(costs: Costs) -> float:
    timing = flush_timing(costs, "write", "write-flush", {})
    return timing[1] if timing else 0.0


def transport_of(disk: Optional[Disk]) -> Optional[str]:
    """"sata" for a SATA drive: the SCSI-ATA translation reports the
    vendor "ATA" (facts §4); None when unknown."""
    if disk is not None and (disk.vid or "").strip() == "ATA":
        return "sata"
    return None


def build_record(target: Target, evidence: DeviceEvidence,
                 sector: Optional[SectorVerdict], cache: CacheVerdict,
                 queue: QueueVerdict, logical: int, now: float,
                 source: str = "sdio") -> CertRecord:
    """The verdicts and the record of the target's disk (none for a file
    and for `infer`); shared with `infer`."""
    disk = target.disk
    if sector is None:
        sector = SectorVerdict(None, 0.0, "not measured")
    nvme = disk is not None and disk.driver != "sd" and \
        disk.nvme is not None
    if nvme:
        queue = nvme_queue(queue)
        recommended = recommend_nvme(sector, logical)
    else:
        recommended = recommend(sector, cache, queue, logical,
                                disk is not None and disk.ssd)
    return CertRecord(
        target=target.arg,
        device=target.device,
        key=disk.key if disk else None,
        driver=disk.driver if disk else None,
        model=disk.full_model if disk else None,
        serial=disk.serial if disk else None,
        firmware=disk.firmware if disk else None,
        time=now,
        time_iso=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        source=source,
        logical_block_bytes=logical,
        native_sector_bytes=sector.native,
        sector_confidence=sector.confidence,
        sector_reason=sector.reason,
        cache=cache.cache,
        cache_confidence=cache.confidence,
        cache_reason=cache.reason,
        queue_depth=QueueDepth(knee=queue.knee, knees=queue.knees,
                               throttle_max=queue.throttle_max,
                               throttle_min=queue.throttle_min,
                               confidence=queue.confidence,
                               reason=queue.reason),
        recommended=recommended,
        evidence={"device": evidence.to_json(),
                  "sector": sector.evidence,
                  "sector_scores": {str(k): round(v, 4) for k, v in
                                    sector.candidates.items()},
                  "cache": cache.evidence, "queue_depth": queue.evidence},
    )


def render_verdict(rec: CertRecord) -> str:
    native = rec.native_sector_bytes
    if rec.key:
        ident = ' (key "%s", serial %s, firmware %s)' % (
            rec.key, rec.serial, rec.firmware)
    elif rec.driver:
        # Not under sd: no key to show, the driver and model instead.
        ident = " (%s%s, serial %s, firmware %s)" % (
            rec.driver, ', model "%s"' % rec.model if rec.model else "",
            rec.serial, rec.firmware)
    else:
        ident = ""
    lines = ["%s%s" % (rec.target, ident)]
    if rec.source != POWERCUT_SOURCE:
        lines += ["  native sector: %s (confidence %.2f): %s" % (
                      "%d B" % native if native else "inconclusive",
                      rec.sector_confidence or 0.0, rec.sector_reason),
                  "  cache:         %s (confidence %.2f): %s" % (
                      rec.cache, rec.cache_confidence or 0.0,
                      rec.cache_reason),
                  "  queue depth:   %s" % rec.queue_depth.reason]
        lines += queue_latency_lines(rec)
        lines.append("  recommended:   %s" % (
            settings_text(rec.recommended) or "nothing to change"))
    else:
        # A record of power cuts alone: nothing was measured.
        lines.append("  not certified: %s" % NOT_MEASURED)
    lines += gain_chart(rec, verdict=True)
    lines += power_cut_lines(rec.power_cuts)
    return "\n".join(lines) + "\n"


def result_json(rec: CertRecord) -> dict:
    """The `certify -o json` result object of DESIGN.md (and more)."""
    keys = ("target", "key", "serial", "firmware", "native_sector_bytes",
            "sector_confidence", "cache", "cache_confidence", "queue_depth",
            "recommended", "evidence")
    doc = rec.to_json()
    # A disk's driver and model (a record of a file has neither).
    return {k: doc[k] for k in keys + ("driver", "model", "gains")
            if k in doc}


def prepare(host: Host, state_dir: str, targets: List[str],
            confirm: List[str], logical_block: Optional[int] = None
            ) -> List[Target]:
    """Everything certify checks before the first write to any target:
    the logical block given, the engine, consent and safety for every
    target (resolve_targets), and a records directory that takes a
    file.  The targets to measure, in order."""
    if logical_block is not None:
        why = logical_block_problem(logical_block)
        if why:
            raise UsageError("certify", "--logical-block %d" % logical_block,
                             why)
    if not host.can_run("sdio"):
        raise SdtuneError("certify", " ".join(targets), "the sdio engine "
                          "is not installed (in a source tree: build it "
                          "with 'make engine')")
    inventory = take_inventory(host) if _needs_inventory(targets) else None
    resolved = resolve_targets(host, targets, confirm, inventory)
    # Before the first I/O on any target: its data is destroyed, so the
    # result must have somewhere to go.
    storage.check_storable(host, state_dir)
    return resolved


@contextlib.contextmanager
def targets_locked(host: Host, state_dir: str, targets: List[Target]
                   ) -> Iterator[None]:
    """Hold a lock per target for the length of a certification: two
    certify runs on one disk (or file) would each measure the other's
    I/O, and both verdicts would be wrong (adversarial report
    2026-11-27, F9).  A disk is known by its name whatever the operator
    called it; a file by its normalised path.  LockedError (exit 3) names
    the target another sdtune is certifying; the locks are taken before
    any I/O, in a fixed order, so two shelves cannot deadlock."""
    # Beside the records, not among them: a lock file stays.
    directory = host.sys_path(state_dir.rstrip("/") + "/locks")
    host.mkdirs(directory)
    named = sorted((t.disk.name if t.disk is not None else
                    _normalized(t.device), t.arg) for t in targets)
    with contextlib.ExitStack() as held:
        for identity, arg in named:
            digest = hashlib.sha256(identity.encode("utf-8", "replace")
                                    ).hexdigest()[:20]
            try:
                held.enter_context(host.lock("%s/target-%s"
                                             % (directory, digest)))
            except LockedError as e:
                raise LockedError("certify", arg, "another sdtune process "
                                  "is certifying it") from e
        yield


def certify_origin(host: Host) -> dict:
    """Where records are made here: this appliance's node name and
    platform, the sdtune and sdio versions (CertRecord.origin);
    an unknown part is null."""
    from .travel import local_origin
    return local_origin(host)


def store_record(host: Host, state_dir: str, target: Target,
                 rec: CertRecord) -> None:
    try:
        storage.store(host, state_dir, rec)
    except SdtuneError as e:
        # Always exit 4, even for a refusal by the host: the target has
        # been written, so "nothing was changed" (exit 3) would be false.
        raise SdtuneError("store certification record", e.obj,
                          "%s; the verdict of %s (shown) is not stored, so "
                          "plan and audit cannot use it"
                          % (e.reason, target.arg), EXIT_FAILED) from e


# ------------------------------------------------------------------ infer

def import_benchmark(path: str, text: str, fmt: Optional[str]) -> Imported:
    """The runs of vdbench or fio output.  An input that is not a
    measurement is an error naming the file and the field (exit 4, as
    for any output sdtune cannot parse).  The runs it cannot use and
    its notes are in Imported.unused and .notes: the caller says them."""
    try:
        return read_benchmark(text, fmt)
    except ParseError as e:
        raise SdtuneError("parse", path, "%s%s: %s" % (
            e.command, " " + e.field if e.field else "", e.reason)) \
            from None


def infer_record(path: str, imported: Imported,
                 trust_timing: bool = False) -> CertRecord:
    """The certify verdicts from imported runs, never a verdict that
    holds NaN or an infinity (SdtuneError).  The runs that cannot be
    used are named in the record's evidence."""
    fmt, steps = imported.format, imported.steps
    sector_steps, pair, qd = classify(steps)
    # Imported runs were measured one after another, with no warm-up
    # interval to drop beyond what the tool itself excluded.
    sector = decide_sector(IndependentCosts(sector_steps)) \
        if sector_steps else None
    cache = decide_cache(IndependentCosts(pair) if pair else None, None,
                         None, trust_timing=trust_timing,
                         write=pair[0].name if pair else "write",
                         flushed=pair[1].name if pair else "write-flush")
    queue = decide_queue_depth(qd, 0)
    rec = build_record(Target(path, path, None), DeviceEvidence(),
                       sector, cache, queue,
                       min((s.bs for s in sector_steps), default=512),
                       0.0, source="%s:%s" % (fmt, path))
    _explain_cache_steps(rec, pair, steps)
    rec.evidence["import"] = {"format": fmt,
                              "not_used": imported.unused,
                              "notes": imported.notes}
    _require_finite(path, rec.to_json())
    return rec


def _explain_cache_steps(rec: CertRecord,
                         pair: Optional[Tuple[StepResult, StepResult]],
                         steps: List[StepResult]) -> None:
    """Name the imported runs the cache verdict compared, or say why a
    run that flushed could not be used."""
    if pair is not None:
        rec.evidence["cache"]["steps"] = {
            role: dict(step.evidence(0), name=step.name)
            for role, step in zip(("write", "write-flush"), pair)}
        return
    untimed = [s.name for s in steps if not s.flush_timed]
    if untimed:
        rec.cache_reason = (rec.cache_reason or "") + (
            "; %s flushes after each write, but this fio output does not "
            "time the fsyncs (fio 3.4 and later report them in a \"sync\" "
            "section), so the cost of a flush is unknown"
            % ", ".join(untimed))


def _require_finite(path: str, doc: dict) -> None:
    """Refuse to print a verdict that holds NaN or an infinity: JSON has
    no such numbers, and a verdict computed from one is no verdict.
    ``doc`` is the record's JSON document."""
    def walk(value: object, where: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise SdtuneError("infer", path, "%s is %s, not a finite "
                              "number: no verdict from this input"
                              % (where, "NaN" if value != value else
                                 "infinite"))
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, "%s.%s" % (where, key) if where else str(key))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, "%s[%d]" % (where, i))
    walk(doc, "")
