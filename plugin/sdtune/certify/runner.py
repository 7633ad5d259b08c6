# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Run the certification plan on one target with sdio.

A paired phase (sector, cache) runs `sdio paired` in looks (workload.py):
after each look the phase's verdict is computed on every round so far,
and the phase stops at the first significant verdict, after its last
look, or when its time budget is spent.  A queue-depth step is one `sdio`
run.  An I/O error stops the certification with a message that names
the offset: no verdict is ever made from a failing drive.  Runs sdio
through the host.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional

from ..errors import SdtuneError
from ..host import Host
from .costs import PairedCosts, Shape
from .reports import (IOFailure, PairedResult, StepResult, parse_paired,
                      parse_sdio)
from .verdict import CONFIDENT
from .workload import Arm, Step, CertifySettings, paired_args


@dataclass(frozen=True)
class ProgressEvent:
    """What a progress line shows after each look and step."""

    phase: str                  # sector, cache, qd, probe
    what: str                   # "24 rounds", a step's name
    iops: Optional[float]       # of the last run, None when unknown
    confidence: Optional[float]     # of the phase's verdict so far


Progress = Callable[[ProgressEvent], None]


def _sdio(host: Host, args: List[str], label: str, what: str,
          bound_s: float) -> str:
    # The engine bounds its own run time; the host timeout is a backstop.
    result = host.run("sdio", args, timeout_s=bound_s * 3 + 30)
    if result.returncode not in (0, 3):
        raise SdtuneError("certify", label, "sdio %s failed (exit %d): %s"
                          % (what, result.returncode,
                             result.stderr.strip()[:300]))
    return result.stdout


def _io_failure(label: str, e: IOFailure, what: str) -> SdtuneError:
    return SdtuneError("certify", label, "%s during %s; the drive is not "
                       "fit for a verdict" % (e, what))


def run_step(host: Host, target: str, label: str, step: Step,
             timing: CertifySettings, region: int) -> StepResult:
    args = step.sdio_args(target, timing, region)
    out = _sdio(host, args, label, step.name, timing.step_max_s)
    try:
        return parse_sdio(out, step.name)
    except IOFailure as e:
        raise _io_failure(label, e, "step " + step.name) from None


def shapes_of(arms: List[Arm]) -> List[Shape]:
    return [Shape(a.name, a.bs, a.offset, a.pattern, a.flush) for a in arms]


def run_paired(host: Host, target: str, label: str, arms: List[Arm],
               timing: CertifySettings, region: int,
               decided: Callable[[PairedCosts], float],
               progress: Optional[Progress] = None) -> PairedCosts:
    """Measure ``arms`` look by look until ``decided(costs)``, the
    confidence of the phase's verdict, reaches 0.95 (or the budget is
    spent); return the costs of every round measured."""
    looks = timing.looks()
    phase = arms[0].phase
    measured = PairedResult()
    costs = PairedCosts(shapes_of(arms), [], len(looks))
    for index, total in enumerate(looks):
        rounds = total - len(measured.rounds)
        args = paired_args(arms, target, timing, region, rounds,
                           1 if index == 0 else 0, seed=index + 1)
        bound = timing.slice_s * len(arms) * (rounds + 1) * 4
        out = _sdio(host, args, label, "paired " + phase, bound)
        try:
            measured.extend(parse_paired(out))
        except IOFailure as e:
            raise _io_failure(label, e, "the %s phase" % phase) from None
        costs = PairedCosts(shapes_of(arms), measured.rounds, len(looks),
                            measured.ios, measured.elapsed_ns, index + 1,
                            measured.means)
        conf = decided(costs)
        if progress is not None:
            seconds = measured.elapsed_ns / 1e9
            progress(ProgressEvent(
                phase, "%d rounds" % len(measured.rounds),
                sum(measured.ios.values()) / seconds if seconds > 0
                else None, conf))
        if conf >= CONFIDENT or \
                measured.elapsed_ns >= timing.paired_max_s * 1e9:
            break
    return costs


def run_paired_once(host: Host, target: str, label: str, arms: List[Arm],
                    timing: CertifySettings, region: int, time_s: float
                    ) -> PairedCosts:
    """Measure ``arms`` in one `sdio paired` run of up to
    ``timing.max_rounds`` rounds, none started after ``time_s`` seconds:
    for an estimate with its interval (gains.py) rather than a verdict,
    so there are no looks to correct for."""
    args = paired_args(arms, target, timing, region, timing.max_rounds, 1,
                       seed=1, time_s=time_s)
    phase = arms[0].phase
    out = _sdio(host, args, label, "paired " + phase, time_s * 2 + 10)
    try:
        measured = parse_paired(out)
    except IOFailure as e:
        raise _io_failure(label, e, "the %s phase" % phase) from None
    return PairedCosts(shapes_of(arms), measured.rounds, 1, measured.ios,
                       measured.elapsed_ns, 1, measured.means)


def run_steps(host: Host, target: str, label: str, steps: List[Step],
              timing: CertifySettings, region: int,
              progress: Optional[Progress] = None) -> List[StepResult]:
    out = []
    for step in steps:
        res = run_step(host, target, label, step, timing, region)
        out.append(res)
        if progress is not None:
            progress(ProgressEvent(step.phase, step.name, res.iops, None))
    return out
