# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What sdio measured, read from its JSON reports.

`sdio` (one run): a `summary` and per-interval `intervals`; a verdict
uses the intervals after the warm-up ones, as samples of per-I/O latency
and of IOPS.  StepResult also holds the same shape for results imported
from vdbench or fio.

`sdio paired`: per round, every arm's slice statistics; a verdict uses
each slice's median latency (robust to the odd stall of a loaded
machine), paired by round.  Pure.
"""

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..errors import ParseError
from .stats import Sample


@dataclass
class Interval:
    ios: int
    iops: float
    lat_mean_ns: float


@dataclass
class StepResult:
    """What one step measured (one sdio run or one imported run)."""

    name: str
    bs: int
    qd: int = 1
    offset: int = 0
    flush: str = "none"
    pattern: str = "seq"
    rw: str = "write"
    intervals: List[Interval] = field(default_factory=list)
    iops: float = 0.0
    lat_mean_ns: float = 0.0
    # Percentiles of the run's per-I/O latency, from the engine's
    # histogram (plugin/engine/hist.c); None where the source has none.
    lat_p50_ns: Optional[int] = None
    lat_p99_ns: Optional[int] = None
    lat_p99_9_ns: Optional[int] = None
    ios: int = 0
    elapsed_ns: int = 0
    stopped: str = ""
    # For imported data that has no intervals: a per-I/O summary.
    lat_sd_ns: Optional[float] = None
    # For imported data: which fields of the tool's output the latency
    # was read from (fio: "write.lat_ns", or clat when there is no lat).
    lat_field: Optional[str] = None
    # False when the run flushed but its latency leaves the flushes out
    # (fio before 3.4 does not time fsync): no flush cost can be read.
    flush_timed: bool = True

    def latency(self, warmup: int = 1) -> Sample:
        """Per-I/O latency, as the sample of interval means."""
        kept = [i.lat_mean_ns for i in self.intervals[warmup:] if i.ios]
        if kept:
            return Sample.of(kept)
        if self.lat_sd_ns is not None and self.ios > 1:
            return Sample(self.ios, self.lat_mean_ns, self.lat_sd_ns)
        return Sample.of([self.lat_mean_ns] if self.ios else [])

    def iops_sample(self, warmup: int = 1) -> Sample:
        kept = [i.iops for i in self.intervals[warmup:] if i.ios]
        return Sample.of(kept) if kept else Sample.of(
            [self.iops] if self.ios else [])

    def evidence(self, warmup: int = 1) -> dict:
        lat = self.latency(warmup)
        steady = self.iops_sample(warmup)
        out = {"bs": self.bs, "qd": self.qd, "rw": self.rw,
               "offset": self.offset,
               "flush": self.flush, "iops": round(self.iops, 1),
               # The rate after the warm-up, as the verdicts read it.
               "iops_steady": round(steady.mean, 1) if steady.n else None,
               "lat_mean_ns": round(lat.mean, 1) if lat.n else None,
               "lat_rel_se": round(lat.rel_se, 4) if lat.n > 1 else None,
               "intervals_used": lat.n, "ios": self.ios,
               "lat_p50_ns": self.lat_p50_ns,
               "lat_p99_ns": self.lat_p99_ns,
               "lat_p99_9_ns": self.lat_p99_9_ns}
        if self.lat_field is not None:
            out["lat_field"] = self.lat_field
        if not self.flush_timed:
            out["flush_timed"] = False
        return out


class IOFailure(Exception):
    """sdio reported I/O errors: no verdict may come from this run."""

    def __init__(self, errors: List[dict]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__("%s error at offset %d: %s (errno %d)" % (
            first.get("op", "I/O"), first.get("offset", -1),
            first.get("error", "?"), first.get("errno", 0)))


def _report(text: str, command: str) -> dict:
    """sdio's JSON document, either mode; IOFailure when it lists I/O
    errors, ParseError when it is not a JSON object."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise ParseError(command, "report", "not JSON") from None
    if not isinstance(doc, dict):
        raise ParseError(command, "report", "not a JSON object")
    errors = doc.get("errors")
    if errors:
        if not isinstance(errors, list) or \
                not all(isinstance(e, dict) for e in errors):
            raise ParseError(command, "report", "the errors are malformed")
        raise IOFailure(errors)
    return doc


