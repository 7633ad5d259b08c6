"""`sdtune disks`: the inventory of the disks behind sd."""

import argparse

from .base import Env, json_output

COMMANDS = ("disks",)


def add_parser(sub, name: str) -> None:
    disks = sub.add_parser("disks", help="inventory of the disks behind "
                           "sd: keys, sizes, block sizes, pools, sd values, "
                           "in-use state")
    disks.add_argument("-H", dest="scripted", action="store_true",
                       help="no header, fields separated by TABs")
    disks.add_argument("-p", dest="parsable", action="store_true",
                       help="exact numbers (bytes)")
    json_output(disks)


def run(args: argparse.Namespace, env: Env) -> int:
    # Imported here: the offline sd.conf tools need none of it.
    from ..disks_cmd import cmd_disks
    return cmd_disks(env.host, env.out, env.err, args.scripted,
                     args.parsable, args.output == "json")
