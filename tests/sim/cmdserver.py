# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The fork server of the simulated appliance's commands.

Every fake command (mdb, diskinfo, iostat, zpool, ...) used to start a
Python of its own and import the simulator: about 50 ms, a dozen times
per sdtune command, most of what the end-to-end tests cost.  This server
(tests/harness/forkserver.py) imports the simulator once; each command is
then a fork of it.

    bin/<cmd>  exec cmdclient SOCKET PYTHON fakecmd.py --state DIR ...

The worker takes the client's descriptors, directory, umask and
environment and runs fakecmd.main (or execs the engine, for the fake
sdio) exactly as the script would.  So sdtune still runs one process per
command, with the same input, output, status and kill; only Python's
start is saved.

Without a server (none started, the client cannot be built, or a user
other than the server's) the client execs the script: the old way,
slower.  A process starts one server for its appliances
(ensure_started(), from Appliance).  SDTUNE_SIM_CMDSERVER=0 in the
environment turns it off.
"""

import importlib
import os
import sys
import traceback
from typing import Optional

from ..harness import forkserver
from . import fakecmd

# Every command's module, loaded once here so that no worker imports it
# (fakecmd imports them as each command needs them).
PRELOADED = [importlib.import_module("." + name, __package__) for name in (
    "diskinfo", "drv", "iostat", "mdb", "nvme", "platform", "sdio", "zfs")]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FAKECMD = os.path.join(HERE, "fakecmd.py")


def _accept(request: forkserver.Request) -> bool:
    """Only fakecmd.py: anything else the client runs itself."""
    return bool(request.args) and request.args[0] == FAKECMD


def _work(request: forkserver.Request) -> None:
    """The worker: the command, on the client's descriptors.  Never
    returns."""
    status = 1
    try:
        forkserver.take_request(request)
        forkserver.python_stdio()
        try:
            status = fakecmd.main(request.args[1:])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException:
            traceback.print_exc()
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
    finally:
        os._exit(status & 0xFF)


_SERVER = forkserver.PerProcess(
    "SDTUNE_SIM_CMDSERVER", lambda: forkserver.Server(
        [sys.executable, "-m", "tests.sim.cmdserver"], cwd=REPO))


def ensure_started() -> Optional[forkserver.Server]:
    """This process's server, started on first use; None when turned off
    (SDTUNE_SIM_CMDSERVER=0) or when it cannot start (the wrappers then
    run the script)."""
    return _SERVER.get()


if __name__ == "__main__":
    forkserver.serve(sys.argv[1], _accept, _work)
