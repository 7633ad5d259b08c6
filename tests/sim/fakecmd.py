# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Entry point of the simulated appliance's commands.

DIR/bin/<cmd> is a two-line shell script that runs
``python3 fakecmd.py --state DIR --argv0 "$0" <cmd> "$@"``: everything
the fake needs comes from the absolute state directory, never from the
environment or the working directory (sdtune runs commands with a fixed
environment, cwd /).  This module loads DIR/state.json, dispatches to the
command's module, prints its output byte for byte and exits with its
status.  Commands that change the state (update_drv, bootadm, beadm)
save it.
"""

import os
import sys
from typing import List, Optional, Tuple

if __name__ == "__main__" and not __package__:
    # tests/sim must not be on the path: its platform.py would shadow the
    # standard library's (uuid imports it).
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") !=
                   os.path.dirname(os.path.abspath(__file__))]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    # Run as a script: make the package importable for the relative
    # imports below.
    __import__("tests.sim")
    __package__ = "tests.sim"

from . import kernel  # noqa: E402

COMMANDS = ("mdb", "diskinfo", "iostat", "zpool", "zdb", "update_drv",
            "devfsadm", "sdio", "bootparams", "uname", "bootadm", "beadm",
            "kstat", "nvmeadm")
# The commands whose standard input run() hands on.
READS_STDIN = frozenset({"mdb"})


def run(state_dir: str, argv0: str, cmd: str, args, stdin):
    """(stdout, stderr, status) of one fake command."""
    state = kernel.load(state_dir)
    if cmd in ("bootparams", "uname", "bootadm", "beadm", "kstat"):
        from . import platform
        if not platform.has_command(state, cmd):
            # The wrapper is not even written: the real system has none.
            return "", "%s: not found\n" % argv0, 127
        result = getattr(platform, cmd + "_main")(state, args)
        if platform.saves(cmd, args):
            kernel.save(state)
        return result
    if cmd == "mdb":
        from . import mdb
        return mdb.main(state, args, stdin)
    if cmd == "diskinfo":
        from . import diskinfo
        return diskinfo.main(state, argv0, args)
    if cmd == "iostat":
        from . import iostat
        return iostat.main(state, argv0, args)
    if cmd == "zpool":
        from . import zfs
        return zfs.zpool_main(state, args)
    if cmd == "zdb":
        from . import zfs
        return zfs.zdb_main(state, argv0, args)
    if cmd == "update_drv":
        from . import drv
        result = drv.update_drv(state, args)
        kernel.save(state)
        return result
    if cmd == "devfsadm":
        from . import drv
        return drv.devfsadm(state, args)
    if cmd == "nvmeadm":
        from . import nvme
        return nvme.nvmeadm_main(state, args)
    if cmd == "sdio":
        from . import sdio
        return sdio.main(state, args)
    return "", "fakecmd: unknown command %s\n" % cmd, 127


def parse(argv) -> Optional[Tuple[str, str, str, List[str]]]:
    """(state directory, argv0, command, its arguments) of fakecmd.py's
    command line, or None when it is not one."""
    state_dir = argv0 = None
    i = 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] == "--state" and i + 1 < len(argv):
            state_dir = argv[i + 1]
        elif argv[i] == "--argv0" and i + 1 < len(argv):
            argv0 = argv[i + 1]
        else:
            break
        i += 2
    if state_dir is None or i >= len(argv) or argv[i] not in COMMANDS:
        return None
    return state_dir, argv0 or argv[i], argv[i], list(argv[i + 1:])


def main(argv) -> int:
    parsed = parse(argv)
    if parsed is None:
        sys.stderr.write("usage: fakecmd.py --state DIR [--argv0 NAME] "
                         "CMD [ARG...]\n")
        return 127
    state_dir, argv0, cmd, args = parsed
    out, err, status = run(state_dir, argv0, cmd, args, sys.stdin)
    sys.stdout.buffer.write(out.encode("latin-1", "replace"))
    sys.stdout.flush()
    sys.stderr.buffer.write(err.encode("latin-1", "replace"))
    sys.stderr.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
