"""`sdtune plan|apply|history|rollback` and the crash recovery every
state-changing command starts with.  The work is in plan.py,
transaction.py, journal.py and verify.py; this module wires them to the
command line.
"""

import json
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional, TextIO, Tuple

from ..certify import records
from ..errors import (EXIT_OK, EXIT_PROBLEMS, LockedError, RefusedError,
                      SdtuneError, UsageError)
from ..host import Host
from ..inventory.disks import Inventory, take_inventory
from ..knowndrives import load_table
from ..report import render_table, to_json
from .journal import OPEN_STATES, Journal, sha256
from .plan import (Options, Plan, load_plan, make_plan, now_iso,
                   recheck_saved, render_plan)
from .transaction import Transaction
from .verify import verify_all


@dataclass
class Context:
    host: Host
    sd_conf: str          # system path
    state_dir: str        # system path
    flavour: str
    generations: int
    known_drives: Optional[str] = None

    def transaction(self) -> Transaction:
        return Transaction(self.host, self.sd_conf, self.state_dir,
                           self.flavour, self.generations)

    def verifier(self):
        def verify() -> List[dict]:
            return [s.to_json() for s in verify_all(self.host, self.sd_conf,
                                                    self.flavour)]
        return verify


def recover_if_needed(ctx: Context, err: TextIO,
                      changes: bool = False) -> None:
    """Close transactions a crash left open, unless another sdtune is
    running one right now (it holds the lock).

    Only root can finish a change; an ordinary user is told about it and
    goes on reading.  When an open transaction cannot be closed (sd.conf
    matches neither side), a command that only reads warns and goes on;
    one that ``changes`` sd.conf refuses.
    """
    journal = Journal(ctx.host, ctx.state_dir)
    try:
        entries, bad = journal.scan()
    except SdtuneError as e:
        if changes:
            raise
        err.write("sdtune: warning: cannot check for an interrupted change:"
                  " %s\n" % e)
        return
    for b in bad:
        err.write("sdtune: warning: skipping journal entry %s: %s\n"
                  % (b.path, b.reason))
    open_ids = [e.id for e in entries if e.state in OPEN_STATES]
    if not open_ids:
        return
    if not ctx.host.is_root():
        err.write("sdtune: warning: journal entry %s is an interrupted "
                  "change; 'sdtune recover' as root completes or undoes it"
                  "\n" % ", ".join(open_ids))
        return
    tx = ctx.transaction()
    try:
        with tx.lock():
            for said in tx.recover(ctx.verifier()):
                err.write("sdtune: recovered: %s\n" % said)
    except LockedError:
        return
    except RefusedError as e:
        if changes:
            raise
        err.write("sdtune: warning: %s\n" % e)


def open_change(ctx: Context) -> str:
    """Whether an interrupted command left sd.conf half changed, said
    for the operator (read-only)."""
    entries = Journal(ctx.host, ctx.state_dir).entries()
    open_entries = [e for e in entries if e.state in OPEN_STATES]
    if not open_entries:
        return "no change to sd.conf is half done"
    e = open_entries[-1]
    where = "sd.conf was written, update_drv has not run" \
        if e.state == "written" else "sd.conf may have been written"
    return ("journal entry %s (%s) is half done (%s): the next sdtune "
            "command, or 'sdtune recover', completes or undoes it"
            % (e.id, e.action, where))


def cmd_recover(ctx: Context, accept_current: bool, out: TextIO) -> int:
    """`sdtune recover [--accept-current]`: what every command does first,
    on demand; with --accept-current, close what cannot be closed
    otherwise, keeping sd.conf as it is (journalled)."""
    tx = ctx.transaction()
    with tx.lock():
        try:
            said = tx.recover(ctx.verifier())
        except RefusedError:
            if not accept_current:
                raise
            said = tx.accept_current()
    for line in said or ["nothing to recover: no interrupted change"]:
        out.write("%s\n" % line)
    return EXIT_OK


