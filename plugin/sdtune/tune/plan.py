# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.


"""`sdtune plan`: the plan for one driver's .conf (drivers/), and the
plan file.

A plan is what the driver proposes (Driver.propose, with every screen
applied: sd in drivers/sd/propose.py, nvme in drivers/nvme/propose.py)
for the .conf the kernel reads now, with its checksum, the new text and
the diff: the changes, one per key (sd) or model (nvme), with the reason
for every tunable, and what was held back, left alone or warned about.
`plan --save` writes it as JSON; `apply PLAN` reads it back
(Plan.from_json, where nothing is trusted) and screens every claim of it
again against a plan made now (recheck_saved).  Pure apart from reading
a saved plan through the host.
"""

import json
import math
import time
from dataclasses import dataclass, field
from typing import List

from ..drivers import DEFAULT, DRIVERS, NAMES
from ..drivers.planning import (Change, Evidence, Held, NotSd, Overrides,
                                Proposed)
from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..driverconf.edit import EditError, unified_diff
from ..records.gains import headline
from .journal import sha256


PLAN_VERSION = 1
# sd.conf twice (old text in the diff, new text) and the reasons.
PLAN_LIMIT = 32 << 20


@dataclass
class Plan:
    conf_path: str           # the .conf's system path (JSON: sd_conf)
    flavour: str
    base_sha256: str
    new_text: str
    diff: str
    changes: List[Change] = field(default_factory=list)
    held: List[Held] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    created: float = 0.0
    not_sd: List[NotSd] = field(default_factory=list)
    # The driver whose .conf this is (drivers/): sd's changes are
    # sd-config-list pairs keyed by VID/PID, nvme's nvme-config-list
    # triplets keyed by model.
    driver: str = DEFAULT.name
    # What the operator could do beyond the plan and sdtune never does
    # (an NVMe namespace's `nvmeadm format` to a larger LBA size).
    options: List[str] = field(default_factory=list)

    @property
    def new_sha256(self) -> str:
        return sha256(self.new_text.encode("latin-1"))

    def to_json(self) -> dict:
        return {"version": PLAN_VERSION, "created": self.created,
                "driver": self.driver,
                "sd_conf": self.conf_path, "flavour": self.flavour,
                "base_sha256": self.base_sha256,
                "new_sha256": self.new_sha256,
                "changes": [c.to_json() for c in self.changes],
                "held": [h.to_json() for h in self.held],
                "not_sd": [n.to_json() for n in self.not_sd],
                "warnings": self.warnings, "options": self.options,
                "diff": self.diff, "new_text": self.new_text}

    @classmethod
    def from_json(cls, doc: object, path: str) -> "Plan":
        """A plan file's claims, each field checked.  Nothing in it is
        trusted: apply recomputes and screens what it would change."""
        def bad(what: str) -> SdtuneError:
            return SdtuneError("read plan", path, "not an sdtune plan: %s"
                               % what)
        if not isinstance(doc, dict):
            raise bad("not a JSON object")
        if doc.get("version") != PLAN_VERSION:
            raise bad("version is not %d" % PLAN_VERSION)
        for name in ("sd_conf", "flavour", "base_sha256", "new_text"):
            if not isinstance(doc.get(name), str):
                raise bad("field '%s' is missing or not a string" % name)
        try:
            doc["new_text"].encode("latin-1")
        except UnicodeEncodeError:
            raise bad("field 'new_text' holds characters sd.conf cannot "
                      "(not latin-1)") from None
        driver = doc.get("driver", DEFAULT.name)
        if driver not in DRIVERS:
            raise bad("field 'driver' is not one of %s" % ", ".join(NAMES))
        changes = doc.get("changes")
        if not isinstance(changes, list):
            raise bad("field 'changes' is missing or not a list")
        rule = DRIVERS[driver]
        for i, c in enumerate(changes):
            key = c.get("key") if isinstance(c, dict) else None
            if not (isinstance(key, str) and rule.key_fits(key)) or \
                    not isinstance(c.get("set"), dict) or not c["set"] or \
                    not all(isinstance(k, str) and isinstance(v, str)
                            for k, v in c["set"].items()):
                raise bad("changes[%d] is not a %s with tunables to set"
                          % (i, rule.key_rule))
        created = doc.get("created", 0.0)
        if not isinstance(created, (int, float)) or \
                isinstance(created, bool) or not math.isfinite(created):
            created = 0.0
        plan = cls(doc["sd_conf"], doc["flavour"], doc["base_sha256"],
                   doc["new_text"], "", changes=[
                       Change(c["key"], set=dict(c["set"]))
                       for c in changes], created=float(created),
                   driver=driver)
        if plan.new_sha256 != doc.get("new_sha256"):
            raise SdtuneError("read plan", path, "the plan's new %s.conf "
                              "does not match its checksum (edited?)"
                              % driver)
        return plan


