# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What each recommended tunable buys on the drive certified: the
record's "gains" object, its check, and the objects plan, results and
the report read.  Measured by certify (certify/gains.py).

The document (version 1)::

    "gains": {
      "version": 1,
      "seconds": 9.8,                     # what measuring them took
      "tunables": [
        {"tunable": "physical-block-size", "value": 4096,
         "status": "gain",                # or "no measurable gain",
                                          # "not measured"
         "summary": "writes as ZFS issues them at ashift 12: ...",
         "why": null,                     # text where status is not
                                          # "gain": why it is still
                                          # recommended, or why nothing
                                          # was measured
         "baseline": "ashift 9: ...",     # the workload replaced
         "tuned": "ashift 12: ...",       # the workload it becomes
         "rounds": 24,
         "space_ratio": 1.07,             # physical-block-size only
         "metrics": [
           {"name": "iops", "unit": "IO/s", "better": "higher",
            "baseline": 1466.0, "tuned": 2410.0,
            "ratio": 1.64, "ci95": [1.58, 1.71], "confidence": 0.9999}
         ]}
      ]}

A metric's ``ratio`` always reads "times better with the tunable":
tuned / baseline where higher is better (IOPS, bytes per second),
baseline / tuned where lower is better (latency), so that 1.0 is no
change and above 1.0 is a gain, for every metric alike.  ``ci95`` is
the 95 % interval of that ratio, and ``confidence`` the probability,
from the same test, that the ratio is above 1.0 (one-sided: 1 - p).
A status of "gain" means some metric's interval lies above 1.0; a
status of "no measurable gain" is never a hidden zero: it keeps the
metrics measured, and ``why`` says why the tunable is still
recommended (alignment, correctness).

Pure: no I/O.
"""

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

VERSION = 1
GAIN = "gain"
NO_GAIN = "no measurable gain"
NOT_MEASURED = "not measured"
STATUSES = (GAIN, NO_GAIN, NOT_MEASURED)
BETTER = ("higher", "lower")


def _number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def _text(v: Any) -> bool:
    return v is None or isinstance(v, str)


@dataclass(frozen=True)
class Metric:
    """One measured quantity of a tunable's gain (see the module doc)."""

    name: str
    unit: str
    better: str
    baseline: float
    tuned: float
    ratio: float
    ci95: Tuple[float, float]
    confidence: float

    @property
    def significant(self) -> bool:
        """Whether the interval lies wholly above 1.0: a gain."""
        return self.ci95[0] > 1.0

    @property
    def loss(self) -> bool:
        """Whether the interval lies wholly below 1.0: a cost."""
        return self.ci95[1] < 1.0

    def to_json(self) -> dict:
        return {"name": self.name, "unit": self.unit, "better": self.better,
                "baseline": self.baseline, "tuned": self.tuned,
                "ratio": self.ratio, "ci95": list(self.ci95),
                "confidence": self.confidence}

    @classmethod
    def from_json(cls, doc: dict) -> "Metric":
        return cls(doc["name"], doc["unit"], doc["better"],
                   doc["baseline"], doc["tuned"], doc["ratio"],
                   (doc["ci95"][0], doc["ci95"][1]), doc["confidence"])


@dataclass(frozen=True)
class TunableGain:
    """What one tunable buys (see the module doc)."""

    tunable: str
    value: Any
    status: str
    summary: str
    why: Optional[str] = None
    baseline: Optional[str] = None
    tuned: Optional[str] = None
    rounds: Optional[int] = None
    space_ratio: Optional[float] = None
    metrics: Tuple[Metric, ...] = ()

    def metric(self, name: str) -> Optional[Metric]:
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    def to_json(self) -> dict:
        doc: Dict[str, Any] = {
            "tunable": self.tunable, "value": self.value,
            "status": self.status, "summary": self.summary,
            "why": self.why, "baseline": self.baseline,
            "tuned": self.tuned, "rounds": self.rounds}
        if self.space_ratio is not None:
            doc["space_ratio"] = self.space_ratio
        doc["metrics"] = [m.to_json() for m in self.metrics]
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> "TunableGain":
        return cls(doc["tunable"], doc.get("value"), doc["status"],
                   doc.get("summary") or "", doc.get("why"),
                   doc.get("baseline"), doc.get("tuned"), doc.get("rounds"),
                   doc.get("space_ratio"),
                   tuple(Metric.from_json(m) for m in doc.get("metrics", ())))


