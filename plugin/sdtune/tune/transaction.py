# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Change sd.conf as one crash-safe transaction (apply, rollback, and
`sdconf set|unset --write` on the live file), with every other file the
platform needs to keep the change after a reboot (platform/: a SmartOS
boot module and its loader lines) and the platform's activation steps
(`bootadm update-archive`, then `update_drv -vf sd`).  nvme.conf changes
the same way (the driver is the platform adapter's; each journal entry
names its own, so recovery reloads the right driver).

Order of a transaction, each step journalled before the next:

  1. check we are root, take the lock (<state_dir>/lock; held by another
     sdtune is a refusal), finish or undo any transaction a crash left
     open (recover);
  2. check sd.conf still has the checksum the change was made from;
  3. lint the new text: it must add nothing the kernel would ignore or
     misread (errors already in the old text do not block a change);
  4. check the steps' commands can run and every file can be replaced
     (no symlink, a regular file, a writable place): a refusal leaves no
     journal;
  5. journal entry "prepared" with the old and new bytes of every file
     saved (a full state directory leaves nothing of it behind);
  6. atomic write of each file, entry "written" (if a write fails, the
     files already written are put back: the entry says "failed");
  7. the steps: `bootadm update-archive` where the platform has a boot
     archive, then `update_drv -vf sd` where the kernel's file changed;
     if one fails, the old files are written back (and the archive
     rebuilt from them) and the entry says "undone";
  8. verify what the kernel uses, entry "done".

