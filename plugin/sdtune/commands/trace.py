"""`sdtune trace`: a DTrace script on the sd disks, summarised."""

import argparse

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
    from ..trace import cmd_trace
    return cmd_trace(env.host, args.script, args.disk, args.seconds,
                     env.out, args.output == "json", args.scripted,
                     args.parsable, env.err)
