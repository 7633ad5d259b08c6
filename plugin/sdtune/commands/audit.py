"""`sdtune audit`: findings for pools, drives and sd.conf."""

import argparse

from .base import Env, json_output

COMMANDS = ("audit",)


def add_parser(sub, name: str) -> None:
    audit = sub.add_parser("audit", help="findings for pools, drives and "
                           "sd.conf; exit 1 when any problem remains")
    audit.add_argument("-x", dest="only_problems", action="store_true",
                       help="only problems, or a one-line all-clear")
    json_output(audit)


def run(args: argparse.Namespace, env: Env) -> int:
    from ..audit import cmd_audit
    ctx = env.recovered_context(args)
    return cmd_audit(env.host, ctx.sd_conf, ctx.state_dir, ctx.flavour,
                     env.cfg.silence, env.out, env.err,
                     args.output == "json", args.only_problems,
                     ctx.known_drives, env.cfg.space_matters())
