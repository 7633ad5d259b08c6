# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The system whose sd.conf the tune commands change (TuneSite), and the
work behind plan, apply, rollback and recover that is not the command
line: closing a transaction a crash left open, making the plan, and
checking a saved plan or a journal entry before it is applied.  Prints
nothing: what an operator should hear comes back as text.
"""

from dataclasses import dataclass, field, replace
from typing import Dict, List, NamedTuple, Optional, Tuple

from ..drivers import DEFAULT, DRIVERS
from ..drivers.planning import Evidence, Overrides
from ..records import storage
from ..errors import LockedError, RefusedError, SdtuneError, UsageError
from ..host import Host
from ..inventory.disks import Inventory, take_inventory
from ..knowndrives import load_table
from ..platform import (FileChange, Persistence, Platform, PlatformInfo,
                        platform_for)
from ..driverconf.edit import unified_diff
from .journal import OPEN_STATES, Entry, Journal, sha256
from .plan import Plan, load_plan, make_plan, recheck_saved
from .transaction import Transaction
from .verify import Source, verify_all


@dataclass
class TuneSite:
    """Where the changes go and how they are kept: the host, the
    configured sd.conf and state directory (system paths), the kernel
    rules to model, the backup generations to keep, the known-drives
    table and the boot media setting; the platform adapter (which sd.conf
    the kernel reads, how a change survives a reboot) is found when first
    needed."""

    host: Host
    configured_sd_conf: str
    state_dir: str
    flavour: str
    generations: int
    known_drives: Optional[str] = None
    boot_media: Optional[str] = None
    # The driver whose .conf plan, apply and rollback change: sd, or
    # nvme (nvme.conf beside the configured sd.conf).
    driver: str = DEFAULT.name
    _platform: Optional[Platform] = field(default=None, repr=False)
    # What detect() found, shared by the sites of every driver.
    _info: Optional[PlatformInfo] = field(default=None, repr=False)

    @property
    def configured_conf(self) -> str:
        """The configured path of the driver's .conf: the configuration
        names sd.conf's; every other driver's lives in its directory."""
        if self.driver == DEFAULT.name:
            return self.configured_sd_conf
        return "%s/%s" % (self.configured_sd_conf.rsplit("/", 1)[0],
                          DRIVERS[self.driver].conf_name)

    @property
    def platform(self) -> Platform:
        if self._platform is None:
            self._platform = platform_for(self.host, self.configured_conf,
                                          self.boot_media, self.driver,
                                          self._info)
            self._info = self._platform.info
        return self._platform

    @property
    def conf_path(self) -> str:
        """The driver's .conf the kernel reads (system path; sd.conf
        unless the site is for another driver)."""
        return self.platform.effective

    def for_driver(self, driver: str) -> "TuneSite":
        """The same system, for another driver's .conf."""
        if driver == self.driver:
            return self
        if self._platform is not None:
            self._info = self._platform.info
        return replace(self, driver=driver, _platform=None)

    def transaction(self) -> Transaction:
        return Transaction(self.host, self.platform, self.state_dir,
                           self.flavour, self.generations)

    def verifier(self):
        def verify() -> List[dict]:
            # Every disk, whichever driver's file the change was: what
            # the kernel uses is one picture.
            return [s.to_json() for s in verify_all(
                self.host, self.flavour, self.verify_sources())]
        return verify

    def verify_sources(self) -> Dict[str, Source]:
        """What verify checks each driver's disks against: sd.conf's
        platform, read at once (verify needs it whatever disks there
        are), and every other driver's, made when one of its disks is
        found."""
        sites = {name: self.for_driver(name) for name in DRIVERS}
        return {name: sites[name].platform if name == DEFAULT.name else
                _later(sites[name]) for name in DRIVERS}

    def journal(self) -> Journal:
        return Journal(self.host, self.state_dir)