def _percentile(lat: dict, name: str) -> Optional[int]:
    """A latency percentile of the report (ns), None when it has none;
    ValueError when it is not a count of nanoseconds."""
    value = lat.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            value < 0 or value != value:
        raise ValueError(name)
    return int(value)


def parse_sdio(text: str, name: str) -> StepResult:
    """Read sdio's JSON report; raise IOFailure when it reports errors.

    Sample (abridged):

        {"version": 1, "options": {"bs": 4096, "qd": 1, "offset": 0,
         "flush": "none", "pattern": "seq", ...},
         "summary": {"ios": 8000, "elapsed_ns": 2000000000, "iops": 4000.0,
                     "lat_ns": {"mean": 250000.0, "p99": 400000, ...}},
         "intervals": [{"index": 0, "ios": 1000, "iops": 4000.0,
                        "lat_ns": {"mean": 250000.0, ...}}, ...],
         "errors": [], "stopped": "stable"}
    """
    doc = _report(text, "sdio")
    try:
        opts, summary = doc["options"], doc["summary"]
        result = StepResult(
            name=name, bs=int(opts["bs"]), qd=int(opts["qd"]),
            offset=int(opts["offset"]), flush=str(opts["flush"]),
            pattern=str(opts["pattern"]), rw=str(opts.get("rw", "write")),
            iops=float(summary["iops"]), ios=int(summary["ios"]),
            elapsed_ns=int(summary["elapsed_ns"]),
            lat_mean_ns=float(summary["lat_ns"]["mean"]),
            lat_p50_ns=_percentile(summary["lat_ns"], "p50"),
            lat_p99_ns=_percentile(summary["lat_ns"], "p99"),
            lat_p99_9_ns=_percentile(summary["lat_ns"], "p99_9"),
            stopped=str(doc.get("stopped", "")))
        for iv in doc["intervals"]:
            result.intervals.append(Interval(int(iv["ios"]),
                                             float(iv["iops"]),
                                             float(iv["lat_ns"]["mean"])))
        # The last interval ends at the last completion: after an early
        # stop it is partial, so it is not a sample like the others.
        if result.stopped != "time" and len(result.intervals) > 2:
            result.intervals.pop()
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ParseError("sdio", "report", "an option, the summary or an "
                         "interval is missing or malformed") from None
    return result


@dataclass
class PairedResult:
    """Rounds of `sdio paired`: per round, arm name -> median latency (ns)
    and, in ``means``, -> mean latency (ns); and the timed I/Os per arm."""

    rounds: List[Dict[str, float]] = field(default_factory=list)
    means: List[Dict[str, float]] = field(default_factory=list)
    ios: Dict[str, int] = field(default_factory=dict)
    elapsed_ns: int = 0

    def extend(self, more: "PairedResult") -> None:
        self.rounds += more.rounds
        self.means += more.means
        for name, n in more.ios.items():
            self.ios[name] = self.ios.get(name, 0) + n
        self.elapsed_ns += more.elapsed_ns


def parse_paired(text: str) -> PairedResult:
    """Read `sdio paired --json`; raise IOFailure when it reports errors.

    Sample (abridged):

        {"version": 1, "mode": "paired",
         "arms": [{"index": 0, "name": "size-512", "bs": 512, ...}, ...],
         "rounds": [{"index": 0, "order": [1, 0],
                     "slices": [{"arm": 0, "ios": 31, "median_ns": 699000,
                                 ...}, ...]}, ...],
         "errors": [], "elapsed_ns": 2500000000, "stopped": "rounds"}
    """
    doc = _report(text, "sdio paired")
    try:
        names = {int(a["index"]): str(a["name"]) for a in doc["arms"]}
        out = PairedResult(elapsed_ns=int(doc["elapsed_ns"]))
        for rnd in doc["rounds"]:
            medians: Dict[str, float] = {}
            means: Dict[str, float] = {}
            for sl in rnd["slices"]:
                name = names[int(sl["arm"])]
                medians[name] = float(sl["median_ns"])
                means[name] = float(sl["mean_ns"])
                out.ios[name] = out.ios.get(name, 0) + int(sl["ios"])
            out.rounds.append(medians)
            out.means.append(means)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise ParseError("sdio paired", "report", "an arm, a round or a "
                         "number is missing or malformed") from None
    return out
