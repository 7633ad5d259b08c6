"""`sdtune plan`, `apply`, `history`, `rollback` and `recover`: the
sd.conf changes, each a transaction in the journal."""

import argparse
import sys

from ..errors import UsageError
from .base import Env, json_output

COMMANDS = ("plan", "apply", "history", "rollback", "recover")
# The commands that change sd.conf (an interruption names their state).
CHANGING = ("apply", "rollback", "recover")


def _allow_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-ashift-mismatch", action="store_true",
                   help="propose physical-block-size even for models "
                   "in or spare for ashift=9 vdevs")
    p.add_argument("--allow-no-nv-evidence", action="store_true",
                   help="propose cache-nonvolatile from flush timing "
                   "without the drive's NV_SUP")


def add_parser(sub, name: str) -> None:
    if name == "plan":
        plan = sub.add_parser("plan", help="proposed sd-config-list "
                              "changes, with the reason for each")
        plan.add_argument("--save", dest="plan_file", metavar="FILE",
                          help="also write the plan to FILE (a new file) "
                          "for `apply FILE`")
        json_output(plan)
        _allow_flags(plan)
    elif name == "apply":
        apply_ = sub.add_parser("apply", help="apply a plan as one "
                                "transaction: lock, back up, atomic write, "
                                "update_drv, verify")
        apply_.add_argument("plan_file", nargs="?", metavar="PLAN")
        apply_.add_argument("--yes", action="store_true",
                            help="apply without asking (else a dry run "
                            "unless on a terminal)")
        _allow_flags(apply_)
    elif name == "history":
        history = sub.add_parser("history", help="the journal of changes")
        history.add_argument("-H", dest="scripted", action="store_true")
        history.add_argument("-p", dest="parsable", action="store_true",
                             help="exact times (seconds) and full "
                             "checksums")
        json_output(history)
    elif name == "rollback":
        rollback = sub.add_parser("rollback", help="restore the sd.conf of "
                                  "before a journal entry, as a "
                                  "transaction")
        rollback.add_argument("entry", nargs="?", metavar="ID")
        rollback.add_argument("--last", action="store_true")
        rollback.add_argument("--yes", action="store_true")
    else:
        recover = sub.add_parser("recover", help="finish or undo a change "
                                 "an interruption left open; "
                                 "--accept-current when sd.conf matches "
                                 "neither side")
        recover.add_argument("--accept-current", action="store_true",
                             help="keep sd.conf as it is now and close the "
                             "open journal entry")


def run(args: argparse.Namespace, env: Env) -> int:
    from ..tune import commands as tc
    from ..tune.plan import Options
    if args.command == "history":
        # Read-only whatever state the journal is in: it is the tool for
        # looking at an interrupted change, so it recovers nothing.
        return tc.cmd_history(env.tune_context(args), env.out, env.err,
                              args.output == "json", args.scripted,
                              args.parsable)
    if args.command == "recover":
        return tc.cmd_recover(env.tune_context(args), args.accept_current,
                              env.out)
    changes = args.command in ("apply", "rollback")
    ctx = env.recovered_context(args, changes)
    tty = sys.stdin.isatty() and env.out.isatty()
    if args.command in ("plan", "apply"):
        options = Options(args.allow_ashift_mismatch,
                          args.allow_no_nv_evidence)
        if args.command == "plan":
            return tc.cmd_plan(ctx, options, env.out, env.err,
                               args.plan_file, args.output == "json")
        return tc.cmd_apply(ctx, args.plan_file, args.yes, tty, env.out,
                            options, env.err)
    if args.entry is None and not args.last:
        raise UsageError("rollback", "", "give a journal ID or --last")
    if args.entry is not None and args.last:
        raise UsageError("rollback", args.entry, "give a journal ID or "
                         "--last, not both")
    return tc.cmd_rollback(ctx, args.entry, args.last, args.yes, tty,
                           env.out)