def recover_open(site: TuneSite, changes: bool = False) -> List[str]:
    """Close transactions a crash left open, unless another sdtune is
    running one right now (it holds the lock); what was done or could
    not be, one line each ("warning: ..." or "recovered: ...").

    Only root can finish a change; an ordinary user is told about it and
    goes on reading.  When an open transaction cannot be closed (sd.conf
    matches neither side), a command that only reads is warned and goes
    on; one that ``changes`` sd.conf gets the RefusedError.
    """
    said: List[str] = []
    try:
        entries, bad = site.journal().scan()
    except SdtuneError as e:
        if changes:
            raise
        return ["warning: cannot check for an interrupted change: %s" % e]
    for b in bad:
        said.append("warning: skipping journal entry %s: %s"
                    % (b.path, b.reason))
    open_ids = [e.id for e in entries if e.state in OPEN_STATES]
    if not open_ids:
        return said
    if not site.host.is_root():
        said.append("warning: journal entry %s is an interrupted change; "
                    "'sdtune recover' as root completes or undoes it"
                    % ", ".join(open_ids))
        return said
    tx = site.transaction()
    try:
        with tx.lock():
            said.extend("recovered: %s" % line
                        for line in tx.recover(site.verifier()))
    except LockedError:
        pass
    except RefusedError as e:
        if changes:
            raise
        said.append("warning: %s" % e)
    return said


def recover_now(site: TuneSite, accept_current: bool) -> List[str]:
    """`sdtune recover`: what every command does first, on demand; with
    ``accept_current``, close what cannot be closed otherwise, keeping
    sd.conf as it is (journalled).  What was done, one line each."""
    tx = site.transaction()
    with tx.lock():
        try:
            said = tx.recover(site.verifier())
        except RefusedError:
            if not accept_current:
                raise
            said = tx.accept_current()
    return said or ["nothing to recover: no interrupted change"]


def open_change(site: TuneSite) -> str:
    """Whether an interrupted command left sd.conf half changed, said
    for the operator (read-only)."""
    open_entries = [e for e in site.journal().entries()
                    if e.state in OPEN_STATES]
    if not open_entries:
        return "no change to sd.conf or nvme.conf is half done"
    e = open_entries[-1]
    name = "%s.conf" % e.driver
    where = "%s was written, update_drv has not run" % name \
        if e.state == "written" else "%s may have been written" % name
    return ("journal entry %s (%s) is half done (%s): the next sdtune "
            "command, or 'sdtune recover', completes or undoes it"
            % (e.id, e.action, where))


def _later(site: "TuneSite") -> Source:
    """The site's platform, made when asked for."""
    return lambda: site.platform


def build_plan(site: TuneSite, overrides: Overrides
               ) -> Tuple[Plan, Inventory, str]:
    """The plan made now, the inventory it rests on, and the sd.conf text
    it starts from.  Record files that cannot be used are added to the
    inventory's notes: the plan is made without them."""
    host = site.host
    text = site.platform.base_text().decode("latin-1")
    inv = take_inventory(host)
    recs, problems = storage.load_checked(host, site.state_dir)
    inv.notes.extend(problems)
    driver = DRIVERS[site.driver]
    table = load_table(host, site.known_drives) \
        if driver.reads_known_drives else []
    return make_plan(site.driver, text, site.conf_path, site.flavour,
                     Evidence(inv, recs, table), overrides,
                     host.now()), inv, text


class ToApply(NamedTuple):
    """What `apply` would do: the plan (None when sd.conf already is a
    saved plan's result) and the inventory it rests on."""

    plan: Optional[Plan]
    inventory: Optional[Inventory]


def plan_to_apply(site: TuneSite, plan_path: Optional[str],
                  overrides: Overrides) -> ToApply:
    """The plan made now, or a saved one screened again against the
    sd.conf, inventory, records and table of now (plan.recheck_saved).
    A saved plan for another sd.conf, or made from another text of this
    one, is refused."""
    if not plan_path:
        plan, inv, _ = build_plan(site, overrides)
        return ToApply(plan, inv)
    saved = load_plan(site.host, plan_path)
    if saved.driver != site.driver:
        raise RefusedError("apply", plan_path, "the plan is for %s.conf: "
                           "apply it with --driver %s"
                           % (saved.driver, saved.driver))
    if saved.conf_path != site.conf_path:
        raise RefusedError("apply", plan_path, "the plan is for %s, this "
                           "system's %s.conf is %s"
                           % (saved.conf_path, site.driver, site.conf_path))
    fresh, inv, text = build_plan(site, overrides)
    if fresh.base_sha256 == saved.new_sha256:
        return ToApply(None, None)
    if fresh.base_sha256 != saved.base_sha256:
        raise RefusedError("apply", plan_path, "%s.conf changed since the "
                           "plan was made (sha256 %s, the plan was made "
                           "from %s): make a new plan"
                           % (site.driver, fresh.base_sha256[:16],
                              saved.base_sha256[:16]))
    return ToApply(recheck_saved(saved, fresh, text, plan_path), inv)


