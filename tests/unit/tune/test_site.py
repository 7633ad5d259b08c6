# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""tune/ in process: a TuneSite over the simulated appliance, driven as
the commands drive it but without the command line, for sd.conf and
nvme.conf alike: the plan (build_plan, plan_to_apply of a saved plan),
the transaction that applies it, what verify then says, the journal
entry, and the rollback that restores the file byte for byte.  The
appliance is tests/sim's; the host is the RealHost rooted in it with the
appliance's command allow-list, as bin/sdtune -R would make it."""

import json
import os

import pytest

from sdtune.config import commands_for, load_config
from sdtune.drivers.planning import Overrides
from sdtune.errors import RefusedError
from sdtune.host import RealHost
from sdtune.tune.plan import load_plan
from sdtune.tune.site import (TuneSite, apply_summary, build_plan,
                              plan_to_apply, rollback_to)
from tests import builders
from tests.sim.appliance import Appliance

INTEL = "ATA     INTEL SSDSC2BA40"
NVME_MODEL = "INTEL SSDPE2KX020T8"
NVME_IDLE = "c3t5CD2E4300C1B0100d0"


def site_of(app: Appliance, driver: str = "sd") -> TuneSite:
    cfg = load_config(RealHost(), app.config, system_config=None)
    host = RealHost(app.root, commands_for(cfg), libraries=cfg.libraries)
    return TuneSite(host, cfg.sd_conf, cfg.state_dir, "nexenta",
                    cfg.generations(), cfg.known_drives, cfg.boot_media,
                    driver)


def system_file(app: Appliance, path: str) -> bytes:
    with open(os.path.join(app.root, path.lstrip("/")), "rb") as f:
        return f.read()


def apply(site: TuneSite, plan) -> object:
    return site.transaction().run("apply", plan.new_text.encode("latin-1"),
                                  plan.base_sha256, apply_summary(plan),
                                  plan.diff, site.verifier())


@pytest.fixture
def nexenta(tmp_path):
    app = Appliance.build("small-nexenta", str(tmp_path / "app"))
    installed = next(d["firmware"] for d in app.expected_disks()
                     if d.get("key") == INTEL)
    builders.store_record(app.root, builders.cert_record(
        INTEL, "S1", firmware=installed, native=4096, nv_sup=True,
        recommended={"physical-block-size": 4096, "throttle-max": 32}))
    return app


def test_sd_plan_apply_verify_and_rollback_in_process(nexenta):
    site = site_of(nexenta)
    before = system_file(nexenta, "/kernel/drv/sd.conf")
    plan, inv, text = build_plan(site, Overrides())
    assert text.encode("latin-1") == before
    # The known-drives table may propose for other keys too.
    change = next(c for c in plan.changes if c.key == INTEL)
    assert plan.driver == "sd"
    assert change.set == {"physical-block-size": "4096",
                          "throttle-max": "32"}
    assert [w.source.split(" ")[0] for w in change.why] == \
        ["certification", "certification"]
    entry = apply(site, plan)
    after = system_file(nexenta, "/kernel/drv/sd.conf")
    assert after == plan.new_text.encode("latin-1") != before
    assert entry.state == "done" and entry.driver == "sd"
    assert '%s physical-block-size:4096, throttle-max:32' % INTEL in \
        entry.summary
    # sd reads sd.conf when a disk attaches: the busy disks of the key
    # keep their values until the next boot.
    states = {s["name"]: s["state"] for s in entry.verify}
    assert set(states.values()) <= {"pending reboot", "applied",
                                    "not matched", "not an sd disk"}
    back = rollback_to(site, None, True)
    assert back.entry.id == entry.id and back.old == before
    back.site.transaction().run("rollback", back.old, back.base_sha256,
                                ["rollback of %s" % entry.id], back.diff,
                                back.site.verifier(), rollback_of=entry.id,
                                change=back.change)
    assert system_file(nexenta, "/kernel/drv/sd.conf") == before


def test_a_saved_plan_is_screened_again_and_an_edit_refused(nexenta,
                                                            tmp_path):
    site = site_of(nexenta)
    plan, _, _ = build_plan(site, Overrides())
    saved = str(tmp_path / "plan.json")
    with open(saved, "w") as f:
        json.dump(plan.to_json(), f)
    todo = plan_to_apply(site, saved, Overrides())
    assert todo.plan is not None
    assert todo.plan.new_text == plan.new_text
    assert [c.set for c in todo.plan.changes] == \
        [c.set for c in plan.changes]
    # A plan whose claim the screens would not make now is refused.
    doc = plan.to_json()
    at = next(i for i, c in enumerate(doc["changes"]) if c["key"] == INTEL)
    doc["changes"][at]["set"]["throttle-max"] = "8"
    with open(saved, "w") as f:
        json.dump(doc, f)
    assert load_plan(site.host, saved).changes[at].set["throttle-max"] == \
        "8"
    with pytest.raises(RefusedError) as refused:
        plan_to_apply(site, saved, Overrides())
    assert "throttle-max:8" in refused.value.reason


def test_nvme_plan_apply_and_rollback_leave_sd_conf_alone(tmp_path):
    app = Appliance.build("nvme-4k", str(tmp_path / "app"))
    firmware = next(d["firmware"] for d in app.expected_disks()
                    if d["name"] == NVME_IDLE)
    builders.store_record(app.root, builders.cert_record(
        None, "PHLJ912300CD2P0BGN", firmware=firmware, native=4096,
        driver="blkdev", model=NVME_MODEL, target=NVME_IDLE,
        recommended={"min-phys-block-size": 4096}))
    site = site_of(app, "nvme")
    sd_before = system_file(app, "/kernel/drv/sd.conf")
    nvme_before = site.platform.base_text()
    # tank (ashift 9) holds a namespace of the model: held back unless
    # the operator overrides, with the reformat left to the operator.
    held, _, _ = build_plan(site, Overrides())
    assert held.changes == [] and held.held[0].key == NVME_MODEL
    assert "--allow-ashift-mismatch" in held.held[0].reason
    plan, _, _ = build_plan(site, Overrides(allow_ashift_mismatch=True))
    (change,) = plan.changes
    assert (plan.driver, change.key, change.set) == (
        "nvme", NVME_MODEL, {"min-phys-block-size": "4096"})
    assert apply_summary(plan) == ['"%s" min-phys-block-size:4096'
                                   % NVME_MODEL]
    entry = apply(site, plan)
    assert entry.driver == "nvme"
    assert site.platform.base_text() == plan.new_text.encode("latin-1")
    assert system_file(app, "/kernel/drv/sd.conf") == sd_before
    back = rollback_to(site_of(app, "sd"), None, True)
    assert back.site.driver == "nvme"       # the entry's driver, not --driver
    back.site.transaction().run("rollback", back.old, back.base_sha256,
                                ["rollback of %s" % entry.id], back.diff,
                                back.site.verifier(), rollback_of=entry.id,
                                change=back.change)
    assert site.platform.base_text() == nvme_before
    assert system_file(app, "/kernel/drv/sd.conf") == sd_before
