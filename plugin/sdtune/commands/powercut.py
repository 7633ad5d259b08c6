# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune --host DEST powercut DISK --confirm DISK [--verify]`: the
power-cut check of a drive's cache, witnessed from this machine
(certify/powercheck.py does the work).  What the operator reads: when
to cut the power and how, the count of acknowledged writes as it grows,
the link dropping, the wait for the boot, and the verdict.

Exit status: 0 a claim passed and none failed; 1 a claim failed (lost
writes); 2 usage; 3 refused (no witness machine, no consent, disk in
use, a cut that cannot be told from a dropped link); 4 no verdict (no
cut came, the cut came before anything was acknowledged, the appliance
did not come back in time, an error)."""

import argparse
import os
import time
from typing import TextIO

from ..errors import EXIT_FAILED, EXIT_OK, EXIT_PROBLEMS
from ..records.powercuts import FAILED, NOTHING, PASSED
from ..tables import to_json
from .base import Env, json_output

COMMANDS = ("powercut",)


def add_parser(sub, name: str) -> None:
    p = sub.add_parser("powercut", help="check a drive's cache by a "
                       "witnessed power cut (destroys the data in its "
                       "first 16 MiB; needs --host: this machine is the "
                       "witness)")
    p.add_argument("disk", metavar="DISK|PATH")
    p.add_argument("--confirm", nargs="+", action="extend", default=[],
                   metavar="DISK|PATH",
                   help="repeat the disk: its data will be lost")
    p.add_argument("--verify", action="store_true",
                   help="only read back the pending cycle, after the "
                   "appliance is back from the cut")
    json_output(p)


def run(args: argparse.Namespace, env: Env) -> int:
    from ..certify.powercheck import (Request, refuse_without_witness,
                                      run_check)
    from ..certify.witness import Witness
    refuse_without_witness(args.disk, args.remote is not None)
    settings = env.cfg.powercut(os.environ)
    request = Request(args.remote, args.disk, args.confirm, args.verify,
                      settings.seconds, settings.wait,
                      settings.flush_every_ms, settings.notice_ms)
    witness = Witness(env.machine, settings.witness_dir)
    tty = hasattr(env.err, "isatty") and env.err.isatty()
    listener = Said(env.err, tty, env.machine.monotonic_ns)
    done = run_check(env.host, env.machine, env.cfg.state_dir, witness,
                     request, listener)
    listener.end_line()
    if done is None:
        return EXIT_FAILED
    cut = done.cut
    if args.output == "json":
        env.out.write(to_json({"dest": args.remote, "disk": args.disk,
                               "log": witness.path(done.cycle, "log"),
                               "record": done.record_path,
                               "power_cut": cut.to_json()}))
    else:
        env.out.write(verdict_text(args.disk, cut, done.record_path))
    statuses = (cut.flush.status, cut.nonvolatile.status)
    if FAILED in statuses:
        return EXIT_PROBLEMS
    # A cut that tested nothing is no verdict, not a pass.
    return EXIT_OK if PASSED in statuses else EXIT_FAILED


def verdict_text(disk: str, cut, record_path: str) -> str:
    lines = ["%s: power cut of run %s" % (disk, cut.run)]
    for label, claim, means in (
            ("flush check", cut.flush, "writes a completed flush "
             "acknowledged"),
            ("non-volatile claim", cut.nonvolatile, "completed writes")):
        lines.append("  %-19s %s: %d %s, %d lost" % (
            label + ":", claim.status, claim.acknowledged, means,
            claim.lost))
    if cut.torn:
        lines.append("  torn blocks:        %d (a write cut half way)"
                     % cut.torn)
    if cut.flush.status == FAILED:
        lines.append("  Its flushes lie: no setting makes this drive safe "
                     "for ZFS; plan holds cache-nonvolatile back for its "
                     "model and firmware, audit flags it.")
    elif cut.nonvolatile.status == FAILED:
        lines.append("  Its cache is volatile: cache-nonvolatile:true would "
                     "lose these writes at a power loss; plan will not "
                     "propose it.")
    if NOTHING == cut.flush.status == cut.nonvolatile.status:
        lines.append("  The cut came before the drive acknowledged "
                     "anything: this cycle proves nothing; run it again.")
    lines.append("  recorded in %s" % record_path)
    return "".join(line + "\n" for line in lines)


class Said:
    """The check's steps as the operator reads them on standard error;
    on a terminal the count of acknowledged writes is one line redrawn
    at most twice a second."""

    def __init__(self, err: TextIO, tty: bool, clock_ns) -> None:
        self.err = err
        self.tty = tty
        self.clock_ns = clock_ns
        self.last = 0
        self.open_line = False
        self.announced = False

    def say(self, text: str) -> None:
        self.end_line()
        self.err.write("sdtune: %s\n" % text)
        self.err.flush()

    def end_line(self) -> None:
        if self.open_line:
            self.err.write("\n")
            self.open_line = False

    def writing(self, cycle, resumed: bool) -> None:
        self.say("%s the check of %s at %s (run %s): writing %d blocks of "
                 "%d bytes; this machine logs each acknowledged write in "
                 "its witness log" % ("resuming" if resumed else "starting",
                                      cycle.disk, cycle.dest, cycle.run,
                                      cycle.slots, cycle.block))

    def progress(self, progress) -> None:
        if progress.writes and not self.announced:
            self.announced = True
            self.say("writes are being acknowledged: CUT THE POWER of the "
                     "appliance now: pull its power cords or switch its "
                     "PDU outlets off.  Not a shutdown, reboot or halt, "
                     "which flush the cache.  Leave it off for at least 30 "
                     "seconds; sdtune waits for it to come back.")
        now = self.clock_ns()
        if not self.tty or now - self.last < 500_000_000:
            return
        self.last = now
        self.err.write("\r  %d writes acknowledged, %d of them flushed"
                       % (progress.writes, progress.flushed))
        self.err.flush()
        self.open_line = True

    def written(self, written) -> None:
        p = written.progress
        if written.dropped:
            self.say("the link dropped at %s after %d acknowledged writes "
                     "(%d flushed): waiting for %s to come back from the "
                     "cut" % (time.strftime("%H:%M:%S"), p.writes,
                              p.flushed, written.cycle.dest))
        else:
            self.say("no verdict: %s; the cycle proves nothing (%d writes "
                     "acknowledged); run the check again and cut the "
                     "power while it writes" % (written.why, p.writes))

    def waiting(self, why: str) -> None:
        if not self.tty:
            return
        self.err.write("\r  %-76s" % why[:76])
        self.err.flush()
        self.open_line = True

    def not_back(self, cycle) -> None:
        self.say("%s did not come back in time: when it is up, run "
                 "'sdtune --host %s powercut %s --verify' (the log is "
                 "kept)" % (cycle.dest, cycle.dest, cycle.disk))