@dataclass(frozen=True)
class Gains:
    """Every recommended tunable's gain, in the order certify measured
    them."""

    tunables: Tuple[TunableGain, ...] = ()
    seconds: Optional[float] = None

    def of(self, tunable: str) -> Optional[TunableGain]:
        for g in self.tunables:
            if g.tunable == tunable:
                return g
        return None

    def to_json(self) -> dict:
        doc: Dict[str, Any] = {"version": VERSION}
        if self.seconds is not None:
            doc["seconds"] = self.seconds
        doc["tunables"] = [g.to_json() for g in self.tunables]
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> "Gains":
        """From a document gains_problem passed."""
        return cls(tuple(TunableGain.from_json(g) for g in doc["tunables"]),
                   doc.get("seconds"))


_METRIC_FIELDS = (("name", lambda v: isinstance(v, str) and v != "",
                   "a name"),
                  ("unit", lambda v: isinstance(v, str), "text"),
                  ("better", lambda v: v in BETTER,
                   "'higher' or 'lower'"),
                  ("baseline", _number, "a number"),
                  ("tuned", _number, "a number"),
                  ("ratio", lambda v: _number(v) and v > 0,
                   "a positive number"),
                  ("ci95", lambda v: isinstance(v, list) and len(v) == 2
                   and all(_number(x) and x > 0 for x in v) and v[0] <= v[1],
                   "two positive numbers, low then high"),
                  ("confidence", lambda v: _number(v) and 0 <= v <= 1,
                   "a number from 0 to 1"))
_TUNABLE_FIELDS = (("tunable", lambda v: isinstance(v, str) and v != "",
                    "a tunable's name"),
                   ("status", lambda v: v in STATUSES,
                    "one of: " + ", ".join(STATUSES)),
                   ("summary", _text, "text"),
                   ("why", _text, "text or null"),
                   ("baseline", _text, "text or null"),
                   ("tuned", _text, "text or null"),
                   ("rounds", lambda v: v is None or (
                       isinstance(v, int) and not isinstance(v, bool)
                       and v >= 0), "a non-negative integer or null"),
                   ("space_ratio", lambda v: v is None or (
                       _number(v) and v > 0), "a positive number or null"),
                   ("metrics", lambda v: isinstance(v, list), "a list"))


def gains_problem(doc: Any) -> Optional[str]:
    """Why a record's "gains" value does not have the shape of the
    module doc, in record_problem's words ("field 'gains...' must be
    ..."), or None.  Pure."""
    if not isinstance(doc, dict):
        return "field 'gains' must be an object"
    if doc.get("version") != VERSION:
        return "field 'gains.version' must be %d" % VERSION
    if "seconds" in doc and not (_number(doc["seconds"])
                                 and doc["seconds"] >= 0):
        return "field 'gains.seconds' must be a non-negative number"
    tunables = doc.get("tunables")
    if not isinstance(tunables, list):
        return "field 'gains.tunables' must be a list"
    for i, g in enumerate(tunables):
        where = "gains.tunables[%d]" % i
        if not isinstance(g, dict):
            return "field '%s' must be an object" % where
        for name, valid, expected in _TUNABLE_FIELDS:
            if name in ("tunable", "status") and name not in g:
                return "field '%s.%s' is missing" % (where, name)
            if name in g and not valid(g[name]):
                return "field '%s.%s' must be %s" % (where, name, expected)
        for j, m in enumerate(g.get("metrics", [])):
            mwhere = "%s.metrics[%d]" % (where, j)
            if not isinstance(m, dict):
                return "field '%s' must be an object" % mwhere
            for name, valid, expected in _METRIC_FIELDS:
                if name not in m:
                    return "field '%s.%s' is missing" % (mwhere, name)
                if not valid(m[name]):
                    return "field '%s.%s' must be %s" % (mwhere, name,
                                                         expected)
    return None


def metric_line(m: Metric) -> str:
    """One metric as plan, results and certify print it:
    "iops 1466 -> 2410 IO/s: 1.64x (95% 1.58-1.71, confidence 1.00)"."""
    return "%s %s -> %s %s: %.2fx (95%% %.2f-%.2f, confidence %.2f)" % (
        m.name, _figure(m.baseline), _figure(m.tuned), m.unit, m.ratio,
        m.ci95[0], m.ci95[1], m.confidence)


def _figure(value: float) -> str:
    if abs(value) >= 100:
        return "%.0f" % value
    return "%.3g" % value


def gain_lines(g: TunableGain) -> List[str]:
    """A tunable's gain as lines of text (no indentation): its status
    and summary, then each metric; for no measurable gain, why it is
    recommended all the same."""
    head = "%s: %s" % (g.status, g.summary) if g.summary else g.status
    lines = [head]
    lines += [metric_line(m) for m in g.metrics]
    if g.space_ratio is not None:
        lines.append("space: %.2fx the bytes allocated" % g.space_ratio)
    if g.why:
        lines.append(g.why)
    return lines