def make_plan(driver: str, text: str, conf_path: str, flavour: str,
              evidence: Evidence, options: Overrides, now: float) -> Plan:
    """The plan for `driver`'s .conf at `conf_path`, whose text now is
    `text`."""
    proposed: Proposed = DRIVERS[driver].propose(text, flavour, evidence,
                                                 options)
    return Plan(conf_path, proposed.flavour, sha256(text.encode("latin-1")),
                proposed.new_text,
                unified_diff(text, proposed.new_text, conf_path,
                             conf_path + " (planned)"),
                changes=proposed.changes, held=proposed.held,
                warnings=proposed.warnings, created=now,
                not_sd=proposed.not_sd, driver=driver,
                options=proposed.options)


def recheck_saved(saved: Plan, fresh: Plan, text: str, path: str) -> Plan:
    """The change a saved plan really makes, screened again.

    A plan file is a claim: it could be stale, or edited by whoever can
    write it.  ``fresh`` is the plan made now from the same sd.conf
    (``text``), the current inventory, records and table, with the
    options of this apply.  Every tunable the saved plan claims to set
    must be one the fresh plan would set to the same value (so the same
    screening held nothing of it back), and applying exactly those claims
    to the current sd.conf must give the saved text byte for byte: a
    text that does anything else is refused.  The result, with its diff
    computed from the real bytes, is what apply shows and journals.
    """
    proposed = {c.key: c for c in fresh.changes}
    held = {(h.key, h.tunable): h.reason for h in fresh.held}
    checked = Plan(saved.conf_path, fresh.flavour, fresh.base_sha256, text, "",
                   created=saved.created, driver=saved.driver)
    new_text = text
    for claim in saved.changes:
        key = claim.key
        now = proposed.get(key, Change(key))
        for tunable, value in claim.set.items():
            if now.set.get(tunable) == value:
                continue
            reason = held.get((key, tunable)) or held.get((key, "*")) or \
                "not proposed now (%s.conf already has it, or no record " \
                "or table entry supports it)" % saved.driver
            raise RefusedError("apply", path, '"%s" %s:%s: %s'
                               % (key, tunable, value, reason))
        try:
            new_text = DRIVERS[saved.driver].set_claim(
                new_text, key, claim.set, fresh.flavour)
        except EditError as e:
            raise RefusedError("apply", path, '"%s": %s' % (key, e)) from e
        checked.changes.append(Change(
            key, now.disks, dict(claim.set),
            [w for w in now.why if w.tunable in claim.set]))
    if new_text != saved.new_text:
        raise RefusedError("apply", path, "the plan's new %s.conf does "
                           "something its recorded changes do not say; "
                           "make a new plan" % saved.driver)
    checked.new_text = new_text
    checked.diff = unified_diff(text, new_text, saved.conf_path,
                                saved.conf_path + " (planned)")
    return checked


def render_plan(plan: Plan) -> str:
    lines = []
    for c in plan.changes:
        lines.append('"%s" (%s):' % (c.key, ", ".join(c.disks) or
                                     "no disk present"))
        for w in c.why:
            conf = "" if w.confidence is None else \
                ", confidence %.2f" % w.confidence
            lines.append("  %s:%s  from %s%s"
                         % (w.tunable, w.value, w.source, conf))
            if w.evidence:
                lines.append("      %s" % w.evidence)
            if w.gain is not None:
                lines.append("      expected: %s" % headline(w.gain))
                if w.gain.why:
                    lines.append("      %s" % w.gain.why)
    for h in plan.held:
        lines.append('held back "%s" %s:%s: %s'
                     % (h.key, h.tunable, h.value, h.reason))
    for n in plan.not_sd:
        lines.append("not planned %s (%s): %s"
                     % (n.disk, n.driver, n.reason))
    for w in plan.warnings:
        lines.append("warning: %s" % w)
    for o in plan.options:
        lines.append("option: %s" % o)
    if not plan.changes:
        lines.append("nothing to change")
    text = "\n".join(lines) + "\n"
    if plan.diff:
        text += "\n" + plan.diff
    return text


def load_plan(host: Host, path: str) -> Plan:
    try:
        doc = json.loads(host.read_bytes(path, limit=PLAN_LIMIT)
                         .decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SdtuneError("read plan", path, "not an sdtune plan: not "
                          "JSON") from e
    return Plan.from_json(doc, path)


def now_iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
