# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pure per-script summaries: from the parsed aggregations of one D
script's output to one record per device, and each record's JSON shape.

A summariser takes the text of each `sdtune-agg` section (see
parse.split_sections()) and the command the output came from, for the
ParseError it raises when the aggregations do not fit together (wrong keys,
a bucket quantize() cannot print, a sum without its distribution).  Which
sections each script prints, and which summariser reads them, is in the
record table of scripts.py.
"""

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..errors import ParseError
from .parse import Distribution, parse_printa, parse_quantize

SECTOR_BYTES = 4096


# -- arithmetic on distributions ----------------------------------------------

def _is_quantize_value(v: int) -> bool:
    a = abs(v)
    return a == 0 or a & (a - 1) == 0


def _check_quantize(d: Distribution, command: str, agg: str) -> None:
    for b in d.buckets:
        if b.bound or not _is_quantize_value(b.value):
            raise ParseError(command, agg, "bucket %s%d of %s is not a "
                             "quantize() bucket" % (b.bound, b.value,
                                                    " ".join(d.keys)))


def _ranges(d: Distribution, step: Optional[int]) -> List[Tuple[int, int]]:
    """Smallest and largest integer each bucket holds: quantize() (step
    None) bucket v > 0 holds [v, 2v), lquantize() bucket v holds
    [v, v + step)."""
    out = []
    for b in d.buckets:
        v = b.value
        if b.bound == "<":
            out.append((v - 1, v - 1))
        elif b.bound == ">=":
            out.append((v, v))
        elif step is not None:
            out.append((v, v + step - 1))
        elif v > 0:
            out.append((v, 2 * v - 1))
        elif v < 0:
            out.append((2 * v + 1, v))
        else:
            out.append((0, 0))
    return out


def lquantize_step(d: Distribution) -> int:
    """The step of an lquantize() distribution, from adjacent rows (1 when
    it cannot be told, as with a single row)."""
    plain = [b.value for b in d.buckets if not b.bound]
    steps = {b - a for a, b in zip(plain, plain[1:])}
    return min(steps) if steps else 1


def percentile(d: Distribution, q: float,
               step: Optional[int] = None) -> Optional[float]:
    """Estimate the q-quantile (0 < q <= 1) of the values behind a
    distribution, interpolating linearly inside the bucket that holds it:
    exact for lquantize() with step 1, within a factor of two for
    quantize()."""
    total = sum(b.count for b in d.buckets if b.count > 0)
    if total <= 0:
        return None
    rank = q * total
    cum = 0
    for (lo, hi), b in zip(_ranges(d, step), d.buckets):
        if b.count <= 0:
            continue
        if cum + b.count >= rank:
            return lo + (rank - cum) / b.count * (hi - lo)
        cum += b.count
    return float(_ranges(d, step)[-1][1])


# -- the per-device records ---------------------------------------------------

def percent(part: int, whole: int) -> Optional[float]:
    """part as a percentage of whole, to two places; None for no whole.
    The JSON and the table's percentage columns both show this value."""
    return None if whole <= 0 else round(100.0 * part / whole, 2)


def _round(value: Optional[float], digits: int = 0) -> Any:
    if value is None:
        return None
    return int(round(value)) if digits == 0 else round(value, digits)


@dataclass
class SizeStats:
    """I/O sizes of one device and direction."""

    ios: int
    bytes: int
    below_4k: int
    histogram: List[Tuple[int, int]]    # (bucket bytes, count), non-zero

    def to_json(self) -> Dict[str, Any]:
        return {"ios": self.ios, "bytes": self.bytes,
                "mean_bytes": _round(self.bytes / self.ios
                                     if self.ios else None),
                "below_4k_ios": self.below_4k,
                "below_4k_pct": percent(self.below_4k, self.ios),
                "histogram": [{"bucket_bytes": v, "count": c}
                              for v, c in self.histogram]}


@dataclass
class IosizeDevice:
    device: str
    read: Optional[SizeStats] = None
    write: Optional[SizeStats] = None

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device,
                "read": self.read.to_json() if self.read else None,
                "write": self.write.to_json() if self.write else None}


@dataclass
class AlignDevice:
    device: str
    writes: int
    sub_4k: int
    misaligned: int
    rmw: int

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "writes": self.writes,
                "sub_4k_writes": self.sub_4k,
                "sub_4k_pct": percent(self.sub_4k, self.writes),
                "misaligned_writes": self.misaligned,
                "misaligned_pct": percent(self.misaligned, self.writes),
                "rmw_writes": self.rmw,
                "rmw_pct": percent(self.rmw, self.writes)}


@dataclass
class FlushDevice:
    device: str
    calls: int
    sent: int
    completed: int                  # flushes whose latency was measured
    latency_sum_ns: int
    max_ns: Optional[int]
    p50_ns: Optional[float]
    p99_ns: Optional[float]
    histogram: List[Tuple[int, int]]

    @property
    def suppressed(self) -> int:
        return max(self.calls - self.sent, 0)

    @property
    def mean_ns(self) -> Optional[float]:
        return (self.latency_sum_ns / self.completed if self.completed
                else None)

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "calls": self.calls,
                "sent": self.sent, "suppressed": self.suppressed,
                "completed": self.completed,
                "mean_ns": _round(self.mean_ns),
                "p50_ns": _round(self.p50_ns), "p99_ns": _round(self.p99_ns),
                "max_ns": self.max_ns,
                "histogram": [{"bucket_ns": v, "count": c}
                              for v, c in self.histogram]}


