# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The certification test plan, as data.

Three phases (facts §6.2, §6.4; issues 4 and 12):

* sector: QD1 writes without flushes, measured PAIRED: every arm in every
  round, in a fresh order each round, inside one sdio process (`sdio
  paired`), so that load and drift hit all arms alike.  The arms are
  sequential writes at every power of two from the logical block size to
  16 KiB, a 4 KiB write misaligned by 512 bytes, and random-offset 512 B
  and 4 KiB writes (the last three only where the logical block size is
  512 bytes; random writes cannot be merged by firmware that merges
  sequential sub-page writes);
* cache: 4 KiB sequential QD1 writes, without and with a flush after
  each, paired the same way;
* queue depth: 4 KiB random writes and reads at QD 1, 2, 4, ... 64, one
  sdio run per depth (a depth cannot be interleaved with another).

A paired phase is measured in looks: the first after ``min_rounds``
rounds, then at about 1.5 times as many rounds each time up to
``max_rounds`` (LOOKS), stopping at the first look whose verdict is
significant, or when ``paired_max_s`` is spent.  A queue-depth step
discards its first interval(s) as warm-up and ends once its IOPS are
stable (sdio --stable), within ``step_max_s``.

Pure: builds sdio argument lists, runs nothing.
"""

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

PHASES = ("sector", "cache", "qd", "gain")
SIZE_LADDER = (512, 1024, 2048, 4096, 8192, 16384)
QD_LADDER = (1, 2, 4, 8, 16, 32, 64)
MISALIGNED_BS = 4096
MISALIGNED_OFFSET = 512
# Logical block sizes a target may have: sd's DEV_BSIZE up to the
# largest physical-block-size sdtune writes (no ZFS ashift goes beyond
# 64 KiB), powers of two only, as every block size the kernel accepts.
LOGICAL_BLOCK_MIN = 512
LOGICAL_BLOCK_MAX = 65536
# Below this a device has too little room for every arm to write its own
# stretch of fresh pages: refused rather than measured badly.
MIN_REGION_BYTES = 64 << 20
# Regions are whole MiB, so every arm's stretch starts page-aligned.
REGION_ALIGN = 1 << 20


class SettingError(ValueError):
    """A bad [certify] value; ``key`` names it, so that the configuration
    can say which file and line it came from."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class CertifySettings:
    """How long each measurement may run and when it is done."""

    # Paired phases (sector, cache).
    slice_s: float = 0.03
    min_ios: int = 8
    min_rounds: int = 8
    max_rounds: int = 128
    paired_max_s: float = 60.0
    # Queue-depth steps.
    interval_s: float = 0.1
    step_max_s: float = 4.0
    min_intervals: int = 10
    stable_rel: float = 0.02
    warmup_intervals: int = 1
    # Measured gains (gains.py): the budget of the paired ashift
    # comparison, the pairs of alternating runs and each run's length.
    gain_paired_s: float = 4.0
    gain_pairs: int = 3
    gain_step_s: float = 0.4
    # Both: the most of the device the writes may cover.
    region_bytes: int = 1 << 30
    phases: Tuple[str, ...] = PHASES

    @classmethod
    def from_config(cls, section: Dict[str, str]) -> "CertifySettings":
        """[certify] keys override the defaults; a bad value is a
        SettingError naming its key."""
        kinds = {"slice_s": float, "min_ios": int, "min_rounds": int,
                 "max_rounds": int, "paired_max_s": float,
                 "interval_s": float, "step_max_s": float,
                 "min_intervals": int, "stable_rel": float,
                 "warmup_intervals": int, "region_bytes": int,
                 "gain_paired_s": float, "gain_pairs": int,
                 "gain_step_s": float}
        values: Dict[str, object] = {}
        if "phases" in section:
            phases = tuple(p.strip() for p in section["phases"].split(",")
                           if p.strip())
            bad = [p for p in phases if p not in PHASES]
            if bad or not phases:
                raise SettingError("phases", "[certify] phases = '%s': "
                                   "expected some of %s" % (
                                       section["phases"], ", ".join(PHASES)))
            values["phases"] = phases
        for key, kind in kinds.items():
            if key in section:
                try:
                    values[key] = kind(section[key])
                except ValueError:
                    raise SettingError(key, "[certify] %s = '%s': not a %s"
                                       % (key, section[key], kind.__name__))
                if not values[key] > 0 and key != "warmup_intervals":
                    raise SettingError(key, "[certify] %s must be positive"
                                       % key)
                if key == "warmup_intervals" and values[key] < 0:
                    raise SettingError(key, "[certify] warmup_intervals "
                                       "must not be negative")
        settings = cls(**values)
        # A t-test needs two rounds; sdio wants at least two intervals.
        if settings.min_rounds < 2 or settings.max_rounds < \
                settings.min_rounds:
            raise SettingError("min_rounds", "[certify] min_rounds must be "
                               "at least 2 and max_rounds at least "
                               "min_rounds")
        if settings.gain_pairs < 2:
            raise SettingError("gain_pairs", "[certify] gain_pairs must be "
                               "at least 2 (an interval needs two pairs)")
        if settings.min_intervals < 2:
            raise SettingError("min_intervals", "[certify] min_intervals "
                               "must be at least 2")
        return settings

    def looks(self) -> List[int]:
        """Round counts at which a paired phase looks at its verdict."""
        out = [self.min_rounds]
        while out[-1] < self.max_rounds:
            nxt = max(out[-1] + 1, math.ceil(out[-1] * 1.5))
            # A last look only a few rounds after the one before would
            # cost a Bonferroni share for almost no data.
            out.append(self.max_rounds if nxt * 1.25 > self.max_rounds
                       else nxt)
        return out


