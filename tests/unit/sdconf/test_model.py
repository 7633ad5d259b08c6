# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.sdconf.model: which sd-config-list the kernel uses
(facts §2.2, §3.1) and what sd makes of it for one INQUIRY identity
(§3, §4, §15 items 3 to 5)."""

import pytest

from sdtune.driverconf.parser import parse
from sdtune.sdconf.match import Identity
from sdtune.sdconf.model import config_list, evaluate, pair_alone
from sdtune.sdconf.tunables import NEXENTA, UPSTREAM, SdState

A = Identity("ATA     ", "INTEL SSDSC2BA40", "0270")
B = Identity("HGST    ", "HUS724040ALS640 ", "A1C4")
C = Identity("ATA     ", "SAMSUNG MZ7LM480", "403Q")
VMW = Identity("VMware  ", "Virtual disk    ", "1.0 ")

KEY_A = "ATA     INTEL SSDSC2BA40"
KEY_B = "HGST    HUS724040ALS640 "
KEY_C = "ATA     SAMSUNG MZ7LM480"


def conf_with(*pairs, extra=""):
    body = ",\n".join('\t"%s", "%s"' % p for p in pairs)
    return parse("ddi-forceattach=1;\nsd-config-list =\n%s;\n%s"
                 % (body, extra))


def state_of(conf, ident, flavour=NEXENTA):
    return evaluate(conf, ident, flavour).state


# -- config_list --------------------------------------------------------------

def test_no_list():
    clist = config_list(parse('name="sd" class="scsi" target=0 lun=0;\n'
                              "ddi-devid-registrant=1;\n"))
    assert clist.prop is None and clist.pairs == []
    assert not clist.usable and clist.problem == "no sd-config-list"


def test_pairs_are_split_in_order():
    clist = config_list(conf_with((KEY_A, "throttle-max:32"),
                                  (KEY_B, "disksort:false")))
    assert clist.usable and clist.problem == ""
    assert [(p.index, p.key, p.tunables) for p in clist.pairs] == [
        (0, KEY_A, "throttle-max:32"), (1, KEY_B, "disksort:false")]


def test_first_global_list_wins():
    conf = parse('sd-config-list = "%s", "throttle-max:32";\n'
                 'sd-config-list = "%s", "throttle-max:64";\n'
                 % (KEY_A, KEY_A))
    clist = config_list(conf)
    assert [p.tunables for p in clist.pairs] == ["throttle-max:32"]
    assert len(clist.shadowed) == 1
    assert clist.shadowed[0].values[1].value == "throttle-max:64"
    assert state_of(conf, A).un_saved_throttle == 32


def test_first_list_wins_even_when_it_is_unusable():
    conf = parse('sd-config-list = "%s", "throttle-max:32", "x";\n'
                 'sd-config-list = "%s", "throttle-max:64";\n'
                 % (KEY_A, KEY_A))
    clist = config_list(conf)
    assert not clist.usable
    assert state_of(conf, A) == SdState()


def test_odd_number_of_strings_makes_the_whole_list_unusable():
    conf = parse('sd-config-list = "%s", "throttle-max:32",\n'
                 '\t"%s";\n' % (KEY_A, KEY_B))
    clist = config_list(conf)
    assert not clist.usable
    assert "odd number of strings (3)" in clist.problem
    assert [p.key for p in clist.pairs] == [KEY_A]   # kept for lint/show
    ev = evaluate(conf, A)
    assert ev.state == SdState() and ev.matched == []
    assert ev.list_problem == clist.problem


@pytest.mark.parametrize("statement", ["sd-config-list = 1, 2;",
                                       "sd-config-list = 0x10;",
                                       "sd-config-list;"])
def test_list_that_is_not_strings_is_unusable(statement):
    clist = config_list(parse(statement + "\n"))
    assert clist.prop is not None
    assert not clist.usable
    assert "not a list of strings" in clist.problem


def test_list_only_in_a_node_spec_is_not_the_global_list():
    conf = parse('name="sd" class="scsi" target=0 lun=0\n'
                 '\tsd-config-list = "%s", "throttle-max:32";\n' % KEY_A)
    clist = config_list(conf)
    assert clist.prop is None and not clist.usable
    assert len(clist.in_node_specs) == 1
    assert clist.in_node_specs[0].statement.node_name == "sd"
    assert state_of(conf, A) == SdState()


def test_missing_semicolon_moves_the_list_into_the_next_node_spec():
    conf = parse('sd-config-list = "%s", "throttle-max:32"\n'
                 'name="sd" class="scsi-self-identifying";\n' % KEY_A)
    clist = config_list(conf)
    assert clist.prop is None
    assert len(clist.in_node_specs) == 1


def test_global_list_with_node_spec_list_as_well():
    conf = parse('name="sd" class="scsi" target=0 lun=0 '
                 'sd-config-list = "%s", "throttle-max:64";\n'
                 'sd-config-list = "%s", "throttle-max:32";\n'
                 % (KEY_A, KEY_A))
    clist = config_list(conf)
    assert clist.usable and [p.tunables for p in clist.pairs] == [
        "throttle-max:32"]
    assert len(clist.in_node_specs) == 1


def test_pair_format_is_chosen_by_a_colon():
    clist = config_list(conf_with((KEY_A, "throttle-max:32"),
                                  (KEY_B, "physical-block-size=4096"),
                                  (KEY_C, "data1 data2")))
    assert [p.improved for p in clist.pairs] == [True, False, False]


# -- evaluate -----------------------------------------------------------------

PAIRS = [
    ("ATA", "cache-nonvolatile:true, throttle-max:64"),          # prefix
    (KEY_A, "throttle-max:32, physical-block-size:4096"),        # exact A
    (KEY_B, "throttle-min:2, throttle-max:4"),                   # B only
    ("VMware  Virtual disk", "io-time:180,slow-io-threshold:0"),
    (KEY_A, "disksort:false, cache-nonvolatile:false"),          # A again
    ("HITACHI HUS724040ALS640 ", "rmw-type:1"),                  # no device
]


def test_all_matching_pairs_apply_in_order_last_wins_per_field():
    ev = evaluate(conf_with(*PAIRS), A)
    assert [e.pair.index for e in ev.matched] == [0, 1, 4]
    s = ev.state
    assert s.un_saved_throttle == 32                 # pair 1 over pair 0
    assert s.un_phy_blocksize == 4096
    assert s.un_f_disksort_disabled == 1
    assert s.un_f_suppress_cache_flush == 0          # pair 4 over pair 0
    assert s.un_min_throttle == 8
    assert s.un_io_time is None and s.un_f_rmw_type == 0


def test_prefix_key_and_exact_key_both_apply():
    ev = evaluate(conf_with(*PAIRS), C)
    assert [e.pair.index for e in ev.matched] == [0]
    assert ev.state.un_f_suppress_cache_flush == 1
    assert ev.state.un_saved_throttle == 64
    assert ev.state.un_phy_blocksize == 512


def test_non_matching_pairs_are_skipped():
    ev = evaluate(conf_with(*PAIRS), B)
    assert [e.pair.index for e in ev.matched] == [2]
    assert (ev.state.un_saved_throttle, ev.state.un_min_throttle) == (4, 2)
    assert ev.state.un_f_suppress_cache_flush == 0
    ev = evaluate(conf_with(*PAIRS), VMW)
    assert [e.pair.index for e in ev.matched] == [3]
    assert (ev.state.un_io_time, ev.state.un_slow_io_threshold_s) == (180, 0)
    other = Identity("SEAGATE ", "ST4000NM0023    ", "0003")
    assert evaluate(conf_with(*PAIRS), other).matched == []
    assert evaluate(conf_with(*PAIRS), other).state == SdState()


def test_later_prefix_pair_overrides_an_earlier_exact_pair():
    conf = conf_with((KEY_A, "throttle-max:32"), ("ATA", "throttle-max:64"))
    assert state_of(conf, A).un_saved_throttle == 64
    conf = conf_with(("ATA", "throttle-max:64"), (KEY_A, "throttle-max:32"))
    assert state_of(conf, A).un_saved_throttle == 32


def test_throttle_state_carries_over_between_pairs():
    # throttle-min from the first pair makes throttle-max:4 valid later.
    conf = conf_with(("ATA", "throttle-min:2"), (KEY_A, "throttle-max:4"))
    s = state_of(conf, A)
    assert (s.un_saved_throttle, s.un_min_throttle) == (4, 2)
    conf = conf_with((KEY_A, "throttle-max:4"), ("ATA", "throttle-min:2"))
    s = state_of(conf, A)
    assert (s.un_saved_throttle, s.un_min_throttle) == (256, 2)


def test_blank_and_wildcard_keys_in_a_list():
    conf = conf_with((" ATA INTEL SSDSC2BA40 ", "throttle-max:16"),
                     ("*MZ7LM*", "throttle-max:24"),
                     ("*ssdsc2ba*", "throttle-max:99"))
    assert state_of(conf, A).un_saved_throttle == 16
    assert state_of(conf, C).un_saved_throttle == 24
    assert state_of(conf, B).un_saved_throttle == 256


def test_empty_key_applies_to_every_disk():
    conf = conf_with(("", "disksort:false"))
    for ident in (A, B, C, VMW):
        assert state_of(conf, ident).un_f_disksort_disabled == 1


def test_flavour_decides_about_nexenta_only_tunables():
    conf = conf_with(("VMware  Virtual disk",
                      "io-time:180,slow-io-threshold:0"))
    assert state_of(conf, VMW, NEXENTA).un_io_time == 180
    up = evaluate(conf, VMW, UPSTREAM)
    assert up.state == SdState()
    assert [r.accepted for r in up.matched[0].results] == [False, False]


def test_legacy_v1_pair_reads_global_int_arrays():
    conf = conf_with((KEY_A, "d1 d2"), extra=(
        "d1 = 1, 0x1, 32, 0;\n"
        "d2 = 1, 0x10000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
        "1, 0, 0;\n"))
    ev = evaluate(conf, A)
    s = ev.state
    assert s.un_saved_throttle == 32
    assert s.un_f_disksort_disabled == 1
    assert [r.accepted for r in ev.matched[0].results] == [True, True]


def test_typo_without_colon_is_a_missing_v1_property():
    # facts §3.2: "physical-block-size=4096" is looked up as a v1 name.
    conf = conf_with((KEY_A, "physical-block-size=4096"))
    ev = evaluate(conf, A)
    assert ev.state == SdState()
    assert [r.accepted for r in ev.matched[0].results] == [False]


def test_string_v1_data_property_is_not_an_int_array():
    conf = conf_with((KEY_A, "d1"), extra='d1 = "1", "1", "32", "0";\n')
    assert state_of(conf, A) == SdState()


def test_pair_alone_ignores_other_pairs():
    conf = conf_with(("ATA", "throttle-min:2"), (KEY_A, "throttle-max:4"))
    clist = config_list(conf)
    state, results = pair_alone(conf, clist.pairs[1])
    assert state.un_saved_throttle == 256        # reset without pair 0
    assert not results[0].accepted


def test_evaluate_accepts_a_precomputed_list():
    conf = conf_with((KEY_A, "throttle-max:32"))
    clist = config_list(conf)
    assert evaluate(conf, A, clist=clist).state.un_saved_throttle == 32


def test_pair_spans_cover_key_to_tunables():
    conf = conf_with((KEY_A, "throttle-max:32"), (KEY_B, "disksort:false"))
    pair = config_list(conf).pairs[1]
    assert conf.text[pair.start:pair.end] == \
        '"%s", "disksort:false"' % KEY_B