@dataclass
class QdepthDevice:
    device: str
    ios: int
    depth_sum: int
    deepest: Optional[int]
    p50: Optional[float]
    p99: Optional[float]
    histogram: List[Tuple[int, int]]

    @property
    def mean(self) -> Optional[float]:
        return self.depth_sum / self.ios if self.ios else None

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "ios": self.ios,
                "mean_outstanding": _round(self.mean, 2),
                "max_outstanding": self.deepest,
                "p50_outstanding": _round(self.p50, 2),
                "p99_outstanding": _round(self.p99, 2),
                "histogram": [{"outstanding": v, "count": c}
                              for v, c in self.histogram]}


# -- the summarisers ----------------------------------------------------------

def _device_order(name: str) -> Tuple[str, int, str]:
    """sd2 before sd10."""
    m = re.match(r"^(.*?)([0-9]+)$", name)
    return (m.group(1), int(m.group(2)), "") if m else (name, -1, name)


def _one_key(values: Dict[Tuple[str, ...], int], command: str,
             agg: str) -> Dict[str, int]:
    out = {}
    for keys, value in values.items():
        if len(keys) != 1:
            raise ParseError(command, agg, "expected one key (a device), "
                             "got %r" % (keys,))
        out[keys[0]] = value
    return out


def _one_key_dists(dists: Iterable[Distribution], command: str,
                   agg: str) -> Dict[str, Distribution]:
    out = {}
    for d in dists:
        if len(d.keys) != 1:
            raise ParseError(command, agg, "expected one key (a device), "
                             "got %r" % (d.keys,))
        out[d.keys[0]] = d
    return out


def _nonzero(d: Distribution) -> List[Tuple[int, int]]:
    return [(b.value, b.count) for b in d.buckets if b.count]


def summarise_iosize(sections: Dict[str, str],
                     command: str) -> List[IosizeDevice]:
    sums = parse_printa(sections["bytes"], command)
    devices: Dict[str, IosizeDevice] = {}
    for d in parse_quantize(sections["size"], command):
        if len(d.keys) != 2 or d.keys[1] not in ("R", "W"):
            raise ParseError(command, "size", "expected keys DEVICE R|W, "
                             "got %r" % (d.keys,))
        _check_quantize(d, command, "size")
        if d.keys not in sums:
            raise ParseError(command, "bytes", "no entry for %s"
                             % " ".join(d.keys))
        stats = SizeStats(d.total, sums[d.keys],
                          sum(b.count for b in d.buckets
                              if b.value < SECTOR_BYTES), _nonzero(d))
        dev = devices.setdefault(d.keys[0], IosizeDevice(d.keys[0]))
        if d.keys[1] == "R":
            dev.read = stats
        else:
            dev.write = stats
    return [devices[k] for k in sorted(devices, key=_device_order)]


def summarise_align(sections: Dict[str, str],
                    command: str) -> List[AlignDevice]:
    counts = {name: _one_key(parse_printa(sections[name], command), command,
                             name)
              for name in ("writes", "sub4k", "misaligned", "rmw")}
    return [AlignDevice(dev, writes, counts["sub4k"].get(dev, 0),
                        counts["misaligned"].get(dev, 0),
                        counts["rmw"].get(dev, 0))
            for dev, writes in sorted(counts["writes"].items(),
                                      key=lambda kv: _device_order(kv[0]))]


def summarise_flush(sections: Dict[str, str],
                    command: str) -> List[FlushDevice]:
    calls = _one_key(parse_printa(sections["calls"], command), command,
                     "calls")
    sent = _one_key(parse_printa(sections["sent"], command), command, "sent")
    lat = _one_key_dists(parse_quantize(sections["lat"], command), command,
                         "lat")
    latsum = _one_key(parse_printa(sections["latsum"], command), command,
                      "latsum")
    latmax = _one_key(parse_printa(sections["latmax"], command), command,
                      "latmax")
    out = []
    for dev in sorted(set(calls) | set(sent) | set(lat),
                      key=_device_order):
        d = lat.get(dev)
        if d is not None:
            _check_quantize(d, command, "lat")
        out.append(FlushDevice(
            dev, calls.get(dev, 0), sent.get(dev, 0),
            d.total if d else 0, latsum.get(dev, 0), latmax.get(dev),
            percentile(d, 0.50) if d else None,
            percentile(d, 0.99) if d else None,
            _nonzero(d) if d else []))
    return out


def summarise_qdepth(sections: Dict[str, str],
                     command: str) -> List[QdepthDevice]:
    depth = _one_key_dists(parse_quantize(sections["depth"], command),
                           command, "depth")
    ios = _one_key(parse_printa(sections["ios"], command), command, "ios")
    dsum = _one_key(parse_printa(sections["depthsum"], command), command,
                    "depthsum")
    deepest = _one_key(parse_printa(sections["deepest"], command), command,
                       "deepest")
    out = []
    for dev in sorted(set(ios) | set(depth), key=_device_order):
        d = depth.get(dev)
        step = lquantize_step(d) if d else 1
        out.append(QdepthDevice(
            dev, ios.get(dev, 0), dsum.get(dev, 0), deepest.get(dev),
            percentile(d, 0.50, step) if d else None,
            percentile(d, 0.99, step) if d else None,
            _nonzero(d) if d else []))
    return out
