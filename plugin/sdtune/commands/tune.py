"""`sdtune plan`, `apply`, `history`, `rollback` and `recover`: the
sd.conf changes, each a transaction in the journal."""

import argparse
import json
import sys
from typing import Callable, Optional, TextIO

from ..errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from ..report import render_table, to_json
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
    from ..tune.plan import Overrides
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
    site = env.recovered_site(args, changes)
    tty = sys.stdin.isatty() and env.out.isatty()
    if args.command in ("plan", "apply"):
        overrides = Overrides(args.allow_ashift_mismatch,
                              args.allow_no_nv_evidence,
                              tuple(args.allow_key_collision))
        if args.command == "plan":
            return plan(site, overrides, env, args.plan_file,
                        args.output == "json")
        return apply(site, args.plan_file, args.yes, tty, overrides, env)
    if args.entry is None and not args.last:
        raise UsageError("rollback", "", "give a journal ID or --last")
    if args.entry is not None and args.last:
        raise UsageError("rollback", args.entry, "give a journal ID or "
                         "--last, not both")
    return rollback(site, args.entry, args.last, args.yes, tty, env)


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


def _confirmed(yes: bool, tty: bool, out: TextIO, ask: Ask) -> bool:
    if yes:
        return True
    if not tty:
        out.write("dry run: nothing changed (give --yes to apply)\n")
        return False
    try:
        answer = ask("apply these changes to sd.conf? [y/N] ", out)
    except EOFError:
        answer = ""
        out.write("\n")
    if answer.strip().lower() not in ("y", "yes"):
        out.write("nothing changed\n")
        return False
    return True


def apply(site, plan_path: Optional[str], yes: bool, tty: bool, overrides,
          env: Env, ask: Ask = ask_terminal) -> int:
    from ..tune.plan import render_plan
    from ..tune.site import apply_summary, plan_to_apply
    todo = plan_to_apply(site, plan_path, overrides)
    if todo.plan is None:
        env.out.write("nothing to change: sd.conf already is this plan's "
                      "result\n")
        return EXIT_OK
    made = todo.plan
    _warn(env, todo.inventory.notes)
    env.out.write(render_plan(made))
    if made.new_sha256 == made.base_sha256:
        return EXIT_OK
    _warn(env, site.platform.warnings())
    # The platform's files and steps, shown before asking; missing boot
    # media is refused here, before anything is asked or written.
    how = site.platform.persistence(site.platform.base_text(),
                                    made.new_text.encode("latin-1"))
    env.out.write(describe_change(how))
    if not _confirmed(yes, tty, env.out, ask):
        return EXIT_OK
    entry = site.transaction().run(
        "apply", made.new_text.encode("latin-1"), made.base_sha256,
        apply_summary(made), made.diff, site.verifier())
    report_entry(entry, env.out)
    return EXIT_OK


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
             tty: bool, env: Env, ask: Ask = ask_terminal) -> int:
    from ..tune.plan import now_iso
    from ..tune.site import rollback_to
    to = rollback_to(site, entry_id, last)
    entry = to.entry
    env.out.write("roll back journal entry %s (%s %s):\n%s" % (
        entry.id, entry.action, now_iso(entry.time), to.diff))
    if not _confirmed(yes, tty, env.out, ask):
        return EXIT_OK
    for note in to.change.notes:
        env.out.write("  %s\n" % note)
    done = site.transaction().run("rollback", to.old, to.base_sha256,
                                  ["restore the sd.conf of before entry %s"
                                   % entry.id], to.diff, site.verifier(),
                                  rollback_of=entry.id, change=to.change)
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
