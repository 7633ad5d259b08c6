"""The certification test plan, as data.

Three phases, each a list of sdio runs (facts §6.2, §6.4; issue 4):

* sector: sequential QD1 writes without flushes at every power of two
  from the logical block size to 16 KiB, plus 4 KiB writes misaligned by
  512 bytes (only where the logical block size allows it);
* cache: 4 KiB sequential QD1 writes, without and with a flush after each;
* queue depth: 4 KiB random writes at QD 1, 2, 4, ... 64.

Every step discards its first interval(s) as warm-up and ends early once
its estimate is stable (sdio --stable), within an upper time bound.
Pure: builds sdio argument lists, runs nothing.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

PHASES = ("sector", "cache", "qd")
SIZE_LADDER = (512, 1024, 2048, 4096, 8192, 16384)
QD_LADDER = (1, 2, 4, 8, 16, 32, 64)
MISALIGNED_BS = 4096
MISALIGNED_OFFSET = 512
# Logical block sizes a target may have: sd's DEV_BSIZE up to the
# largest physical-block-size sdtune writes (no ZFS ashift goes beyond
# 64 KiB), powers of two only, as every block size the kernel accepts.
LOGICAL_BLOCK_MIN = 512
LOGICAL_BLOCK_MAX = 65536


@dataclass(frozen=True)
class Timing:
    """How long each step may run and when it counts as stable."""

    interval_s: float = 0.25
    step_max_s: float = 6.0
    min_intervals: int = 8
    stable_rel: float = 0.02
    warmup_intervals: int = 1
    region_bytes: int = 1 << 30
    phases: Tuple[str, ...] = PHASES

    @classmethod
    def from_config(cls, section: Dict[str, str]) -> "Timing":
        """[certify] keys override the defaults; bad values are errors."""
        kinds = {"interval_s": float, "step_max_s": float,
                 "min_intervals": int, "stable_rel": float,
                 "warmup_intervals": int, "region_bytes": int}
        values: Dict[str, object] = {}
        if "phases" in section:
            phases = tuple(p.strip() for p in section["phases"].split(",")
                           if p.strip())
            bad = [p for p in phases if p not in PHASES]
            if bad or not phases:
                raise ValueError("[certify] phases = '%s': expected some of "
                                 "%s" % (section["phases"], ", ".join(PHASES)))
            values["phases"] = phases
        for key, kind in kinds.items():
            if key in section:
                try:
                    values[key] = kind(section[key])
                except ValueError:
                    raise ValueError("[certify] %s = '%s': not a %s"
                                     % (key, section[key], kind.__name__))
                if values[key] <= 0 and key != "warmup_intervals":
                    raise ValueError("[certify] %s must be positive" % key)
        return cls(**values)


@dataclass(frozen=True)
class Step:
    phase: str          # sector, cache, qd
    name: str
    bs: int
    pattern: str = "seq"
    qd: int = 1
    offset: int = 0
    flush: str = "none"

    def sdio_args(self, target: str, timing: Timing,
                  region: Optional[int] = None) -> List[str]:
        args = ["--json", "--backend", "sync", "--direct", "--rw", "write",
                "--pattern", self.pattern, "--bs", str(self.bs),
                "--qd", str(self.qd), "--offset", str(self.offset),
                "--flush", self.flush,
                "--time", "%g" % timing.step_max_s,
                "--interval", "%g" % timing.interval_s,
                "--stable", "%g" % timing.stable_rel,
                "--min-intervals",
                str(timing.min_intervals + timing.warmup_intervals)]
        if region:
            args += ["--region", str(region)]
        return args + [target]


def logical_block_problem(size: int) -> Optional[str]:
    """Why ``size`` cannot be a target's logical block size, or None."""
    if not LOGICAL_BLOCK_MIN <= size <= LOGICAL_BLOCK_MAX or \
            size & (size - 1):
        return "must be a power of two from %d to %d" % (
            LOGICAL_BLOCK_MIN, LOGICAL_BLOCK_MAX)
    return None


def build_plan(logical_block: int = 512,
               phases: Tuple[str, ...] = PHASES) -> List[Step]:
    """The steps for a drive with this logical block size."""
    steps = [Step("sector", "size-%d" % bs, bs) for bs in SIZE_LADDER
             if bs >= logical_block]
    if logical_block <= MISALIGNED_OFFSET:
        steps.append(Step("sector", "size-4096-misaligned", MISALIGNED_BS,
                          offset=MISALIGNED_OFFSET))
    cache_bs = max(4096, logical_block)
    steps.append(Step("cache", "write", cache_bs))
    steps.append(Step("cache", "write-flush", cache_bs, flush="each"))
    steps += [Step("qd", "qd-%d" % qd, max(4096, logical_block),
                   pattern="rand", qd=qd) for qd in QD_LADDER]
    return [s for s in steps if s.phase in phases]