def apply_summary(plan: Plan) -> List[str]:
    """The journal's one line per key (an NVMe plan's: per model):
    `KEY name:value, ...`."""
    driver = DRIVERS[plan.driver]
    return ["%s %s" % (driver.key_label(c.key),
                       ", ".join("%s:%s" % kv for kv in c.set.items()))
            for c in plan.changes]


class RollbackTo(NamedTuple):
    """A finished journal entry that can be rolled back now: the sd.conf
    of before it, the diff from the current one, and every file to put
    back (with the steps that activate it)."""

    entry: Entry
    old: bytes
    diff: str
    base_sha256: str
    change: Persistence
    # The site of the entry's driver: the transaction runs there.
    site: "TuneSite"


def rollback_to(site: TuneSite, entry_id: Optional[str],
                last: bool) -> RollbackTo:
    """The entry to roll back (by id, or the newest with ``last``),
    refused unless its saved copy is there and intact and sd.conf is
    still what the entry wrote."""
    journal = site.journal()
    readable, unreadable = journal.scan()
    entries = [e for e in readable if e.state in ("done", "recovered")]
    if last:
        # An entry that cannot be read may be the newest change: then
        # "the last" is not known, and neither "no change" nor an older
        # entry is the answer.
        newer = [b for b in unreadable
                 if not entries or b.id > entries[-1].id]
        if newer:
            raise RefusedError("rollback", "--last", "journal entry %s "
                               "cannot be read (%s), so the last change is "
                               "not known: give the ID to roll back (sdtune"
                               " history)" % (newer[-1].id, newer[-1].reason))
        if not entries:
            raise UsageError("rollback", journal.dir, "no change to roll "
                             "back")
        entry = entries[-1]
    else:
        wanted = _entry_id(entry_id or "")
        found = [e for e in entries if e.id == wanted]
        if not found:
            raise UsageError("rollback", entry_id or "", "no finished "
                             "journal entry with that id (sdtune history)")
        entry = found[0]
    why = journal.copies_intact(entry, "old")
    if why is not None:
        raise RefusedError("rollback", entry.id, why)
    # An nvme.conf entry is rolled back on nvme.conf, whatever --driver.
    site = site.for_driver(entry.driver)
    platform = site.platform
    files: List[FileChange] = []
    notes: List[str] = []
    for i, rec in enumerate(entry.file_records()):
        now = platform.read(rec.path)
        if (None if now is None else sha256(now)) == rec.new_sha256:
            files.append(FileChange(rec.path, rec.role, now,
                                    journal.copy_of(entry.id, i, "old", rec),
                                    rec.volatile))
        elif rec.volatile:
            # The ramdisk copy went with a reboot; the boot media hold
            # what the entry persisted.
            notes.append("%s no longer holds this entry's change (lost at "
                         "a reboot): left as it is" % rec.path)
        else:
            sha = "absent" if now is None else sha256(now)[:16]
            raise RefusedError("rollback", entry.id, "%s changed after this "
                               "entry (sha256 %s, entry wrote %s): roll back"
                               " the later entries first"
                               % (rec.path, sha, (rec.new_sha256 or
                                                  "nothing")[:16]))
    if not files:
        raise RefusedError("rollback", entry.id, "none of its files holds "
                           "its change any more")
    confs = [f for f in files if f.role != "loader lines"]
    old = (confs[0].new if confs else None) or b""
    current = platform.base_text()
    # The platform's steps now, not the entry's: an entry from before
    # platforms ran update_drv alone.
    steps = platform.activation([f.path for f in files])
    diff = unified_diff(current.decode("latin-1"), old.decode("latin-1"),
                        site.conf_path,
                        site.conf_path + " (entry %s)" % entry.id)
    return RollbackTo(entry, old, diff, sha256(current),
                      Persistence(files, steps, notes), site)


def _entry_id(text: str) -> str:
    """A journal id as the operator may type it: 000001 or 1."""
    return "%06d" % int(text) if text.isdigit() and len(text) <= 6 else text
