# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""tune/prove.py's pure parts: the engine's answer parsed, the certified
flush cost found, the flush ceiling, the checks and the state."""

import json

import pytest

from sdtune.drivers import DRIVERS
from sdtune.drivers.base import NotSupported
from sdtune.drivers.diskstate import DiskState
from sdtune.driverconf.parser import parse_bytes
from sdtune.tune.prove import (FLUSH_FLOOR_NS, Measured, certified_flush_ns,
                               checks_of, decide, flush_ceiling_ns,
                               parse_prove)
from tests.builders import KEY, cert_record, disk

SD = sorted(DRIVERS["sd"].proves)
FAST = Measured(512, 4096, 64, 900, 4000)          # sd answers the flush
SLOW = Measured(512, 512, 64, 160_000, 900_000)    # the drive sees it
ALL = {"physical-block-size": "4096", "cache-nonvolatile": "true",
       "throttle-max": "32"}


def state(s, details=()):
    return DiskState("c1t1d0", KEY, s, list(details))


def test_parse_prove_sample():
    m = parse_prove(json.dumps({
        "target": "/dev/rdsk/c1t1d0p0",
        "media": {"lbsize_bytes": 512, "pbsize_bytes": 4096,
                  "capacity_blocks": 1000},
        "media_error": None,
        "flush": {"calls": 64, "median_ns": 1840, "p99_ns": 5210,
                  "min_ns": 1702, "max_ns": 5210},
        "flush_error": None, "flush_calls_done": 64}))
    assert m == Measured(512, 4096, 64, 1840, 5210, None, None)


def test_parse_prove_errors_kept():
    m = parse_prove('{"target": "x", "media": null, "media_error": '
                    '"Inappropriate ioctl for device", "flush": null, '
                    '"flush_error": "Inappropriate ioctl for device", '
                    '"flush_calls_done": 0}')
    assert m.pbsize_bytes is None and m.flush_median_ns is None
    assert m.flush_error == "Inappropriate ioctl for device"


@pytest.mark.parametrize("text", ["", "[]", "{}", '{"media": {}, '
                                  '"flush": null}'])
def test_parse_prove_garbage(text):
    with pytest.raises(ValueError, match="sdio prove"):
        parse_prove(text)


@pytest.mark.parametrize("doc,field", [
    ({"media": [], "flush": None}, "media"),
    ({"media": {"lbsize_bytes": "x", "pbsize_bytes": 4096},
      "flush": None}, "media.lbsize_bytes"),
    ({"media": None, "flush": {"calls": 64, "median_ns": -1,
                               "p99_ns": 5}}, "flush.median_ns"),
    ({"media": None, "flush": {"calls": True, "median_ns": 1,
                               "p99_ns": 5}}, "flush.calls"),
    ({"media": None, "flush": None, "flush_error": 5}, "flush_error"),
])
def test_parse_prove_names_the_bad_field_in_its_own_words(doc, field):
    with pytest.raises(ValueError) as e:
        parse_prove(json.dumps(doc))
    assert str(e.value) == "sdio prove: missing or bad field '%s'" % field


def test_certified_flush_cost_prefers_the_unit_then_the_model():
    def rec(serial, when, w, wf):
        return cert_record(serial=serial, when=when, evidence={
            "cache": {"write_lat_ns": w, "write_flush_lat_ns": wf}})
    records = [rec("S1", 1, 800_000, 3_800_000),
               rec("S2", 2, 800_000, 1_800_000),
               cert_record(serial="S1", when=3)]        # no cache evidence
    assert certified_flush_ns(disk(serial="S1"), records) == 3_000_000
    assert certified_flush_ns(disk(serial="S9"), records) == 1_000_000
    assert certified_flush_ns(disk(key="ATA     OTHER".ljust(24)),
                              records) is None


def test_flush_ceiling_has_a_four_times_margin_and_a_floor():
    assert flush_ceiling_ns(3_000_000) == 750_000
    assert flush_ceiling_ns(172_000) == 43_000
    # A certified cost too small to tell from a system call: the floor.
    assert flush_ceiling_ns(30_000) == FLUSH_FLOOR_NS
    assert flush_ceiling_ns(None) == FLUSH_FLOOR_NS


def test_proven_when_every_path_agrees():
    checks = checks_of(ALL, SD, FAST, 3_000_000, 32)
    p = decide(state("applied"), ALL, checks)
    assert p.state == "proven"
    assert [c.agrees for c in checks] == [True, True, True]
    flush = next(c for c in checks if c.tunable == "cache-nonvolatile")
    assert flush.numbers["flush_median_ns"] == 900
    assert flush.numbers["certified_flush_ns"] == 3_000_000
    assert flush.numbers["ceiling_ns"] == 750_000
    doc = p.to_json()
    assert set(doc) == {"name", "key", "state", "checks", "details"}
    assert {"tunable", "expected", "measured"} <= set(doc["checks"][0])


def test_contradicted_when_the_paths_disagree_with_soft_state():
    checks = checks_of(ALL, SD, SLOW, 172_000, 32)
    p = decide(state("applied"), ALL, checks)
    assert p.state == "contradicted"
    assert any("kernel 512, applied 4096" in d for d in p.details)
    assert any("flushes reach the drive" in d for d in p.details)


def test_one_disagreeing_path_is_enough():
    m = Measured(512, 4096, 64, 150_000, 400_000)
    p = decide(state("applied"), ALL, checks_of(ALL, SD, m, 172_000, 32))
    assert p.state == "contradicted"
    assert [d.split(":")[0] for d in p.details] == ["cache-nonvolatile"]


def test_pending_reboot_is_verifys_and_keeps_the_numbers():
    checks = checks_of(ALL, SD, SLOW, 3_000_000, 256)
    p = decide(state("pending reboot", ["un_phy_blocksize: kernel 512, "
                                        "sd.conf 4096"]), ALL, checks)
    assert p.state == "pending reboot"
    assert p.details == ["un_phy_blocksize: kernel 512, sd.conf 4096"]
    assert len(p.checks) == 3


def test_not_in_effect_when_nothing_provable_is_configured():
    asked = {}
    checks = checks_of(asked, SD, SLOW, 3_000_000, 256)
    p = decide(state("not matched"), asked, checks)
    assert p.state == "not in effect"
    assert all(c.expected is None and c.agrees is None for c in checks)
    # The numbers are there all the same: the "before" of a before/after.
    assert checks[0].measured == 512


def test_an_unmeasured_path_is_not_proof():
    m = Measured(None, None, 0, None, None, "Inappropriate ioctl for "
                 "device", "Inappropriate ioctl for device")
    p = decide(state("applied"), ALL, checks_of(ALL, SD, m, None, 32))
    assert p.state == "contradicted"
    assert any("not measured" in d for d in p.details)


def test_only_configured_values_are_judged():
    asked = {"throttle-max": "32"}
    checks = checks_of(asked, SD, SLOW, None, 32)
    assert decide(state("applied"), asked, checks).state == "proven"


def test_sd_proves_what_the_kernel_accepts_from_sd_conf():
    conf = parse_bytes(b'sd-config-list = "ATA     ACME DC4K", '
                       b'"physical-block-size:4096,cache-nonvolatile:true,'
                       b'disksort:false,throttle-max:32";\n')
    asked = DRIVERS["sd"].asked(conf, disk(), "nexenta")
    assert asked == {"physical-block-size": "4096",
                     "cache-nonvolatile": "true", "throttle-max": "32"}


def test_nvme_proves_blkdevs_physical_block_only():
    assert DRIVERS["nvme"].proves == frozenset(("min-phys-block-size",))
    asked = {"min-phys-block-size": "4096"}
    checks = checks_of(asked, sorted(DRIVERS["nvme"].proves),
                       Measured(512, 4096, 64, 900_000, 2_000_000), None,
                       None)
    assert [c.tunable for c in checks] == ["min-phys-block-size"]
    assert decide(state("applied"), asked, checks).state == "proven"


def test_a_driver_without_proof_says_not_supported():
    from sdtune.drivers.base import Driver
    with pytest.raises(NotSupported, match="nothing to prove"):
        Driver.asked(DRIVERS["nvme"], parse_bytes(b""),
                     disk(driver="blkdev"), "nexenta")
