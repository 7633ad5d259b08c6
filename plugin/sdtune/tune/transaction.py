"""Change sd.conf as one crash-safe transaction (apply, rollback, and
`sdconf set|unset --write` on the live file).

Order of a transaction, each step journalled before the next:

  1. check we are root, take the lock (<state_dir>/lock; held by another
     sdtune is a refusal), finish or undo any transaction a crash left
     open (recover);
  2. check sd.conf still has the checksum the change was made from;
  3. lint the new text: it must add nothing the kernel would ignore or
     misread (errors already in the old text do not block a change);
  4. check update_drv can run and sd.conf can be replaced (no symlink,
     a regular file, a writable place): a refusal leaves no journal;
  5. journal entry "prepared" with the old and new bytes saved (a full
     state directory leaves nothing of it behind);
  6. atomic write of sd.conf, entry "written" (if that update fails, the
     old file is written back: the entry says "prepared" and matches);
  7. `update_drv -vf sd`; if it fails, the old file is written back and
     the entry says "undone";
  8. verify what the kernel uses, entry "done".

sd.conf is always the old or the new file, byte for byte: the write is
atomic (host.write_atomic) and every journal update is too.  After a
crash or a signal, recover() looks at open entries and the file's
checksum: a file still old means the change never happened ("undone"), a
new file means it happened and only update_drv/verify are missing
("recovered"); a file that is neither is left to the operator, whose
`sdtune recover --accept-current` closes the entry ("accepted").
"""

import contextlib
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..sdconf.lint import lint
from ..sdconf.parser import Diagnostic, parse_bytes
from .journal import OPEN_STATES, Entry, Journal, sha256

VerifyFn = Callable[[], List[dict]]


def new_errors(old: bytes, new: bytes, flavour: str) -> List[Diagnostic]:
    """Lint errors of the new text that the old one does not have: a
    change must not add what the kernel would ignore, but an operator's
    existing mistake must not block every other change."""
    seen: Dict[Tuple[str, str], int] = {}
    for d in lint(parse_bytes(old), flavour):
        if d.severity == "error":
            seen[(d.code, d.message)] = seen.get((d.code, d.message), 0) + 1
    out = []
    for d in lint(parse_bytes(new), flavour):
        if d.severity != "error":
            continue
        if seen.get((d.code, d.message), 0) > 0:
            seen[(d.code, d.message)] -= 1
        else:
            out.append(d)
    return out


