# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.sdconf.tunables: sd_nvpair_str_decode()/strtok_r
tokenisation (facts §3.3), sd_set_properties() (§3.4), the
throttle re-validation (§3.5), legacy version-1 data (§3.6) and the
stricter checks sdtune applies before writing a value (§16.1)."""

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtune.sdconf import tunables
from sdtune.sdconf.tunables import (NEXENTA, SD_MAX_THROTTLE,
                                    SD_MIN_THROTTLE, TUNABLES, UPSTREAM,
                                    SdState, apply_improved, apply_v1,
                                    canonical_value, decode_improved,
                                    set_property)

NAMES = [t.name for t in TUNABLES]


def decoded(text):
    """(name, value) pairs as sd_nvpair_str_decode() hands them on."""
    return [(n, v) for n, v, _, _ in decode_improved(text)]


def applied(text, flavour=NEXENTA, state=None):
    st_ = SdState() if state is None else state
    apply_improved(st_, text, flavour)
    return st_


def throttles(state):
    return (state.un_saved_throttle, state.un_throttle,
            state.un_min_throttle)


# -- §3.3 tokenisation --------------------------------------------------------

def test_text_after_first_blank_of_a_value_is_ignored():
    assert decoded("throttle-max: 32 junk") == [("throttle-max", "32")]
    assert applied("throttle-max: 32 junk").un_saved_throttle == 32


def test_text_after_a_second_colon_is_ignored():
    assert decoded("a:b:c") == [("a", "b")]
    assert decoded("throttle-max:32:64") == [("throttle-max", "32")]
    assert applied("throttle-max:32:64").un_saved_throttle == 32


def test_tuple_without_colon_takes_value_from_rest_of_its_name():
    text = "throttle-max:32, cache-nonvolatile true"
    assert decoded(text) == [("throttle-max", "32"),
                             ("cache-nonvolatile", "true")]
    state = applied(text)
    assert state.un_f_suppress_cache_flush == 1
    assert state.un_saved_throttle == 32


def test_tuple_without_colon_and_single_word_has_no_value():
    assert decoded("throttle-max:32, disksort") == [
        ("throttle-max", "32"), ("disksort", None)]
    assert applied("throttle-max:32, disksort").un_f_disksort_disabled == 0


def test_empty_fields_are_skipped():
    text = ",,throttle-max:32,,,disksort:false,"
    assert decoded(text) == [("throttle-max", "32"), ("disksort", "false")]
    assert [(s, e) for _, _, s, e in decode_improved(text)] == [(2, 17),
                                                                (20, 34)]


@pytest.mark.parametrize("text", [":", "::", " : ", ":::,::"])
def test_colon_only_tuples_have_no_name(text):
    assert all(n is None for n, _ in decoded(text))
    assert decoded(text)
    assert applied(text) == SdState()


def test_colon_only_tuple_after_a_valid_one_is_ignored():
    assert decoded("throttle-max:32,:") == [("throttle-max", "32"),
                                            (None, None)]


def test_colon_only_tuple_continues_the_previous_value_tokenizer():
    # x_lasts still points into the previous tuple's value, as in C.
    text = "disksort:false throttle-max 64,:"
    assert decoded(text) == [("disksort", "false"), ("throttle-max", "64")]
    assert applied(text).un_saved_throttle == 64


@pytest.mark.parametrize("text", ["throttle-max:32, ", "throttle-max:32,\t",
                                  " ,throttle-max:32", "  "])
def test_blank_fields_are_tuples_without_name(text):
    # strtok(",") skips only empty fields; a blank one has no name.
    out = decode_improved(text)
    assert (None, None) in [(n, v) for n, v, _, _ in out]
    named = [(n, v) for n, v, _, _ in out if n]
    assert named in ([], [("throttle-max", "32")])


def test_blanks_and_tabs_around_names_and_values():
    assert decoded(" \tthrottle-max\t :  32 \t, disksort : false ") == [
        ("throttle-max", "32"), ("disksort", "false")]


def test_names_are_case_insensitive():
    state = applied("THROTTLE-MAX:32, Cache-NonVolatile:TRUE")
    assert state.un_saved_throttle == 32
    assert state.un_f_suppress_cache_flush == 1


def test_c_string_stops_at_nul():
    assert decoded("throttle-max:32\0disksort:false") == [
        ("throttle-max", "32")]


def test_tuple_spans_point_into_the_string():
    text = "io-time:180,slow-io-threshold:0"
    assert [(n, text[s:e]) for n, _, s, e in decode_improved(text)] == [
        ("io-time", "io-time:180"), ("slow-io-threshold",
                                     "slow-io-threshold:0")]


def test_fast_path_and_exact_agree_on_examples():
    for text in ["io-time:180,slow-io-threshold:0",
                 "physical-block-size:4096, cache-nonvolatile:true",
                 "a:b, ", " , ", "a:b,,c:d", "a : b\t,\tc:d"]:
        assert decode_improved(text) == tunables._decode_exact(text), text


_FRAGMENTS = st.one_of(st.sampled_from(list("abc-:, \t0x19")),
                       st.sampled_from(NAMES + ["true", "false", "32",
                                                "0x10", "4096"]))


def _simple_tuple(draw_name, draw_value, pad):
    return "%s%s%s:%s%s%s" % (pad[0], draw_name, pad[1], pad[2],
                              draw_value, pad[3])


_SIMPLE_STRINGS = st.lists(
    st.builds(_simple_tuple, st.sampled_from(NAMES + ["x"]),
              st.sampled_from(["true", "false", "0", "32", "4096", "z"]),
              st.lists(st.sampled_from(["", " ", "\t", "  "]), min_size=4,
                       max_size=4)),
    max_size=6).map(lambda ts: ",".join(ts))


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_FRAGMENTS, max_size=25).map("".join),
                 _SIMPLE_STRINGS,
                 st.lists(st.one_of(_SIMPLE_STRINGS, _FRAGMENTS),
                          max_size=4).map(",".join)))
def test_decode_improved_equals_the_exact_strtok_model(text):
    assert decode_improved(text) == tunables._decode_exact(text)


# -- §3.4 sd_set_properties() -------------------------------------------------

@pytest.mark.parametrize("name,attr,invert", [
    ("cache-nonvolatile", "un_f_suppress_cache_flush", False),
    ("disksort", "un_f_disksort_disabled", True),
    ("power-condition", "un_f_power_condition_disabled", True),
    ("reset-lun", "un_f_lun_reset_enabled", False),
    ("mmc-gesn-polling", "un_f_mmc_gesn_polling", False),
])
def test_booleans_accept_only_true_and_false(name, attr, invert):
    for value, bit in [("true", 1), ("TRUE", 1), ("True", 1),
                       ("false", 0), ("FALSE", 0), ("fAlSe", 0)]:
        state = SdState()
        ok, _ = set_property(state, name, value)
        assert ok
        assert getattr(state, attr) == (1 - bit if invert else bit)
    for value in ["1", "0", "yes", "no", "on", "t", "truex", "true1"]:
        state = SdState()
        ok, why = set_property(state, name, value)
        assert not ok and "true or false" in why
        assert state == SdState()


def test_disksort_has_the_inverted_sense():
    assert applied("disksort:true").un_f_disksort_disabled == 0
    assert applied("disksort:false").un_f_disksort_disabled == 1


@pytest.mark.parametrize("text,attr,value", [
    ("controller-type:2", "un_ctype", 2),
    ("controller-type:0x1ff", "un_ctype", 0xFF),       # uchar_t
    ("delay-busy:5000000", "un_busy_timeout_us", 5000),
    ("delay-busy:1999", "un_busy_timeout_us", 1),
    ("delay-busy:-1500", "un_busy_timeout_us", -1),    # C division
    ("timeout-releasereservation:70000", "un_reserve_release_time",
     70000 & 0xFFFF),                                   # ushort_t
    ("retries-busy:5", "un_busy_retry_count", 5),
    ("retries-timeout:0x10", "un_retry_count", 16),
    ("retries-notready:010", "un_notready_retry_count", 8),
    ("retries-reset:-1", "un_reset_retry_count", 0xFFFFFFFF),  # uint_t
    ("retries-victim:7", "un_victim_retry_count", 7),
    ("throttle-max:32", "un_saved_throttle", 32),
    ("throttle-max:32", "un_throttle", 32),
    ("throttle-max:0x40", "un_saved_throttle", 64),
    ("throttle-max:32767", "un_saved_throttle", 32767),
    ("throttle-min:2", "un_min_throttle", 2),
    ("rmw-type:1", "un_f_rmw_type", 1),
    ("rmw-type:2", "un_f_rmw_type", 2),
    ("rmw-type:3", "un_f_rmw_type", 3),
    ("rmw-type:5", "un_f_rmw_type", 1),                # 2-bit field
    ("rmw-type:6", "un_f_rmw_type", 2),
    ("physical-block-size:4096", "un_phy_blocksize", 4096),
    ("physical-block-size:0x2000", "un_phy_blocksize", 8192),
    ("physical-block-size:0", "un_phy_blocksize", 0),  # ISP2(0)
    ("physical-block-size:1", "un_phy_blocksize", 1),
    ("physical-block-size:4096k", "un_phy_blocksize", 4096),
    ("physical-block-size:4k", "un_phy_blocksize", 4),    # trailing junk
    ("physical-block-size:04096", "un_phy_blocksize", 32),  # octal 040
])
def test_numeric_properties(text, attr, value):
    state = SdState()
    results = apply_improved(state, text)
    assert [r.accepted for r in results] == [True]
    assert getattr(state, attr) == value


@pytest.mark.parametrize("text", [
    "controller-type:x", "delay-busy:", "retries-busy:abc",
    "throttle-max:none", "rmw-type:-", "physical-block-size:6k",
    "physical-block-size:4097", "physical-block-size:-4096",
    "physical-block-size:3", "physical-block-size:x",
    "retries-timeout:99999999999999999999",
])
def test_invalid_values_leave_the_state_alone(text):
    state = SdState()
    results = apply_improved(state, text)
    assert [r.accepted for r in results] == [False]
    assert state == SdState()


def test_physical_block_size_sets_sdconf_flag_on_nexenta_only():
    assert applied("physical-block-size:4096", NEXENTA) \
        .un_f_sdconf_phy_blocksize == 1
    up = applied("physical-block-size:4096", UPSTREAM)
    assert up.un_phy_blocksize == 4096
    assert up.un_f_sdconf_phy_blocksize == 0


def test_physical_block_size_only_checks_power_of_two():
    # un_tgt_blocksize and un_sys_blocksize are still 0 at this point.
    for value in (0, 1, 2, 256, 512, 4096, 1 << 20):
        assert applied("physical-block-size:%d" % value) \
            .un_phy_blocksize == value
    assert applied("physical-block-size:0x100000000").un_phy_blocksize \
        == 0    # ISP2 holds; uint32_t keeps the low bits


@pytest.mark.parametrize("text,attr,value", [
    ("io-time:180", "un_io_time", 180),
    ("slow-io-threshold:0", "un_slow_io_threshold_s", 0),
    ("slow-io-threshold:60", "un_slow_io_threshold_s", 60),
])
def test_nexenta_only_properties(text, attr, value):
    assert getattr(applied(text, NEXENTA), attr) == value
    state = SdState()
    results = apply_improved(state, text, UPSTREAM)
    assert [r.accepted for r in results] == [False]
    assert "NexentaStor" in results[0].reason
    assert state == SdState()


def test_invalid_nexenta_io_time_resets_to_the_default():
    state = applied("io-time:180")
    results = apply_improved(state, "io-time:soon")
    assert not results[0].accepted
    assert state.un_io_time == 15
    state = applied("slow-io-threshold:0")
    apply_improved(state, "slow-io-threshold:never")
    assert state.un_slow_io_threshold_s == 30
    # Upstream does not know the names: nothing is reset.
    state = SdState()
    apply_improved(state, "io-time:soon", UPSTREAM)
    assert state.un_io_time is None


def test_shipped_nexenta_vmware_entry():
    state = applied("io-time:180,slow-io-threshold:0")
    assert (state.un_io_time, state.un_slow_io_threshold_s) == (180, 0)


@pytest.mark.parametrize("name", ["min-throttle", "max-throttle",
                                  "physical_block_size", "bogus", "a"])
def test_unknown_names_are_ignored(name):
    state = SdState()
    ok, why = set_property(state, name, "4")
    assert not ok and why == "unknown property name"
    assert state == SdState()


# -- §3.5 throttle re-validation ----------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("throttle-max:4", (256, 256, 8)),                     # 4 < min 8
    ("throttle-min:2, throttle-max:4", (4, 4, 2)),
    ("throttle-max:4, throttle-min:2", (256, 256, 2)),     # reset, then 2
    ("throttle-min:16, throttle-max:64", (64, 64, 16)),
    ("throttle-max:64, throttle-min:16", (64, 64, 16)),
    ("throttle-min:64, throttle-max:32", (256, 256, 8)),   # max < min
    ("throttle-max:32, throttle-min:64", (256, 256, 8)),   # min > max
    ("throttle-min:300, throttle-max:400", (400, 400, 8)),  # 300 > 256
    ("throttle-max:400, throttle-min:300", (400, 400, 300)),
    ("throttle-max:8", (8, 8, 8)),                         # min == max
    ("throttle-max:7", (256, 256, 8)),
    ("throttle-max:1", (256, 256, 8)),
    ("throttle-min:1", (256, 256, 8)),
    ("throttle-min:2, throttle-max:2", (2, 2, 2)),
    ("throttle-max:32768", (256, 256, 8)),                 # short wraps
    ("throttle-max:65538", (256, 256, 8)),                 # wraps to 2
    ("throttle-min:2, throttle-max:65538", (2, 2, 2)),
    ("throttle-max:-32", (256, 256, 8)),
    ("throttle-max:abc", (256, 256, 8)),                   # ignored
    ("throttle-min:2, throttle-max:4, throttle-max:junk", (4, 4, 2)),
])
def test_throttle_rule_in_all_orders(text, expected):
    assert throttles(applied(text)) == expected


def test_throttle_reset_is_reported_on_the_tuple_that_caused_it():
    results = apply_improved(SdState(), "throttle-max:4")
    assert not results[0].accepted
    assert "throttle check" in results[0].reason


@pytest.mark.parametrize("text,resets", [
    ("throttle-max:4", True),        # 4 < min 9: reset
    ("throttle-min:4", True),        # 4 > throttle 2: reset
    ("rmw-type:1", True),
    ("physical-block-size:4096", True),
    ("io-time:60", True),
    ("slow-io-threshold:5", True),
    ("cache-nonvolatile:true", False),
    ("controller-type:2", False),
    ("delay-busy:1000", False),
    ("disksort:false", False),
    ("power-condition:true", False),
    ("timeout-releasereservation:5", False),
    ("reset-lun:true", False),
    ("retries-busy:1", False),
    ("retries-timeout:1", False),
    ("retries-notready:1", False),
    ("retries-reset:1", False),
    ("retries-victim:1", False),
    ("throttle-max:bad", False),     # goto value_invalid skips the check
    ("rmw-type:bad", False),
])
def test_which_names_fall_through_to_the_validation(text, resets):
    # A state that only the validation block would repair.
    state = SdState(un_saved_throttle=2, un_throttle=2, un_min_throttle=9)
    apply_improved(state, text, NEXENTA)
    if resets:
        assert throttles(state) == (SD_MAX_THROTTLE, SD_MAX_THROTTLE,
                                    SD_MIN_THROTTLE)
    else:
        assert throttles(state) == (2, 2, 9)


# -- §3.6 legacy version-1 data -----------------------------------------------

def v1_list(flags, values):
    """version 1, flags and all 19 positional value slots."""
    data = [1, flags] + [0] * 19
    for bit, val in values.items():
        data[2 + bit] = val
    return data


def test_v1_version_must_be_1():
    state = SdState()
    r = apply_v1(state, "mydata", [2, 0x1, 32, 0])
    assert not r.accepted
    assert r.reason == "data property mydata version 0x2 is invalid."
    assert state == SdState()


def test_v1_missing_property_is_ignored():
    r = apply_v1(SdState(), "nothere", None)
    assert not r.accepted


@pytest.mark.parametrize("flags", [1 << 19, 1 << 20, 0x80001, -1])
def test_v1_invalid_bits_reject_the_list(flags):
    state = SdState()
    r = apply_v1(state, "mydata", v1_list(flags, {0: 32}) + [1])
    assert not r.accepted
    assert "invalid bits 0x%x" % ((flags & 0xFFFFFFFF) & ~0x7FFFF) in \
        r.reason
    assert state == SdState()


def test_v1_bit_19_power_condition_can_never_be_used():
    state = SdState()
    assert not apply_v1(state, "pc", v1_list(1 << 19, {}) + [1]).accepted
    assert state.un_f_power_condition_disabled is None


def test_v1_length_check_counts_bit_0_twice():
    # Only element 2 is read, but the check wants 2 values after flags.
    state = SdState()
    r = apply_v1(state, "d", [1, 0x1, 32])
    assert not r.accepted and "size is incorrect" in r.reason
    assert state == SdState()
    state = SdState()
    assert apply_v1(state, "d", [1, 0x1, 32, 0]).accepted
    assert state.un_saved_throttle == 32


def test_v1_length_check_never_counts_bit_18():
    # flags 0x40000 with 2 elements passes the check (and reads garbage).
    state = SdState()
    assert apply_v1(state, "d", [1, 0x40000]).accepted
    assert state.un_f_suppress_cache_flush == 0
    # bits 0..17 count once each (bit 0 twice): 0x3 needs 3 values.
    assert not apply_v1(SdState(), "d", [1, 0x3, 32, 2]).accepted
    assert apply_v1(SdState(), "d", [1, 0x3, 32, 2, 0]).accepted


def test_v1_values_are_positional_by_bit_number():
    state = SdState()
    r = apply_v1(state, "d", v1_list((1 << 18) | (1 << 16) | (1 << 11), {
        18: 1, 16: 5, 11: 9}))
    assert r.accepted
    assert state.un_f_suppress_cache_flush == 1
    assert state.un_f_disksort_disabled == 1
    assert state.un_busy_retry_count == 9
    # The value of bit 18 is element 20 even with no lower bits set.
    state = SdState()
    data = [1, 1 << 18] + [0] * 18 + [1]
    assert len(data) == 21 and apply_v1(state, "d", data).accepted
    assert state.un_f_suppress_cache_flush == 1
    # A value in element 2 belongs to bit 0, not to the first set bit.
    state = SdState()
    apply_v1(state, "d", [1, 1 << 18, 1] + [0] * 18)
    assert state.un_f_suppress_cache_flush == 0


@pytest.mark.parametrize("bit,value,attr,expected", [
    (0, 32, "un_saved_throttle", 32),
    (10, 3, "un_notready_retry_count", 3),
    (10, 0, "un_notready_retry_count", None),    # zero is skipped
    (11, 4, "un_busy_retry_count", 4),
    (12, 5, "un_reset_retry_count", 5),
    (13, 6, "un_reserve_release_time", 6),
    (16, 0, "un_f_disksort_disabled", 0),
    (16, 7, "un_f_disksort_disabled", 1),
    (17, 1, "un_f_lun_reset_enabled", 1),
    (17, 0, "un_f_lun_reset_enabled", 0),
    (18, 2, "un_f_suppress_cache_flush", 1),
    (1, 0, "un_ctype", 0),                       # CTYPE_CDROM
    (1, 2, "un_ctype", 2),                       # CTYPE_CCS
    (1, 3, "un_ctype", 3),                       # CTYPE_ROD
    (1, 1, "un_ctype", None),                    # CTYPE_MD21: refused
    (1, 4, "un_ctype", None),
    (1, 7, "un_ctype", None),
])
def test_v1_fields(bit, value, attr, expected):
    state = SdState()
    assert apply_v1(state, "d", v1_list(1 << bit, {bit: value})).accepted
    assert getattr(state, attr) == expected


@pytest.mark.parametrize("values,expected", [
    ({0: 4}, (256, 256, 8)),               # throttle 4 < min 8: all reset
    ({0: 4, 15: 2}, (4, 4, 2)),            # checked once, at the end
    ({0: 32, 15: 64}, (256, 256, 8)),
    ({0: 32, 15: 16}, (32, 32, 16)),
    ({0: 0x18000}, (256, 256, 8)),         # short: negative
])
def test_v1_throttle_validation_runs_on_the_whole_list(values, expected):
    flags = sum(1 << b for b in values)
    state = SdState()
    assert apply_v1(state, "d", v1_list(flags, values)).accepted
    assert throttles(state) == expected


# -- canonical_value (what sdtune writes) -------------------------------------

@pytest.mark.parametrize("name,value,text", [
    ("physical-block-size", "4096", "4096"),
    ("physical-block-size", "512", "512"),
    ("physical-block-size", "65536", "65536"),
    ("physical-block-size", "0x1000", "4096"),
    ("throttle-max", "32", "32"),
    ("throttle-min", "2", "2"),
    ("throttle-max", "32767", "32767"),
    ("rmw-type", "0", "0"),
    ("rmw-type", "2", "2"),
    ("cache-nonvolatile", "TRUE", "true"),
    ("disksort", "False", "false"),
    ("io-time", "180", "180"),
    ("slow-io-threshold", "0", "0"),
    ("retries-busy", " 7 ", "7"),
])
def test_canonical_value_accepts(name, value, text):
    assert canonical_value(name, value) == (text, "")


@pytest.mark.parametrize("name,value,why", [
    ("physical-block-size", "04096", "octal"),
    ("throttle-max", "010", "octal"),
    ("physical-block-size", "0", "512 times a power of two"),
    ("physical-block-size", "4097", "512 times a power of two"),
    ("physical-block-size", "256", "512 times a power of two"),
    ("physical-block-size", "131072", "65536"),
    ("throttle-max", "1", "between 2 and 32767"),
    ("throttle-max", "32768", "between 2 and 32767"),
    ("throttle-min", "0", "between 2 and 32767"),
    ("rmw-type", "3", "0, 1 or 2"),
    ("cache-nonvolatile", "1", "true or false"),
    ("cache-nonvolatile", "yes", "true or false"),
    ("disksort", "0", "true or false"),
    ("throttle-max", "4k", "decimal"),
    ("throttle-max", "-4", "decimal"),
    ("throttle-max", "", "decimal"),
    ("retries-busy", "4294967296", "too large"),
    ("min-throttle", "4", "unknown tunable"),
])
def test_canonical_value_refuses(name, value, why):
    text, reason = canonical_value(name, value)
    assert text is None
    assert why in reason


@pytest.mark.parametrize("name", [t.name for t in TUNABLES])
def test_canonical_values_are_accepted_by_the_sd_model(name):
    value = {"bool": "true", "int": "2"}[TUNABLES[NAMES.index(name)].kind]
    if name == "physical-block-size":
        value = "4096"
    text, _ = canonical_value(name, value)
    assert text is not None
    state = SdState()
    if name == "throttle-max":
        set_property(state, "throttle-min", "2")
    assert set_property(state, name, text, NEXENTA)[0]


def test_tunable_table_covers_facts_3_4():
    assert set(NAMES) == {
        "cache-nonvolatile", "controller-type", "delay-busy", "disksort",
        "power-condition", "timeout-releasereservation", "reset-lun",
        "retries-busy", "retries-timeout", "retries-notready",
        "retries-reset", "throttle-max", "throttle-min", "rmw-type",
        "physical-block-size", "slow-io-threshold", "io-time",
        "retries-victim", "mmc-gesn-polling"}
    nexenta_only = {t.name for t in TUNABLES if t.nexenta_only}
    assert nexenta_only == {"io-time", "slow-io-threshold"}
    assert all(c in string.ascii_lowercase + "-" for n in NAMES for c in n)
