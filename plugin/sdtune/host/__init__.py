# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The one seam between sdtune and the machine it works on.

Every command sdtune runs, every file it reads or writes, every lock and
every clock read goes through a ``Host``.  Only this package imports
``subprocess`` or writes files, so tests can hand the product a simulated
appliance instead.

    base   the Host interface, CommandResult, path resolution under -R
    local  RealHost: the machine sdtune runs on
    wire   the framing of the engine's `sdio serve` protocol (pure)
    ssh    SshHost: an appliance over one SSH connection, through
           `sdio serve` running there
    interrupt  the signal watcher: what SIGINT and SIGTERM kill at once,
           whatever the main thread is doing
"""

from .base import COMMAND_ENV, READ_LIMIT, CommandResult, Host
from .local import RealHost, discard_stdout, guard_standard_fds

__all__ = ["COMMAND_ENV", "READ_LIMIT", "CommandResult", "Host", "RealHost",
           "discard_stdout", "guard_standard_fds"]
