# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune audit`: what is wrong with the pools, the drives and sd.conf,
and what to do about it, as findings of the catalogue in findings.py.

Sources: the inventory (disks, pools, top-level vdev ashift), sd.conf
(its lint and its sd-config-list, matched against every disk present),
the kernel's values (verify), the certification records and the
known-drives table.  A drive's native sector is the largest of what its
certification found (confident verdicts only), what the known-drives
table says and what it reports; each finding says which.  The
certification of a drive is its own serial's, else its model's: models
that share a key (the 16-byte product id cuts long ATA models) are told
apart by their full ATA model.  Disks sd does not attach (NVMe: blkdev)
have no key; their certification is found by serial, their vdevs are
checked like any other, idle namespaces of a member's model are weighed
as replacements, and what blkdev reports is checked against nvme.conf
(SDT-4003, SDT-4004, SDT-6005; drivers/nvme/verify.py).

A pair is checked for every model and certified serial its key covers
(drivers/sd/keys.py key_members): one value for models that disagree
(SDT-3006),
cache-nonvolatile:true over a volatile cache, measured, listed or
witnessed (SDT-5002, including a vendor's data-at-rest-only protection
and a power cut that lost acknowledged writes), or with no evidence of a
non-volatile one (SDT-5001).  A disk whose model and firmware lost
flushed writes in a witnessed power cut is a high finding as a log,
special or dedup device, sd.conf or not (SDT-5003).

Findings the operator has accepted are silenced in the configuration:
[silence] ID = subject, subject ... (or *).  Exit 1 while any finding
other than an info one remains.

Unknown is unsafe: when a source the audit needs could not be read (a
command failed, is missing or cannot be run: Inventory.failed), audit
still prints the findings it could make, names each unread source and
what its loss means (stderr, and "unreadable" in JSON), never prints the
all-clear and exits 4, which wins over 1.  libdiskmgt being unavailable
stays a warning: it only says whether disks are in use (mounts, swap,
dump), and audit judges pools, vdevs, sd.conf and the kernel's values
without it; only idle drives are then not weighed as replacements
(SDT-1003), every disk counting as in use.

