# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Certify a shelf of drives at once: `sdtune certify A B C ...`.

Every target gets a worker thread that measures it phase by phase
(certifier.Certification) with engine processes of its own; at most
``jobs`` drives are measured at a time.  Safety was settled for every
target before this starts (certifier.prepare).

Concurrency must not change a verdict.  When drives run side by side,
each one's per-I/O cost is first measured alone (the solo probe: QD1
random page writes, one drive after another), then again in the crowd
before its first phase and after each phase.  A phase whose probe, before
or after it, costs more than the noise allows beyond the solo probe was
measured while the host (CPU, a shared HBA or expander), not the drive,
set the pace.  That is reported; and unless the phase's verdict is one
load cannot make (Certification.decided: a confident sector or cache
verdict), the phase is measured again with half as many drives at a time
(fewer still when the slowdown was larger), until no probe says so or
the drive runs alone.  Each phase records how many drives ran beside it.

A drive that fails (an I/O error, an engine failure) ends alone: the
others go on.  stop() (Ctrl-C or SIGTERM, in the main thread) kills every
engine process by PID through the host; a drive not finished then has
no record.  A record is handed to ``finished`` the moment its drive is
done, from that drive's thread.

Prints nothing: the caller learns of every change through ``update``
(DriveState, from any thread).
"""

import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from ..errors import SdtuneError
from ..host import Host, interrupt
from .certifier import Certification, Target
from ..records.record import CertRecord
from .reports import StepResult
from .runner import ProgressEvent
from .stats import Sample
from .workload import CertifySettings

# A crowd probe may cost this much more per I/O than the solo probe, or
# three standard errors of the difference if that is more, before the
# host counts as the bottleneck.  The verdicts compare arms measured in
# the same rounds (and steps of one run), so a uniform slowdown of this
# size leaves them as they are; what it catches is a host that cannot
# keep up with the drives.
NOISE_FLOOR = 0.30
NOISE_SE = 3.0


@dataclass
class Probe:
    """One probe's per-I/O latency (ns) and when it ran."""

    sample: Sample
    iops: float
    drives_beside: int

    @classmethod
    def of(cls, res: StepResult, beside: int) -> "Probe":
        return cls(res.latency(1), res.iops, beside)

    def to_json(self) -> dict:
        return {"lat_mean_us": _round(self.sample.mean / 1e3),
                "lat_sd_us": _round(self.sample.sd / 1e3),
                "intervals": self.sample.n, "iops": round(self.iops, 1),
                "drives_beside": self.drives_beside}


def _round(value: float) -> Optional[float]:
    return round(value, 1) if math.isfinite(value) else None


def slowdown(solo: Sample, crowd: Sample) -> float:
    """How many times more a crowd probe cost per I/O than the solo
    probe (nan when either measured nothing)."""
    if not solo.n or not crowd.n or not solo.mean > 0:
        return float("nan")
    return crowd.mean / solo.mean


def noise_limit(solo: Sample, crowd: Sample) -> float:
    """The largest slowdown that is still noise: NOISE_FLOOR, or more
    when the probes themselves vary (NOISE_SE standard errors of the
    ratio)."""
    rel = [s.rel_se for s in (solo, crowd)]
    spread = math.sqrt(sum(r * r for r in rel)) if all(
        math.isfinite(r) for r in rel) else 0.0
    return 1.0 + max(NOISE_FLOOR, NOISE_SE * spread)


def rerun_phases(drive: "DriveState") -> List[str]:
    """The phases to measure again: those the host may have decided,
    and then the gains, which are measured for what the verdicts
    recommend and so must follow any verdict measured again."""
    names = list(drive.affected)
    if names and drive.cert is not None and \
            "gain" in drive.cert.phase_names() and "gain" not in names:
        names.append("gain")
    return names


