# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Ground truth for the shipped sd.conf files of tests/fixtures/realworld/
sdconf/ (INDEX.md section 9 and "Ground truth collected"): `sdtune
sdconf show -o json FILE` reports exactly the sd-config-list entries
each file holds, with what sd does with them, and the sdconf model
applies them to the disks their sources name.

SmartOS and the illumos-gate files are read as upstream illumos, the
NexentaStor file as NexentaStor (its io-time and slow-io-threshold are
NexentaStor-only tunables)."""

import gc
import io
import json
import os

import pytest

from sdtune.cli import main
from sdtune.driverconf.parser import parse
from sdtune.sdconf.match import Identity
from sdtune.sdconf.model import evaluate
from sdtune.sdconf.tunables import SdState

SDCONF = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures",
                      "realworld", "sdconf")
SMARTOS_2012 = "smartos-live-2012-09-19-b8e017b0-overlay-sd.conf"
SMARTOS_2016 = "smartos-live-2016-06-29-dd25937d-overlay-sd.conf"
SMARTOS_2018 = "smartos-live-2018-10-19-eeddd785-overlay-sd.conf"
NEXENTA = "nexentastor-5.3-illumos-nexenta-600a56024b-intel-sd.conf"
SYNETO = "syneto-illumos-gate-121b8c46-intel-sd.conf"
GATE_INTEL = "illumos-gate-2023-bb936843-intel-sd.conf"
GATE_SUN = "illumos-gate-2023-bb936843-sun-sd.conf"
MANPAGE = "illumos-sd.4d-manpage-example-fragment.conf"

PERC = {"cache-nonvolatile": "true"}
PERC_KERNEL = {"un_f_suppress_cache_flush": 1}
RETRIES = {"retries-timeout": "1", "retries-busy": "1",
           "retries-reset": "1", "retries-victim": "2"}
RETRIES_KERNEL = {"un_retry_count": 1, "un_busy_retry_count": 1,
                  "un_reset_retry_count": 1, "un_victim_retry_count": 2}
SAMSUNG = {"physical-block-size": "4096"}


def show(name, flavour):
    """`sdtune sdconf --flavour F show -o json FILE`, in-process."""
    out = io.StringIO()
    try:
        rc = main(["sdconf", "--flavour", flavour, "show", "-o", "json",
                   os.path.join(SDCONF, name)], out=out)
    finally:
        gc.enable()                 # main() switches the collector off
    assert rc == 0
    return json.loads(out.getvalue())


def pairs(report):
    return [(p["key"], p["tunables"], p["kernel"], p["ignored"])
            for p in report["pairs"]]


def conf(name):
    with open(os.path.join(SDCONF, name), encoding="latin-1") as f:
        return parse(f.read())


def disk(vid, pid):
    return Identity(vid.ljust(8), pid.ljust(16))


def test_smartos_2012_dell_perc_caches_are_nonvolatile():
    # Joyent (STOR-102): DELL PERC H710, H700 and PERC/6i caches are
    # non-volatile: sd sends them no cache flush.
    report = show(SMARTOS_2012, "upstream")
    assert report["list"] == {"line": 65, "usable": True, "problem": None}
    assert pairs(report) == [
        ("DELL    PERC H710", PERC, PERC_KERNEL, []),
        ("DELL    PERC H700", PERC, PERC_KERNEL, []),
        ("DELL    PERC/6i", PERC, PERC_KERNEL, [])]


@pytest.mark.parametrize("name, catch_all", [
    (SMARTOS_2016, RETRIES),
    (SMARTOS_2018, dict({"power-condition": "false"}, **RETRIES)),
])
def test_smartos_catch_all_perc_and_samsung_4k(name, catch_all):
    # OS-5492: Samsung SSD 830/840/850 get physical-block-size 4096; the
    # "" pair (2013) sets retries for every disk; 2018 (OS-7320) adds
    # power-condition:false to it.
    report = show(name, "upstream")
    assert report["list"] == {"line": 75, "usable": True, "problem": None}
    kernel = dict(RETRIES_KERNEL)
    if "power-condition" in catch_all:
        kernel["un_f_power_condition_disabled"] = 1
    assert pairs(report) == [
        ("", catch_all, kernel, []),
        ("DELL    PERC H710", PERC, PERC_KERNEL, []),
        ("DELL    PERC H700", PERC, PERC_KERNEL, []),
        ("DELL    PERC/6i", PERC, PERC_KERNEL, []),
        ("ATA     Samsung SSD 830", SAMSUNG, {"un_phy_blocksize": 4096}, []),
        ("ATA     Samsung SSD 840", SAMSUNG, {"un_phy_blocksize": 4096}, []),
        ("ATA     Samsung SSD 850", SAMSUNG, {"un_phy_blocksize": 4096}, [])]


@pytest.mark.parametrize("model", ["830", "840", "850"])
def test_smartos_samsung_ssds_get_4096_and_the_retries(model):
    sdconf = conf(SMARTOS_2016)
    ev = evaluate(sdconf, disk("ATA", "Samsung SSD %s " % model),
                  "upstream")
    assert [e.pair.key for e in ev.matched] == [
        "", "ATA     Samsung SSD %s" % model]
    assert ev.fields()["un_phy_blocksize"] == 4096
    assert {k: ev.fields()[k] for k in RETRIES_KERNEL} == RETRIES_KERNEL


def test_smartos_catch_all_reaches_every_disk_but_4k_only_samsung():
    # The 860 entry (OS-7455) came later than these files: an 860 and any
    # other disk get only the catch-all retries.
    others = (disk("ATA", "Samsung SSD 860"),
              disk("HGST", "HUS724040ALS640"))
    for ident in others:
        ev = evaluate(conf(SMARTOS_2018), ident, "upstream")
        assert [e.pair.key for e in ev.matched] == [""]
        assert ev.fields()["un_phy_blocksize"] == \
            SdState().un_phy_blocksize
        assert ev.fields()["un_retry_count"] == 1


def test_smartos_dell_perc_volume_flush_suppressed():
    ev = evaluate(conf(SMARTOS_2012), disk("DELL", "PERC H710"),
                  "upstream")
    assert [e.pair.key for e in ev.matched] == ["DELL    PERC H710"]
    assert ev.fields()["un_f_suppress_cache_flush"] == 1


def test_nexentastor_vmware_io_time_and_slow_io_detector():
    # Nexenta (NEX-14507/NEX-8460): VMware virtual disks get io-time 180
    # and slow-io-threshold 0; a `#` comment sits inside the list.
    report = show(NEXENTA, "nexenta")
    assert report["list"] == {"line": 61, "usable": True, "problem": None}
    assert pairs(report) == [
        ("VMware  Virtual disk",
         {"io-time": "180", "slow-io-threshold": "0"},
         {"un_io_time": 180, "un_slow_io_threshold_s": 0}, [])]
    ev = evaluate(conf(NEXENTA), disk("VMware", "Virtual disk"), "nexenta")
    assert (ev.fields()["un_io_time"],
            ev.fields()["un_slow_io_threshold_s"]) == (180, 0)


def test_nexentastor_tunables_are_ignored_by_upstream_sd():
    report = show(NEXENTA, "upstream")
    reason = "NexentaStor-only property; upstream sd ignores it"
    assert pairs(report) == [
        ("VMware  Virtual disk",
         {"io-time": "180", "slow-io-threshold": "0"}, {},
         [{"name": "io-time", "value": "180", "reason": reason},
          {"name": "slow-io-threshold", "value": "0", "reason": reason}])]


@pytest.mark.parametrize("name", [GATE_INTEL, GATE_SUN])
def test_illumos_gate_defaults_have_no_list(name):
    # Upstream ships no sd-config-list; the SPARC file splits driver
    # entries over two lines, which is no list either.
    report = show(name, "upstream")
    assert report["list"] == {"line": None, "usable": False,
                              "problem": "no sd-config-list"}
    assert report["pairs"] == []


def test_syneto_list_without_blanks_after_commas():
    report = show(SYNETO, "upstream")
    assert report["list"] == {"line": 54, "usable": True, "problem": None}
    power = {"power-condition": "false"}
    power_kernel = {"un_f_power_condition_disabled": 1}
    four_k = ({"physical-block-size": "4096"}, {"un_phy_blocksize": 4096})
    assert pairs(report) == [
        ("WD      WD2000FYYG", power, power_kernel, []),
        ("SEAGATE ST2000NM0001", power, power_kernel, []),
        ("SEAGATE ST32000644NS", power, power_kernel, []),
        ("SEAGATE ST91000640SS", power, power_kernel, []),
        ("SEAGATE ST3300657SS",) + four_k + ([],),
        ("DGC     RAID",) + four_k + ([],),
        ("NETAPP  LUN",) + four_k + ([],)]


def test_syneto_file_holds_no_samsung_hd204ui_entry():
    # INDEX.md's ground-truth table says Syneto forces 4096 for the
    # Samsung HD204UI; the file as collected has no such entry, so sd
    # leaves that disk alone.
    hd204ui = (disk("ATA", "SAMSUNG HD204UI"), disk("SAMSUNG", "HD204UI"))
    for ident in hd204ui:
        assert evaluate(conf(SYNETO), ident, "upstream").matched == []


def test_manpage_fragment_blank_after_comma_in_tunables():
    # sd(4D): `sd-config-list =` alone on its line, and "delay-busy:600,
    # retries-timeout:6" with a blank after the comma.
    report = show(MANPAGE, "upstream")
    assert report["list"] == {"line": 1, "usable": True, "problem": None}
    assert [(p["key"], p["tunables"]) for p in report["pairs"]] == [
        ("SUN     T4", {"delay-busy": "600", "retries-timeout": "6"}),
        ("SUN     StorEdge_3510", {"retries-timeout": "3"})]
    assert report["pairs"][0]["kernel"]["un_retry_count"] == 6
    assert report["pairs"][1]["kernel"] == {"un_retry_count": 3}
    assert all(p["ignored"] == [] for p in report["pairs"])