@dataclass(frozen=True)
class Arm:
    """One workload of a paired phase: QD1 writes of ``bs`` bytes at
    ``offset`` past block boundaries, sequential or random, with or
    without a flush after each."""

    phase: str          # sector, cache, gain
    name: str
    bs: int
    offset: int = 0
    pattern: str = "seq"
    flush: str = "none"
    # Sizes written in turn instead of bs, each rounded up to align and
    # packed (sdio paired's mix=): the writes ZFS issues at one ashift.
    mix: Tuple[int, ...] = ()
    align: int = 0

    def spec(self) -> str:
        spec = "name=%s,bs=%d,offset=%d,pattern=%s,flush=%s,rw=write" % (
            self.name, self.bs, self.offset, self.pattern, self.flush)
        if self.mix:
            spec += ",mix=%s" % ":".join(str(m) for m in self.mix)
            if self.align:
                spec += ",align=%d" % self.align
        return spec


def paired_args(arms: List[Arm], target: str, timing: CertifySettings,
                region: int, rounds: int, warmup: int, seed: int,
                time_s: Optional[float] = None) -> List[str]:
    """`sdio paired` arguments for ``rounds`` reported rounds (starting
    none after ``time_s`` seconds, when given)."""
    args = ["paired", "--json", "--backend", "sync", "--direct",
            "--rounds", str(rounds), "--warmup-rounds", str(warmup),
            "--slice", "%g" % timing.slice_s,
            "--min-ios", str(timing.min_ios),
            "--region", str(region), "--seed", str(seed)]
    if time_s is not None:
        args += ["--time", "%g" % time_s]
    for arm in arms:
        args += ["--arm", arm.spec()]
    return args + [target]


@dataclass(frozen=True)
class Step:
    """One sdio run: a queue-depth step, or an imported run."""

    phase: str          # sector, cache, qd
    name: str
    bs: int
    pattern: str = "seq"
    qd: int = 1
    offset: int = 0
    flush: str = "none"
    rw: str = "write"

    def sdio_args(self, target: str, timing: CertifySettings,
                  region: Optional[int] = None) -> List[str]:
        args = ["--json", "--backend", "sync", "--direct", "--rw", self.rw,
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


@dataclass
class Plan:
    """What certification measures on one target."""

    sector: List[Arm]
    cache: List[Arm]
    qd: List[Step]


def logical_block_problem(size: int) -> Optional[str]:
    """Why ``size`` cannot be a target's logical block size, or None."""
    if not LOGICAL_BLOCK_MIN <= size <= LOGICAL_BLOCK_MAX or \
            size & (size - 1):
        return "must be a power of two from %d to %d" % (
            LOGICAL_BLOCK_MIN, LOGICAL_BLOCK_MAX)
    return None


def region_for(device_bytes: int, timing: CertifySettings) -> int:
    """The region the writes stay in: ``region_bytes``, or less on a
    smaller device, in whole MiB; 0 when the device is too small for a
    meaningful test (MIN_REGION_BYTES)."""
    region = min(timing.region_bytes, device_bytes)
    region -= region % REGION_ALIGN
    return region if region >= MIN_REGION_BYTES else 0


def build_plan(logical_block: int = 512,
               phases: Tuple[str, ...] = PHASES) -> Plan:
    """The arms and steps for a drive with this logical block size."""
    sector: List[Arm] = []
    if "sector" in phases:
        sector = [Arm("sector", "size-%d" % bs, bs) for bs in SIZE_LADDER
                  if bs >= logical_block]
        if logical_block <= MISALIGNED_OFFSET:
            sector.append(Arm("sector", "size-4096-misaligned",
                              MISALIGNED_BS, offset=MISALIGNED_OFFSET))
            sector.append(Arm("sector", "rand-512", 512, pattern="rand"))
            sector.append(Arm("sector", "rand-4096", 4096, pattern="rand"))
    cache: List[Arm] = []
    if "cache" in phases:
        cache_bs = max(4096, logical_block)
        cache = [Arm("cache", "write", cache_bs),
                 Arm("cache", "write-flush", cache_bs, flush="each")]
    qd: List[Step] = []
    if "qd" in phases:
        bs = max(4096, logical_block)
        for rw in ("write", "read"):
            qd += [Step("qd", "qd-%s-%d" % (rw, depth), bs, pattern="rand",
                        qd=depth, rw=rw) for depth in QD_LADDER]
    return Plan(sector, cache, qd)