def build_plan(ctx: Context, options: Options
               ) -> Tuple[Plan, Inventory, str]:
    """The plan made now, the inventory it rests on, and the sd.conf text
    it starts from."""
    host = ctx.host
    text = host.read_bytes(host.sys_path(ctx.sd_conf)).decode("latin-1")
    inv = take_inventory(host)
    recs, problems = records.load_checked(host, ctx.state_dir)
    # Said with the inventory's warnings by cmd_plan and cmd_apply: the
    # plan is made without these files.
    inv.notes.extend(problems)
    table = load_table(host, ctx.known_drives)
    return make_plan(text, ctx.sd_conf, ctx.flavour, inv, recs, table,
                     options, host.now()), inv, text


def cmd_plan(ctx: Context, options: Options, out: TextIO, err: TextIO,
             save: Optional[str] = None, as_json: bool = False) -> int:
    plan, inv, _ = build_plan(ctx, options)
    for note in inv.notes:
        err.write("sdtune: warning: %s\n" % note)
    if save:
        # A new file only: an existing one (sd.conf, a state file, a file
        # another user planted in /var/tmp) is never replaced.
        ctx.host.create_new(save, (json.dumps(plan.to_json(), indent=2)
                                   + "\n").encode("utf-8"), mode=0o600)
    if as_json:
        doc = plan.to_json()
        doc["saved"] = save
        out.write(to_json(doc))
        return EXIT_OK
    out.write(render_plan(plan))
    if save:
        out.write("plan saved to %s (apply it with: sdtune apply %s)\n"
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


def cmd_apply(ctx: Context, plan_path: Optional[str], yes: bool, tty: bool,
              out: TextIO, options: Options, err: TextIO = sys.stderr,
              ask: Ask = ask_terminal) -> int:
    if plan_path:
        saved = load_plan(ctx.host, plan_path)
        if saved.sd_conf != ctx.sd_conf:
            raise RefusedError("apply", plan_path, "the plan is for %s, "
                               "this system's sd.conf is %s"
                               % (saved.sd_conf, ctx.sd_conf))
        fresh, inv, text = build_plan(ctx, options)
        if fresh.base_sha256 == saved.new_sha256:
            out.write("nothing to change: sd.conf already is this plan's "
                      "result\n")
            return EXIT_OK
        if fresh.base_sha256 != saved.base_sha256:
            raise RefusedError("apply", plan_path, "sd.conf changed since "
                               "the plan was made (sha256 %s, the plan was "
                               "made from %s): make a new plan"
                               % (fresh.base_sha256[:16],
                                  saved.base_sha256[:16]))
        plan = recheck_saved(saved, fresh, text, plan_path)
    else:
        plan, inv, _ = build_plan(ctx, options)
    for note in inv.notes:
        err.write("sdtune: warning: %s\n" % note)
    out.write(render_plan(plan))
    if plan.new_sha256 == plan.base_sha256:
        return EXIT_OK
    if not _confirmed(yes, tty, out, ask):
        return EXIT_OK
    summary = ["%s %s" % (c["key"], ", ".join(
        "%s:%s" % kv for kv in c["set"].items())) for c in plan.changes]
    entry = ctx.transaction().run(
        "apply", plan.new_text.encode("latin-1"), plan.base_sha256,
        summary, plan.diff, ctx.verifier())
    report_entry(entry, out)
    return EXIT_OK


def report_entry(entry, out: TextIO) -> None:
    """What a finished transaction did: its journal entry, update_drv's
    words and the verify states."""
    out.write("journal entry %s: %s\n" % (entry.id, entry.result))
    drv = entry.update_drv
    text = (drv.get("stderr") or "") + (drv.get("stdout") or "")
    out.write("".join("  update_drv: %s\n" % line for line in
                      text.splitlines()))
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


def cmd_rollback(ctx: Context, entry_id: Optional[str], last: bool,
                 yes: bool, tty: bool, out: TextIO,
                 ask: Ask = ask_terminal) -> int:
    journal = Journal(ctx.host, ctx.state_dir)
    entries = [e for e in journal.entries()
               if e.state in ("done", "recovered")]
    if last:
        if not entries:
            raise UsageError("rollback", journal.dir, "no change to roll "
                             "back")
        entry = entries[-1]
    else:
        wanted = _entry_id(entry_id or "")
        entry = next((e for e in entries if e.id == wanted), None)
        if entry is None:
            raise UsageError("rollback", entry_id or "", "no finished "
                             "journal entry with that id (sdtune history)")
    if not journal.has_copy(entry.id, "old"):
        raise RefusedError("rollback", entry.id, "its saved copy was pruned"
                           " (only the newest generations are kept)")
    old = journal.copy(entry.id, "old")
    if sha256(old) != entry.old_sha256:
        raise RefusedError("rollback", entry.id, "the saved copy does not "
                           "match the journal's checksum")
    host = ctx.host
    current = host.read_bytes(host.sys_path(ctx.sd_conf))
    if sha256(current) != entry.new_sha256:
        raise RefusedError("rollback", entry.id, "sd.conf changed after "
                           "this entry (sha256 %s, entry wrote %s): roll "
                           "back the later entries first"
                           % (sha256(current)[:16], entry.new_sha256[:16]))
    from ..sdconf.edit import unified_diff
    diff = unified_diff(current.decode("latin-1"), old.decode("latin-1"),
                        ctx.sd_conf, ctx.sd_conf + " (entry %s)" % entry.id)
    out.write("roll back journal entry %s (%s %s):\n%s" % (
        entry.id, entry.action, now_iso(entry.time), diff))
    if not _confirmed(yes, tty, out, ask):
        return EXIT_OK
    done = ctx.transaction().run("rollback", old, entry.new_sha256,
                                 ["restore the sd.conf of before entry %s"
                                  % entry.id], diff, ctx.verifier(),
                                 rollback_of=entry.id)
    report_entry(done, out)
    return EXIT_OK


def _entry_id(text: str) -> str:
    """A journal id as the operator may type it: 000001 or 1."""
    return "%06d" % int(text) if text.isdigit() and len(text) <= 6 else text


HISTORY_COLUMNS = [
    ("ID", lambda e, p: e.id),
    ("TIME", lambda e, p: "%d" % e.time if p else now_iso(e.time)),
    ("USER", lambda e, p: e.user),
    ("ACTION", lambda e, p: e.action + ("" if not e.rollback_of else
                                        " of %s" % e.rollback_of)),
    ("STATE", lambda e, p: e.state),
    ("OLD", lambda e, p: e.old_sha256 if p else e.old_sha256[:12]),
    ("NEW", lambda e, p: e.new_sha256 if p else e.new_sha256[:12]),
    ("RESULT", lambda e, p: e.result or "-"),
]


def cmd_history(ctx: Context, out: TextIO, err: TextIO,
                as_json: bool = False, scripted: bool = False,
                parsable: bool = False) -> int:
    """The journal as it is, read-only: an entry that cannot be read is
    reported (stderr, and under "unreadable" in JSON) and the command
    exits 1; an interrupted change shows in its state."""
    entries, bad = Journal(ctx.host, ctx.state_dir).scan()
    for b in bad:
        err.write("sdtune: warning: cannot read journal entry %s: %s\n"
                  % (b.path, b.reason))
    if as_json:
        out.write(to_json({"entries": [
            {"id": e.id, "time": e.time, "user": e.user, "action": e.action,
             "state": e.state, "rollback_of": e.rollback_of,
             "old_sha256": e.old_sha256, "new_sha256": e.new_sha256,
             "summary": e.summary, "update_drv": e.update_drv,
             "verify": e.verify, "result": e.result} for e in entries],
            "unreadable": [{"id": b.id, "path": b.path, "reason": b.reason}
                           for b in bad]}))
    else:
        out.write(render_table(HISTORY_COLUMNS, entries, scripted,
                               parsable))
    return EXIT_PROBLEMS if bad else EXIT_OK
