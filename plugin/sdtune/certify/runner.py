"""Run the certification plan on one target with sdio, step by step.

Every step is one `sdio` run (through the host) whose JSON report becomes
a StepResult; an I/O error stops the certification with a message that
names the offset: no verdict is ever made from a failing drive.
"""

from typing import Callable, Dict, List, Optional

from ..errors import SdtuneError
from ..host import Host
from .measure import IOFailure, StepResult, parse_sdio
from .plan import Step, Timing

Progress = Callable[[Step, StepResult], None]


def run_step(host: Host, target: str, label: str, step: Step,
             timing: Timing) -> StepResult:
    args = step.sdio_args(target, timing, timing.region_bytes)
    # The engine bounds its own run time; the host timeout is a backstop.
    result = host.run("sdio", args, timeout_s=timing.step_max_s * 3 + 30)
    if result.returncode not in (0, 3):
        raise SdtuneError("certify", label, "sdio %s failed (exit %d): %s"
                          % (step.name, result.returncode,
                             result.stderr.strip()[:300]))
    try:
        return parse_sdio(result.stdout, step.name)
    except IOFailure as e:
        raise SdtuneError("certify", label, "%s during step %s; the drive "
                          "is not fit for a verdict" % (e, step.name)) from e


def run_plan(host: Host, target: str, label: str, plan: List[Step],
             timing: Timing, progress: Optional[Progress] = None
             ) -> Dict[str, StepResult]:
    results: Dict[str, StepResult] = {}
    for step in plan:
        results[step.name] = run_step(host, target, label, step, timing)
        if progress is not None:
            progress(step, results[step.name])
    return results
