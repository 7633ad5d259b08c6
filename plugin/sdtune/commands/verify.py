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
kernel's values could not be read at all.

`sdtune prove [DISK ...]`: verify's answer shown through the paths ZFS
uses (tune/prove.py: DKIOCGMEDIAINFOEXT, timed DKIOCFLUSHWRITECACHE,
the throttle), without writing; exit 1 when any disk is
"contradicted", 4 with `sdtune: cannot prove 'DISK': why` for each
disk that could not be proven."""

import argparse

from ..errors import EXIT_FAILED, EXIT_OK, EXIT_PROBLEMS, SdtuneError
from ..tables import render_table, to_json
from .base import Env, json_output

COMMANDS = ("verify", "prove")

COLUMNS = [("NAME", lambda s, p: s.name),
           ("KEY", lambda s, p: "-" if s.key is None else
            (s.key if p else '"%s"' % s.key)),
           ("STATE", lambda s, p: s.state),
           ("DETAILS", lambda s, p: "; ".join(s.details) or "-")]


def add_parser(sub, name: str) -> None:
    if name == "prove":
        prove = sub.add_parser(
            "prove", help="per disk: proven, pending reboot, not in effect "
            "or contradicted, through the ioctls ZFS uses (writes nothing)")
        prove.add_argument("-H", dest="scripted", action="store_true")
        prove.add_argument("--flushes", type=_flushes, default=None,
                           metavar="N", help="timed cache flushes per disk "
                           "(default 64)")
        prove.add_argument("disks", nargs="*", metavar="DISK")
        json_output(prove)
        return
    verify = sub.add_parser("verify", help="per disk: applied, pending "
                            "reboot, not matched or ignored by sd (or, for "
                            "NVMe, by nvme)")
    verify.add_argument("-H", dest="scripted", action="store_true")
    json_output(verify)


def _flushes(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 10000:
        raise argparse.ArgumentTypeError("invalid count '%s': 1 to 10000"
                                         % text)
    return n


def _us(ns) -> str:
    """Nanoseconds as microseconds, three significant digits."""
    if ns is None:
        return "-"
    us = ns / 1000.0
    return ("%.3g" % us if us < 100 else "%.0f" % us) + " us"


def _expected(c) -> str:
    if c.expected is None:
        return "-"
    if isinstance(c.expected, bool):
        return "true" if c.expected else "false"
    return str(c.expected)


def _measured(c) -> str:
    n = c.numbers
    if c.tunable in ("physical-block-size", "min-phys-block-size"):
        return "-" if c.measured is None else \
            "DKIOCGMEDIAINFOEXT %s B" % c.measured
    if c.tunable == "cache-nonvolatile":
        if n.get("flush_median_ns") is None:
            return "flush failed"
        cert = n.get("certified_flush_ns")
        return "flush %s median, p99 %s (%d calls); %s; ceiling %s" % (
            _us(n["flush_median_ns"]), _us(n["flush_p99_ns"]),
            n["flush_calls"], "no certified flush cost" if cert is None
            else "certify measured %s" % _us(cert), _us(n["ceiling_ns"]))
    return "-" if c.measured is None else "kernel %s" % c.measured


PROVE_COLUMNS = [
    ("NAME", lambda r, p: r[0].name),
    ("STATE", lambda r, p: r[0].state),
    ("TUNABLE", lambda r, p: r[1].tunable if r[1] else "-"),
    ("APPLIED", lambda r, p: _expected(r[1]) if r[1] else "-"),
    ("AGREES", lambda r, p: "-" if r[1] is None or r[1].agrees is None
     else ("yes" if r[1].agrees else "no")),
    ("MEASURED", lambda r, p: _measured(r[1]) if r[1] else
     "; ".join(r[0].details) or "-")]


def run_prove(args: argparse.Namespace, env: Env) -> int:
    from ..inventory.disks import take_inventory
    from ..records import storage
    from ..certify.travel import time_iso
    from ..tune.prove import FLUSHES, PROBLEMS, prove_all, save_proofs
    site = env.recovered_site(args)
    inv = take_inventory(env.host)
    for note in site.platform.warnings():
        env.err.write("sdtune: warning: %s\n" % note)
    records, problems = storage.load_checked(env.host, site.state_dir)
    for line in problems:
        env.err.write("sdtune: warning: %s\n" % line)
    proofs, errors = prove_all(env.host, site.flavour,
                               site.verify_sources(), inv, args.disks,
                               records, args.flushes or FLUSHES)
    if args.output == "json":
        env.out.write(to_json({"disks": [p.to_json() for p in proofs]}))
    else:
        rows = [(p, c) for p in proofs for c in p.checks] + \
            [(p, None) for p in proofs if not p.checks]
        order = {p.name: i for i, p in enumerate(proofs)}
        rows.sort(key=lambda r: order[r[0].name])
        env.out.write(render_table(PROVE_COLUMNS, rows, args.scripted))
        # Why a disk is not proven, under the table (not in -H output,
        # whose every line is a row).
        for p in proofs if not args.scripted else []:
            if p.checks and p.details and p.state != "proven":
                env.out.write("%s: %s\n" % (p.name, "; ".join(p.details)))
    for line in errors:
        env.err.write("sdtune: %s\n" % line)
    if proofs and not args.disks:
        # Kept for `sdtune report` (the proof after apply); a proof of
        # some disks only would stand for the whole appliance there.
        try:
            save_proofs(env.host, site.state_dir, proofs,
                        time_iso(env.host.now()))
        except SdtuneError as e:
            env.err.write("sdtune: warning: the proofs are not kept for "
                          "sdtune report: %s\n" % e)
    if errors:
        return EXIT_FAILED
    return EXIT_PROBLEMS if any(p.state in PROBLEMS for p in proofs) \
        else EXIT_OK


def run(args: argparse.Namespace, env: Env) -> int:
    if args.command == "prove":
        return run_prove(args, env)
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
