# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune trace`: a DTrace script on the sd disks, summarised (the
work is the trace package's)."""

import argparse

from ..errors import EXIT_OK
from ..tables import to_json
from .base import Env, json_output

COMMANDS = ("trace",)


def add_parser(sub, name: str) -> None:
    tr = sub.add_parser("trace", help="run a DTrace script on the sd "
                        "disks and summarise it")
    tr.add_argument("script", choices=("iosize", "align", "flush",
                                       "qdepth"))
    tr.add_argument("-d", dest="disk", metavar="DISK",
                    help="cXtYdZ or sdN (default: every sd disk)")
    tr.add_argument("-t", dest="seconds", type=int, default=10,
                    metavar="SECONDS", help="how long to trace (default 10)")
    tr.add_argument("-H", dest="scripted", action="store_true")
    tr.add_argument("-p", dest="parsable", action="store_true")
    json_output(tr)


def run(args: argparse.Namespace, env: Env) -> int:
    """`sdtune trace NAME [-d DISK] [-t SECONDS] [-H] [-p] [-o json]`."""
    from ..trace.run import query_trace, render_trace
    trace = query_trace(env.host, args.script, args.disk, args.seconds)
    for warning in trace.warnings:
        env.err.write("sdtune: warning: %s\n" % warning)
    if not trace.devices:
        env.err.write("sdtune: trace %s: no activity on %s in %d s\n"
                      % (args.script, "sd disks" if args.disk is None
                         else args.disk, args.seconds))
    if args.output == "json":
        env.out.write(to_json(trace.to_json()))
    else:
        env.out.write(render_trace(trace, args.scripted, args.parsable))
    return EXIT_OK