Prints nothing: commands/audit.py takes the inventory, reads sd.conf and
the records and says the warnings (inventory_messages); render returns
the text of the findings.
"""

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from .records.group import latest_by_serial
from .records.powercuts import flush_lies
from .records.record import CONFIDENT, CertRecord
from .errors import EXIT_FAILED, EXIT_OK, EXIT_PROBLEMS
from .findings import SEVERITY_ORDER, Finding, is_problem, make
from .inventory.disks import Disk, Inventory
from .knowndrives import KnownDrive, lookup
from .sdconf.lint import lint
from .sdconf.match import Identity, key_matches
from .sdconf.model import config_list, pair_alone
from .driverconf.parser import ConfFile
from .drivers import DEFAULT, DRIVERS, for_disk
from .drivers.diskstate import DiskState, Elsewhere
from .drivers.sd.keys import (NV, UNKNOWN_CACHE, VOLATILE, Member,
                              collision_pick, disputes, key_members)
from .tune.verify import checker


# Driver -> verify state -> the finding it raises (check_kernel), and
# the finding of a shadowed copy of the driver's .conf (check_platform).
KERNEL_FINDINGS = {
    "sd": {"pending reboot": "SDT-4001", "ignored by sd": "SDT-4002",
           "not persistent": "SDT-6003"},
    "nvme": {"pending reboot": "SDT-4003", "ignored by nvme": "SDT-4004",
             "not persistent": "SDT-6005"},
}
SHADOWED_FINDING = {"sd": "SDT-6001", "nvme": "SDT-6007"}
# Pool roles ZFS writes synchronously and relies on a flush for (its
# intent log, and metadata on a special or dedup device).
LOG_OR_METADATA = ("log", "special", "dedup")
# How to take back a physical block size too large for a pool's ashift,
# by the driver whose .conf set it (SDT-1003).
UNDO_BLOCK_SIZE = {
    "sd": "'sdtune sdconf unset /kernel/drv/sd.conf KEY "
          "physical-block-size'",
    "nvme": "remove min-phys-block-size from the model's "
            "nvme-config-list triplet in /kernel/drv/nvme.conf",
}


def _model_id(d: Disk) -> Optional[str]:
    """What makes two disks the same model for replacement: the sd key,
    or another driver's key (an NVMe namespace's controller model),
    named with the driver."""
    if d.key:
        return d.key
    driver = for_disk(d)
    key = driver.key_of(d) if driver is not None else None
    return "%s:%s" % (driver.name, key) if key else None


# lint codes whose finding is "the kernel ignores a tunable"
IGNORED_CODES = {"unknown-tunable", "invalid-value", "throttle-reset",
                 "tuple-ignored", "no-colon", "octal", "trailing-junk",
                 "nexenta-only", "ignored-text", "tuple-no-colon",
                 "block-size", "legacy-v1", "key-vendor-padding",
                 "odd-count", "not-strings", "key-everything"}
SECOND_LIST_CODES = {"second-list", "node-list"}
# Tunables whose one value a shared key imposes on every model under it.
SHARED_TUNABLES = ("physical-block-size", "throttle-max", "throttle-min",
                   "disksort")

# Inventory source (Inventory.failed) -> what audit cannot judge without it.
UNREAD_EFFECT = {
    "zpool status": "pools and their vdev ashift unknown: vdev checks "
                    "(SDT-1001, SDT-1002, SDT-1003) skipped",
    "zdb -C": "pool ashift unknown: vdev checks (SDT-1001, SDT-1002, "
              "SDT-1003) skipped",
    "mdb ::sd_state": "the kernel's values unknown: kernel checks "
                      "(SDT-4001, SDT-4002) skipped, sector sizes the "
                      "drives report not used",
    "mdb inquiry": "INQUIRY keys unknown: certification checks (SDT-2001, "
                   "SDT-2002) skipped, sd.conf pairs matched with iostat's "
                   "vendor and product",
    "device links": "disk names unknown: disks may be missing from every "
                    "check",
    "iostat -En": "serial numbers, sizes and (without INQUIRY) identities "
                  "unknown: drive and sd.conf checks may be incomplete",
    "diskinfo": "SSD flags, full serials and ATA models unknown: drive "
                "checks may be incomplete",
}


@dataclass
class Native:
    size: int
    source: str


@dataclass
class Unreadable:
    """A source audit needed and could not read."""

    source: str
    reason: str

    @property
    def effect(self) -> str:
        return UNREAD_EFFECT.get(self.source, "checks that need it skipped")

    def to_json(self) -> dict:
        return {"source": self.source, "reason": self.reason,
                "effect": self.effect}


def unreadable(inv: Inventory) -> List[Unreadable]:
    return [Unreadable(source, reason)
            for source, reason in sorted(inv.failed.items())]


def _identity(d: Disk) -> Optional[Identity]:
    if d.vid is None or d.pid is None:
        return None
    return Identity.of_inquiry(d.vid, d.pid, d.firmware)


@dataclass
class AuditedConf:
    """A driver's .conf as audit reads it: parsed (None: there is none),
    the path the kernel reads it at, and the platform adapter
    (platform/) that knows the next boot's copy and the shadowed ones
    (None: the file alone)."""

    conf: Optional[ConfFile]
    path: str
    platform: object = None


class Auditor:
    def __init__(self, inv: Inventory, recs: List[CertRecord],
                 table: List[KnownDrive], flavour: str, sd: AuditedConf,
                 nvme: Optional[AuditedConf] = None,
                 space_matters: bool = False) -> None:
        self.inv = inv
        # sd.conf: never None (an absent file reads as empty).
        assert sd.conf is not None
        self.conf, self.conf_path, self.platform = sd.conf, sd.path, \
            sd.platform
        # nvme.conf the kernel reads (parsed) and its platform adapter:
        # its lint and its shadowed copies; None: not checked.
        self.nvme_conf = nvme.conf if nvme else None
        self.nvme_platform = nvme.platform if nvme else None
        self.elsewhere = Elsewhere.of(sd.platform) if sd.platform else None
        # Driver -> the verify of one of its disks: sd's against sd.conf,
        # nvme's against nvme.conf when its platform is known and there
        # is an NVMe namespace; a disk of a driver not here is not
        # checked.
        sd_conf = sd.conf
        self.checks: Dict[str, Callable[[Disk], DiskState]] = {
            DEFAULT.name: lambda d: DEFAULT.verify_disk(
                sd_conf, d, flavour, inv.failed, self.elsewhere)}
        nvme_driver = DRIVERS["nvme"]
        if self.nvme_platform is not None and \
                any(nvme_driver.attaches(d) for d in inv.disks):
            self.checks["nvme"] = checker(nvme_driver, self.nvme_platform,
                                          flavour)
        self.flavour = flavour
        self.table = table
        self.space_matters = space_matters
        self.findings: List[Finding] = []
        self.latest: Dict[str, CertRecord] = {}
        self.by_serial: Dict[Tuple[str, str], CertRecord] = {}
        for rec in sorted(recs, key=lambda r: r.time):
            if rec.key:
                self.latest[rec.key] = rec
            if rec.key or rec.serial:
                # A record without a key is of a disk sd does not attach
                # (NVMe): found by its serial alone.
                self.by_serial[(rec.key or "", rec.unit_serial)] = rec
        self.records = latest_by_serial(recs)
        # Records of disks keyed by model, not by an sd key (NVMe).
        self.model_records = sorted((r for r in recs if r.outside_sd),
                                    key=lambda r: r.time)
        self.known: Dict[str, List[KnownDrive]] = {}
        for d in inv.disks:
            ident = _identity(d)
            if ident is not None and d.name not in self.known:
                self.known[d.name] = lookup(table, ident, d.ata_model)
        self._members: Dict[str, List[Member]] = {}

    def members(self, key: str) -> List[Member]:
        """The models and certified serials ``key`` covers (plan's
        key_members over the sd disks with that key)."""
        if key not in self._members:
            disks = [d for d in self.inv.disks
                     if d.key == key and DEFAULT.attaches(d)]
            self._members[key] = key_members(key, disks,
                                             self.records.get(key, []),
                                             self.table)
        return self._members[key]

    def record_of(self, d: Disk) -> Optional[CertRecord]:
        """The certification that speaks for ``d``: its own serial's,
        else the latest of its model under its key, else (one model
        under the key) the key's latest; for an NVMe namespace, its own
        serial's, else its model's latest."""
        own = self.by_serial.get((d.key or "", (d.serial or "").strip()))
        driver = for_disk(d) if own is None and not d.key else None
        model = driver.key_of(d) if driver is not None else None
        if model:
            # A disk keyed by its model (an NVMe namespace): the latest
            # certification of its model (records outside sd name the
            # model, there is no key).
            recs = [r for r in self.model_records
                    if (r.model or "").rstrip() == model]
            return recs[-1] if recs else None
        if own is not None or not d.key:
            return own
        for m in self.members(d.key):
            if m.record is not None and m.model == d.ata_model:
                return m.record
        models = {x.ata_model for x in self.inv.disks if x.key == d.key}
        return self.latest.get(d.key) if len(models) <= 1 else None

    def add(self, finding_id: str, subject: str, **values) -> None:
        self.findings.append(make(finding_id, subject, **values))

    # -------------------------------------------------------- drives

    def native(self, d: Disk) -> Optional[Native]:
        best: Optional[Native] = None
        rec = self.record_of(d)
        # A record without a sector confidence is not a confident one.
        if rec and rec.native_sector_bytes and \
                (rec.sector_confidence or 0) >= CONFIDENT:
            best = Native(rec.native_sector_bytes, "certified %s" %
                          rec.time_iso)
        for row in self.known.get(d.name, []):
            if row.physical_block and (best is None or
                                       row.physical_block > best.size):
                best = Native(row.physical_block,
                              "known-drives: %s" % row.source)
        if d.physical_block_bytes and (best is None or
                                       d.physical_block_bytes > best.size):
            best = Native(d.physical_block_bytes, "reported by the drive")
        return best

    def check_vdevs(self) -> None:
        disks = {d.name: d for d in self.inv.disks}
        for top in self.inv.vdevs:
            members = [disks[n] for n in top.disks if n in disks]
            natives = [(m, self.native(m)) for m in members]
            natives = [(m, n) for m, n in natives if n is not None]
            vdev = "%s-%d" % (top.type, top.index) if top.type != "disk" \
                else (top.disks[0] if top.disks else "vdev-%d" % top.index)
            subject = "%s/%s" % (top.pool, vdev)
            size = 1 << top.ashift
            low = [(m, n) for m, n in natives if n.size > size]
            if low:
                m, n = max(low, key=lambda mn: mn[1].size)
                self.add("SDT-1001", subject, vdev=vdev, pool=top.pool,
                         ashift=top.ashift, size=size, disk=m.name,
                         native=n.size, source=n.source,
                         want=n.size.bit_length() - 1)
            elif natives:
                need = max(n.size for _, n in natives)
                want = max(need, 512).bit_length() - 1
                if top.ashift > want and (self.space_matters or
                                          top.ashift > 12):
                    self.add("SDT-1002", subject, vdev=vdev, pool=top.pool,
                             ashift=top.ashift, size=size, native=need,
                             want=want)

    def check_replacements(self) -> None:
        """Spares, and idle drives of a member's model, that ZFS would
        refuse for a vdev whose ashift is below their reported size."""
        by_pool: Dict[str, List] = {}
        for top in self.inv.vdevs:
            by_pool.setdefault(top.pool, []).append(top)
        disks = {d.name: d for d in self.inv.disks}
        for pool, tops in by_pool.items():
            low = min(tops, key=lambda t: t.ashift)
            member_keys = {_model_id(disks[n]) for t in tops
                           for n in t.disks
                           if n in disks and _model_id(disks[n])}
            seen: Set[str] = set()
            for d in self.inv.disks:
                candidate = (d.pool == pool and d.pool_role == "spare") or \
                    (d.pool is None and _model_id(d) in member_keys and
                     not d.rejected_reasons)
                if not candidate or d.name in seen:
                    continue
                seen.add(d.name)
                pbs = d.physical_block_bytes or 512
                if pbs > (1 << low.ashift):
                    driver = for_disk(d) if not d.key else DEFAULT
                    undo = UNDO_BLOCK_SIZE[(driver or DEFAULT).name]
                    self.add("SDT-1003", d.name, disk=d.name, undo=undo,
                             key=d.key or "NVMe %s" % (d.model or "?"),
                             native=pbs, pool=pool, ashift=low.ashift,
                             size=1 << low.ashift)

    def check_certification(self) -> None:
        for d in self.inv.disks:
            if not d.ssd or not d.key or not d.rejected_reasons:
                continue
            known = any(r.physical_block or r.nonvolatile is not None
                        for r in self.known.get(d.name, []))
            # Its own model's certification: another model under the
            # same key says nothing of this one's page or cache.
            rec = self.record_of(d)
            if rec is None and not known:
                self.add("SDT-2001", d.name, disk=d.name, key=d.key)
        for d in self.inv.disks:
            rec = self.record_of(d)
            if rec and d.pool_role in LOG_OR_METADATA:
                lies = flush_lies(rec.power_cuts, (d.firmware or "").strip()
                                  or None)
                if lies:
                    self.add("SDT-5003", d.name, disk=d.name,
                             role=d.pool_role, pool=d.pool, why=lies)
            if rec and rec.firmware and d.firmware and \
                    rec.firmware.strip() != d.firmware.strip():
                self.add("SDT-2002", d.name, disk=d.name,
                         key=d.key or d.driver, firmware=d.firmware.strip(),
                         certified=rec.firmware.strip())

    # -------------------------------------------------------- sd.conf

    def _lint_findings(self, conf: ConfFile, path: str, diags,
                       finding_of) -> None:
        """Lint diagnostics as findings: ``finding_of(code)`` names the
        finding of a diagnostic, None for a syntax error, which gets
        ``finding_of(None)`` once per line."""
        syntax: Dict[int, List[str]] = {}
        for diag in diags:
            if diag.severity == "note":
                continue
            line, col = conf.line_col(diag.offset)
            where = "%s:%d:%d" % (path, line, col)
            detail = "%s: %s" % (where, diag.message)
            finding = finding_of(diag.code)
            if finding is not None:
                self.add(finding, where, detail=detail, conf=path)
            else:
                # One syntax error makes the kernel stumble over the rest
                # of its line: one finding per line, at its first error.
                syntax.setdefault(line, []).append(detail)
        for line in sorted(syntax):
            first = syntax[line][0]
            more = len(syntax[line]) - 1
            self.add(finding_of(None), first.split(": ", 1)[0],
                     detail=first + (" (and %d more on the line)" % more
                                     if more else ""), conf=path)

    def check_sdconf(self) -> None:
        def finding_of(code: Optional[str]) -> Optional[str]:
            if code is None:
                return "SDT-3005"
            if code in SECOND_LIST_CODES:
                return "SDT-3004"
            return "SDT-3003" if code in IGNORED_CODES else None
        clist = config_list(self.conf)
        self._lint_findings(self.conf, self.conf_path,
                            lint(self.conf, self.flavour), finding_of)
        if not clist.usable:
            return
        idents = [(d, _identity(d)) for d in self.inv.disks]
        # "matches no disk" is only known when every disk's identity is.
        all_known = all(i is not None for _, i in idents)
        idents = [(d, i) for d, i in idents if i is not None]
        for pair in clist.pairs:
            line = self.conf.line_col(pair.start)[0]
            hit = [d for d, i in idents if key_matches(pair.key, i)]
            subject = '"%s"' % pair.key
            if not hit and all_known:
                self.add("SDT-3001", subject, pair=pair.index + 1,
                         key=pair.key, line=line)
            models = sorted({d.key for d in hit})
            if len(models) > 1:
                self.add("SDT-3002", subject, pair=pair.index + 1,
                         key=pair.key, line=line, count=len(models),
                         models=", ".join('"%s"' % m for m in models))
            self._check_shared(pair, line, hit)

    def _pair_sets(self, pair) -> Dict[str, str]:
        _, results = pair_alone(self.conf, pair, self.flavour)
        return {(r.name or "").lower(): r.value for r in results
                if r.accepted and r.name}

    def _check_shared(self, pair, line: int, hit: List[Disk]) -> None:
        """One pair, one value for every model and certified drive under
        each key it matches: SDT-3006 where they disagree, SDT-5002 /
        SDT-5001 for cache-nonvolatile:true over a volatile or unproven
        cache."""
        sets = self._pair_sets(pair)
        keys = sorted({d.key for d in hit if d.key}) or [pair.key]
        for key in keys:
            members = self.members(key)
            names = [d.name for d in hit if d.key == key]
            shown = '"%s"' % key
            for tunable, why in sorted(disputes(
                    members, [t for t in SHARED_TUNABLES
                              if t in sets]).items()):
                advice, command = self._settle(key, tunable, members)
                self.add("SDT-3006", shown, pair=pair.index + 1,
                         key=key, line=line, tunable=tunable,
                         value=sets[tunable], members=why, advice=advice,
                         command=command)
            if sets.get("cache-nonvolatile", "").lower() == "true":
                self._check_nonvolatile(key, line, pair, members, names)

    def _settle(self, key: str, tunable: str,
                members: List[Member]) -> Tuple[str, str]:
        """(advice, exact command) for one pair value that cannot suit
        every member: the value collision_pick would plan, else none."""
        values = sorted({m.needs[tunable] for m in members
                         if tunable in m.needs})
        pick = collision_pick(tunable, values)
        if pick is None:
            return ("no value suits them all: remove it",
                    "'sdtune sdconf unset %s \"%s\" %s --write', then "
                    "'sdtune apply'"
                    % (self.conf_path, key, tunable))
        largest = tunable == "physical-block-size"
        return ("keep the %s (%s)" % (
            "largest: too large only costs space, too small costs a "
            "read-modify-write inside the drive" if largest else
            "smallest: the queue the slowest of them takes", pick),
            "'sdtune sdconf set %s \"%s\" %s=%s --write', then 'sdtune "
            "apply'" % (self.conf_path, key, tunable, pick))

    def _check_nonvolatile(self, key: str, line: int, pair,
                           members: List[Member], names: List[str]) -> None:
        disks = ", ".join(names) or "no disk present"
        volatile = [m for m in members if m.cache == VOLATILE]
        if volatile:
            self.add("SDT-5002", '"%s"' % key, key=key, disks=disks,
                     conf=self.conf_path,
                     members="; ".join("%s: %s" % (m.label, m.cache_why)
                                       for m in volatile))
        elif not any(m.cache == NV for m in members):
            self.add("SDT-5001", '"%s"' % key, key=key, disks=disks)
        elif any(m.cache == UNKNOWN_CACHE for m in members):
            why = "; ".join("%s: cache %s (%s)" % (m.label, m.cache,
                                                   m.cache_why)
                            for m in members)
            self.add("SDT-3006", '"%s"' % key, pair=pair.index + 1, key=key,
                     line=line, tunable="cache-nonvolatile", value="true",
                     members=why, advice="cache-nonvolatile:true is safe "
                     "only when every one of them has a non-volatile "
                     "cache: remove it",
                     command="'sdtune sdconf unset %s \"%s\" "
                     "cache-nonvolatile --write', then 'sdtune apply'"
                     % (self.conf_path, key))

    # -------------------------------------------------------- kernel

    def check_kernel(self) -> None:
        for d in self.inv.disks:
            # A disk whose values could not be read ("unknown") is
            # reported with its source (inventory_messages), not as a
            # finding.
            driver = for_disk(d)
            if driver is None or driver.name not in self.checks:
                continue    # no .conf checked here reaches it
            state = self.checks[driver.name](d)
            finding = KERNEL_FINDINGS[driver.name].get(state.state)
            if finding is not None:
                self.add(finding, d.name, disk=d.name,
                         detail="; ".join(state.details))
            elif state.state == "shadowed":
                self.shadowed_disks[driver.name].append(d.name)

    def check_nvmeconf(self) -> None:
        """nvme.conf's lint, as sd.conf's: what the driver ignores or
        misreads (SDT-3007), lines that do not parse (SDT-3008)."""
        if self.nvme_conf is None or self.nvme_platform is None:
            return

        def finding_of(code: Optional[str]) -> Optional[str]:
            if code is None:
                return "SDT-3008"
            return "SDT-3007" if code.startswith("NVME-") or \
                code in IGNORED_CODES else None
        self._lint_findings(self.nvme_conf, self.nvme_platform.effective,
                            DRIVERS["nvme"].lint(self.nvme_conf,
                                                 self.flavour), finding_of)

    def check_platform(self) -> None:
        """Copies of sd.conf that change nothing, and a boot environment
        other than the one changed booting next."""
        if self.platform is None:
            return
        effective = self.platform.effective
        for path in self.platform.shadowed_edits():
            disks = "" if not self.shadowed_disks["sd"] else \
                " (it asks for other values for %s)" % ", ".join(
                    self.shadowed_disks["sd"])
            self.add(SHADOWED_FINDING["sd"], path, path=path,
                     effective=effective, disks=disks)
        for path in self.platform.copies.ignored:
            self.add("SDT-6002", path, path=path, effective=effective)
        if self.nvme_platform is not None:
            nvme_effective = self.nvme_platform.effective
            for path in self.nvme_platform.shadowed_edits():
                disks = "" if not self.shadowed_disks["nvme"] else \
                    " (it asks for other values for %s)" % ", ".join(
                        self.shadowed_disks["nvme"])
                self.add(SHADOWED_FINDING["nvme"], path, path=path,
                         effective=nvme_effective, disks=disks)
        for c in self.platform.boot_module_conflicts():
            self.add("SDT-6006", "%s %s" % (c.loader, c.module),
                     loader=c.loader, module=c.module, line=c.line,
                     conf=c.conf)
        running = self.platform.boot_environment()
        nxt = getattr(self.platform, "next_environment", lambda: None)()
        if running and nxt and running != nxt:
            detail = self.platform.warnings()[0]
            self.add("SDT-6004", nxt, detail=detail[0].upper() + detail[1:],
                     running=running, next=nxt)

    def run(self) -> List[Finding]:
        self.check_vdevs()
        self.check_replacements()
        self.check_certification()
        self.check_sdconf()
        self.check_nvmeconf()
        # Driver -> its disks a shadowed copy of its .conf asks other
        # values for.
        self.shadowed_disks: Dict[str, List[str]] = {
            name: [] for name in DRIVERS}
        self.check_kernel()
        self.check_platform()
        self.findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.id,
                                          f.subject))
        return self.findings


def silenced(findings: List[Finding], silence: Dict[str, str]
             ) -> Tuple[List[Finding], int]:
    """Drop findings the configuration accepts: [silence] ID = subjects."""
    kept, dropped = [], 0
    for f in findings:
        subjects = {s.strip() for s in silence.get(f.id.lower(),
                                                   silence.get(f.id, ""))
                    .split(",") if s.strip()}
        if "*" in subjects or f.subject in subjects or \
                f.subject.strip('"') in subjects:
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped


def shown(findings: List[Finding], only_problems: bool) -> List[Finding]:
    """What -x keeps, in text and JSON alike: the problems."""
    return [f for f in findings if is_problem(f)] if only_problems \
        else findings


def render(findings: List[Finding], only_problems: bool,
           unread: Sequence[Unreadable] = ()) -> str:
    """The findings; the all-clear only when every source was read."""
    out = []
    for f in shown(findings, only_problems):
        out.append("%s  %-6s  %s: %s\n"
                   % (f.id, f.severity, f.subject, f.kind.title))
        out.append("  status: %s\n" % f.status)
        out.append("  action: %s\n" % f.action)
        out.append("     see: %s\n\n" % f.kind.see)
    if unread:
        out.append("audit incomplete: could not read %s\n"
                   % ", ".join(u.source for u in unread))
    elif not out:
        out.append("no problems found\n" if only_problems
                   else "no findings\n")
    return "".join(out)


def inventory_messages(inv: Inventory, unread: Sequence[Unreadable]
                       ) -> List[str]:
    """What audit says on stderr about the inventory, before anything
    else, each line without its "sdtune: ": the notes (warnings), then
    every source that could not be read with what its loss means."""
    # A failed source is said once, below, as an error with its effect.
    failed_notes = {"%s: %s" % (u.source, u.reason) for u in unread}
    lines = ["warning: %s" % note for note in inv.notes
             if note not in failed_notes]
    for u in unread:
        lines.append("could not read %s (%s): %s"
                     % (u.source, u.effect, u.reason))
    return lines


def exit_status(findings: List[Finding],
                unread: Sequence[Unreadable]) -> int:
    """4 while a source was unread (unknown is unsafe), else 1 while a
    problem remains, else 0."""
    if unread:
        return EXIT_FAILED
    return EXIT_PROBLEMS if any(is_problem(f) for f in findings) \
        else EXIT_OK
