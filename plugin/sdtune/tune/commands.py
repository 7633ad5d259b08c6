"""`sdtune plan|apply|history|rollback` and the crash recovery every
state-changing command starts with.  The work is in plan.py,
transaction.py, journal.py and verify.py; this module wires them to the
command line.
"""

import json
import sys
from dataclasses import dataclass
from typing import List, Optional, TextIO

from ..certify import records
from ..errors import EXIT_OK, RefusedError, SdtuneError, UsageError
from ..host import Host
from ..inventory.disks import take_inventory
from ..knowndrives import load_table
from ..report import render_table, to_json
from .journal import OPEN_STATES, Journal, sha256
from .plan import Options, load_plan, make_plan, now_iso, render_plan
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


def recover_if_needed(ctx: Context, err: TextIO) -> None:
    """Close transactions a crash left open, unless another sdtune is
    running one right now (it holds the lock)."""
    journal = Journal(ctx.host, ctx.state_dir)
    if not any(e.state in OPEN_STATES for e in journal.entries()):
        return
    tx = ctx.transaction()
    try:
        with tx.lock():
            for said in tx.recover(ctx.verifier()):
                err.write("sdtune: recovered: %s\n" % said)
    except RefusedError as e:
        if "locked" not in e.reason:
            raise


def build_plan(ctx: Context, options: Options):
    host = ctx.host
    text = host.read_bytes(host.sys_path(ctx.sd_conf)).decode("latin-1")
    inv = take_inventory(host)
    recs = records.load_all(host, ctx.state_dir)
    table = load_table(host, ctx.known_drives)
    return make_plan(text, ctx.sd_conf, ctx.flavour, inv, recs, table,
                     options, host.now()), inv


def cmd_plan(ctx: Context, options: Options, out: TextIO,
             output: Optional[str] = None) -> int:
    plan, inv = build_plan(ctx, options)
    for note in inv.notes:
        sys.stderr.write("sdtune: warning: %s\n" % note)
    out.write(render_plan(plan))
    if output:
        ctx.host.write_atomic(output, (json.dumps(plan.to_json(), indent=2)
                                       + "\n").encode("utf-8"))
        out.write("plan written to %s (apply it with: sdtune apply %s)\n"
                  % (output, output))
    return EXIT_OK


def _confirmed(yes: bool, tty: bool, out: TextIO, ask) -> bool:
    if yes:
        return True
    if not tty:
        out.write("dry run: nothing changed (give --yes to apply)\n")
        return False
    answer = ask("apply these changes to sd.conf? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        out.write("nothing changed\n")
        return False
    return True


def cmd_apply(ctx: Context, plan_path: Optional[str], yes: bool, tty: bool,
              out: TextIO, options: Options, ask=input) -> int:
    if plan_path:
        plan = load_plan(ctx.host, plan_path)
        if plan.sd_conf != ctx.sd_conf:
            raise RefusedError("apply", plan_path, "the plan is for %s, "
                               "this system's sd.conf is %s"
                               % (plan.sd_conf, ctx.sd_conf))
    else:
        plan, _ = build_plan(ctx, options)
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
    _report(entry, out)
    return EXIT_OK


def _report(entry, out: TextIO) -> None:
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


def cmd_rollback(ctx: Context, entry_id: Optional[str], last: bool,
                 yes: bool, tty: bool, out: TextIO, ask=input) -> int:
    journal = Journal(ctx.host, ctx.state_dir)
    entries = [e for e in journal.entries()
               if e.state in ("done", "recovered")]
    if last:
        if not entries:
            raise UsageError("rollback", journal.dir, "no change to roll "
                             "back")
        entry = entries[-1]
    else:
        entry = next((e for e in entries if e.id == entry_id), None)
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
    _report(done, out)
    return EXIT_OK


HISTORY_COLUMNS = [
    ("ID", lambda e, p: e.id),
    ("TIME", lambda e, p: str(e.time) if p else now_iso(e.time)),
    ("USER", lambda e, p: e.user),
    ("ACTION", lambda e, p: e.action + ("" if not e.rollback_of else
                                        " of %s" % e.rollback_of)),
    ("STATE", lambda e, p: e.state),
    ("OLD", lambda e, p: e.old_sha256 if p else e.old_sha256[:12]),
    ("NEW", lambda e, p: e.new_sha256 if p else e.new_sha256[:12]),
    ("RESULT", lambda e, p: e.result or "-"),
]


def cmd_history(ctx: Context, out: TextIO, as_json: bool = False,
                scripted: bool = False) -> int:
    entries = Journal(ctx.host, ctx.state_dir).entries()
    if as_json:
        out.write(to_json({"entries": [
            {"id": e.id, "time": e.time, "user": e.user, "action": e.action,
             "state": e.state, "rollback_of": e.rollback_of,
             "old_sha256": e.old_sha256, "new_sha256": e.new_sha256,
             "summary": e.summary, "update_drv": e.update_drv,
             "verify": e.verify, "result": e.result} for e in entries]}))
    else:
        out.write(render_table(HISTORY_COLUMNS, entries, scripted))
    return EXIT_OK


def parse_generations(value: str, source: str) -> int:
    try:
        n = int(value)
        if n < 1:
            raise ValueError
        return n
    except ValueError:
        raise SdtuneError("load config", source, "[journal] generations = "
                          "'%s': expected a whole number >= 1" % value, 2)
