# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`python3 -m sdtune`: run the command line and exit with its status."""

import gc
import sys

# The package is loaded with the cyclic collector off: loading creates
# objects by the hundred thousand and no garbage cycles, and a collector
# pass per 700 of them only scans the same modules again (about 7 % of a
# short command's time).  cli.main keeps it off for the command itself.
gc.disable()

from .cli import run_command_line  # noqa: E402 (after gc.disable)

# SIGPIPE stays ignored (Python's default): a helper command that exits
# without reading its input is that command failing, not sdtune dying;
# a reader of sdtune's own output that goes away is handled as a failed
# standard output (cli.GuardedOutput).
sys.exit(run_command_line())