class Transaction:
    """sd.conf, its journal and the lock, for one system root."""

    def __init__(self, host: Host, sd_conf: str, state_dir: str,
                 flavour: str, generations: int = 10) -> None:
        self.host = host
        self.sd_conf = sd_conf                       # system path
        self.path = host.sys_path(sd_conf)
        # As messages name it: with the appliance's name over SSH.
        self.shown = host.where(self.path)
        self.state_dir = state_dir
        self.journal = Journal(host, state_dir)
        self.flavour = flavour
        self.generations = generations
        self.notes: List[str] = []

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """The state directory's lock.  Held by another sdtune is a
        refusal (LockedError, exit 3); a state directory that cannot be
        created or a lock file that cannot be written is a failure (exit
        4) naming that path, not sd.conf."""
        directory = self.host.sys_path(self.state_dir)
        self.host.mkdirs(directory, 0o755)
        with self.host.lock(directory + "/lock"):
            yield

    def current(self) -> bytes:
        return self.host.read_bytes(self.path)

    # -------------------------------------------------------------- recover

    def recover(self, verify: Optional[VerifyFn] = None) -> List[str]:
        """Close transactions a crash left open; say what was done.
        Call with the lock held."""
        said = []
        for entry in self.journal.entries():
            if entry.state not in OPEN_STATES:
                continue
            cur = sha256(self.current())
            if cur == entry.new_sha256:
                self._finish(entry, verify, recovered=True)
                said.append("transaction %s (%s) was interrupted after "
                            "sd.conf was written: completed it (update_drv, "
                            "verify)" % (entry.id, entry.action))
            elif cur == entry.old_sha256:
                entry.state = "undone"
                entry.result = "interrupted before sd.conf changed; " \
                    "nothing was changed"
                self.journal.save(entry)
                said.append("transaction %s (%s) was interrupted before "
                            "sd.conf changed: marked undone" % (entry.id,
                                                                entry.action))
            else:
                raise RefusedError("recover", self.shown, "transaction %s "
                                   "was interrupted and sd.conf matches "
                                   "neither its old nor its new contents "
                                   "(sha256 %s): inspect it (saved copies "
                                   "in %s), then keep it with 'sdtune "
                                   "recover --accept-current'"
                                   % (entry.id, cur[:16], self.journal.dir))
        self.notes += said
        return said

    def accept_current(self) -> List[str]:
        """Close every open transaction, keeping sd.conf as it is now;
        for when it matches neither side.  Call with the lock held."""
        said = []
        cur = sha256(self.current())
        for entry in self.journal.entries():
            if entry.state not in OPEN_STATES:
                continue
            entry.state = "accepted"
            entry.result = "interrupted; sd.conf (sha256 %s) accepted as " \
                "it was by %s with 'sdtune recover --accept-current'" % (
                    cur[:16], self.host.user())
            entry.notes.append("accepted sd.conf sha256 %s" % cur)
            self.journal.save(entry)
            said.append("transaction %s (%s): the current sd.conf is "
                        "accepted" % (entry.id, entry.action))
        return said

    # -------------------------------------------------------------- change

    def run(self, action: str, new: bytes, base_sha: str, summary: List[str],
            diff: str, verify: Optional[VerifyFn] = None,
            rollback_of: Optional[str] = None) -> Entry:
        """Replace sd.conf by `new` if it still has checksum `base_sha`."""
        # Checked first: a non-root run must not even create the lock.
        if not self.host.is_root():
            raise RefusedError(action, self.shown, "must be root: "
                               "update_drv and sd.conf need it")
        with self.lock():
            self.recover(verify)
            old = self.current()
            if sha256(old) != base_sha:
                raise RefusedError("%s" % action, self.shown,
                                   "sd.conf changed since this change was "
                                   "prepared (sha256 %s, expected %s)"
                                   % (sha256(old)[:16], base_sha[:16]))
            errors = new_errors(old, new, self.flavour)
            if errors:
                raise RefusedError(action, self.shown, "the new sd.conf has "
                                   "%d error(s) the kernel would ignore, "
                                   "first: %s" % (len(errors),
                                                  errors[0].message))
            if not self.host.can_run("update_drv"):
                raise SdtuneError(action, self.shown, "update_drv cannot be "
                                  "run: check [commands] update_drv")
            # Before anything is journalled: a symlink, a directory or a
            # read-only place is a refusal with nothing to undo.
            self.host.check_replaceable(self.path)
            entry = Entry(id=self.journal.next_id(), time=self.host.now(),
                          user=self.host.user(), action=action,
                          state="prepared", sd_conf=self.sd_conf,
                          old_sha256=base_sha, new_sha256=sha256(new),
                          diff=diff, summary=summary,
                          rollback_of=rollback_of)
            self._prepare(entry, old, new)
            try:
                self.host.write_atomic(self.path, new)
            except SdtuneError as e:
                self._write_failed(entry, e)
                raise
            entry.state = "written"
            try:
                self.journal.save(entry)
            except SdtuneError as e:
                self._journal_failed(entry, e)
            self._finish(entry, verify, recovered=False)
            try:
                self.journal.prune(self.generations)
            except SdtuneError:
                pass    # housekeeping: the next transaction prunes again
            return entry

    def _prepare(self, entry: Entry, old: bytes, new: bytes) -> None:
        """Save both copies and the "prepared" entry; if the state
        directory is full, leave nothing of it behind."""
        try:
            self.journal.save_copy(entry.id, "old", old)
            self.journal.save_copy(entry.id, "new", new)
            self.journal.save(entry)
        except SdtuneError as e:
            try:
                self.journal.discard(entry.id)
            except SdtuneError:
                pass
            raise SdtuneError(entry.action, self.shown, "cannot journal the "
                              "change (%s); sd.conf was not changed" % e
                              ) from e

    def _journal_failed(self, entry: Entry, error: SdtuneError) -> None:
        """sd.conf is new but its entry still says "prepared" (the state
        directory filled up): put the old file back, which matches the
        entry, rather than run update_drv on a change the journal does
        not know was made."""
        try:
            self.host.write_atomic(self.path, self.journal.copy(entry.id,
                                                                "old"))
        except SdtuneError as e:
            again = "the same" if e.reason == error.reason else str(e)
            raise SdtuneError(entry.action, self.shown, "sd.conf WAS "
                              "changed but its journal entry %s could not "
                              "be updated (%s) nor the old file put back "
                              "(%s); the next sdtune command completes the "
                              "change" % (entry.id, error, again)) from e
        raise SdtuneError(entry.action, self.shown, "cannot update journal "
                          "entry %s (%s); sd.conf was restored to its old "
                          "contents, nothing changed" % (entry.id, error))

    def _write_failed(self, entry: Entry, error: SdtuneError) -> None:
        """The write raised: before the rename the file is still old; a
        failure after it (syncing the directory) leaves the new file in
        place, which is then put back as the old one."""
        if sha256(self.current()) != entry.new_sha256:
            entry.state, entry.result = "failed", str(error)
            self.journal.save(entry)
            return
        entry.state = "written"
        self.journal.save(entry)
        # If this fails too, the entry stays "written" and the next
        # sdtune run completes the change (recover()).
        self._undo(entry, "written, then: %s" % error)

    def _finish(self, entry: Entry, verify: Optional[VerifyFn],
                recovered: bool) -> None:
        """update_drv, then verify; undo the file if update_drv fails."""
        try:
            res = self.host.run("update_drv", ["-vf", "sd"])
            entry.update_drv = {"status": res.returncode,
                                "stdout": res.stdout, "stderr": res.stderr}
            failure = None if res.returncode == 0 else \
                "update_drv -vf sd exited %d: %s" % (
                    res.returncode, (res.stderr or res.stdout).strip())
        except SdtuneError as e:
            entry.update_drv = {"status": None, "error": str(e)}
            failure = str(e)
        if failure is not None:
            self._undo(entry, failure)
            raise SdtuneError(entry.action, self.shown, "%s; sd.conf was "
                              "restored" % failure)
        if verify is not None:
            entry.verify = verify()
        entry.state = "recovered" if recovered else "done"
        entry.result = "applied to sd.conf and loaded by update_drv"
        try:
            self.journal.save(entry)
        except SdtuneError as e:
            # Changed and loaded; only the journal lags.  The entry on
            # disk is "written" (or "done" but not yet durable): the next
            # run finishes it again, which is harmless.
            raise SdtuneError(entry.action, self.shown, "sd.conf WAS changed"
                              " and loaded by update_drv, but journal entry "
                              "%s could not be closed (%s); the next sdtune "
                              "command completes it" % (entry.id, e)) from e

    def _undo(self, entry: Entry, why: str) -> None:
        old = self.journal.copy(entry.id, "old")
        self.host.write_atomic(self.path, old)
        entry.state, entry.result = "undone", why
        self.journal.save(entry)
