"""`sdtune certify` and `sdtune results`.

certify measures each target with sdio (destroying its data), decides
native sector size, cache and queue depth, stores a record and prints
the verdict.  Safety comes first and is settled for ALL targets before
the first write: every target needs its own `--confirm`, and a disk that
is in use, or whose state cannot be determined, is refused (exit 3).
"""

import os
import re
import stat as statmod
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, TextIO

from ..errors import EXIT_OK, RefusedError, SdtuneError, UsageError
from ..host import Host
from ..inventory.disks import Disk, Inventory, take_inventory
from ..report import render_table, text_or_dash, to_json
from . import records
from .evidence import DeviceEvidence, query_evidence
from .measure import StepResult
from .plan import Step, Timing, build_plan
from .runner import run_plan
from .verdict import decide_cache, decide_queue_depth, decide_sector

_DEV_NAME = re.compile(r"^(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)(?:[sp][0-9]+)?$")


@dataclass
class Target:
    arg: str
    device: str                 # path sdio opens
    disk: Optional[Disk]


def _needs_inventory(targets: List[str]) -> bool:
    return any("/" not in t or t.startswith("/dev/") for t in targets)


def resolve_targets(host: Host, targets: List[str], confirm: List[str],
                    inventory: Optional[Inventory]) -> List[Target]:
    """Check consent and safety for every target; no I/O happens here."""
    for extra in sorted(set(confirm) - set(targets)):
        raise UsageError("certify", extra, "--confirm names a target that "
                         "is not being certified")
    out = []
    for arg in targets:
        if arg not in confirm:
            raise RefusedError("certify", arg, "certification destroys all "
                               "data on it; repeat the target with "
                               "--confirm %s" % arg)
        out.append(_resolve(host, arg, inventory))
    return out


def _resolve(host: Host, arg: str, inventory: Optional[Inventory]) -> Target:
    if "/" not in arg:
        disk = inventory.by_name(arg) if inventory else None
        if disk is None:
            raise UsageError("certify", arg, "no such disk (see sdtune "
                             "disks)")
        _refuse_in_use(arg, disk)
        return Target(arg, host.sys_path("/dev/rdsk/%sp0" % disk.name),
                      disk)
    m = _DEV_NAME.match(os.path.basename(arg))
    if arg.startswith("/dev/") and m:
        disk = inventory.by_name(m.group(1)) if inventory else None
        if disk is None:
            raise RefusedError("certify", arg, "not a disk sdtune can check"
                               " for use: in-use state unknown")
        _refuse_in_use(arg, disk)
        return Target(arg, host.sys_path(arg), disk)
    # A lab target: a plain file (an emulated drive, a scratch file).
    try:
        st = host.stat(arg)
    except SdtuneError:
        raise UsageError("certify", arg, "no such file")
    if not statmod.S_ISREG(st.st_mode):
        raise RefusedError("certify", arg, "a device node outside /dev/rdsk"
                           ": in-use state unknown")
    return Target(arg, arg, None)


def _refuse_in_use(arg: str, disk: Disk) -> None:
    if disk.rejected_reasons:
        raise RefusedError("certify", arg, "in use: %s"
                           % "; ".join(disk.rejected_reasons))


def certify_one(host: Host, target: Target, timing: Timing,
                trust_timing: bool, logical_override: Optional[int],
                progress) -> dict:
    evidence = query_evidence(host, target.device)
    disk = target.disk
    logical = logical_override or (disk.logical_block_bytes if disk else
                                   None) or evidence.logical_block or 512
    plan = build_plan(logical, timing.phases)
    results = run_plan(host, target.device, target.arg, plan, timing,
                       progress)
    return build_record(target, disk, evidence, plan, results, timing,
                        trust_timing, logical, host.now())


def build_record(target: Target, disk: Optional[Disk],
                 evidence: DeviceEvidence, plan: List[Step],
                 results: Dict[str, StepResult], timing: Timing,
                 trust_timing: bool, logical: int, now: float,
                 source: str = "sdio") -> dict:
    """The verdicts and the record; shared with `infer`."""
    warm = timing.warmup_intervals
    by_phase: Dict[str, List[StepResult]] = {}
    for step in plan:
        if step.name in results:
            by_phase.setdefault(step.phase, []).append(results[step.name])
    sector = decide_sector(by_phase.get("sector", []), warm)
    cache_steps = {r.name: r for r in by_phase.get("cache", [])}
    suppressed = bool(disk and disk.sd.suppress_cache_flush)
    cache = decide_cache(cache_steps.get("write"),
                         cache_steps.get("write-flush"), evidence.nv_sup,
                         evidence.wce, suppressed, trust_timing, warm)
    queue = decide_queue_depth(by_phase.get("qd", []), warm)
    recommended: Dict[str, object] = {}
    if sector.native and sector.native > max(512, logical):
        recommended["physical-block-size"] = sector.native
    if cache.recommend_nonvolatile:
        recommended["cache-nonvolatile"] = True
    if queue.throttle_min is not None:
        recommended["throttle-min"] = queue.throttle_min
    if queue.throttle_max is not None:
        recommended["throttle-max"] = queue.throttle_max
    if disk is not None and disk.ssd:
        recommended["disksort"] = False
    return {
        "version": 1,
        "target": target.arg,
        "device": target.device,
        "key": disk.key if disk else None,
        "serial": disk.serial if disk else None,
        "firmware": disk.firmware if disk else None,
        "time": now,
        "time_iso": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "source": source,
        "logical_block_bytes": logical,
        "native_sector_bytes": sector.native,
        "sector_confidence": sector.confidence,
        "sector_reason": sector.reason,
        "cache": cache.cache,
        "cache_confidence": cache.confidence,
        "cache_reason": cache.reason,
        "queue_depth": {"knee": queue.knee,
                        "throttle_max": queue.throttle_max,
                        "throttle_min": queue.throttle_min,
                        "confidence": queue.confidence,
                        "reason": queue.reason},
        "recommended": recommended,
        "evidence": {"device": evidence.to_json(),
                     "sector": sector.evidence,
                     "sector_scores": {str(k): round(v, 4) for k, v in
                                       sector.candidates.items()},
                     "cache": cache.evidence, "queue_depth": queue.evidence},
    }


