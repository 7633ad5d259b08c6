# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""pytest fixtures for emulated drives: `emulated_drive` makes started
drives and always stops them; `cpu_hogs` is drive.cpu_hogs (n busy
processes, killed by PID).  Every drive a test made is recorded in
CREATED (PIDs, temp dir) so that a later test can prove nothing of it
survived; MOUNTED_BEFORE is what emulated-drive mounts already
existed when the run began (left by another run that was killed, or
running beside this one), which are not this run's to answer for.
Runs nbdkit, nbdfuse and fusermount3 through drive.py."""

from typing import Callable, Iterator, List, Tuple

import pytest

from .drive import EmulatedDrive, cpu_hogs as _cpu_hogs, emulator_mounts, \
    leftovers

CREATED: List[Tuple[List[int], str]] = []
MOUNTED_BEFORE = frozenset(emulator_mounts())


@pytest.fixture
def emulated_drive() -> Iterator[Callable[..., EmulatedDrive]]:
    """emulated_drive(preset="512e", cache="nonvolatile", **overrides)
    returns a started EmulatedDrive; all are stopped at teardown, which
    fails if a process, mount or temp dir survives."""
    drives: List[EmulatedDrive] = []

    def make(preset: str = "512e", cache: str = "nonvolatile",
             **overrides: object) -> EmulatedDrive:
        drive = EmulatedDrive.preset(preset, cache, **overrides)
        drives.append(drive)
        drive.start()
        assert drive.tmpdir is not None
        CREATED.append((drive.pids, drive.tmpdir))
        return drive

    try:
        yield make
    finally:
        made = [(d.pids, d.tmpdir) for d in drives]
        for drive in drives:
            drive.stop()
        left = [x for pids, tmp in made if tmp is not None
                for x in leftovers(pids, [tmp])]
        assert not left, "emulated drive left behind: %s" % left


@pytest.fixture
def cpu_hogs():
    """The drive.cpu_hogs context manager: `with cpu_hogs(2): ...`."""
    return _cpu_hogs
