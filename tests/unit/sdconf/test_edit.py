# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.sdconf.edit: pure edits of the sd-config-list that
keep every other byte, write the canonical form of facts §16.1 and refuse
what sd would ignore (§2.2, §3.1, §3.5, §4)."""

import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdtune.driverconf.edit import EditError, NothingToUnset, unified_diff
from sdtune.driverconf.parser import parse
from sdtune.sdconf.edit import (Setting, parse_settings, set_tunables,
                                unset_tunables)
from sdtune.sdconf.lint import lint
from sdtune.sdconf.match import Identity, make_key
from sdtune.sdconf.model import config_list, evaluate
from sdtune.sdconf.tunables import (NEXENTA, TUNABLES, SdState,
                                    decode_improved, set_property)

KEY_A = "ATA     INTEL SSDSC2BA40"
KEY_B = "HGST    HUS724040ALS640 "
KEY_C = "ATA     SAMSUNG MZ7LM480"
VMWARE_PAIR = '"VMware  Virtual disk", "io-time:180,slow-io-threshold:0"'
VMWARE_COMMENT = "\t# Set appropriate timeout and disable slow-io detector\n"

# The NexentaStor 5.3 sd.conf (facts §2.3), built here byte by byte.
NX_HEAD = (
    "#\n"
    "# Copyright 2017 Nexenta Systems, Inc.  All rights reserved.\n"
    "# Use is subject to license terms.\n"
    "#\n"
    + "".join('name="sd" class="scsi" target=%d lun=0;\n' % n
              for n in range(16))
    + 'name="sd" class="scsi-self-identifying";\n'
    "ddi-forceattach=1;\n"
    "ddi-devid-registrant=1;\n")
NX_LIST = ("sd-config-list=\n" + VMWARE_COMMENT + "\t" + VMWARE_PAIR + ";\n")
NX = NX_HEAD + NX_LIST

UPSTREAM = NX_HEAD.replace("ddi-forceattach=1;\n", "")


def s(*items):
    return parse_settings(list(items))


def pairs_of(text):
    return [(p.key, p.tunables) for p in config_list(parse(text)).pairs]


def ident(key):
    return Identity(key[:8], key[8:24])


def errors(text, flavour=NEXENTA):
    return [d for d in lint(parse(text), flavour) if d.severity == "error"]


# -- parse_settings -----------------------------------------------------------

def test_parse_settings_forms_and_canonical_values():
    assert s("physical-block-size=4096", "Cache-NonVolatile:TRUE",
             "throttle-max=0x20") == [
        Setting("physical-block-size", "4096"),
        Setting("cache-nonvolatile", "true"),
        Setting("throttle-max", "32")]


def test_parse_settings_last_of_a_name_wins():
    assert s("throttle-max=32", "disksort=false", "throttle-max=64") == [
        Setting("disksort", "false"), Setting("throttle-max", "64")]


@pytest.mark.parametrize("item,why", [
    ("throttle-max", "expected name=value"),
    ("=32", "expected name=value"),
    ("bogus=1", "unknown tunable"),
    ("min-throttle=4", "unknown tunable"),
    ("throttle-max=010", "octal"),
    ("cache-nonvolatile=1", "true or false"),
    ("physical-block-size=4097", "power of two"),
])
def test_parse_settings_refusals(item, why):
    with pytest.raises(EditError, match=why):
        parse_settings([item])


# -- set on the NexentaStor file ----------------------------------------------

def test_set_creates_a_pair_in_canonical_form():
    new = set_tunables(NX, KEY_A, s("physical-block-size=4096",
                                    "cache-nonvolatile=true"))
    assert new == NX_HEAD + (
        "sd-config-list=\n"
        "\t# Set appropriate timeout and disable slow-io detector\n"
        '\t"VMware  Virtual disk", "io-time:180,slow-io-threshold:0",\n'
        '\t"ATA     INTEL SSDSC2BA40", '
        '"physical-block-size:4096, cache-nonvolatile:true";\n')


def test_set_second_pair_and_throttle_order():
    one = set_tunables(NX, KEY_A, s("physical-block-size=4096"))
    two = set_tunables(one, KEY_B, s("throttle-max=16", "throttle-min=2",
                                     "disksort=false"))
    assert two == NX_HEAD + (
        "sd-config-list=\n" + VMWARE_COMMENT +
        "\t" + VMWARE_PAIR + ",\n"
        '\t"ATA     INTEL SSDSC2BA40", "physical-block-size:4096",\n'
        '\t"HGST    HUS724040ALS640 ", '
        '"throttle-min:2, throttle-max:16, disksort:false";\n')
    assert errors(two) == []


def test_set_on_existing_key_replaces_in_place():
    one = set_tunables(NX, KEY_A, s("throttle-max=64", "disksort=false",
                                    "physical-block-size=4096"))
    two = set_tunables(one, KEY_A, s("disksort=true", "throttle-min=2"))
    assert pairs_of(two)[1] == (
        KEY_A, "throttle-min:2, throttle-max:64, disksort:true, "
        "physical-block-size:4096")
    # Only that one line changed.
    diff = [ln for ln in unified_diff(one, two, "a", "b").splitlines()
            if ln[:1] in "+-" and ln[:3] not in ("---", "+++")]
    assert len(diff) == 2
    assert two.replace(pairs_of(two)[1][1], "") == \
        one.replace(pairs_of(one)[1][1], "")


def test_set_keeps_the_order_of_existing_tunables():
    # D8: existing tuples stay where they are, new ones are appended.
    text = 'sd-config-list =\n\t"%s", "throttle-max:032, ' \
        'throttle-min:08";\n' % KEY_A
    new = set_tunables(text, KEY_A, s("physical-block-size=4096"))
    assert pairs_of(new)[0][1] == \
        "throttle-max:032, throttle-min:08, physical-block-size:4096"


def test_set_reorders_throttles_only_when_the_new_values_need_it():
    text = 'sd-config-list =\n\t"%s", "throttle-max:32, ' \
        'disksort:false, throttle-min:8";\n' % KEY_A
    new = set_tunables(text, KEY_A, s("throttle-min=2", "throttle-max=64"))
    assert pairs_of(new)[0][1] == \
        "throttle-max:64, disksort:false, throttle-min:2"
    # throttle-max:4 first would be reset by the throttle check (min 8).
    new = set_tunables(text, KEY_A, s("throttle-max=4", "throttle-min=2"))
    assert pairs_of(new)[0][1] == \
        "throttle-min:2, throttle-max:4, disksort:false"
    state = evaluate(parse(new), ident(KEY_A)).state
    assert (state.un_saved_throttle, state.un_min_throttle) == (4, 2)


def test_set_moves_throttle_min_before_an_existing_throttle_max():
    text = NX.replace(VMWARE_PAIR + ";", VMWARE_PAIR + ',\n\t"%s", '
                      '"disksort:false, throttle-max:16, rmw-type:1";'
                      % KEY_A)
    new = set_tunables(text, KEY_A, s("throttle-min=4"))
    assert pairs_of(new)[1][1] == \
        "disksort:false, throttle-min:4, throttle-max:16, rmw-type:1"
    state = evaluate(parse(new), ident(KEY_A)).state
    assert (state.un_saved_throttle, state.un_min_throttle) == (16, 4)


def test_set_below_default_min_needs_both_and_writes_min_first():
    new = set_tunables(NX, KEY_A, s("throttle-max=4", "throttle-min=2"))
    assert pairs_of(new)[1][1] == "throttle-min:2, throttle-max:4"
    state = evaluate(parse(new), ident(KEY_A)).state
    assert (state.un_saved_throttle, state.un_min_throttle) == (4, 2)


def test_set_keeps_vmware_pair_and_comment_verbatim():
    text = NX
    for key, item in [(KEY_A, "physical-block-size=4096"),
                      (KEY_B, "cache-nonvolatile=false"),
                      (KEY_A, "throttle-max=32")]:
        text = set_tunables(text, key, s(item))
        assert text.startswith(NX_HEAD + "sd-config-list=\n" +
                               VMWARE_COMMENT + "\t" + VMWARE_PAIR + ",\n")


def test_set_same_value_again_is_no_change():
    one = set_tunables(NX, KEY_A, s("physical-block-size=4096"))
    assert set_tunables(one, KEY_A, s("physical-block-size=4096")) == one


def test_set_key_is_case_insensitive_like_sd():
    one = set_tunables(NX, KEY_A, s("physical-block-size=4096"))
    two = set_tunables(one, KEY_A.lower(), s("throttle-max=32"))
    assert pairs_of(two)[1:] == [
        (KEY_A, "physical-block-size:4096, throttle-max:32")]


def test_set_with_duplicates_removes_the_names_from_earlier_pairs():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32, disksort:false",\n'
            '\t"%s", "cache-nonvolatile:true",\n'
            '\t"%s", "throttle-min:4, throttle-max:64";\n'
            % (KEY_A, KEY_B, KEY_A))
    new = set_tunables(text, KEY_A, s("throttle-max=128"))
    assert new == ('sd-config-list =\n'
                   '\t"%s", "disksort:false",\n'
                   '\t"%s", "cache-nonvolatile:true",\n'
                   '\t"%s", "throttle-min:4, throttle-max:128";\n'
                   % (KEY_A, KEY_B, KEY_A))


def test_set_with_duplicates_drops_an_earlier_pair_left_empty():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\n'
            '\t"%s", "cache-nonvolatile:true",\n'
            '\t"%s", "disksort:false";\n' % (KEY_A, KEY_B, KEY_A))
    new = set_tunables(text, KEY_A, s("throttle-max=128"))
    assert new == ('sd-config-list =\n'
                   '\t"%s", "cache-nonvolatile:true",\n'
                   '\t"%s", "disksort:false, throttle-max:128";\n'
                   % (KEY_B, KEY_A))
    assert evaluate(parse(new), ident(KEY_A)).state.un_saved_throttle == 128


def test_set_leaves_a_legacy_v1_pair_of_the_key_alone():
    text = ('sd-config-list = "%s", "mydata";\n'
            'mydata = 1, 0x1, 32, 0;\n' % KEY_A)
    new = set_tunables(text, KEY_A, s("cache-nonvolatile=true"))
    assert pairs_of(new) == [(KEY_A, "mydata"),
                             (KEY_A, "cache-nonvolatile:true")]
    state = evaluate(parse(new), ident(KEY_A)).state
    assert (state.un_saved_throttle, state.un_f_suppress_cache_flush) == \
        (32, 1)


def test_set_after_a_trailing_comment_on_the_last_pair():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32"\t# the Intel\n'
            ';\n' % KEY_A)
    new = set_tunables(text, KEY_B, s("disksort=false"))
    assert new == ('sd-config-list =\n'
                   '\t"%s", "throttle-max:32",\t# the Intel\n'
                   '\t"%s", "disksort:false"\n'
                   ';\n' % (KEY_A, KEY_B))


# -- creating the list --------------------------------------------------------

def test_set_creates_the_list_at_the_end_when_absent():
    new = set_tunables(UPSTREAM, KEY_A, s("physical-block-size=4096"))
    assert new == UPSTREAM + (
        "sd-config-list =\n"
        '\t"ATA     INTEL SSDSC2BA40", "physical-block-size:4096";\n')
    assert errors(new) == []


def test_set_creates_the_list_in_a_file_without_final_newline():
    text = UPSTREAM.rstrip("\n")
    new = set_tunables(text, KEY_A, s("cache-nonvolatile=true"))
    assert new == text + "\n" + (
        "sd-config-list =\n"
        '\t"ATA     INTEL SSDSC2BA40", "cache-nonvolatile:true";\n')


def test_set_creates_the_list_after_a_final_comment_without_newline():
    text = UPSTREAM + "# end"
    new = set_tunables(text, KEY_A, s("cache-nonvolatile=true"))
    assert new.startswith(text + "\n")
    assert pairs_of(new) == [(KEY_A, "cache-nonvolatile:true")]


def test_set_creates_the_list_in_an_empty_file():
    assert set_tunables("", KEY_A, s("disksort=false")) == (
        'sd-config-list =\n\t"ATA     INTEL SSDSC2BA40", "disksort:false";\n')


# -- unset --------------------------------------------------------------------

TWO = ('sd-config-list =\n'
       '\t"%s", "throttle-min:2, throttle-max:16, disksort:false",\n'
       '\t"%s", "cache-nonvolatile:true";\n' % (KEY_A, KEY_B))


def test_unset_names():
    new = unset_tunables(TWO, KEY_A, ["disksort"])
    assert new == TWO.replace("throttle-max:16, disksort:false",
                              "throttle-max:16")
    new = unset_tunables(TWO, KEY_A, ["DISKSORT", "throttle-min",
                                      "throttle-max"])
    assert pairs_of(new) == [(KEY_B, "cache-nonvolatile:true")]


def test_unset_names_from_every_pair_of_the_key():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32, disksort:false",\n'
            '\t"%s", "disksort:true";\n' % (KEY_A, KEY_A))
    new = unset_tunables(text, KEY_A, ["disksort"])
    assert new == 'sd-config-list =\n\t"%s", "throttle-max:32";\n' % KEY_A


@pytest.mark.parametrize("text,key,names,why", [
    (TWO, KEY_A, ["rmw-type"], 'key "%s" sets rmw-type' % KEY_A),
    (TWO, KEY_C, None, 'no pair for key "%s"' % KEY_C),
    (UPSTREAM, KEY_C, None, 'no pair for key "%s"' % KEY_C),
    (TWO, KEY_C, ["disksort"], 'no pair for key "%s"' % KEY_C),
    ('sd-config-list = "%s", "mydata";\nmydata = 1, 0x1, 32, 0;\n'
     % KEY_A, KEY_A, ["throttle-max"], "legacy version-1"),
])
def test_unset_of_a_missing_name_or_key_is_nothing_to_unset(text, key,
                                                            names, why):
    # W10: the command asked for something that is not there.
    with pytest.raises(NothingToUnset, match=re.escape(why)):
        unset_tunables(text, key, names)


def test_unset_whole_key_last_and_only_pair():
    text = NX_HEAD + 'sd-config-list =\n\t"%s", "throttle-max:32";\n' \
        % KEY_A + "# trailer\n"
    assert unset_tunables(text, KEY_A, None) == NX_HEAD + "# trailer\n"


def test_unset_only_pair_of_the_nexenta_file_removes_the_statement():
    # D8: the operator's comment inside the statement stays.
    assert unset_tunables(NX, "VMware  Virtual disk", None) == \
        NX_HEAD + VMWARE_COMMENT


def test_unset_keeps_comments_inside_the_removed_text():
    # D8: "keep every other byte" includes comments, wherever they are.
    text = ('sd-config-list =\n'
            '\t# first\n'
            '\t"%s", # the Intel\n'
            '\t    "throttle-max:32",\n'
            '\t"%s", "disksort:false",\n'
            '\t"%s", # the Samsung\n'
            '\t    "cache-nonvolatile:true";\n' % (KEY_A, KEY_B, KEY_C))
    new = unset_tunables(text, KEY_A, None)
    assert new == ('sd-config-list =\n'
                   '\t# first\n'
                   '\t# the Intel\n'
                   '\t"%s", "disksort:false",\n'
                   '\t"%s", # the Samsung\n'
                   '\t    "cache-nonvolatile:true";\n' % (KEY_B, KEY_C))
    new = unset_tunables(new, KEY_C, None)
    assert new == ('sd-config-list =\n'
                   '\t# first\n'
                   '\t# the Intel\n'
                   '\t"%s", "disksort:false"\n'
                   '\t# the Samsung\n'
                   ';\n' % KEY_B)
    new = unset_tunables(new, KEY_B, None)
    assert new == '\t# first\n\t# the Intel\n\t# the Samsung\n'


def test_unset_last_names_of_the_only_pair_keeps_the_comment():
    text = NX_HEAD + 'sd-config-list =\n\t# virtual disks\n' \
        '\t"VMware  Virtual disk", "slow-io-threshold:0";\n'
    new = unset_tunables(text, "VMware  Virtual disk", ["slow-io-threshold"])
    assert new == NX_HEAD + "\t# virtual disks\n"


def test_unset_whole_key_middle_pair():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\n'
            '\t"%s", "disksort:false",\n'
            '\t"%s", "cache-nonvolatile:true";\n' % (KEY_A, KEY_B, KEY_C))
    assert unset_tunables(text, KEY_B, None) == (
        'sd-config-list =\n'
        '\t"%s", "throttle-max:32",\n'
        '\t"%s", "cache-nonvolatile:true";\n' % (KEY_A, KEY_C))


def test_unset_whole_key_first_pair_keeps_the_comment_above_it():
    new = set_tunables(NX, KEY_A, s("physical-block-size=4096"))
    new = unset_tunables(new, "vmware  virtual disk", None)
    assert new == NX_HEAD + (
        "sd-config-list=\n" + VMWARE_COMMENT +
        '\t"ATA     INTEL SSDSC2BA40", "physical-block-size:4096";\n')


def test_unset_whole_key_last_pair():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\n'
            '\t"%s", "disksort:false";\n' % (KEY_A, KEY_B))
    assert unset_tunables(text, KEY_B, None) == (
        'sd-config-list =\n\t"%s", "throttle-max:32";\n' % KEY_A)


def test_unset_whole_key_last_pair_after_a_trailing_comment():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\t# keep this note\n'
            '\t"%s", "disksort:false";\n' % (KEY_A, KEY_B))
    new = unset_tunables(text, KEY_B, None)
    assert "\t# keep this note" in new
    assert KEY_B not in new
    assert pairs_of(new) == [(KEY_A, "throttle-max:32")]
    assert parse(new).diagnostics == []
    assert new.startswith('sd-config-list =\n\t"%s", "throttle-max:32"'
                          % KEY_A)


def test_unset_whole_key_removes_every_pair_of_it():
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\n'
            '\t"%s", "disksort:false",\n'
            '\t"%s", "mydata";\n' % (KEY_A, KEY_B, KEY_A))
    assert unset_tunables(text, KEY_A, None) == (
        'sd-config-list =\n\t"%s", "disksort:false";\n' % KEY_B)


def test_unset_refuses_to_strand_a_throttle_max_below_8():
    text = 'sd-config-list = "%s", "throttle-min:2, throttle-max:4";\n' \
        % KEY_A
    with pytest.raises(EditError, match="throttle-max:4 would then be "
                       "ignored by sd"):
        unset_tunables(text, KEY_A, ["throttle-min"])
    # Both together are fine.
    assert unset_tunables(text, KEY_A, ["throttle-min", "throttle-max"]) \
        == ""


def test_unset_refuses_unknown_tunable():
    with pytest.raises(EditError, match="unknown tunable 'min-throttle'"):
        unset_tunables(TWO, KEY_A, ["min-throttle"])


# -- refusals -----------------------------------------------------------------

def test_refuses_throttle_max_below_8_alone():
    with pytest.raises(EditError) as info:
        set_tunables(NX, KEY_A, s("throttle-max=4"))
    assert "throttle-max:4 would be ignored by sd" in str(info.value)
    assert "throttle-min" in str(info.value)


def test_refuses_throttle_min_above_the_existing_throttle_max():
    one = set_tunables(NX, KEY_A, s("throttle-max=16"))
    with pytest.raises(EditError, match="throttle-min:32 would be ignored"):
        set_tunables(one, KEY_A, s("throttle-min=32"))


def test_refuses_a_throttle_min_that_would_undo_an_existing_throttle_max():
    one = set_tunables(NX, KEY_A, s("throttle-min=2", "throttle-max=4"))
    with pytest.raises(EditError, match="throttle-max:4"):
        set_tunables(one, KEY_A, s("throttle-min=8"))


def test_refuses_throttle_max_below_an_existing_throttle_min():
    one = set_tunables(NX, KEY_A, s("throttle-min=16"))
    with pytest.raises(EditError, match="throttle-max:10 would be ignored"):
        set_tunables(one, KEY_A, s("throttle-max=10"))


def test_refuses_a_value_a_later_matching_pair_overrides():
    # facts §3.1: every matching pair applies, the last one wins.
    text = ('sd-config-list =\n'
            '\t"%s", "throttle-max:32",\n'
            '\t"ATA", "throttle-max:64";\n' % KEY_A)
    with pytest.raises(EditError, match='"ATA" \\(pair 2\\)'):
        set_tunables(text, KEY_A, s("throttle-max=16"))
    # A name the prefix pair does not set is fine.
    new = set_tunables(text, KEY_A, s("disksort=false"))
    assert pairs_of(new)[0] == (KEY_A, "throttle-max:32, disksort:false")


def test_refuses_a_value_an_earlier_matching_pair_undoes():
    text = 'sd-config-list =\n\t"ATA     INTEL", "throttle-min:16";\n'
    with pytest.raises(EditError, match="throttle-max:10 would not be in "
                       "effect for this disk"):
        set_tunables(text, KEY_A, s("throttle-max=10"))
    new = set_tunables(text, KEY_A, s("throttle-max=20"))
    state = evaluate(parse(new), ident(KEY_A)).state
    assert (state.un_saved_throttle, state.un_min_throttle) == (20, 16)


def test_other_disks_of_a_prefix_key_do_not_block_an_edit():
    text = 'sd-config-list =\n\t"ATA", "throttle-max:64";\n'
    new = set_tunables(text, "ATA     INTEL SSDSC2BA400270",
                       s("throttle-max=16"))
    assert evaluate(parse(new), Identity(
        "ATA     ", "INTEL SSDSC2BA40", "0270")).state.un_saved_throttle == 16


@pytest.mark.parametrize("key", ["", "**"])
def test_refuses_keys_that_match_every_disk(key):
    with pytest.raises(EditError, match="every disk"):
        set_tunables(NX, key, s("disksort=false"))


@pytest.mark.parametrize("key", ['ATA     "INTEL"', "ATA\\X", "ATA\tX",
                                 "A" * 1024])
def test_refuses_keys_sdtune_cannot_write(key):
    with pytest.raises(EditError):
        set_tunables(NX, key, s("disksort=false"))


def test_refuses_nothing_to_set():
    with pytest.raises(EditError, match="nothing to set"):
        set_tunables(NX, KEY_A, [])


def test_refuses_an_odd_count_list():
    text = NX.replace(VMWARE_PAIR + ";", VMWARE_PAIR + ', "%s";' % KEY_A)
    with pytest.raises(EditError, match="odd number"):
        set_tunables(text, KEY_A, s("disksort=false"))
    with pytest.raises(EditError, match="odd number"):
        unset_tunables(text, "VMware  Virtual disk", None)


def test_refuses_a_list_that_is_not_strings():
    with pytest.raises(EditError, match="not a list of strings"):
        set_tunables("sd-config-list = 1, 2;\n", KEY_A, s("disksort=false"))


@pytest.mark.parametrize("bad", [
    '"VMware  Virtual disk" "io-time:180,slow-io-threshold:0";',
    '"VMware  Virtual disk", "io-time:180,slow-io-threshold:0", 5;',
    '"VMware  Virtual disk", "io-time:180,slow-io-threshold:0" : ;',
])
def test_refuses_a_list_statement_with_syntax_errors(bad):
    text = NX.replace(VMWARE_PAIR + ";", bad)
    assert text != NX
    with pytest.raises(EditError, match="syntax errors"):
        set_tunables(text, KEY_A, s("disksort=false"))


def test_refuses_a_list_statement_cut_off_at_end_of_file():
    text = NX_HEAD + 'sd-config-list =\n\t"%s", "disksort:false"' % KEY_A
    assert config_list(parse(text)).prop is None     # the kernel drops it
    with pytest.raises(EditError, match="line 24 has syntax errors"):
        set_tunables(text, KEY_B, s("disksort=false"))


def test_refuses_a_list_that_landed_in_a_node_spec():
    # facts §2.2: without its ';' the global list becomes a property of
    # the next node spec; a second list would be one too many.
    text = NX_HEAD + ('sd-config-list = "%s", "disksort:false"\n'
                      'name="sd" class="scsi-self-identifying";\n' % KEY_A)
    with pytest.raises(EditError, match="inside a node spec"):
        set_tunables(text, KEY_B, s("disksort=false"))
    with pytest.raises(EditError, match="inside a node spec"):
        unset_tunables(text, KEY_A, None)


def test_syntax_errors_elsewhere_do_not_block_the_edit():
    text = NX_HEAD + "bad-statement = ;\n" + NX_LIST
    assert parse(text).diagnostics
    new = set_tunables(text, KEY_A, s("disksort=false"))
    assert new.startswith(NX_HEAD + "bad-statement = ;\n")
    assert pairs_of(new)[-1] == (KEY_A, "disksort:false")


def test_refuses_unknown_and_upstream_only_names():
    with pytest.raises(EditError, match="unknown tunable"):
        set_tunables(NX, KEY_A, s("bogus=1"))
    with pytest.raises(EditError, match="NexentaStor"):
        set_tunables(NX, KEY_A, s("io-time=60"), flavour="upstream")
    assert pairs_of(set_tunables(NX, KEY_A, s("io-time=60")))[1] == (
        KEY_A, "io-time:60")


def test_refuses_a_tunables_string_over_1023_characters():
    text = set_tunables(NX, KEY_A, s("disksort=false"))
    big = text.replace('"disksort:false"', '"disksort:false, ' +
                       ", ".join(["x:y"] * 300) + '"')
    with pytest.raises(EditError):
        set_tunables(big, KEY_A, s("rmw-type=1"))


def test_unified_diff_names_both_sides():
    new = set_tunables(NX, KEY_A, s("disksort=false"))
    diff = unified_diff(NX, new, "sd.conf", "sd.conf (new)")
    assert diff.startswith("--- sd.conf\n+++ sd.conf (new)\n@@ ")
    assert '-\t"VMware  Virtual disk", "io-time:180,slow-io-threshold:0";\n' \
        in diff
    assert '+\t"ATA     INTEL SSDSC2BA40", "disksort:false";\n' in diff
    assert unified_diff(NX, NX, "a", "b") == ""


# -- property: successive sets ------------------------------------------------

VENDORS = ["ATA", "HGST", "SEAGATE", "INTEL", "SAMSUNG", "TOSHIBA", "WDC"]
PID_CHARS = string.ascii_uppercase + string.digits + " -_."

_keys = st.builds(make_key, st.sampled_from(VENDORS),
                  st.text(PID_CHARS, min_size=1, max_size=16))


def _value(name):
    if name == "throttle-min":
        return st.integers(2, 256).map(str)
    if name == "throttle-max":
        return st.integers(2, 1000).map(str)
    if name == "rmw-type":
        return st.integers(0, 2).map(str)
    if name == "physical-block-size":
        return st.sampled_from(["512", "4096", "0x2000", "65536"])
    kind = next(t.kind for t in TUNABLES if t.name == name)
    if kind == "bool":
        return st.sampled_from(["true", "false", "TRUE", "False"])
    return st.one_of(st.integers(0, 100000).map(str),
                     st.integers(1, 0xFFFF).map(hex))


_setting = st.sampled_from([t.name for t in TUNABLES]).flatmap(
    lambda n: _value(n).map(lambda v: "%s=%s" % (n, v)))
_step = st.tuples(st.integers(0, 5), st.lists(_setting, min_size=1,
                                              max_size=4))


def _expected_state(merged):
    state = SdState()
    throttle = ["throttle-min", "throttle-max"]     # in this order
    order = [n for n in merged if n not in throttle] + \
        [n for n in throttle if n in merged]
    for name in order:
        assert set_property(state, name, merged[name], NEXENTA)[0]
    return state


def _refusal_expected(merged):
    tmax, tmin = merged.get("throttle-max"), merged.get("throttle-min")
    return tmax is not None and int(tmax) < int(tmin or 8)


def _spans(text):
    clist = config_list(parse(text))
    return {p.key: text[p.start:p.end] for p in clist.pairs}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_keys, min_size=1, max_size=4, unique=True),
       st.lists(_step, min_size=1, max_size=8),
       st.booleans())
def test_successive_sets_give_exactly_the_last_values(keys, steps, nexenta):
    text = NX if nexenta else UPSTREAM
    merged = {k: {} for k in keys}
    for which, items in steps:
        key = keys[which % len(keys)]
        wanted = parse_settings(items)
        candidate = dict(merged[key])
        candidate.update({w.name: w.value for w in wanted})
        before = _spans(text)
        if _refusal_expected(candidate):
            with pytest.raises(EditError, match="ignored by sd"):
                set_tunables(text, key, wanted)
            continue
        new = set_tunables(text, key, wanted)
        merged[key] = candidate
        after = _spans(new)
        # Every other pair, and the comment, byte for byte.
        assert {k: v for k, v in after.items() if k != key} == \
            {k: v for k, v in before.items() if k != key}
        assert new.startswith(NX_HEAD if nexenta else UPSTREAM)
        if nexenta:
            assert VMWARE_COMMENT + "\t" + VMWARE_PAIR in new
        text = new
    conf = parse(text)
    assert [d for d in lint(conf) if d.severity == "error"] == []
    assert conf.diagnostics == []
    clist = config_list(conf)
    # Every set refused on the upstream file: there is no list at all.
    assert clist.usable or (not nexenta and not any(merged.values()))
    for key in keys:
        mine = [p for p in clist.pairs if p.key == key]
        if not merged[key]:
            assert mine == []
            continue
        assert len(mine) == 1
        written = {n: v for n, v, _, _ in decode_improved(mine[0].tunables)}
        assert written == merged[key]
        ev = evaluate(conf, ident(key))
        assert [e.pair.key for e in ev.matched] == [key]
        assert ev.state == _expected_state(merged[key])