def render_verdict(rec: dict) -> str:
    native = rec["native_sector_bytes"]
    lines = ["%s%s" % (rec["target"], (' (key "%s", serial %s, firmware '
                                       '%s)' % (rec["key"], rec["serial"],
                                                rec["firmware"]))
                       if rec["key"] else ""),
             "  native sector: %s (confidence %.2f): %s" % (
                 "%d B" % native if native else "inconclusive",
                 rec["sector_confidence"], rec["sector_reason"]),
             "  cache:         %s (confidence %.2f): %s" % (
                 rec["cache"], rec["cache_confidence"], rec["cache_reason"]),
             "  queue depth:   %s" % rec["queue_depth"]["reason"]]
    rec_text = ", ".join("%s:%s" % (k, str(v).lower() if isinstance(v, bool)
                                    else v)
                         for k, v in rec["recommended"].items())
    lines.append("  recommended:   %s" % (rec_text or "nothing to change"))
    return "\n".join(lines) + "\n"


def result_json(rec: dict) -> dict:
    """The `certify -o json` result object of DESIGN.md (and more)."""
    keys = ("target", "key", "serial", "firmware", "native_sector_bytes",
            "sector_confidence", "cache", "cache_confidence", "queue_depth",
            "recommended", "evidence")
    return {k: rec[k] for k in keys}


def cmd_certify(host: Host, state_dir: str, timing: Timing,
                targets: List[str], confirm: List[str], out: TextIO,
                err: TextIO, as_json: bool = False,
                trust_timing: bool = False,
                logical_block: Optional[int] = None) -> int:
    inventory = take_inventory(host) if _needs_inventory(targets) else None
    resolved = resolve_targets(host, targets, confirm, inventory)
    tty = hasattr(err, "isatty") and err.isatty()
    done = []
    for target in resolved:
        started = host.monotonic_ns()

        def progress(step: Step, res: StepResult, t=target, t0=started):
            if tty:
                err.write("\r%-24s %-6s %-22s %6.1f s %9.0f IOPS" % (
                    t.arg[-24:], step.phase, step.name,
                    (host.monotonic_ns() - t0) / 1e9, res.iops))
                err.flush()
        rec = certify_one(host, target, timing, trust_timing, logical_block,
                          progress)
        if tty:
            err.write("\n")
        records.store(host, state_dir, rec)
        done.append(rec)
        if not as_json:
            out.write(render_verdict(rec))
    if as_json:
        out.write(to_json({"results": [result_json(r) for r in done]}))
    return EXIT_OK


RESULT_COLUMNS = [
    ("KEY", lambda r, p: r["key"] if p or r["key"] is None
     else '"%s"' % r["key"]),
    ("SERIAL", lambda r, p: text_or_dash(r.get("serial"))),
    ("FIRMWARE", lambda r, p: text_or_dash(r.get("firmware"))),
    ("NATIVE", lambda r, p: text_or_dash(r.get("native_sector_bytes"))),
    ("CONF", lambda r, p: "%.2f" % r.get("sector_confidence", 0)),
    ("CACHE", lambda r, p: r.get("cache", "-")),
    ("WHEN", lambda r, p: r.get("time_iso", "-")),
    ("TARGET", lambda r, p: r.get("target", "-")),
]


def cmd_results(host: Host, state_dir: str, out: TextIO,
                as_json: bool = False, scripted: bool = False) -> int:
    recs = records.load_all(host, state_dir)
    if as_json:
        out.write(to_json({"results": recs}))
    else:
        out.write(render_table(RESULT_COLUMNS, recs, scripted))
    return EXIT_OK


def cmd_infer(path: str, fmt: Optional[str], text: str, out: TextIO,
              as_json: bool = False, trust_timing: bool = False) -> int:
    """The certify verdicts from existing vdbench or fio output."""
    from .importers import classify, parse_fio, parse_vdbench
    if fmt is None:
        fmt = "fio" if text.lstrip().startswith("{") else "vdbench"
    steps = parse_fio(text) if fmt == "fio" else parse_vdbench(text)
    sector, cache, qd = classify(steps)
    plan = [Step("sector", s.name, s.bs, offset=s.offset) for s in sector]
    plan += [Step("cache", "write" if s.flush == "none" else "write-flush",
                  s.bs, flush=s.flush) for s in cache]
    plan += [Step("qd", s.name, s.bs, qd=s.qd) for s in qd]
    results = {s.name: s for s in sector + qd}
    results.update({("write" if s.flush == "none" else "write-flush"): s
                    for s in cache})
    # Imported data has no warm-up interval to drop beyond what the tool
    # itself excluded.
    timing = Timing(warmup_intervals=0)
    rec = build_record(Target(path, path, None), None, DeviceEvidence(),
                       plan, results, timing, trust_timing,
                       min((s.bs for s in sector), default=512),
                       0.0, source="%s:%s" % (fmt, path))
    if as_json:
        out.write(to_json(result_json(rec)))
    else:
        out.write(render_verdict(rec))
    return EXIT_OK