Every file is always its old or its new contents, byte for byte (a file
that did not exist is absent or new): each write is atomic
(host.write_atomic) and every journal update is too.  After a crash or a
signal, recover() looks at open entries and each file's checksum: all
old means the change never happened ("undone"); all new, or some new and
the rest old, means it happened and is completed from the saved copies
("recovered"); a file that is neither is left to the operator, whose
`sdtune recover --accept-current` closes the entry ("accepted").
"""

import contextlib
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from ..drivers import DEFAULT, DRIVERS
from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..platform import FileChange, Persistence, Platform
from ..platform.base import STEP_ORDER
from ..driverconf.parser import Diagnostic, parse_bytes
from .journal import OPEN_STATES, Entry, FileRecord, Journal, sha256

VerifyFn = Callable[[], List[dict]]


def _lint(data: bytes, flavour: str, driver: str) -> List[Diagnostic]:
    """The lint of `driver`'s .conf, by that driver's rules."""
    return DRIVERS[driver].lint(parse_bytes(data), flavour)


def new_errors(old: bytes, new: bytes, flavour: str,
               driver: str = DEFAULT.name) -> List[Diagnostic]:
    """Lint errors of the new text that the old one does not have: a
    change must not add what the kernel would ignore, but an operator's
    existing mistake must not block every other change."""
    seen: Dict[Tuple[str, str], int] = {}
    for d in _lint(old, flavour, driver):
        if d.severity == "error":
            seen[(d.code, d.message)] = seen.get((d.code, d.message), 0) + 1
    out = []
    for d in _lint(new, flavour, driver):
        if d.severity != "error":
            continue
        if seen.get((d.code, d.message), 0) > 0:
            seen[(d.code, d.message)] -= 1
        else:
            out.append(d)
    return out


class Transaction:
    """The files of one change, its journal and the lock, for one system
    root and its platform."""

    def __init__(self, host: Host, platform: Platform, state_dir: str,
                 flavour: str, generations: int = 10) -> None:
        self.host = host
        self.platform = platform
        self.conf_path = platform.effective            # system path
        self.driver = platform.driver
        self.conf_name = platform.conf_name          # sd.conf, nvme.conf
        self.path = host.sys_path(self.conf_path)
        # As messages name it: with the appliance's name over SSH.
        self.shown = host.where(self.path)
        self.state_dir = state_dir
        self.journal = Journal(host, state_dir)
        self.flavour = flavour
        self.generations = generations
        self.notes: List[str] = []
        # Directories _put created, outermost first: an undo removes them.
        self._made_dirs: List[str] = []

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

    def _shown(self, path: str) -> str:
        return self.host.where(self.host.sys_path(path))

    def _put(self, path: str, data: Optional[bytes]) -> None:
        """Make system file `path` hold `data` (None: absent)."""
        real = self.host.sys_path(path)
        if data is None:
            if self.host.exists(real):
                self.host.remove(real)
            self._remove_made_dirs(real)
            return
        made = self._missing_dirs(real.rsplit("/", 1)[0])
        if made:
            self.host.mkdirs(made[-1], 0o755)
            self._made_dirs += made
        try:
            self.host.write_atomic(real, data)
        except SdtuneError:
            self._remove_made_dirs(real)
            raise

    def _missing_dirs(self, directory: str) -> List[str]:
        """``directory`` and those of its parents that do not exist,
        outermost first."""
        missing: List[str] = []
        while directory and not self.host.exists(directory):
            missing.insert(0, directory)
            directory = directory.rsplit("/", 1)[0]
        return missing

    def _remove_made_dirs(self, path: str) -> None:
        """Remove the directories this transaction created on the way to
        ``path`` (a boot module's kernel/drv on a USB key), innermost
        first, once nothing it wrote is left in them: a change undone
        leaves no trace on the boot media.  One that is not empty holds
        files of others, and so do its parents: they stay, and that is
        not an error of the change."""
        for directory in reversed(list(self._made_dirs)):
            if not path.startswith(directory + "/"):
                continue
            try:
                self.host.remove_dir(directory)
            except SdtuneError:
                return
            self._made_dirs.remove(directory)

    # -------------------------------------------------------------- recover

    def _state_of(self, rec: FileRecord) -> str:
        """old, new or neither, by checksum (absent counts as its side)."""
        cur = _sha(self.platform.read(rec.path))
        if cur == rec.old_sha256:
            return "old"
        if cur == rec.new_sha256:
            return "new"
        return "neither"

    def recover(self, verify: Optional[VerifyFn] = None) -> List[str]:
        """Close transactions a crash left open; say what was done.
        Call with the lock held."""
        said = []
        for entry in self.journal.entries():
            if entry.state not in OPEN_STATES:
                continue
            records = entry.file_records()
            states = [self._state_of(r) for r in records]
            # A ramdisk copy lost in a reboot is neither side: the boot
            # media carry the change.
            bad = [r for r, s in zip(records, states)
                   if s == "neither" and not r.volatile]
            if bad:
                cur = _sha(self.platform.read(bad[0].path)) or "absent"
                raise RefusedError("recover", self._shown(bad[0].path),
                                   "transaction %s was interrupted and "
                                   "%s matches neither its old nor its new "
                                   "contents (sha256 %s): inspect it "
                                   "(saved copies in %s), then keep it with "
                                   "'sdtune recover --accept-current'"
                                   % (entry.id, _name(bad[0]), cur[:16],
                                      self.journal.dir))
            if all(s != "new" for s in states):
                if entry.state == "written" and "bootadm" in entry.steps:
                    # An undo may have stopped before the archive was
                    # rebuilt from the old files.
                    self._step_quietly(entry, "bootadm")
                entry.state = "undone"
                entry.result = "interrupted before the files changed; " \
                    "nothing was changed"
                self.journal.save(entry)
                said.append("transaction %s (%s) was interrupted before "
                            "%s.conf changed: marked undone"
                            % (entry.id, entry.action, entry.driver))
                continue
            for i, (rec, state) in enumerate(zip(records, states)):
                if state == "old":
                    new = self.journal.copy_of(entry.id, i, "new", rec)
                    self._put(rec.path, new)
            self._finish(entry, verify, recovered=True)
            said.append("transaction %s (%s) was interrupted after "
                        "%s.conf was written: completed it (%s, verify)"
                        % (entry.id, entry.action, entry.driver,
                           ", ".join(entry.steps) or "no step"))
        self.notes += said
        return said

    def accept_current(self) -> List[str]:
        """Close every open transaction, keeping the files as they are
        now; for when they match neither side.  Call with the lock
        held."""
        said = []
        for entry in self.journal.entries():
            if entry.state not in OPEN_STATES:
                continue
            # The entry's own file: an nvme.conf entry is not about the
            # sd.conf this transaction was opened for.
            now = self.platform.read(entry.conf_path)
            cur = "absent" if now is None else sha256(now)
            name = "%s.conf" % entry.driver
            entry.state = "accepted"
            entry.result = "interrupted; %s (sha256 %s) accepted as " \
                "it was by %s with 'sdtune recover --accept-current'" % (
                    name, cur[:16], self.host.user())
            entry.notes.append("accepted %s sha256 %s" % (name, cur))
            self.journal.save(entry)
            said.append("transaction %s (%s): the current %s is "
                        "accepted" % (entry.id, entry.action, name))
        return said

    # -------------------------------------------------------------- change

    def run(self, action: str, new: bytes, base_sha: str, summary: List[str],
            diff: str, verify: Optional[VerifyFn] = None,
            rollback_of: Optional[str] = None,
            change: Optional[Persistence] = None) -> Entry:
        """Make the effective sd.conf `new` if it still has checksum
        `base_sha`, with the platform's other files and steps (or those
        of `change`, for a rollback)."""
        # Checked first: a non-root run must not even create the lock.
        if not self.host.is_root():
            raise RefusedError(action, self.shown, "must be root: "
                               "update_drv and %s need it" % self.conf_name)
        with self.lock():
            self.recover(verify)
            old = self.current() if self.host.exists(self.path) else b""
            if sha256(old) != base_sha:
                raise RefusedError("%s" % action, self.shown,
                                   "%s changed since this change was "
                                   "prepared (sha256 %s, expected %s)"
                                   % (self.conf_name, sha256(old)[:16],
                                      base_sha[:16]))
            errors = new_errors(old, new, self.flavour, self.driver)
            if errors:
                raise RefusedError(action, self.shown, "the new %s has "
                                   "%d error(s) the kernel would ignore, "
                                   "first: %s" % (self.conf_name,
                                                  len(errors),
                                                  errors[0].message))
            if change is None:
                change = self.platform.persistence(old, new)
            files = [f for f in change.files if f.old != f.new]
            if not files:
                raise RefusedError(action, self.shown, "nothing to write: "
                                   "the boot media already hold this "
                                   "%s (it takes effect at the next "
                                   "reboot)" % self.conf_name)
            self._check(action, files, change.steps)
            entry = Entry(id=self.journal.next_id(), time=self.host.now(),
                          user=self.host.user(), action=action,
                          state="prepared", conf_path=self.conf_path,
                          old_sha256=base_sha, new_sha256=sha256(new),
                          diff=diff, summary=summary,
                          rollback_of=rollback_of,
                          files=[FileRecord(f.path, f.role, _sha(f.old),
                                            _sha(f.new), f.volatile)
                                 for f in files],
                          steps=[s for s in STEP_ORDER
                                 if s in change.steps],
                          platform=self._platform_doc(),
                          handoff=change.handoff,
                          notes=list(change.notes), driver=self.driver)
            self._prepare(entry, files)
            for i, f in enumerate(files):
                try:
                    self._put(f.path, f.new)
                except SdtuneError as e:
                    self._write_failed(entry, files, i, e)
                    raise
            entry.state = "written"
            try:
                self.journal.save(entry)
            except SdtuneError as e:
                self._journal_failed(entry, files, e)
            self._finish(entry, verify, recovered=False)
            try:
                self.journal.prune(self.generations)
            except SdtuneError:
                pass    # housekeeping: the next transaction prunes again
            return entry

    def _platform_doc(self) -> Dict[str, object]:
        doc: Dict[str, object] = {"name": self.platform.name}
        be = self.platform.boot_environment()
        if be is not None:
            doc["boot_environment"] = be
        return doc

    def _check(self, action: str, files: List[FileChange],
               steps: List[str]) -> None:
        """Before anything is journalled: each file still what the change
        was made from, each command runnable, each place writable (a
        symlink, a directory or a read-only place is a refusal with
        nothing to undo)."""
        for f in files:
            if _sha(self.platform.read(f.path)) != _sha(f.old):
                raise RefusedError(action, self._shown(f.path), "it changed "
                                   "since this change was prepared")
        for step in steps:
            cmd, _ = self.platform.step_argv(step)
            if not self.host.can_run(cmd):
                raise SdtuneError(action, self.shown, "%s cannot be run: "
                                  "check [commands] %s" % (cmd, cmd))
        for f in files:
            real = self.host.sys_path(f.path)
            if self.host.exists(real.rsplit("/", 1)[0]):
                self.host.check_replaceable(real)

    def _prepare(self, entry: Entry, files: List[FileChange]) -> None:
        """Save every copy and the "prepared" entry; if the state
        directory is full, leave nothing of it behind."""
        try:
            for i, f in enumerate(files):
                for which, data in (("old", f.old), ("new", f.new)):
                    if data is not None:
                        self.journal.save_copy(entry.id, _copy(i, which),
                                               data)
            self.journal.save(entry)
        except SdtuneError as e:
            try:
                self.journal.discard(entry.id)
            except SdtuneError:
                pass
            raise SdtuneError(entry.action, self.shown, "cannot journal the "
                              "change (%s); %s was not changed"
                              % (e, self.conf_name)
                              ) from e

    def _put_back(self, entry: Entry, upto: int) -> None:
        """Files 0..upto-1 of the entry back to their old contents, the
        last written first."""
        records = entry.file_records()
        for i in reversed(range(min(upto, len(records)))):
            rec = records[i]
            if self._state_of(rec) != "old":
                self._put(rec.path, self.journal.copy_of(entry.id, i, "old",
                                                         rec))

    def _journal_failed(self, entry: Entry, files: List[FileChange],
                        error: SdtuneError) -> None:
        """The files are new but the entry still says "prepared" (the
        state directory filled up): put the old files back, which match
        the entry, rather than activate a change the journal does not
        know was made."""
        try:
            self._put_back(entry, len(files))
        except SdtuneError as e:
            again = "the same" if e.reason == error.reason else str(e)
            raise SdtuneError(entry.action, self.shown, "%s WAS "
                              "changed but its journal entry %s could not "
                              "be updated (%s) nor the old file put back "
                              "(%s); the next sdtune command completes the "
                              "change" % (self.conf_name, entry.id, error,
                                          again)) from e
        raise SdtuneError(entry.action, self.shown, "cannot update journal "
                          "entry %s (%s); %s was restored to its old "
                          "contents, nothing changed"
                          % (entry.id, error, self.conf_name))

    def _write_failed(self, entry: Entry, files: List[FileChange], i: int,
                      error: SdtuneError) -> None:
        """Writing file `i` raised: before its rename it is still old; a
        failure after it (syncing the directory) leaves it new.  Every
        file already new is put back."""
        records = entry.file_records()
        changed = any(self._state_of(r) == "new" for r in records[:i + 1])
        if not changed:
            entry.state, entry.result = "failed", str(error)
            self.journal.save(entry)
            return
        entry.state = "written"
        self.journal.save(entry)
        # If this fails too, the entry stays "written" and the next
        # sdtune run completes the change (recover()).
        self._undo(entry, "written, then: %s" % error, [], upto=i + 1)

    def _run_step(self, entry: Entry, step: str) -> Optional[str]:
        """Run one step, record it in the entry; the failure, or None."""
        cmd, args = self.platform.step_argv(step, entry.driver)
        try:
            res = self.host.run(cmd, args)
            record = {"status": res.returncode, "stdout": res.stdout,
                      "stderr": res.stderr}
            if res.returncode == 0:
                failure = None
            else:
                # A negative status is a signal (subprocess's convention),
                # not an exit code.
                how = "exited %d" % res.returncode if res.returncode > 0 \
                    else "was killed by signal %d" % -res.returncode
                failure = "%s %s %s: %s" % (cmd, " ".join(args), how,
                                            (res.stderr or res.stdout).strip())
        except SdtuneError as e:
            record = {"status": None, "error": str(e)}
            failure = str(e)
        if step == "update_drv":
            entry.update_drv = record
        else:
            entry.bootadm = record
        return failure

    def _step_quietly(self, entry: Entry, step: str) -> Optional[str]:
        failure = self._run_step(entry, step)
        if failure is not None:
            entry.notes.append("%s failed: %s" % (step, failure))
        return failure

    def _finish(self, entry: Entry, verify: Optional[VerifyFn],
                recovered: bool) -> None:
        """The steps, then verify; undo the files if a step fails."""
        ran: List[str] = []
        for step in entry.steps:
            failure = self._run_step(entry, step)
            # A step that fails may have acted first (bootadm rebuilt the
            # archive, update_drv loaded the file, then either exited 1 or
            # was killed by the timeout): it counts as run.
            ran.append(step)
            if failure is not None:
                suffix = self._undo(entry, failure, ran)
                raise SdtuneError(entry.action, self.shown, "%s; %s.conf "
                                  "was restored%s" % (failure, entry.driver,
                                                      suffix))
        if verify is not None:
            entry.verify = verify()
        entry.state = "recovered" if recovered else "done"
        entry.result = "applied to %s.conf and loaded by update_drv" \
            % entry.driver if "update_drv" in entry.steps else \
            "written; the kernel reads it at the next reboot"
        try:
            self.journal.save(entry)
        except SdtuneError as e:
            # Changed and loaded; only the journal lags.  The entry on
            # disk is "written" (or "done" but not yet durable): the next
            # run finishes it again, which is harmless.
            raise SdtuneError(entry.action, self.shown, "%s.conf WAS "
                              "changed and loaded by update_drv, but journal "
                              "entry %s could not be closed (%s); the next "
                              "sdtune command completes it"
                              % (entry.driver, entry.id, e)) from e

    def _undo(self, entry: Entry, why: str, ran: List[str],
              upto: Optional[int] = None) -> str:
        """Every file back to old, then every step in ``ran`` (which may
        have acted on the new files, failed or not) again on the old
        ones: the boot archive rebuilt, the driver's configuration
        reloaded.  What the operator must still do, as the end of a
        sentence ("" when nothing)."""
        self._put_back(entry, len(entry.file_records()) if upto is None
                       else upto)
        still = []
        for step in entry.steps:
            if step in ran and self._step_quietly(entry, step) is not None:
                cmd, args = self.platform.step_argv(step, entry.driver)
                still.append("%s still %s: run '%s'" % (
                    "the boot archive" if step == "bootadm" else
                    "the %s driver" % entry.driver,
                    "holds the new file" if step == "bootadm" else
                    "may use the new values",
                    " ".join([cmd.rsplit("/", 1)[-1]] + list(args))))
        suffix = ", but " + "; ".join(still) if still else ""
        entry.state, entry.result = "undone", why + suffix
        self.journal.save(entry)
        return suffix


def _sha(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else sha256(data)


def _copy(index: int, which: str) -> str:
    """A journal copy's extension: the first file keeps the names of
    entries written before there were several files (.old, .new)."""
    return which if index == 0 else "%d.%s" % (index, which)


def _name(rec: FileRecord) -> str:
    return rec.role.split(" ")[0] \
        if rec.role.startswith(("sd.conf", "nvme.conf")) else \
        "%s %s" % (rec.role, rec.path)