def fewer_jobs(jobs: int, worst: float) -> int:
    """How many drives at a time measure again what ``jobs`` at a time
    measured ``worst`` times slower per I/O than alone: half as many, or
    fewer in proportion to the slowdown when that is more."""
    return max(1, int(jobs // max(2.0, math.ceil(worst))))


@dataclass
class Rerun:
    """A phase measured again because of the host: which, why, and how
    many drives at a time it was measured with the first time."""

    phase: str
    slowdown: float
    limit: float
    jobs: int

    def to_json(self) -> dict:
        return {"phase": self.phase, "slowdown": round(self.slowdown, 2),
                "limit": round(self.limit, 2), "jobs": self.jobs}


@dataclass
class DriveState:
    """One drive of the shelf, as the display shows it."""

    target: Target
    index: int
    state: str = "waiting"      # waiting, probe, measuring, done, failed,
    #                             stopped
    phase: str = ""
    what: str = ""
    iops: Optional[float] = None
    confidence: Optional[float] = None
    started_ns: Optional[int] = None
    ended_ns: Optional[int] = None
    device_bytes: Optional[int] = None
    record: Optional[CertRecord] = None
    error: Optional[SdtuneError] = None
    cert: Optional[Certification] = field(default=None, repr=False)
    solo: Optional[Probe] = None
    probes: List[Probe] = field(default_factory=list)
    reruns: List[Rerun] = field(default_factory=list)
    # Phases measured while the host was the bottleneck: every one, and
    # those of the last pass whose verdict it may have made (to measure
    # again).
    slowed: List[Rerun] = field(default_factory=list)
    affected: Dict[str, Rerun] = field(default_factory=dict)
    beside_now: int = 0         # the most drives beside it in this phase


@dataclass
class ShelfOutcome:
    """What a shelf run did, beyond each drive's state."""

    drives: List[DriveState]
    jobs: int
    # One entry per pass that measured phases again: (drives at a time
    # in it, [(target, why), ...]).
    passes: List[tuple] = field(default_factory=list)


Update = Callable[[DriveState], None]
Finished = Callable[[DriveState], None]


class Shelf:
    """The drives of one `certify` command and their workers."""

    def __init__(self, host: Host, targets: Sequence[Target],
                 timing: CertifySettings, trust_timing: bool,
                 logical_override: Optional[int], jobs: int,
                 update: Optional[Update] = None,
                 finished: Optional[Finished] = None) -> None:
        self.host = host
        self.timing = timing
        self.trust_timing = trust_timing
        self.logical_override = logical_override
        self.jobs = max(1, min(jobs, len(targets)))
        self.drives = [DriveState(t, i) for i, t in enumerate(targets)]
        self._update = update
        self._finished = finished
        self._lock = threading.Lock()
        self._active: List[DriveState] = []
        self._stopping = threading.Event()
        self._stop_ns: Optional[int] = None
        self._threads: List[threading.Thread] = []

    # -- what the caller sees ---------------------------------------------

    def _tell(self, drive: DriveState) -> None:
        if self._update is not None:
            self._update(drive)

    def _progress(self, drive: DriveState) -> Callable[[ProgressEvent],
                                                       None]:
        def progress(event: ProgressEvent) -> None:
            drive.phase, drive.what = event.phase, event.what
            drive.iops, drive.confidence = event.iops, event.confidence
            self._tell(drive)
        return progress

    # -- running ------------------------------------------------------------

    def run(self) -> ShelfOutcome:
        """Measure every drive; a drive's failure is in its state, not
        raised.  Ctrl-C or SIGTERM (raised in this, the main, thread)
        stops every engine and is raised again once the workers end; the
        engines are killed as the signal arrives (host.interrupt), not
        when this thread next runs."""
        outcome = ShelfOutcome(self.drives, self.jobs)
        try:
            with interrupt.on_signal(lambda _signo: self.halt()):
                self._run(outcome)
        except BaseException:
            self.stop()
            raise
        return outcome

    def _run(self, outcome: ShelfOutcome) -> None:
        """The passes: every drive's phases, then those a crowded host
        may have decided, again with fewer drives at a time."""
        compare = self.jobs > 1
        for drive in self.drives:
            self._begin(drive, solo_probe=compare)
        # Drive -> the phases to measure (None: all of them).
        pending: Dict[int, Optional[List[str]]] = {
            d.index: None for d in self.drives if d.state != "failed"}
        jobs = self.jobs
        while pending:
            compare = jobs > 1 and len(pending) > 1
            self._pass([self.drives[i] for i in pending], pending,
                       jobs, compare)
            again: Dict[int, Optional[List[str]]] = {
                d.index: rerun_phases(d) for d in self.drives
                if d.index in pending and d.affected and
                d.state != "failed"}
            if not again:
                break
            reruns = [(self.drives[i].target.arg, r) for i in again
                      for r in self.drives[i].affected.values()]
            jobs = fewer_jobs(min(jobs, len(again)),
                              max(r.slowdown for _, r in reruns))
            outcome.passes.append((jobs, reruns))
            pending = again

    def _begin(self, drive: DriveState, solo_probe: bool) -> None:
        """Look at the drive (its evidence, size and plan) and, when
        drives will run side by side, probe it alone.  In the main
        thread, one drive after another."""
        # A host of its own only where drives run side by side (over SSH,
        # a session of its own).
        host = self.host.worker() if self.jobs > 1 else self.host
        drive.state, drive.phase = "probe", "probe"
        self._tell(drive)
        try:
            drive.cert = Certification(host, drive.target, self.timing,
                                       self.trust_timing,
                                       self.logical_override,
                                       self._progress(drive))
            drive.device_bytes = drive.cert.region.get("device_bytes")
            if solo_probe:
                drive.solo = Probe.of(drive.cert.probe(), 0)
        except SdtuneError as e:
            self._fail(drive, e)
            return
        drive.state, drive.phase, drive.what = "waiting", "", ""
        self._tell(drive)

    def _pass(self, drives: List[DriveState],
              phases: Dict[int, Optional[List[str]]], jobs: int,
              compare: bool) -> None:
        """One pass: each drive's phases (all of them, or those to
        measure again), ``jobs`` drives at a time."""
        slots = threading.BoundedSemaphore(jobs)
        errors: List[BaseException] = []
        threads = []
        for drive in drives:
            names = phases[drive.index] or drive.cert.phase_names()
            drive.affected = {}
            t = threading.Thread(target=self._work, name=drive.target.arg,
                                 args=(drive, names, slots, jobs, compare,
                                       errors), daemon=True)
            threads.append(t)
            self._threads.append(t)
            t.start()
        for t in threads:
            # Short joins: Ctrl-C and SIGTERM reach the main thread only
            # between them.
            while t.is_alive():
                t.join(0.2)
        if errors:
            raise errors[0]

    def _work(self, drive: DriveState, names: List[str],
              slots: threading.BoundedSemaphore, jobs: int, compare: bool,
              errors: List[BaseException]) -> None:
        cert = drive.cert
        assert cert is not None
        try:
            with slots:
                if self._stopping.is_set():
                    return
                self._enter(drive)
                try:
                    before = self._crowd_probe(drive) if compare else None
                    for name in names:
                        drive.state, drive.phase = "measuring", name
                        drive.beside_now = len(self._active) - 1
                        self._tell(drive)
                        cert.run_phase(name)
                        cert.phases[name]["drives_beside"] = \
                            drive.beside_now
                        if not compare:
                            continue
                        after = self._crowd_probe(drive)
                        self._judge(drive, name, jobs, before, after)
                        before = after
                finally:
                    self._leave(drive)
            if not drive.affected:
                self._finish(drive)
            else:
                drive.state, drive.phase = "waiting", ""
                drive.what = "to measure again: %s" % ", ".join(
                    drive.affected)
                self._tell(drive)
        except SdtuneError as e:
            self._fail(drive, e)
        except BaseException as e:      # a bug: raised in the main thread
            errors.append(e)
            self._fail(drive, SdtuneError("certify", drive.target.arg,
                                          "internal error"))

    def _crowd_probe(self, drive: DriveState) -> Probe:
        assert drive.cert is not None
        probe = Probe.of(drive.cert.probe(), len(self._active) - 1)
        drive.probes.append(probe)
        return probe

    def _judge(self, drive: DriveState, name: str, jobs: int,
               before: Optional[Probe], after: Probe) -> None:
        """Whether phase ``name`` was measured while the host set the
        pace: the worse of its two probes against the solo probe."""
        if drive.solo is None:
            return
        worst: Optional[Rerun] = None
        for probe in (before, after):
            if probe is None:
                continue
            ratio = slowdown(drive.solo.sample, probe.sample)
            limit = noise_limit(drive.solo.sample, probe.sample)
            if ratio > limit and (worst is None or ratio > worst.slowdown):
                worst = Rerun(name, ratio, limit, jobs)
        if worst is None:
            return
        drive.slowed.append(worst)
        assert drive.cert is not None
        if not drive.cert.decided(name):
            drive.affected[name] = worst
            drive.reruns.append(worst)

    def _enter(self, drive: DriveState) -> None:
        if drive.started_ns is None:
            drive.started_ns = self.host.monotonic_ns()
        with self._lock:
            self._active.append(drive)
            beside = len(self._active) - 1
            for other in self._active:
                other.beside_now = max(other.beside_now, beside)

    def _leave(self, drive: DriveState) -> None:
        with self._lock:
            self._active.remove(drive)

    def _finish(self, drive: DriveState) -> None:
        cert = drive.cert
        assert cert is not None
        rec = cert.record()
        rec.evidence["crowd"] = self._crowd_evidence(drive, cert)
        drive.record = rec
        drive.state, drive.phase, drive.what = "done", "", ""
        drive.ended_ns = self.host.monotonic_ns()
        if self._finished is not None:
            try:
                self._finished(drive)
            except SdtuneError as e:
                self._fail(drive, e)
                return
        self._tell(drive)

    def _crowd_evidence(self, drive: DriveState,
                        cert: Certification) -> dict:
        beside = [p.get("drives_beside", 0) for p in cert.phases.values()]
        return {"drives_beside": max(beside, default=0),
                "jobs": self.jobs,
                "solo_probe": drive.solo.to_json() if drive.solo else None,
                "probes": [p.to_json() for p in drive.probes],
                "slowed": [r.to_json() for r in drive.slowed],
                "reruns": [r.to_json() for r in drive.reruns]}

    def _fail(self, drive: DriveState, error: SdtuneError) -> None:
        drive.error = error
        drive.state = "stopped" if self._stopping.is_set() else "failed"
        drive.ended_ns = self.host.monotonic_ns()
        self._tell(drive)

    # -- stopping -------------------------------------------------------------

    def halt(self) -> None:
        """Kill every engine process by PID now (the host's, and its
        workers'), and start no other; from any thread: the signal
        watcher calls it the instant Ctrl-C or SIGTERM arrives.  A drive
        whose engine dies of it is stopped, not failed."""
        with self._lock:
            if self._stop_ns is None:
                self._stop_ns = self.host.monotonic_ns()
            self._stopping.set()
        self.host.stop_commands()

    def stop(self) -> None:
        """halt(), then wait (up to a few seconds) for the workers to see
        it.  A drive not done has no record."""
        self.halt()
        stop_ns = self._stop_ns
        assert stop_ns is not None
        for t in self._threads:
            t.join(3.0)
        for drive in self.drives:
            # A drive whose engine died of the same Ctrl-C (the terminal
            # sends it to the engines too) just before this was stopped,
            # not failed.
            if drive.state == "failed" and drive.ended_ns is not None and \
                    drive.ended_ns >= stop_ns - 1e9:
                drive.state = "stopped"
            elif drive.state not in ("done", "failed", "stopped"):
                drive.state = "stopped"
