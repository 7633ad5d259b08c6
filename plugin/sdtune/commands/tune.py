# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune plan`, `apply`, `history`, `rollback` and `recover`: the
sd.conf changes, each a transaction in the journal."""

import argparse
import json
import sys
from typing import Callable, Optional, Sequence, TextIO

from ..errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from ..tables import change_json, render_table, to_json
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
    p.add_argument("--allow-key-collision", action="append", default=[],
                   metavar="KEY",
                   help="for KEY (24 characters, as in sd.conf), whose "
                   "models or certified serials disagree: write the "
                   "largest physical-block-size and the smallest "
                   "throttles (never cache-nonvolatile); repeatable")
    p.add_argument("--allow-firmware-mismatch", action="store_true",
                   help="use certifications made with a firmware that no "
                   "installed disk of their key runs")


def _driver_flag(p: argparse.ArgumentParser) -> None:
    # No default here: `apply PLAN` without --driver follows the saved
    # plan (as rollback follows its journal entry); everything else
    # takes sd.
    p.add_argument("--driver", choices=("sd", "nvme"),
                   help="the driver whose .conf to change: sd (sd.conf, "
                   "sd-config-list; the default, or the saved plan's) or "
                   "nvme (nvme.conf, nvme-config-list, for NVMe namespaces "
                   "under blkdev)")


def add_parser(sub, name: str) -> None:
    if name == "plan":
        plan = sub.add_parser("plan", help="proposed sd-config-list "
                              "changes, with the reason for each")
        plan.add_argument("--save", dest="plan_file", metavar="FILE",
                          help="also write the plan to FILE (a new file) "
                          "for `apply FILE`")
        json_output(plan)
        _allow_flags(plan)
        _driver_flag(plan)
    elif name == "apply":
        apply_ = sub.add_parser("apply", help="apply a plan as one "
                                "transaction: lock, back up, atomic write, "
                                "update_drv, verify")
        apply_.add_argument("plan_file", nargs="?", metavar="PLAN")
        apply_.add_argument("--yes", action="store_true",
                            help="apply without asking (else a dry run "
                            "unless on a terminal)")
        json_output(apply_)
        _allow_flags(apply_)
        _driver_flag(apply_)
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
        json_output(rollback)
    else:
        recover = sub.add_parser("recover", help="finish or undo a change "
                                 "an interruption left open; "
                                 "--accept-current when sd.conf matches "
                                 "neither side")
        recover.add_argument("--accept-current", action="store_true",
                             help="keep sd.conf as it is now and close the "
                             "open journal entry")


def run(args: argparse.Namespace, env: Env) -> int:
    from ..drivers.planning import Overrides
    if args.command == "history":
        # Read-only whatever state the journal is in: it is the tool for
        # looking at an interrupted change, so it recovers nothing.
        return history(env.tune_site(args), env,
                       args.output == "json", args.scripted, args.parsable)
    if args.command == "recover":
        from ..tune.site import recover_now
        for line in recover_now(env.tune_site(args), args.accept_current):
            env.out.write("%s\n" % line)
        return EXIT_OK
    changes = args.command in ("apply", "rollback")
    if args.command == "apply" and args.plan_file and args.driver is None:
        from ..tune.plan import load_plan
        args.driver = load_plan(env.host, args.plan_file).driver
    site = env.recovered_site(args, changes)
    tty = sys.stdin.isatty() and env.out.isatty()
    if args.command in ("plan", "apply"):
        overrides = Overrides.from_args(args)
        if args.command == "plan":
            return plan(site, overrides, env, args.plan_file,
                        args.output == "json")
        return apply(site, args.plan_file, args.yes, tty, overrides, env,
                     as_json=args.output == "json")
    if args.entry is None and not args.last:
        raise UsageError("rollback", "", "give a journal ID or --last")
    if args.entry is not None and args.last:
        raise UsageError("rollback", args.entry, "give a journal ID or "
                         "--last, not both")
    return rollback(site, args.entry, args.last, args.yes, tty, env,
                    as_json=args.output == "json")


def _warn(env: Env, notes) -> None:
    for note in notes:
        env.err.write("sdtune: warning: %s\n" % note)


def plan(site, overrides, env: Env, save: Optional[str] = None,
         as_json: bool = False) -> int:
    from ..tune.plan import render_plan
    from ..tune.site import build_plan
    made, inv, _ = build_plan(site, overrides)
    _warn(env, inv.notes)
    if save:
        # A new file only: an existing one (sd.conf, a state file, a file
        # another user planted in /var/tmp) is never replaced.
        site.host.create_new(save, (json.dumps(made.to_json(), indent=2)
                                    + "\n").encode("utf-8"), mode=0o600)
    if as_json:
        doc = made.to_json()
        doc["saved"] = save
        env.out.write(to_json(doc))
        return EXIT_OK
    env.out.write(render_plan(made))
    if save:
        env.out.write("plan saved to %s (apply it with: sdtune apply %s)\n"
                      % (save, save))
    return EXIT_OK


Ask = Callable[[str, TextIO], str]


def ask_terminal(question: str, out: TextIO) -> str:
    """The operator's answer: the question on our standard output, one
    line from standard input; end of input (Ctrl-D) is EOFError."""
    out.write(question)
    out.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _confirmed(yes: bool, tty: bool, out: TextIO, ask: Ask,
               conf: str) -> bool:
    if yes:
        return True
    if not tty:
        out.write("dry run: nothing changed (give --yes to apply)\n")
        return False
    try:
        answer = ask("apply these changes to %s? [y/N] " % conf, out)
    except EOFError:
        answer = ""
        out.write("\n")
    if answer.strip().lower() not in ("y", "yes"):
        out.write("nothing changed\n")
        return False
    return True


def apply(site, plan_path: Optional[str], yes: bool, tty: bool, overrides,
          env: Env, ask: Ask = ask_terminal, as_json: bool = False) -> int:
    """`sdtune apply`; with `as_json` the change document (tables.py
    change_json, extra key "plan") is all of standard output, and without
    `yes` it is a dry run: nothing is asked."""
    from ..tune.changes import dry_run_json, entry_json
    from ..tune.plan import render_plan
    from ..tune.site import apply_summary, plan_to_apply
    todo = plan_to_apply(site, plan_path, overrides)
    if todo.plan is None:
        if as_json:
            # sd.conf already is the saved plan's result: nothing to do.
            env.out.write(to_json(change_json(False, dry_run=not yes,
                                              plan=None)))
            return EXIT_OK
        env.out.write("nothing to change: %s.conf already is this plan's "
                      "result\n" % site.driver)
        return EXIT_OK
    made = todo.plan
    _warn(env, todo.inventory.notes)
    if not as_json:
        env.out.write(render_plan(made))
    if made.new_sha256 == made.base_sha256:
        if as_json:
            env.out.write(to_json(change_json(False, dry_run=not yes,
                                              plan=made.to_json())))
        return EXIT_OK
    _warn(env, site.platform.warnings())
    # The platform's files and steps, shown before asking; missing boot
    # media is refused here, before anything is asked or written.
    base = site.platform.base_text()
    new = made.new_text.encode("latin-1")
    how = site.platform.persistence(base, new)
    if as_json:
        if not yes:
            _note(env, how.notes)
            env.out.write(to_json(dry_run_json(
                how, made.diff, new, todo.inventory.disks, site.flavour,
                driver=site.driver, plan=made.to_json())))
            return EXIT_OK
    else:
        env.out.write(describe_change(how))
        if not _confirmed(yes, tty, env.out, ask,
                          "%s.conf" % site.driver):
            return EXIT_OK
    entry = site.transaction().run(
        "apply", new, made.base_sha256,
        apply_summary(made), made.diff, site.verifier())
    if as_json:
        _note(env, entry.notes)
        env.out.write(to_json(entry_json(entry, plan=made.to_json())))
    else:
        report_entry(entry, env.out)
    return EXIT_OK


def _note(env: Env, notes: Sequence[str]) -> None:
    """Under -o json, what the text output says among its lines."""
    for note in notes:
        env.err.write("sdtune: note: %s\n" % note)


def describe_change(how) -> str:
    """What a transaction will write and run, for the operator."""
    lines = ["%s %s (%s)" % ("write" if f.new is not None else "remove",
                             f.path, f.role)
             for f in how.files if f.old != f.new]
    lines += ["run %s" % step for step in how.steps]
    body = "".join("  %s\n" % line for line in lines + how.notes)
    return "this change:\n" + body


def report_entry(entry, out: TextIO) -> None:
    """What a finished transaction did: its journal entry, update_drv's
    words and the verify states."""
    out.write("journal entry %s: %s\n" % (entry.id, entry.result))
    for rec in entry.files:
        out.write("  wrote %s (%s)\n" % (rec.path, rec.role) if
                  rec.new_sha256 is not None else
                  "  removed %s (%s)\n" % (rec.path, rec.role))
    for name, run in (("bootadm", entry.bootadm),
                      ("update_drv", entry.update_drv)):
        text = (run.get("stderr") or "") + (run.get("stdout") or "")
        out.write("".join("  %s: %s\n" % (name, line) for line in
                          text.splitlines()))
    for note in entry.notes:
        out.write("  note: %s\n" % note)
    if entry.handoff is not None:
        module = json.dumps(entry.handoff, sort_keys=True)
        out.write("  boot module for this compute node's CNAPI "
                  "boot_modules:\n  %s\n" % module)
    counts = {}
    for d in entry.verify:
        counts[d["state"]] = counts.get(d["state"], 0) + 1
    if counts:
        out.write("  verify: %s\n" % ", ".join(
            "%d %s" % (n, s) for s, n in sorted(counts.items())))
    if counts.get("pending reboot"):
        out.write("  disks attached before the change keep their old "
                  "values until the next reboot (sdtune verify)\n")
    if counts.get("unknown"):
        out.write("  the kernel's values of some disks could not be read: "
                  "run 'sdtune verify' to see which\n")


def rollback(site, entry_id: Optional[str], last: bool, yes: bool,
             tty: bool, env: Env, ask: Ask = ask_terminal,
             as_json: bool = False) -> int:
    """`sdtune rollback`; with `as_json` the change document (extra key
    "rolled_back": the entry undone, or that would be) is all of
    standard output, and without `yes` it is a dry run."""
    from ..tune.changes import dry_run_json, entry_json
    from ..tune.plan import now_iso
    from ..tune.site import rollback_to
    to = rollback_to(site, entry_id, last)
    entry, site = to.entry, to.site
    if as_json:
        if not yes:
            from ..inventory.disks import take_inventory
            _note(env, to.change.notes)
            env.out.write(to_json(dry_run_json(
                to.change, to.diff, to.old,
                take_inventory(site.host).disks, site.flavour,
                driver=site.driver, rolled_back=entry.id)))
            return EXIT_OK
    else:
        env.out.write("roll back journal entry %s (%s %s):\n%s" % (
            entry.id, entry.action, now_iso(entry.time), to.diff))
        if not _confirmed(yes, tty, env.out, ask,
                          "%s.conf" % site.driver):
            return EXIT_OK
        for note in to.change.notes:
            env.out.write("  %s\n" % note)
    done = site.transaction().run("rollback", to.old, to.base_sha256,
                                  ["restore the %s.conf of before entry %s"
                                   % (site.driver, entry.id)], to.diff,
                                  site.verifier(),
                                  rollback_of=entry.id, change=to.change)
    if as_json:
        _note(env, done.notes)
        env.out.write(to_json(entry_json(done, rolled_back=entry.id)))
    else:
        report_entry(done, env.out)
    return EXIT_OK


def _when(e, parsable: bool) -> str:
    from ..tune.plan import now_iso
    return "%d" % e.time if parsable else now_iso(e.time)


HISTORY_COLUMNS = [
    ("ID", lambda e, p: e.id),
    ("TIME", _when),
    ("USER", lambda e, p: e.user),
    ("ACTION", lambda e, p: e.action + ("" if not e.rollback_of else
                                        " of %s" % e.rollback_of)),
    ("STATE", lambda e, p: e.state),
    ("OLD", lambda e, p: e.old_sha256 if p else e.old_sha256[:12]),
    ("NEW", lambda e, p: e.new_sha256 if p else e.new_sha256[:12]),
    ("RESULT", lambda e, p: e.result or "-"),
    # Last, so that scripts reading the columns before it keep working.
    ("FILE", lambda e, p: "%s.conf" % e.driver),
]


def history(site, env: Env, as_json: bool = False, scripted: bool = False,
            parsable: bool = False) -> int:
    """The journal as it is, read-only: an entry that cannot be read is
    reported (stderr, and under "unreadable" in JSON) and the command
    exits 1; an interrupted change shows in its state."""
    entries, bad = site.journal().scan()
    for b in bad:
        env.err.write("sdtune: warning: cannot read journal entry %s: %s\n"
                      % (b.path, b.reason))
    if as_json:
        env.out.write(to_json({"entries": [
            {"id": e.id, "time": e.time, "user": e.user, "action": e.action,
             "state": e.state, "rollback_of": e.rollback_of,
             "old_sha256": e.old_sha256, "new_sha256": e.new_sha256,
             "summary": e.summary, "update_drv": e.update_drv,
             "verify": e.verify, "result": e.result,
             "files": [r.to_json() for r in e.file_records()],
             "steps": e.steps, "bootadm": e.bootadm,
             "platform": e.platform, "handoff": e.handoff}
            for e in entries],
            "unreadable": [{"id": b.id, "path": b.path, "reason": b.reason}
                           for b in bad]}))
    else:
        env.out.write(render_table(HISTORY_COLUMNS, entries, scripted,
                                   parsable))
    return EXIT_PROBLEMS if bad else EXIT_OK
