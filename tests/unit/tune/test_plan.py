# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""tune/plan.py: the plan file.  What `plan --save` writes is read back
by `apply` field by field, for either driver, and a file that is not
such a plan is refused with the field named."""

import pytest

from sdtune.drivers.planning import Change, Evidence, Overrides
from sdtune.errors import SdtuneError
from sdtune.inventory.disks import Inventory
from sdtune.tune.plan import PLAN_VERSION, Plan, make_plan, render_plan
from tests import builders

KEY = builders.KEY


def sd_plan():
    rec = builders.cert_record(native=4096)
    return make_plan("sd", "", "/kernel/drv/sd.conf", "upstream",
                     Evidence(Inventory([builders.disk()]), [rec], []),
                     Overrides(), 5.0)


def test_a_plan_reads_back_as_written():
    plan = sd_plan()
    assert [c.set for c in plan.changes] == [{"physical-block-size":
                                              "4096"}]
    back = Plan.from_json(plan.to_json(), "p.json")
    assert (back.driver, back.conf_path, back.new_text, back.created) == \
        ("sd", "/kernel/drv/sd.conf", plan.new_text, 5.0)
    assert [(c.key, c.set) for c in back.changes] == \
        [(KEY, {"physical-block-size": "4096"})]
    # The JSON keeps the names of before NVMe.
    assert plan.to_json()["sd_conf"] == "/kernel/drv/sd.conf"
    assert '"%s" (c1t1d0):' % KEY in render_plan(plan)


def nvme_doc(key):
    plan = Plan("/kernel/drv/nvme.conf", "nvme", "0" * 64, "x\n", "",
                changes=[Change(key, set={"min-phys-block-size": "4096"})],
                driver="nvme")
    return plan.to_json()


@pytest.mark.parametrize("driver, key, fits", [
    ("sd", KEY, True), ("sd", "ATA", False),
    ("nvme", "INTEL SSDPE2KX020T8", True), ("nvme", "", False),
    ("nvme", "M" * 41, False),
])
def test_each_driver_reads_its_own_keys(driver, key, fits):
    doc = sd_plan().to_json() if driver == "sd" else nvme_doc(key)
    doc["changes"][0]["key"] = key
    if fits:
        assert Plan.from_json(doc, "p.json").changes[0].key == key
        return
    with pytest.raises(SdtuneError) as bad:
        Plan.from_json(doc, "p.json")
    assert bad.value.reason == "not an sdtune plan: changes[0] is not a " \
        "%s with tunables to set" % ("24-character key" if driver == "sd"
                                     else "model of 1 to 40 characters")


@pytest.mark.parametrize("change, why", [
    ({"version": PLAN_VERSION + 1}, "version is not 1"),
    ({"driver": "cmdk"}, "field 'driver' is not one of sd, nvme"),
    ({"sd_conf": 3}, "field 'sd_conf' is missing or not a string"),
    ({"changes": {}}, "field 'changes' is missing or not a list"),
    ({"new_text": "\u20ac"}, "field 'new_text' holds characters sd.conf "
     "cannot (not latin-1)"),
])
def test_what_is_not_a_plan_is_refused_by_its_field(change, why):
    doc = dict(sd_plan().to_json(), **change)
    with pytest.raises(SdtuneError) as bad:
        Plan.from_json(doc, "p.json")
    assert bad.value.reason == "not an sdtune plan: " + why


def test_an_edited_new_text_fails_its_checksum():
    doc = sd_plan().to_json()
    doc["new_text"] += "# more\n"
    with pytest.raises(SdtuneError) as bad:
        Plan.from_json(doc, "p.json")
    assert "does not match its checksum" in bad.value.reason
