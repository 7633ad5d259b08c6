# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What `sdtune certify` shows on standard error while a shelf of drives
is measured (certify/shelf.py).

On a terminal, one line per drive, redrawn in place (at most every
REDRAW_S, and at once when a drive ends): target, phase, size, elapsed
time, the IOPS of its last run, and its verdict when done.  Elsewhere (a
log, a pipe) plain lines for a shelf of more than one drive, one when a
drive starts a phase and one when it ends: a log must not fill with
carriage returns and escape codes.  One drive alone says nothing there
but its verdict, as before shelves.
Called from every worker thread: one lock keeps the lines whole.
"""

import os
import threading
from typing import Callable, Dict, List, Optional, TextIO, Tuple

from ..records.record import CertRecord
from ..certify.shelf import DriveState
from ..tables import nicenum

REDRAW_S = 0.25
# A terminal line: target (padded to the longest), phase, size, elapsed,
# IOPS, and the verdict or what is being measured.
ROW = "%-*s %-9s %7s %9s %11s  %s"
ENDED = ("done", "failed", "stopped")


def terminal_columns() -> int:
    """The width of the terminal on standard error (100 if unknown)."""
    try:
        return os.get_terminal_size(2).columns or 100
    except OSError:
        return 100


def verdict_summary(rec: CertRecord) -> str:
    """A verdict in a few words: native sector, cache, queue-depth
    knee."""
    native = rec.native_sector_bytes
    parts = ["native %s" % ("%d B" % native if native else "inconclusive"),
             "cache %s" % (rec.cache or "inconclusive")]
    if rec.queue_depth.knee:
        parts.append("knee QD %d" % rec.queue_depth.knee)
    return ", ".join(parts)


class ShelfView:
    """The progress of a shelf on ``err``; ``clock`` gives nanoseconds
    (the host's monotonic clock)."""

    def __init__(self, err: TextIO, tty: bool, clock: Callable[[], int],
                 drives: List[DriveState]) -> None:
        self.err, self.tty, self.clock = err, tty, clock
        self.drives = drives
        self._lock = threading.Lock()
        self._drawn = 0             # lines on the terminal to redraw
        self._last_draw = 0
        self._said: Dict[int, Tuple[str, str]] = {}
        self.width = max(24, max((len(d.target.arg) for d in drives),
                                 default=0))

    def update(self, drive: DriveState) -> None:
        with self._lock:
            try:
                if self.tty:
                    now = self.clock()
                    if drive.state in ENDED or \
                            now - self._last_draw >= REDRAW_S * 1e9:
                        self._draw(now)
                elif len(self.drives) > 1:
                    # One drive's verdict comes soon enough; a log of a
                    # shelf needs to know where each drive is.
                    self._plain(drive)
            except OSError:
                pass        # a progress line is never worth a failure

    def close(self) -> None:
        """The last picture: every drive as it ended."""
        with self._lock:
            if self.tty and self._drawn:
                self._draw(self.clock())

    # -- a terminal ---------------------------------------------------------

    def line(self, drive: DriveState, now: int) -> str:
        elapsed = "-" if drive.started_ns is None else "%.1f s" % (
            ((drive.ended_ns or now) - drive.started_ns) / 1e9)
        if drive.state == "done" and drive.record is not None:
            what, iops = verdict_summary(drive.record), ""
        elif drive.state in ("failed", "stopped"):
            what = drive.state
            if drive.error is not None and drive.state == "failed":
                what += ": " + drive.error.reason
            iops = ""
        else:
            what = drive.what
            if drive.confidence is not None:
                what += ", confidence %.2f" % drive.confidence
            iops = "%.0f IOPS" % drive.iops if drive.iops else ""
        phase = drive.phase if drive.state in ("measuring", "probe") \
            else drive.state
        return ROW % (
            self.width, drive.target.arg, phase,
            nicenum(drive.device_bytes), elapsed, iops, what)

    def _draw(self, now: int) -> None:
        columns = terminal_columns()
        out = []
        if self._drawn:
            # Back to the first line of the block.
            out.append("\x1b[%dA" % self._drawn)
        header = ROW % (
            self.width, "TARGET", "PHASE", "SIZE", "ELAPSED", "IOPS",
            "VERDICT")
        lines = [header] + [self.line(d, now) for d in self.drives]
        for text in lines:
            # Never wider than the terminal: a wrapped line would throw
            # the count of lines to go back up.
            out.append("\r\x1b[K%s\n" % text[:max(1, columns - 1)])
        self.err.write("".join(out))
        self.err.flush()
        self._drawn = len(lines)
        self._last_draw = now

    # -- a log ----------------------------------------------------------------

    def _plain(self, drive: DriveState) -> None:
        said = (drive.state, drive.phase)
        if self._said.get(drive.index) == said:
            return
        self._said[drive.index] = said
        text = self._plain_text(drive)
        if text:
            self.err.write("sdtune: certify: %s: %s\n"
                           % (drive.target.arg, text))
            self.err.flush()

    def _plain_text(self, drive: DriveState) -> Optional[str]:
        if drive.state == "measuring":
            # A crowd probe between phases is not worth a line.
            return None if drive.phase == "probe" else \
                "%s phase" % drive.phase
        if drive.state == "probe":
            return "probe alone"
        if drive.state == "waiting" and drive.what:
            return drive.what
        if drive.state == "done" and drive.record is not None:
            return "done in %.1f s: %s" % (
                ((drive.ended_ns or 0) - (drive.started_ns or 0)) / 1e9,
                verdict_summary(drive.record))
        if drive.state == "failed":
            return "failed: %s" % (drive.error.reason if drive.error
                                   else "unknown")
        if drive.state == "stopped":
            return "stopped"
        return None
