# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The subcommands, one module per family, each with
``add_parser(subparsers, name)`` and ``run(args, env) -> int``:

    disks      disks
    certify    certify, infer, results
    powercut   powercut
    report     report
    tune       plan, apply, history, rollback, recover
    verify     verify, prove
    audit      audit
    trace      trace
    sdconf     sdconf check|show|set|unset|diff

TABLE lists every command with its module, in the order `sdtune --help`
shows them; cli.py builds its parser and dispatches from it.  A command
module turns arguments and settings into a call of the module that does
the work, imported only when the command runs.
"""

from typing import Dict, List, Tuple

from . import (audit, certify, disks, powercut, report, sdconf, trace,
               tune, verify)

TABLE: List[Tuple[str, object]] = [
    ("disks", disks), ("certify", certify), ("infer", certify),
    ("results", certify), ("powercut", powercut), ("report", report),
    ("plan", tune),
    ("apply", tune), ("verify", verify), ("prove", verify),
    ("audit", audit), ("history", tune),
    ("rollback", tune), ("recover", tune), ("trace", trace),
    ("sdconf", sdconf),
]
BY_NAME: Dict[str, object] = dict(TABLE)
