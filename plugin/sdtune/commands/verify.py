# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune verify`: what the kernel really uses, disk by disk, and
whether it survives the next boot (the states are tune/verify.py's).
NVMe namespaces are checked against nvme.conf (drivers/nvme/verify.py).
Exit 1 when any disk is "ignored by sd", "ignored by nvme", "not
persistent" or "shadowed";
4, with a stderr line naming the disks, when any is "unknown" or the
kernel's values could not be read at all."""

import argparse

from ..errors import EXIT_FAILED, EXIT_OK, EXIT_PROBLEMS
from ..tables import render_table, to_json
from .base import Env, json_output

COMMANDS = ("verify",)

COLUMNS = [("NAME", lambda s, p: s.name),
           ("KEY", lambda s, p: "-" if s.key is None else
            (s.key if p else '"%s"' % s.key)),
           ("STATE", lambda s, p: s.state),
           ("DETAILS", lambda s, p: "; ".join(s.details) or "-")]


def add_parser(sub, name: str) -> None:
    verify = sub.add_parser("verify", help="per disk: applied, pending "
                            "reboot, not matched or ignored by sd (or, for "
                            "NVMe, by nvme)")
    verify.add_argument("-H", dest="scripted", action="store_true")
    json_output(verify)


def run(args: argparse.Namespace, env: Env) -> int:
    from ..inventory.disks import take_inventory
    from ..drivers.diskstate import PROBLEMS
    from ..tune.verify import unverified, verify_all
    site = env.recovered_site(args)
    inv = take_inventory(env.host)
    for note in site.platform.warnings():
        env.err.write("sdtune: warning: %s\n" % note)
    states = verify_all(env.host, site.flavour, site.verify_sources(), inv)
    problems = unverified(inv, states)
    if args.output == "json":
        env.out.write(to_json({"disks": [s.to_json() for s in states]}))
    else:
        env.out.write(render_table(COLUMNS, states, args.scripted))
    for line in problems:
        env.err.write("sdtune: %s\n" % line)
    if problems:
        return EXIT_FAILED
    return EXIT_PROBLEMS if any(s.state in PROBLEMS for s in states) \
        else EXIT_OK
