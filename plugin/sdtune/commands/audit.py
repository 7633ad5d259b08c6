# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune audit`: findings for pools, drives and sd.conf.  The checks
are in audit.py; this module reads what they need and prints."""

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
    from ..audit import (AuditedConf, Auditor, exit_status,
                         inventory_messages, render, shown, silenced,
                         unreadable)
    from ..records import storage
    from ..inventory.disks import take_inventory
    from ..knowndrives import load_table
    from ..tables import to_json
    from ..driverconf.parser import parse_bytes
    site = env.recovered_site(args)
    host, only_problems = env.host, args.only_problems
    inv = take_inventory(host)
    unread = unreadable(inv)
    # Said before sd.conf is read: an error reading it must not hide
    # what the inventory could not tell.
    for line in inventory_messages(inv, unread):
        env.err.write("sdtune: %s\n" % line)
    conf = parse_bytes(site.platform.base_text())
    recs, problems = storage.load_checked(host, site.state_dir)
    for problem in problems:
        env.err.write("sdtune: warning: %s\n" % problem)
    nvme_platform = site.for_driver("nvme").platform
    # nvme.conf is checked where there is one, NVMe namespace or not.
    nvme_text = nvme_platform.read(nvme_platform.effective)
    auditor = Auditor(inv, recs, load_table(host, site.known_drives),
                      site.flavour,
                      AuditedConf(conf, site.conf_path, site.platform),
                      AuditedConf(None if nvme_text is None else
                                  parse_bytes(nvme_text),
                                  nvme_platform.effective, nvme_platform),
                      env.cfg.space_matters())
    findings, dropped = silenced(auditor.run(), env.cfg.silence)
    if args.output == "json":
        env.out.write(to_json({
            "findings": [f.to_json() for f in shown(findings,
                                                    only_problems)],
            "unreadable": [u.to_json() for u in unread]}))
    else:
        env.out.write(render(findings, only_problems, unread))
        if dropped:
            env.out.write("(%d finding(s) silenced in the configuration)\n"
                          % dropped)
    return exit_status(findings, unread)
