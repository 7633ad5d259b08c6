# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The power-cut check's steps (issue 30): `sdtune --host DEST powercut
DISK --confirm DISK`.  The appliance is ``host`` (over SSH); the witness
is this machine (``machine``, certify/witness.py), which must not lose
power with it.

A cycle:

1. write: on a free disk (consent and the in-use refusal as certify),
   the engine (`sdio powercut write`) writes numbered, checksummed
   blocks and says each completed write and flush; each line is logged
   durably here as it arrives (Host.stream, Witness.append).  The
   operator cuts the appliance's power meanwhile;
2. the link drops: the cycle is "cut", and sdtune waits for the
   appliance to come back (a new session answers, with a new boot
   time);
3. verify: the engine reads the region back (`sdio powercut read`) and
   certify/powercut.py gives the verdict, which is added to the drive's
   record (records/powercuts.py).

A pending cycle is taken up again by the next check of the same disk
from this machine: read back when the appliance has booted since its
writing started and the link dropped while the engine wrote; resumed
(the same run, writes numbered higher: powercut.resume_seq) when the
appliance has not restarted, the controller having been stopped or the
link lost without a cut.  Whenever it cannot be told whether the power
was cut while the drive was written, nothing is verified: a pass that
was never tested is the one answer this check must not give.
"""

import os
import posixpath
import re
import time
from dataclasses import dataclass, replace
from typing import Callable, List, Optional

from ..errors import (EXIT_FAILED, HostError, RefusedError, SdtuneError,
                      UsageError)
from ..host import Host
from ..inventory.devlinks import DISK_NAME
from ..inventory.disks import take_inventory
from ..inventory.runner import BOOT_TIME_STAT, boot_time
from ..records import storage
from ..records.powercuts import (NOT_MEASURED, NOTHING, POWERCUT_SOURCE,
                                 Claim, PowerCut)
from ..records.record import CertRecord
from .certifier import Target, resolve_targets, targets_locked
from .powercut import (VERB, Outcome, parse_slots, record_entry, resume_seq,
                       split_lines, verdict)
from .witness import CUT, STOPPED, VERIFIED, WRITING, Cycle, Witness

# The region: SLOTS blocks of BLOCK bytes from the start of the disk (16
# MiB): small enough to read back in a moment, large enough that bursts
# of random writes land in many places.
SLOTS = 4096
BLOCK = 4096
_DISK = re.compile(r"^(%s)" % DISK_NAME)
# How often sdtune asks whether the appliance is back, in seconds.
POLL_S = 5.0
# The time bound of the read-back.
READ_TIMEOUT_S = 300.0


@dataclass
class Progress:
    """What the witness has logged so far, for the operator."""

    writes: int = 0
    flushed: int = 0


@dataclass
class Written:
    """How a write phase ended."""

    cycle: Cycle
    progress: Progress
    # The link dropped (state CUT), or the engine ended by itself (then
    # why, from its exit status and what it said).
    dropped: bool
    why: str = ""


@dataclass
class Verified:
    cycle: Cycle
    outcome: Optional[Outcome]      # None: nothing was acknowledged
    cut: PowerCut
    record_path: str


def refuse_without_witness(disk: str, remote: bool) -> None:
    """The check needs a second machine: the one sdtune runs on."""
    if not remote:
        raise RefusedError(
            VERB, disk, "a witness on the machine that loses power "
            "proves nothing: run the check from another machine over "
            "SSH, e.g. 'sdtune --host root@APPLIANCE powercut %s "
            "--confirm %s' (sdtune(8), POWER-CUT CHECK)" % (disk, disk))


def appliance_boot(host: Host, dest: str, disk: str) -> int:
    boot = boot_time(host)
    if boot is None:
        raise RefusedError(VERB, disk, "the boot time of %s cannot be "
                           "read (kstat -p %s): a power cut could not be "
                           "told from a dropped link" % (dest,
                                                         BOOT_TIME_STAT))
    return boot


def resolve(host: Host, disk: str, confirm: List[str]) -> Target:
    """The disk, checked as certify checks its targets (consent, in use,
    one name), and big enough for the region."""
    inventory = take_inventory(host) if "/" not in disk or \
        disk.startswith("/dev/") else None
    target = resolve_targets(host, [disk], confirm, inventory,
                             VERB)[0]
    if target.disk is not None:
        size = target.disk.size_bytes
    else:
        size = host.stat(target.device).st_size
    if size is None or size < SLOTS * BLOCK:
        raise RefusedError(VERB, disk, "%s: the check writes %d MiB "
                           "from its start" % (
                               "its size is unknown" if size is None else
                               "%d bytes is too small" % size,
                               SLOTS * BLOCK >> 20))
    return target


def new_cycle(dest: str, target: Target, boot: int, now: float) -> Cycle:
    disk = target.disk
    return Cycle(dest=dest, disk=target.arg, device=target.device,
                 run=os.urandom(8).hex(), slots=SLOTS, block=BLOCK,
                 offset=0, boot_time=boot, started=now,
                 key=disk.key if disk else None,
                 model=disk.full_model if disk else None,
                 driver=disk.driver if disk else None,
                 serial=disk.serial if disk else None,
                 firmware=disk.firmware if disk else None)


def write(host: Host, witness: Witness, cycle: Cycle, first_seq: int,
          request: "Request", shown: Callable[[Progress], None],
          machine_now: Callable[[], float]) -> Written:
    """Run the engine's writer and log what it says until the link drops
    or the engine ends; the cycle's state says which."""
    progress = Progress()
    pending = [b""]

    def logged(chunk: bytes) -> None:
        lines, pending[0] = split_lines(pending[0], chunk)
        witness.append(cycle, lines)
        for line in lines:
            if line.startswith("w "):
                progress.writes += 1
            elif line.startswith("f "):
                progress.flushed = progress.writes
        shown(progress)

    args = ["powercut", "write", "--run", cycle.run, "--slots",
            str(cycle.slots), "--block", str(cycle.block), "--offset",
            str(cycle.offset), "--first-seq", str(first_seq), "--seconds",
            str(request.seconds), "--flush-every-ms",
            str(request.flush_every_ms), "--notice-ms",
            str(request.notice_ms), cycle.device]
    try:
        result = host.stream("sdio", args, logged,
                             timeout_s=request.seconds + 60.0)
    except HostError as e:
        if e.verb != "reach":
            raise
        cycle = replace(cycle, state=CUT, ended=machine_now())
        witness.save(cycle)
        return Written(cycle, progress, True, e.reason)
    cycle = replace(cycle, state=STOPPED, ended=machine_now())
    witness.save(cycle)
    if result.returncode == 0:
        why = "the engine wrote for %d s and no power cut came" % \
            request.seconds
    else:
        said = result.stderr.strip().splitlines()
        why = "the engine stopped (exit status %d%s)" % (
            result.returncode, ": " + said[-1][:200] if said else "")
    return Written(cycle, progress, False, why)


def wait_for_boot(host: Host, cycle: Cycle, wait_s: float,
                  clock: Callable[[], float],
                  sleep: Callable[[float], None],
                  waiting: Callable[[str], None]) -> Optional[int]:
    """Ask a new session every POLL_S seconds for the appliance's boot
    time until it differs from the cycle's (the appliance is back from a
    boot) or ``wait_s`` has passed (None).  ``waiting`` hears why each
    try did not do."""
    deadline = clock() + wait_s
    while True:
        session = host.worker()
        try:
            boot = boot_time(session)
            if boot is not None and boot != cycle.boot_time:
                return boot
            waiting("%s answers but has not booted since the writing "
                    "began" % cycle.dest if boot is not None else
                    "%s does not answer yet" % cycle.dest)
        except SdtuneError as e:
            waiting("%s does not answer yet (%s)" % (cycle.dest, e.reason))
        finally:
            session.close()
        if clock() + POLL_S > deadline:
            return None
        sleep(POLL_S)


def check_same_drive(host: Host, cycle: Cycle) -> None:
    """After the boot, the disk of that name must still be the drive
    that was written: disk names follow slots, not drives."""
    if cycle.serial is None:
        return
    m = _DISK.match(posixpath.basename(cycle.disk))
    disk = take_inventory(host).by_name(m.group(1)) if m else None
    if disk is None or (disk.serial or "").strip() != \
            cycle.serial.strip():
        raise RefusedError(VERB, cycle.disk, "is %s now, not the "
                           "drive written (serial %s): nothing verified; "
                           "put that drive back in its slot" % (
                               "no disk" if disk is None else
                               "serial %s" % disk.serial, cycle.serial))


def verify(host: Host, state_dir: str, witness: Witness, cycle: Cycle,
           now: float) -> Verified:
    """Read the region back, judge it against the log and add the
    outcome to the drive's record."""
    check_same_drive(host, cycle)
    log = witness.log(cycle)
    result = host.run("sdio", [
        "powercut", "read", "--slots", str(cycle.slots), "--block",
        str(cycle.block), "--offset", str(cycle.offset), cycle.device],
        timeout_s=READ_TIMEOUT_S)
    where = "sdio powercut read on %s" % cycle.dest
    if result.returncode != 0:
        said = result.stderr.strip().splitlines()
        raise SdtuneError(VERB, cycle.disk, "reading the blocks back "
                          "failed (exit status %d%s); the cycle stays "
                          "pending: run --verify again" % (
                              result.returncode,
                              ": " + said[-1][:200] if said else ""),
                          EXIT_FAILED)
    found = parse_slots(result.stdout.splitlines(), where, cycle.slots)
    outcome = verdict(log, found)
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    if outcome is None:
        nothing = Claim(0, 0, NOTHING)
        cut = PowerCut(now, iso, cycle.firmware, cycle.run, nothing,
                       nothing, 0)
    else:
        cut = record_entry(outcome, now, iso, cycle.firmware)
    path = storage.add_power_cut(host, state_dir, base_record(cycle, now),
                                 cut)
    cycle = replace(cycle, state=VERIFIED)
    witness.save(cycle)
    return Verified(cycle, outcome, cut, path)


def base_record(cycle: Cycle, now: float) -> CertRecord:
    """The drive's record when it has none yet: its identity, no
    verdicts (storage.add_power_cut adds the cut to the stored one when
    there is one)."""
    return CertRecord(
        key=cycle.key, time=now, target=cycle.disk, device=cycle.device,
        driver=cycle.driver, model=cycle.model, serial=cycle.serial,
        firmware=cycle.firmware, source=POWERCUT_SOURCE,
        time_iso=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        sector_confidence=0.0, sector_reason=NOT_MEASURED,
        cache="inconclusive", cache_confidence=0.0,
        cache_reason=NOT_MEASURED)


@dataclass
class Request:
    """One `sdtune --host DEST powercut DISK`."""

    dest: str
    disk: str
    confirm: List[str]
    verify_only: bool
    seconds: int            # how long the engine writes, at most
    wait_s: int             # how long to wait for the appliance's boot
    # The engine's pace: about how long between flushes, and how long it
    # waits after announcing one (sdio powercut --flush-every-ms,
    # --notice-ms; [powercut] in sdtune.conf).
    flush_every_ms: int = 2000
    notice_ms: int = 500


class Listener:
    """What the check tells the operator, step by step (the command
    prints it); every method does nothing here."""

    def writing(self, cycle: Cycle, resumed: bool) -> None:
        pass

    def progress(self, progress: Progress) -> None:
        pass

    def written(self, written: Written) -> None:
        pass

    def waiting(self, why: str) -> None:
        pass

    def not_back(self, cycle: Cycle) -> None:
        pass


def run_check(host: Host, machine: Host, state_dir: str, witness: Witness,
              request: Request, listener: Listener,
              sleep: Callable[[float], None] = time.sleep
              ) -> Optional[Verified]:
    """One step of the check as far as it can go now: write (a new or
    resumed cycle) until the link drops, wait for the boot, verify; or
    verify a cycle whose cut came while this machine was not waiting.
    None when it ends without a verdict (the listener was told why)."""
    disk, dest = request.disk, request.dest
    cycle = witness.pending(dest, disk)
    boot = appliance_boot(host, dest, disk)
    if cycle is not None and boot != cycle.boot_time:
        if cycle.state != CUT:
            raise RefusedError(VERB, disk, "%s booted after this "
                               "machine stopped witnessing (the cycle "
                               "in %s): whether its power was cut while "
                               "the drive was written is unknown, so "
                               "nothing is verified; start a new cycle "
                               "by removing that cycle's .json" % (
                                   dest, witness.path(cycle, "json")))
        return verify(host, state_dir, witness, cycle, machine.now())
    if request.verify_only:
        if cycle is None:
            raise UsageError(VERB, disk, "no cycle of it at %s is "
                             "pending in %s: nothing to verify"
                             % (dest, witness.directory))
        raise RefusedError(VERB, disk, "%s has not booted since the "
                           "writing began (boot time %d): its power was "
                           "not cut, nothing to verify; run without "
                           "--verify to go on writing, and cut the power "
                           "while sdtune writes" % (dest, boot))
    target = resolve(host, disk, request.confirm)
    with targets_locked(host, state_dir, [target]):
        if cycle is None:
            cycle = new_cycle(dest, target, boot, machine.now())
            witness.begin(cycle)
            start = 1
        else:
            if target.device != cycle.device:
                raise RefusedError(VERB, disk, "the pending cycle "
                                   "wrote %s, not %s" % (cycle.device,
                                                         target.device))
            start = resume_seq(witness.log(cycle))
            cycle = replace(cycle, state=WRITING, boot_time=boot,
                            ended=None)
            witness.save(cycle)
        listener.writing(cycle, start != 1)
        written = write(host, witness, cycle, start, request,
                        listener.progress, machine.now)
    listener.written(written)
    if not written.dropped:
        return None
    back = wait_for_boot(host, written.cycle, request.wait_s,
                         lambda: machine.monotonic_ns() / 1e9, sleep,
                         listener.waiting)
    if back is None:
        listener.not_back(written.cycle)
        return None
    return verify(host.worker(), state_dir, witness, written.cycle,
                  machine.now())
