# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Per-I/O costs of the workloads a verdict compares, and how sure a
comparison of two of them is: "A costs more than ``factor`` times B".

Two kinds of measurement answer that question differently:

* PairedCosts: sdtune's own, from `sdio paired`.  Every arm ran in every
  round; a round gives each arm's median latency, and a comparison is a
  one-sided t-test on the per-round log ratios (stats.prob_log_above).
  Load and drift hit both arms of a round alike and cancel.  A phase
  looks at its verdict several times as rounds accumulate and stops at
  the first significant one, so each confidence is Bonferroni-corrected
  for every look the phase may take: stopping early cannot turn noise
  into a verdict.  Small effects are resolved: MARGIN_PAIRED.
* IndependentCosts: runs measured one after another (imported vdbench
  or fio results), compared with Welch tests on interval means.  Drift
  between runs is not in their error, so only larger effects count:
  MARGIN_INDEPENDENT.

Pure.
"""

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from .reports import StepResult
from .stats import (Sample, level_interval, prob_greater, prob_log_above,
                    trimmed_mean)

# The smallest per-I/O penalty a comparison counts as a difference.
MARGIN_PAIRED = 0.025
MARGIN_INDEPENDENT = 0.10


@dataclass(frozen=True)
class Shape:
    """What a verdict needs to know about a workload."""

    name: str
    bs: int
    offset: int = 0
    pattern: str = "seq"
    flush: str = "none"


class Costs:
    """The interface both kinds of measurement provide."""

    margin = MARGIN_INDEPENDENT
    method = ""

    def __init__(self, shapes: Sequence[Shape]) -> None:
        self.shapes: Dict[str, Shape] = {s.name: s for s in shapes}

    def usable(self, name: str) -> bool:
        """Whether ``name`` has enough data to be compared."""
        raise NotImplementedError

    def prob_costlier(self, a: str, b: str, factor: float) -> float:
        """Confidence that a's per-I/O cost exceeds factor times b's."""
        raise NotImplementedError

    def cost_ns(self, name: str) -> float:
        """The per-I/O cost estimate shown to the operator."""
        raise NotImplementedError

    def ratio(self, a: str, b: str) -> Optional[float]:
        """Estimated cost(a) / cost(b)."""
        raise NotImplementedError

    def evidence(self) -> Dict[str, dict]:
        raise NotImplementedError


class PairedCosts(Costs):
    """Costs from interleaved rounds: ``rounds`` holds, per round, each
    arm's median latency in ns, ``means`` (where known) its mean latency;
    ``ios`` the timed I/Os per arm."""

    margin = MARGIN_PAIRED
    method = "paired"

    def __init__(self, shapes: Sequence[Shape],
                 rounds: List[Dict[str, float]], looks: int,
                 ios: Optional[Dict[str, int]] = None,
                 elapsed_ns: int = 0, looks_taken: int = 0,
                 means: Optional[List[Dict[str, float]]] = None) -> None:
        super().__init__(shapes)
        # How the phase went: measuring time and looks so far.
        self.elapsed_ns = elapsed_ns
        self.looks_taken = looks_taken
        # A round where an arm has no positive median (or mean) cannot
        # give a ratio.
        keep = [i for i, r in enumerate(rounds)
                if all(r.get(n, 0) > 0 for n in self.shapes) and
                (means is None or all(means[i].get(n, 0) > 0
                                      for n in self.shapes))]
        self.rounds = [rounds[i] for i in keep]
        self.means = [means[i] for i in keep] if means is not None else []
        self.looks = max(1, looks)
        self.ios = dict(ios or {})

    def progress(self) -> dict:
        """The phase's rounds, looks and seconds, for the record."""
        return {"rounds": len(self.rounds), "looks": self.looks_taken,
                "looks_planned": self.looks,
                "seconds": round(self.elapsed_ns / 1e9, 2)}

    def _logs(self, a: str, b: str) -> List[float]:
        return [math.log(r[a] / r[b]) for r in self.rounds]

    def log_ratios(self, a: str, b: str, of: str = "median") -> List[float]:
        """Per round, log(a / b) of the arms' median (or mean) latency:
        what a paired interval is computed on (gains.py)."""
        rows = self.rounds if of == "median" else self.means
        return [math.log(r[a] / r[b]) for r in rows]

    def mean_ns(self, name: str) -> float:
        """The arm's mean per-I/O time, the trimmed mean over rounds of
        each round's mean: 1e9 / it is the arm's rate."""
        return trimmed_mean([r[name] for r in self.means])

    def usable(self, name: str) -> bool:
        return name in self.shapes and len(self.rounds) >= 2

    def prob_costlier(self, a: str, b: str, factor: float) -> float:
        raw = prob_log_above(self._logs(a, b), math.log(factor))
        return max(0.0, 1.0 - (1.0 - raw) * self.looks)

    def cost_ns(self, name: str) -> float:
        return trimmed_mean([r[name] for r in self.rounds])

    def ratio(self, a: str, b: str) -> Optional[float]:
        logs = self._logs(a, b)
        return math.exp(trimmed_mean(logs)) if logs else None

    def evidence(self) -> Dict[str, dict]:
        out = {}
        for name, s in self.shapes.items():
            values = [r[name] for r in self.rounds]
            out[name] = {"bs": s.bs, "offset": s.offset,
                         "pattern": s.pattern, "flush": s.flush,
                         "lat_median_ns": round(self.cost_ns(name), 1)
                         if values else None,
                         "rounds": len(values),
                         "ios": self.ios.get(name, 0)}
            interval = level_interval(values)
            if interval is not None:
                # The 95 % interval of lat_median_ns (the same trimmed
                # mean): how well the rounds pin the cost down, drift
                # between rounds included (the report draws it).
                out[name]["lat_ci95_ns"] = [round(interval[0], 1),
                                            round(interval[1], 1)]
        return out


class IndependentCosts(Costs):
    """Costs from runs measured one after another (imported results)."""

    method = "independent"

    def __init__(self, steps: Sequence[StepResult], warmup: int = 0) -> None:
        super().__init__([Shape(s.name, s.bs, s.offset, s.pattern, s.flush)
                          for s in steps])
        self.steps = {s.name: s for s in steps}
        self.lat: Dict[str, Sample] = {s.name: s.latency(warmup)
                                       for s in steps}
        self.warmup = warmup

    def usable(self, name: str) -> bool:
        return name in self.lat and self.lat[name].n >= 2

    def prob_costlier(self, a: str, b: str, factor: float) -> float:
        return prob_greater(self.lat[a], self.lat[b], factor)

    def cost_ns(self, name: str) -> float:
        return self.lat[name].mean

    def ratio(self, a: str, b: str) -> Optional[float]:
        mb = self.lat[b].mean
        return self.lat[a].mean / mb if mb else None

    def evidence(self) -> Dict[str, dict]:
        return {n: s.evidence(self.warmup) for n, s in self.steps.items()}
