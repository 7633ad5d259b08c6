"""`sdtune verify`: what the kernel really uses, disk by disk."""

import argparse

from .base import Env, json_output

COMMANDS = ("verify",)


def add_parser(sub, name: str) -> None:
    verify = sub.add_parser("verify", help="per disk: applied, pending "
                            "reboot, not matched or ignored by sd")
    verify.add_argument("-H", dest="scripted", action="store_true")
    json_output(verify)


def run(args: argparse.Namespace, env: Env) -> int:
    from ..tune.verify import cmd_verify
    ctx = env.recovered_context(args)
    return cmd_verify(env.host, ctx.sd_conf, ctx.flavour, env.out,
                      args.output == "json", args.scripted)
