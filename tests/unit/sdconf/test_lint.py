# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.sdconf.lint: one test per rule, each checking the code,
the severity, the exact line and column, and the words of the message
(facts §2 to §4, §15, §16).

Most entries sit on line 3 of a small file:

    # lint test
    sd-config-list =
    <TAB>"ATA     INTEL SSDSC2BA40", "<tunables>";

so the opening quote of the tunables string is column 30 and its first
character column 31.
"""

import pytest

from sdtune.driverconf.checks import format_diagnostic, is_problem
from sdtune.driverconf.parser import parse
from sdtune.sdconf.lint import exact_key, key_diagnostics, lint, lint_text

KEY = "ATA     INTEL SSDSC2BA40"


def entry(tunables, key=KEY):
    return '# lint test\nsd-config-list =\n\t"%s", "%s";\n' % (key, tunables)


def run(text, flavour="nexenta"):
    conf = parse(text)
    return conf, lint(conf, flavour)


def one(text, code, flavour="nexenta"):
    """The single diagnostic with `code`: (severity, line, col, message)."""
    conf, found = run(text, flavour)
    hits = [d for d in found if d.code == code]
    assert len(hits) == 1, found
    line, col = conf.line_col(hits[0].offset)
    return hits[0].severity, line, col, hits[0].message


def codes(text, flavour="nexenta"):
    return sorted(d.code for d in run(text, flavour)[1])


def problems(text, flavour="nexenta"):
    return [d for d in run(text, flavour)[1] if is_problem(d)]


# -- syntax errors (kernel warnings) ------------------------------------------

def test_syntax_error_location_and_format():
    text = "a=1;\n\n# x\n  b = 1 : 2;\n"
    conf, found = run(text)
    first = found[0]
    assert (first.code, first.severity) == ("syntax", "error")
    assert format_diagnostic(conf, "sd.conf", first) == \
        "sd.conf:4:9: error: Unexpected token ':'"


def test_missing_quote_is_reported_where_the_string_starts():
    sev, line, col, msg = one('a = 1;\nb = "open\n;\n', "string")
    assert (sev, line, col, msg) == ("error", 2, 5, 'Missing "')


def test_unexpected_eof():
    sev, line, col, msg = one("a = 1;\nb = 2", "syntax")
    assert (sev, line, col, msg) == ("error", 2, 6, "Unexpected EOF")


def test_second_name_in_a_spec_drops_it():
    sev, line, col, msg = one('name="sd" class="scsi" target=0 lun=0\n'
                              'name="sd" target=1;\n', "missing-semicolon")
    assert (sev, line, col) == ("error", 2, 6)
    assert msg == ("'name' property already specified (the ';' may have "
                   "been omitted on previous spec!)")


# -- tunable names and values -------------------------------------------------

@pytest.mark.parametrize("tunables,name,suggestion", [
    ("min-throttle:4", "min-throttle", "throttle-min"),
    ("max-throttle:64", "max-throttle", "throttle-max"),
    ("physical-blocksize:4096", "physical-blocksize", "physical-block-size"),
    ("cache-nonvolatil:true", "cache-nonvolatil", "cache-nonvolatile"),
])
def test_unknown_tunable_with_did_you_mean(tunables, name, suggestion):
    sev, line, col, msg = one(entry(tunables), "unknown-tunable")
    assert (sev, line, col) == ("error", 3, 31)
    assert "unknown tunable '%s'" % name in msg
    assert "did you mean '%s'?" % suggestion in msg


def test_unknown_tunable_without_a_close_name():
    sev, line, col, msg = one(entry("disksort:false, zzz:1"),
                              "unknown-tunable")
    assert (sev, line, col) == ("error", 3, 47)
    assert "'zzz'" in msg and "did you mean" not in msg


@pytest.mark.parametrize("tunables,col,words", [
    ("cache-nonvolatile:1", 31, "only true or false"),
    ("disksort:yes", 31, "only true or false"),
    ("throttle-max:abc", 31, "not a number"),
    ("disksort:false, retries-busy:x", 47, "not a number"),
    ("physical-block-size:3000", 31, "not a power of two"),
])
def test_invalid_values(tunables, col, words):
    sev, line, c, msg = one(entry(tunables), "invalid-value")
    assert (sev, line, c) == ("error", 3, col)
    assert "is ignored by sd" in msg and words in msg


def test_leading_zero_reads_octal_and_block_size_below_512_is_flagged():
    """"04096" is octal 040 = 32 followed by junk "96".  The kernel
    accepts 32 (only the power-of-two test bites at that point of attach,
    facts §3.4), so the value is applied: lint must still say so."""
    text = entry("physical-block-size:04096")
    conf, found = run(text)
    got = {d.code: (d.severity, conf.line_col(d.offset), d.message)
           for d in found}
    assert set(got) == {"octal", "trailing-junk", "block-size"}
    assert got["octal"][:2] == ("warning", (3, 31))
    assert "leading zero" in got["octal"][2] and "octal 32" in got["octal"][2]
    assert got["trailing-junk"][:2] == ("warning", (3, 31))
    assert "'96'" in got["trailing-junk"][2]
    assert got["block-size"][:2] == ("error", (3, 31))
    assert "32 is below the 512" in got["block-size"][2]


def test_trailing_junk():
    sev, line, col, msg = one(entry("retries-timeout:4k"), "trailing-junk")
    assert (sev, line, col) == ("warning", 3, 31)
    assert "trailing text 'k'" in msg and "sd reads 4" in msg


def test_tuple_without_colon_read_by_accident():
    text = entry("throttle-max:32, cache-nonvolatile true")
    sev, line, col, msg = one(text, "tuple-no-colon")
    # Column of "cache-nonvolatile", not of the blank before it.
    assert (sev, line, col) == ("warning", 3, 48)
    assert "has no ':'" in msg and "by accident" in msg
    assert "write cache-nonvolatile:true" in msg


def test_tunables_without_any_colon():
    sev, line, col, msg = one(entry("physical-block-size=4096"), "no-colon")
    assert (sev, line, col) == ("error", 3, 30)
    assert "have no ':'" in msg and "legacy data-property names" in msg
    assert "write name:value" in msg


def test_text_after_a_blank_in_a_value():
    sev, line, col, msg = one(entry("disksort:false, throttle-max: 32 junk"),
                              "ignored-text")
    assert (sev, line, col) == ("warning", 3, 47)
    assert "text after a blank" in msg and "sd reads throttle-max:32" in msg


def test_text_after_a_second_colon():
    sev, line, col, msg = one(entry("throttle-max:32:64"), "ignored-text")
    assert (sev, line, col) == ("warning", 3, 31)
    assert "after the second ':'" in msg


def test_tuple_without_value():
    sev, line, col, msg = one(entry("disksort:false, throttle-max:"),
                              "tuple-ignored")
    assert (sev, line, col) == ("error", 3, 47)
    assert "has no value" in msg


# -- the list -----------------------------------------------------------------

def test_second_sd_config_list_points_at_the_second_and_names_the_first():
    text = ('# two lists\n\nsd-config-list = "%s", "disksort:false";\n'
            'a = 1;\n  sd-config-list = "%s", "disksort:true";\n'
            % (KEY, KEY))
    sev, line, col, msg = one(text, "second-list")
    assert (sev, line, col) == ("error", 5, 3)
    assert "second sd-config-list is ignored" in msg and "(line 3)" in msg


def test_odd_number_of_strings():
    text = ('sd-config-list =\n\t"%s", "disksort:false",\n'
            '\t"ATA     OTHER";\n' % KEY)
    sev, line, col, msg = one(text, "odd-count")
    assert (sev, line, col) == ("error", 3, 2)
    assert "odd number of strings (3)" in msg and "whole list" in msg


def test_list_that_is_not_strings():
    sev, line, col, msg = one("x=1;\n sd-config-list = 1, 2;\n",
                              "not-strings")
    assert (sev, line, col) == ("error", 2, 2)
    assert "must be a list of strings" in msg


def test_list_inside_a_node_spec():
    text = ('name="sd" class="scsi"\n'
            '  sd-config-list = "%s", "disksort:false";\n' % KEY)
    sev, line, col, msg = one(text, "node-list")
    assert (sev, line, col) == ("warning", 2, 3)
    assert 'node spec name="sd"' in msg and "';' missing" in msg


def test_string_longer_than_1023_characters():
    tunables = "disksort:false," * 69          # 1035 characters
    conf, found = run(entry(tunables))
    d = found[0]
    assert (d.code, d.severity, conf.line_col(d.offset)) == \
        ("syntax", "error", (3, 30))
    assert "1023-character limit" in d.message


# -- keys ---------------------------------------------------------------------

@pytest.mark.parametrize("key", ["", "**"])
def test_key_matching_every_disk(key):
    sev, line, col, msg = one(entry("disksort:false", key=key),
                              "key-everything")
    assert (sev, line, col) == ("error", 3, 2)
    assert "matches every disk" in msg and repr(key) in msg


def test_vendor_only_key_is_a_warning():
    sev, line, col, msg = one(entry("disksort:false", key="ATA"),
                              "key-broad")
    assert (sev, line, col) == ("warning", 3, 2)
    assert "every SATA disk" in msg


def test_product_prefix_key_is_a_note():
    sev, line, col, msg = one(entry("disksort:false",
                                    key="ATA     INTEL SSDSC2BA"),
                              "key-broad")
    assert (sev, line, col) == ("note", 3, 2)
    assert "every product starting with 'INTEL SSDSC2BA'" in msg


@pytest.mark.parametrize("key,code,severity", [
    ("ATA", "key-broad", "warning"),
    (KEY + "0", "key-revision", "note"),
    (KEY + "0270XYZ", "key-long", "warning"),
    ("*SSDSC2BA*", "key-wildcard", "note"),
    (" ATA INTEL SSDSC2BA40 ", "key-blank", "note"),
])
def test_key_diagnostics_is_what_the_list_check_says(key, code, severity):
    # One home: `sdconf set` and `unset` use key_diagnostics as well.
    (d,) = key_diagnostics(key, 7)
    assert (d.code, d.severity, d.offset) == (code, severity, 7)
    sev, _, _, msg = one(entry("disksort:false", key=key), code)
    assert (sev, msg) == (d.severity, d.message)
    assert not exact_key(key)


def test_exact_key():
    assert exact_key(KEY) and exact_key("HGST    HUS724040ALS640 ")
    assert key_diagnostics(KEY) == []
    assert not exact_key(KEY[:-1]) and not exact_key("")


def test_25_character_key_names_the_firmware_it_needs():
    msg = key_diagnostics(KEY + "0")[0].message
    assert "25 characters" in msg and "firmware starting with '0'" in msg


def test_duplicate_keys():
    text = ('sd-config-list =\n\t"%s", "disksort:false",\n'
            '\t"%s", "disksort:true";\n' % (KEY, KEY.lower()))
    sev, line, col, msg = one(text, "key-duplicate")
    assert (sev, line, col) == ("warning", 3, 2)
    assert "already has pair 1" in msg and "later values win" in msg


# -- throttles ----------------------------------------------------------------

def test_throttle_max_alone_below_the_default_min_is_reset():
    sev, line, col, msg = one(entry("throttle-max:4"), "throttle-reset")
    assert (sev, line, col) == ("error", 3, 31)
    assert "throttle check failed" in msg and "reset to 8/256" in msg


def test_throttle_min_first_is_clean():
    assert run(entry("throttle-min:2, throttle-max:4"))[1] == []


def test_throttle_max_first_is_reset():
    sev, line, col, _ = one(entry("throttle-max:4, throttle-min:2"),
                            "throttle-reset")
    assert (sev, line, col) == ("error", 3, 31)


# -- flavours -----------------------------------------------------------------

def test_nexentastor_only_tunables_under_upstream():
    text = entry("io-time:180,slow-io-threshold:0", key="VMware  Virtual disk")
    conf, found = run(text, "upstream")
    hits = [(d.severity, conf.line_col(d.offset), d.message)
            for d in found if d.code == "nexenta-only"]
    assert [h[:2] for h in hits] == [("warning", (3, 27)),
                                     ("warning", (3, 39))]
    assert "'io-time' exists only on NexentaStor" in hits[0][2]
    assert "'slow-io-threshold'" in hits[1][2]
    assert "nexenta-only" not in codes(text, "nexenta")


# -- legacy version-1 entries -------------------------------------------------

V1_FULL = ", ".join(["1", "0x40001"] + ["0"] * 18 + ["1"])   # 21 integers


def test_valid_legacy_entry_is_only_a_note():
    text = entry("seagate-data") + "seagate-data = %s;\n" % V1_FULL
    conf, found = run(text)
    assert [(d.code, d.severity, conf.line_col(d.offset)) for d in found] \
        == [("legacy-v1", "note", (3, 30))]
    assert "never writes this format" in found[0].message


@pytest.mark.parametrize("data,severity,words", [
    ("2, 1, 32", "error", "version 0x2 is invalid"),
    ("1, 1, 32", "error", "size is incorrect"),        # bit 0 counts twice
    ("1, 0x80000", "error", "invalid bits 0x80000"),
    ("1, 0x40000", "warning", "has 2 integers"),        # passes the check
])
def test_bad_legacy_data(data, severity, words):
    text = entry("v1-data") + "v1-data = %s;\n" % data
    conf, found = run(text)
    hits = [d for d in found if d.code == "legacy-v1" and d.severity != "note"]
    assert len(hits) == 1, found
    assert (hits[0].severity, conf.line_col(hits[0].offset)) == \
        (severity, (3, 30))
    assert words in hits[0].message


def test_legacy_entry_naming_a_missing_property():
    text = entry("v1-data no-such-data") + "v1-data = %s;\n" % V1_FULL
    conf, found = run(text)
    errs = [d for d in found if d.severity == "error"]
    assert len(errs) == 1
    assert (errs[0].code, conf.line_col(errs[0].offset)) == \
        ("legacy-v1", (3, 30))
    assert "'no-such-data'" in errs[0].message
    assert "no integer-array property" in errs[0].message


# -- clean files --------------------------------------------------------------

CANONICAL = ("sd-config-list =\n"
             '\t"VMware  Virtual disk", "io-time:180,slow-io-threshold:0",\n'
             '\t"ATA     INTEL SSDSC2BA40", "physical-block-size:4096, '
             'cache-nonvolatile:true",\n'
             '\t"HGST    HUS724040ALS640 ", "throttle-min:2, throttle-max:16, '
             'disksort:false";\n')


def test_canonical_example_of_facts_16_1_has_no_problems():
    conf, found = run(CANONICAL)
    assert [d for d in found if is_problem(d)] == []
    # Only notes remain: the VMware key is a product prefix on purpose,
    # and cache-nonvolatile:true deserves a reminder.
    assert sorted((d.code, conf.line_col(d.offset)) for d in found) == [
        ("cache-nonvolatile", (3, 57)), ("key-broad", (2, 2))]


def test_lint_output_is_sorted_by_position():
    text = entry("throttle-max:4, min-throttle:2, disksort:1", key="ATA")
    found = lint_text(text)
    assert [d.offset for d in found] == sorted(d.offset for d in found)
    assert len(found) >= 4


def test_is_problem():
    conf, found = run(entry("throttle-max:4, cache-nonvolatile:true",
                            key="ATA     INTEL SSDSC2BA"))
    assert sorted((d.code, d.severity, is_problem(d)) for d in found) == [
        ("cache-nonvolatile", "note", False), ("key-broad", "note", False),
        ("throttle-reset", "error", True)]


def test_vendor_not_padded_to_eight_characters():
    # One blank between vendor and product, as guides often print it:
    # sd compares "ATA INTE" with the 8-byte vendor and matches nothing.
    sev, line, col, msg = one(entry("disksort:false",
                                    key="ATA INTEL SSDSC2BA40"),
                              "key-vendor-padding")
    assert (sev, line, col) == ("warning", 3, 2)
    assert 'did you mean "ATA     INTEL SSDSC2BA40"' in msg
    assert "matches no disk of vendor 'ATA'" in msg


@pytest.mark.parametrize("key", ["SEAGATE ST4000NM0023", KEY,
                                 "VMware  Virtual disk", " ATA INTEL X "])
def test_properly_padded_vendors_are_not_flagged(key):
    assert "key-vendor-padding" not in codes(entry("disksort:false", key))


def test_empty_tuple_is_only_a_note():
    sev, line, col, msg = one(entry("disksort:false, , rmw-type:1"),
                              "tuple-empty")
    assert (sev, line) == ("note", 3)
    assert problems(entry("disksort:false, , rmw-type:1")) == []
