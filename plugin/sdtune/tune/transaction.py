"""Change sd.conf as one crash-safe transaction (apply and rollback).

Order of a transaction, each step journalled before the next:

  1. take the lock (<state_dir>/lock), finish or undo any transaction a
     crash left open (recover);
  2. check sd.conf still has the checksum the change was made from;
  3. lint the new text: nothing the kernel would ignore or misread;
  4. check we are root and update_drv can run (else change nothing);
  5. journal entry "prepared" with the old and new bytes saved;
  6. atomic write of sd.conf, entry "written";
  7. `update_drv -vf sd`; if it fails, the old file is written back and
     the entry says "undone";
  8. verify what the kernel uses, entry "done".

sd.conf is always the old or the new file, byte for byte: the write is
atomic (host.write_atomic) and every journal update is too.  After a
crash, recover() looks at open entries and the file's checksum: a file
still old means the change never happened ("undone"), a new file means
it happened and only update_drv/verify are missing ("recovered").
"""

import contextlib
from typing import Callable, Iterator, List, Optional

from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..sdconf.lint import lint
from ..sdconf.parser import parse_bytes
from .journal import OPEN_STATES, Entry, Journal, sha256

VerifyFn = Callable[[], List[dict]]


class Transaction:
    """sd.conf, its journal and the lock, for one system root."""

    def __init__(self, host: Host, sd_conf: str, state_dir: str,
                 flavour: str, generations: int = 10) -> None:
        self.host = host
        self.sd_conf = sd_conf                       # system path
        self.path = host.sys_path(sd_conf)
        self.state_dir = state_dir
        self.journal = Journal(host, state_dir)
        self.flavour = flavour
        self.generations = generations
        self.notes: List[str] = []

    @contextlib.contextmanager
    def lock(self, verb: str = "change") -> Iterator[None]:
        """The state directory's lock; held by another sdtune is a
        refusal (exit 3), not a failure."""
        directory = self.host.sys_path(self.state_dir)
        self.host.mkdirs(directory, 0o755)
        held = self.host.lock(directory + "/lock")
        try:
            held.__enter__()
        except SdtuneError as e:
            raise RefusedError(verb, self.path, e.reason) from e
        try:
            yield
        finally:
            held.__exit__(None, None, None)

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
                raise RefusedError("recover", self.path, "transaction %s "
                                   "was interrupted and sd.conf matches "
                                   "neither its old nor its new contents "
                                   "(sha256 %s): inspect it by hand; the "
                                   "saved copies are in %s"
                                   % (entry.id, cur[:16], self.journal.dir))
        self.notes += said
        return said

    # -------------------------------------------------------------- change

    def run(self, action: str, new: bytes, base_sha: str, summary: List[str],
            diff: str, verify: Optional[VerifyFn] = None,
            rollback_of: Optional[str] = None) -> Entry:
        """Replace sd.conf by `new` if it still has checksum `base_sha`."""
        # Checked first: a non-root run must not even create the lock.
        if not self.host.is_root():
            raise SdtuneError(action, self.path, "must be root: "
                              "update_drv and sd.conf need it")
        with self.lock(action):
            self.recover(verify)
            old = self.current()
            if sha256(old) != base_sha:
                raise RefusedError("%s" % action, self.path,
                                   "sd.conf changed since this change was "
                                   "prepared (sha256 %s, expected %s)"
                                   % (sha256(old)[:16], base_sha[:16]))
            errors = [d for d in lint(parse_bytes(new), self.flavour)
                      if d.severity == "error"]
            if errors:
                raise RefusedError(action, self.path, "the new sd.conf has "
                                   "%d error(s) the kernel would ignore, "
                                   "first: %s" % (len(errors),
                                                  errors[0].message))
            if not self.host.can_run("update_drv"):
                raise SdtuneError(action, self.path, "update_drv cannot be "
                                  "run: check [commands] update_drv")
            entry = Entry(id=self.journal.next_id(), time=self.host.now(),
                          user=self.host.user(), action=action,
                          state="prepared", sd_conf=self.sd_conf,
                          old_sha256=base_sha, new_sha256=sha256(new),
                          diff=diff, summary=summary,
                          rollback_of=rollback_of)
            self.journal.save_copy(entry.id, "old", old)
            self.journal.save_copy(entry.id, "new", new)
            self.journal.save(entry)
            try:
                self.host.write_atomic(self.path, new)
            except SdtuneError as e:
                self._write_failed(entry, e)
                raise
            entry.state = "written"
            self.journal.save(entry)
            self._finish(entry, verify, recovered=False)
            self.journal.prune(self.generations)
            return entry

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
            raise SdtuneError(entry.action, self.path, "%s; sd.conf was "
                              "restored" % failure)
        if verify is not None:
            entry.verify = verify()
        entry.state = "recovered" if recovered else "done"
        entry.result = "applied to sd.conf and loaded by update_drv"
        self.journal.save(entry)

    def _undo(self, entry: Entry, why: str) -> None:
        old = self.journal.copy(entry.id, "old")
        self.host.write_atomic(self.path, old)
        entry.state, entry.result = "undone", why
        self.journal.save(entry)
