# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Records with the evidence certify stores, for the report's tests: the
sector phase's nine arms, the cache phase, fourteen queue-depth steps
with percentiles, and a gains object of records/gains.py's shape; the
numbers are those of `make demo`'s emulated drives (tests/emu presets),
scaled by unit.  Built with tests/builders.py.

* demo_records(): the three drives of `make demo` (512n non-volatile,
  512e non-volatile, 512e volatile);
* shelf_records(n): n units of one model, the last one slow (a suspect
  unit, records/crosscheck.py).
"""

from typing import List

from sdtune.records.gains import Gains
from sdtune.records.record import QueueDepth
from tests import builders

SIZES = (512, 1024, 2048, 4096, 8192, 16384)


def _arm(bs, lat, offset=0, pattern="seq"):
    return {"bs": bs, "offset": offset, "pattern": pattern, "flush": "none",
            "lat_median_ns": round(lat, 1), "rounds": 8, "ios": 150}


def sector(native: int, base_us: float) -> dict:
    """Cost per I/O as a drive with ``native`` pages measures it: below
    the native size a read-modify-write doubles the cost."""
    def cost(bs: int, aligned: bool = True) -> float:
        us = base_us * (1 + bs / 16384.0)
        if bs < native or not aligned:
            us *= 1.8
        return us * 1000
    arms = {"size-%d" % bs: _arm(bs, cost(bs)) for bs in SIZES}
    arms["size-4096-misaligned"] = _arm(4096, cost(4096, False), 512)
    arms["rand-512"] = _arm(512, cost(512) * 1.01, pattern="rand")
    arms["rand-4096"] = _arm(4096, cost(4096) * 1.02, pattern="rand")
    return arms


def queue(scale: float = 1.0) -> dict:
    steps = {}
    for rw, top in (("write", 3000.0), ("read", 4500.0)):
        for qd in (1, 2, 4, 8, 16, 32, 64):
            iops = scale * top * min(1.0, 0.33 * qd ** 0.55)
            p50 = qd / iops * 1e9 * 0.9
            steps["qd-%s-%d" % (rw, qd)] = {
                "bs": 4096, "qd": qd, "rw": rw, "offset": 0,
                "flush": "none", "iops": round(iops * 0.99, 1),
                "iops_steady": round(iops, 1),
                "lat_mean_ns": round(p50 * 1.1, 1), "lat_rel_se": 0.03,
                "intervals_used": 9, "ios": 4000,
                "lat_p50_ns": int(p50), "lat_p99_ns": int(p50 * 3.2),
                "lat_p99_9_ns": int(p50 * 6.5)}
    return steps


def gains(native: int, nonvolatile: bool) -> Gains:
    tunables = []
    if native > 512:
        tunables.append({
            "tunable": "physical-block-size", "value": native,
            "status": "gain",
            "summary": "writes as ZFS issues them at ashift 12",
            "why": None, "baseline": "ashift 9", "tuned": "ashift 12",
            "rounds": 24, "space_ratio": 1.07,
            "metrics": [
                {"name": "iops", "unit": "IO/s", "better": "higher",
                 "baseline": 1466.0, "tuned": 2410.0, "ratio": 1.64,
                 "ci95": [1.58, 1.71], "confidence": 0.9999},
                {"name": "p99 latency", "unit": "us", "better": "lower",
                 "baseline": 2900.0, "tuned": 1800.0, "ratio": 1.61,
                 "ci95": [1.4, 1.85], "confidence": 0.999}]})
    if nonvolatile:
        tunables.append({
            "tunable": "cache-nonvolatile", "value": True,
            "status": "no measurable gain",
            "summary": "write + flush against write alone at QD1",
            "why": "the drive already answers a flush at once; stopping "
                   "flushes saves the round trip only",
            "baseline": "write + flush", "tuned": "write", "rounds": 16,
            "metrics": [
                {"name": "sync write IOPS", "unit": "IO/s",
                 "better": "higher", "baseline": 910.0, "tuned": 930.0,
                 "ratio": 1.02, "ci95": [0.97, 1.08],
                 "confidence": 0.71}]})
    tunables.append({
        "tunable": "throttle-max", "value": 32, "status": "gain",
        "summary": "QD32 against sd's default",
        "why": None, "baseline": "QD10", "tuned": "QD32", "rounds": 12,
        "metrics": [
            {"name": "iops", "unit": "IO/s", "better": "higher",
             "baseline": 2400.0, "tuned": 2790.0, "ratio": 1.16,
             "ci95": [1.05, 1.29], "confidence": 0.98},
            {"name": "p99.9 latency", "unit": "us", "better": "lower",
             "baseline": 17000.0, "tuned": 40000.0, "ratio": 0.43,
             "ci95": [0.35, 0.52], "confidence": 0.0}]})
    tunables.append({
        "tunable": "disksort", "value": False, "status": "not measured",
        "summary": "", "why": "no workload shows seek ordering on an SSD",
        "metrics": []})
    return Gains.from_json({"version": 1, "seconds": 9.8,
                            "tunables": tunables})


def record(target: str, model: str, serial: str, native: int,
           nonvolatile: bool, when: float = 1.0, base_us: float = 800.0,
           scale: float = 1.0, with_gains: bool = True, **fields):
    cache = "nonvolatile" if nonvolatile else "volatile"
    recommended = {}
    if native > 512:
        recommended["physical-block-size"] = native
    if nonvolatile:
        recommended["cache-nonvolatile"] = True
    recommended.update({"throttle-max": 32, "disksort": False})
    values = dict(
        target=target, model=model, native=native, cache=cache,
        nv_sup=nonvolatile, recommended=recommended, when=when,
        sector_reason="writes below %d B cost more per I/O" % native,
        cache_reason="the drive reports %s cache" % cache,
        queue_depth=QueueDepth(None, {}, 32, None, 0.08,
                               "IOPS still grow at QD64: throttle-max 32"),
        evidence={"device": {"nv_sup": nonvolatile},
                  "sector": sector(native, base_us),
                  "cache": {"write_lat_ns": base_us * 1000 * 1.05,
                            "write_flush_lat_ns": base_us * 1000 *
                            (1.2 if nonvolatile else 4.0)},
                  "queue_depth": queue(scale)},
        gains=gains(native, nonvolatile) if with_gains else None)
    values.update(fields)
    return builders.cert_record("ATA     " + model.ljust(16), serial,
                                **values)


def demo_records() -> List:
    return [record("c5t1d0", "ACME DC512N", "DC512N-01", 512, True, 1.0),
            record("c5t2d0", "ACME DC4K", "DC4K-0001", 4096, True, 2.0),
            record("c5t3d0", "ACME HOME", "HOME-0001", 4096, False, 3.0,
                   base_us=1100.0, with_gains=False)]


def shelf_records(n: int = 24) -> List:
    """n units of one model in slots c7t0d0.., the last at a third of
    its siblings' rate (a suspect unit)."""
    return [record("c7t%dd0" % i, "ACME DC4K", "DC4K-%04d" % i, 4096, True,
                   float(i + 1), scale=(0.3 if i == n - 1 else
                                        1.0 + 0.01 * (i % 5)))
            for i in range(n)]
