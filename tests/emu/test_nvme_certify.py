# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Issue 18's acceptance, with real I/O: the simulated appliance's
nvme-4k scenario (OmniOS, two namespaces of an Intel P4510 formatted
with 512-byte LBAs, tank with ashift 9 on the first) with an emulated
drive of 4 KiB pages behind 512-byte sectors and a volatile cache behind
the idle namespace.

certify measures the namespace through the real sdio engine: native
sector 4096, volatile cache, the queue-depth knee reported without an sd
throttle, and min-phys-block-size:4096 recommended.  plan --driver nvme
then proposes it for the model in nvme.conf (held back until
--allow-ashift-mismatch, since tank has ashift 9), apply writes it, after
the reboot verify shows blkdev reporting 4096, audit raises the ashift
finding of tank's namespace, and rollback restores nvme.conf byte for
byte.  The sim-only flow with injected records, on OmniOS and SmartOS, is
tests/e2e/test_nvme_tune.py.
"""

import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance, scenario_path  # noqa: E402
from tests.sim.testing import sdtune_checked as run  # noqa: E402
from tests.sim.testing import sdtune_json as as_json  # noqa: E402

pytestmark = pytest.mark.emu

MODEL = "INTEL SSDPE2KX020T8"
TANK = "c2t5CD2E4300C1A0100d0"
IDLE = "c3t5CD2E4300C1B0100d0"
NVME_CONF = os.path.join("kernel", "drv", "nvme.conf")
# Short queue-depth steps (the knee itself is test_certify.py's
# subject); sector and cache with the defaults.
CERTIFY = ("[certify]\nphases = sector,cache,qd\nstep_max_s = 1\n"
           "min_intervals = 6\n")


def read(app, rel):
    with open(os.path.join(app.root, rel), "rb") as f:
        return f.read()


def certify_again_if_inconclusive(app, res, tries=2):
    """An inconclusive sector verdict (a loaded machine) is no verdict:
    certify the namespace again, as an operator would."""
    while res["native_sector_bytes"] is None and tries:
        tries -= 1
        proc = run(app, "certify", IDLE, "--confirm", IDLE, "-o", "json")
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout)["results"][0]
    return res


def test_nvme_namespace_certified_planned_applied_verified_rolled_back(
        tmp_path, emulated_drive):
    drive = emulated_drive("512e", "volatile")
    with open(scenario_path("nvme-4k")) as f:
        scenario = json.load(f)
    for d in scenario["disks"]:
        if d["name"] == IDLE:
            d["device_file"] = drive.path
    app = Appliance.build(scenario, str(tmp_path / "app"))
    with open(app.config, "a") as f:
        f.write(CERTIFY)
    original = read(app, NVME_CONF)

    # A pool member is refused before a single write.
    writes = drive.counters().writes
    proc = run(app, "certify", TANK, "--confirm", TANK)
    assert proc.returncode == 3 and "member of pool tank" in proc.stderr
    assert drive.counters().writes == writes

    proc = run(app, "certify", IDLE, "--confirm", IDLE, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    res = certify_again_if_inconclusive(
        app, json.loads(proc.stdout)["results"][0])
    assert (res["key"], res["driver"], res["model"]) == (None, "blkdev",
                                                         MODEL)
    assert res["native_sector_bytes"] == 4096, res["sector_reason"]
    assert res["sector_confidence"] >= 0.95
    assert res["cache"] in ("volatile", "inconclusive"), res["cache_reason"]
    q = res["queue_depth"]
    assert q["throttle_max"] is None and q["throttle_min"] is None
    assert "reported only (NVMe" in q["reason"]
    assert res["recommended"] == {"min-phys-block-size": 4096}

    # tank (ashift 9) is on a namespace of the model: held back.
    doc = as_json(app, "plan", "--driver", "nvme")
    assert doc["changes"] == []
    assert [h["tunable"] for h in doc["held"]] == ["min-phys-block-size"]
    assert any("nvmeadm format nvme1/1 1" in o for o in doc["options"])

    plan_file = os.path.join(app.dir, "nvme-plan.json")
    doc = as_json(app, "plan", "--driver", "nvme", "--allow-ashift-mismatch",
                  "--save", plan_file)
    assert [(c["key"], c["set"]) for c in doc["changes"]] == [
        (MODEL, {"min-phys-block-size": "4096"})]
    assert '"%s", "", "min-phys-block-size:4096"' % MODEL in doc["new_text"]

    proc = run(app, "apply", plan_file, "--yes", "--allow-ashift-mismatch")
    assert proc.returncode == 0, proc.stderr
    assert read(app, NVME_CONF) == doc["new_text"].encode("latin-1")
    states = {d["name"]: d["state"] for d in as_json(app, "verify")["disks"]}
    assert states[IDLE] == states[TANK] == "pending reboot"

    app.reboot()
    verify = {d["name"]: d for d in as_json(app, "verify")["disks"]}
    for name in (TANK, IDLE):
        assert verify[name]["state"] == "applied"
        assert "blkdev reports 4096 B" in verify[name]["details"]
    disks = {d["name"]: d for d in as_json(app, "disks")["disks"]}
    assert disks[IDLE]["physical_block_bytes"] == 4096
    assert disks[TANK]["physical_block_bytes"] == 4096

    findings = as_json(app, "audit")["findings"]
    (f,) = [f for f in findings if f["id"] == "SDT-1001"]
    assert f["subject"] == "tank/" + TANK
    assert "4096 B pages (certified" in f["status"]

    proc = run(app, "rollback", "--last", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert read(app, NVME_CONF) == original
    app.reboot()
    disks = {d["name"]: d for d in as_json(app, "disks")["disks"]}
    assert disks[IDLE]["physical_block_bytes"] == 512
