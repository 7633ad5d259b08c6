# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.nvmeconf.lint: each NVME-1xxx code with its severity,
its line and column, and the words of its message; the driver.conf
syntax checks shared with sdconf.

Most entries are on line 2 of:

    nvme-config-list =
    <TAB>"<model>", "<fwrevs>", "<tunables>";
"""

import pytest

from sdtune.driverconf.parser import parse
from sdtune.nvmeconf.lint import lint, lint_text

MODEL = "Samsung SSD 970 EVO 1TB"
# Column of the first character of each string for the default model
# and an empty fwrev list: TAB, quote, 23 characters, quote, ", ".
TUNABLES_COL = 1 + 1 + 1 + len(MODEL) + 1 + 2 + 2 + 2 + 1


def entry(tunables, model=MODEL, fwrevs=""):
    return 'nvme-config-list =\n\t"%s", "%s", "%s";\n' % (
        model, fwrevs, tunables)


def one(text, code):
    conf = parse(text)
    hits = [d for d in lint(conf) if d.code == code]
    assert len(hits) == 1, lint(conf)
    line, col = conf.line_col(hits[0].offset)
    return hits[0].severity, line, col, hits[0].message


def codes(text):
    return [d.code for d in lint_text(text)]


def test_clean_file_has_no_findings():
    assert lint_text(entry("min-phys-block-size:4096,"
                           "volatile-write-cache:off")) == []


def test_not_multiple_of_three():
    sev, line, col, msg = one('nvme-config-list = "a", "", "x:1", "b";\n',
                              "NVME-1001")
    assert (sev, line, col) == ("error", 1, 36)     # the "b"
    assert "ignores the whole list" in msg and "4 strings" in msg


def test_not_strings():
    sev, line, col, msg = one("nvme-config-list = 1, 2, 3;\n", "NVME-1002")
    assert (sev, line, col) == ("error", 1, 1)
    assert msg == ("nvme-config-list here is not a list of strings: the "
                   "driver passes over it, and there is no other list")
    # A later list of strings is the one the driver uses.
    sev, line, col, msg = one("nvme-config-list;\n" + entry(
        "volatile-write-cache:off"), "NVME-1002")
    assert (line, msg) == (1, "nvme-config-list here is not a list of "
                           "strings: the driver passes over it and uses "
                           "the list at line 2")
    assert "NVME-1013" not in codes("nvme-config-list;\n" + entry(
        "volatile-write-cache:off"))


@pytest.mark.parametrize("value", ["131072", "2147483648", "0x20000"])
def test_a_block_above_any_ashift_is_a_warning(value):
    """F2 (adversarial 2026-11-27): check passed these silently."""
    sev, line, _, msg = one(entry("min-phys-block-size:%s" % value),
                            "NVME-1019")
    assert sev == "warning" and line == 2
    assert "no ZFS ashift can use it" in msg
    assert "NVME-1019" not in codes(entry("min-phys-block-size:65536"))


def test_a_global_without_a_value_is_zero():
    sev, line, col, msg = one("volatile-write-cache-enable;\n",
                              "NVME-1018")
    assert (sev, line, col) == ("warning", 1, 1)
    assert "the volatile write cache is DISABLED" in msg
    sev, _, _, msg = one("ignore-unknown-vendor-status;\n", "NVME-1018")
    assert "the setting is off" in msg
    assert "NVME-1018" not in codes("volatile-write-cache-enable=1;\n")


def test_a_string_global_is_passed_over_for_a_later_integer():
    sev, line, col, msg = one('min-phys-block-size="4096";\n'
                              'min-phys-block-size=4096;\n', "NVME-1015")
    assert (sev, line, msg) == ("error", 1, "min-phys-block-size is a "
                                "string: the driver passes over it and "
                                "uses line 2's value")


def test_malformed_tuple():
    sev, line, col, msg = one(entry("volatile-write-cache:off,oops"),
                              "NVME-1003")
    assert (sev, line, col) == ("error", 2, TUNABLES_COL + 25)
    assert "later tuples and later triplets are ignored" in msg


def test_unknown_name_did_you_mean_global_name():
    sev, line, col, msg = one(entry("volatile-write-cache-enable:0"),
                              "NVME-1004")
    assert (sev, line, col) == ("error", 2, TUNABLES_COL)
    assert "did you mean 'volatile-write-cache'" in msg
    assert "global property" in msg


def test_unknown_name_near_miss():
    msg = one(entry("min-phys-blocksize:4096"), "NVME-1004")[3]
    assert "did you mean 'min-phys-block-size'" in msg


def test_unknown_name_without_suggestion():
    msg = one(entry("queue-depth:32"), "NVME-1004")[3]
    assert "did you mean" not in msg


def test_blank_after_comma_in_tuples():
    sev, line, col, msg = one(entry("volatile-write-cache:off, "
                                    "min-phys-block-size:4096"),
                              "NVME-1005")
    assert (sev, line, col) == ("warning", 2, TUNABLES_COL + 25)
    assert "blanks" in msg and "ignores it as unknown" in msg


def test_blanks_around_model():
    sev, line, col, msg = one(entry("volatile-write-cache:off",
                                    model=MODEL + " "), "NVME-1005")
    assert (sev, line, col) == ("warning", 2, 2)
    assert "never matches" in msg


def test_blanks_around_fwrev():
    sev, line, col, msg = one(entry("volatile-write-cache:off",
                                    fwrevs="A1, B2"), "NVME-1005")
    # The fwrev string's text starts at column 30; " B2" 3 bytes later.
    assert (sev, line, col) == ("warning", 2, 33)
    assert '" B2"' in msg


def test_invalid_boolean():
    sev, _, col, msg = one(entry("volatile-write-cache:yes"), "NVME-1006")
    assert (sev, col) == ("error", TUNABLES_COL)
    assert "on, true, off or false" in msg


@pytest.mark.parametrize("value,words", [
    ("1000", "not a power of 2"), ("256", "too low"),
    ("abc", "not a number")])
def test_invalid_min_block(value, words):
    sev, _, _, msg = one(entry("min-phys-block-size:%s" % value),
                         "NVME-1007")
    assert sev == "error" and words in msg and "resets" in msg


def test_trailing_text_accepted_by_strtoul():
    sev, _, _, msg = one(entry("min-phys-block-size:4096k"), "NVME-1008")
    assert sev == "warning" and "'k'" in msg and "reads 4096" in msg


def test_octal_min_block():
    sev, _, _, msg = one(entry("min-phys-block-size:010000"), "NVME-1016")
    assert sev == "warning" and "octal 4096" in msg


def test_model_too_long():
    sev, line, col, msg = one(entry("volatile-write-cache:off",
                                    model="M" * 41), "NVME-1009")
    assert (sev, line, col) == ("error", 2, 2)
    assert "41 bytes" in msg


def test_fwrev_too_long():
    sev, _, _, msg = one(entry("volatile-write-cache:off",
                               fwrevs="123456789"), "NVME-1009")
    assert sev == "error" and "never matches" in msg


def test_later_triplet_overrides():
    text = ('nvme-config-list =\n'
            '\t"%s", "", "volatile-write-cache:off",\n'
            '\t"%s", "A1", "min-phys-block-size:4096,'
            'volatile-write-cache:on";\n' % (MODEL, MODEL))
    sev, line, _, msg = one(text, "NVME-1010")
    assert (sev, line) == ("warning", 3)
    assert "overrides volatile-write-cache of triplet 1 (line 2)" in msg


def test_disjoint_firmware_does_not_override():
    text = ('nvme-config-list =\n'
            '\t"%s", "A1", "volatile-write-cache:off",\n'
            '\t"%s", "B2", "volatile-write-cache:on";\n' % (MODEL, MODEL))
    assert "NVME-1010" not in codes(text)


def test_empty_tuple_list():
    sev, _, _, msg = one(entry(""), "NVME-1011")
    assert sev == "note" and "sets nothing" in msg


@pytest.mark.parametrize("value,code", [
    ("1000", "NVME-1012"), ("256", "NVME-1012"), ('"4096"', "NVME-1015")])
def test_global_min_block_invalid(value, code):
    sev, line, col, msg = one("# g\nmin-phys-block-size=%s;\n" % value, code)
    assert (sev, line, col) == ("error", 2, 1)
    assert "512" in msg


def test_second_list_is_a_note():
    text = entry("volatile-write-cache:off") + entry("volatile-write-cache:on")
    sev, line, col, msg = one(text, "NVME-1013")
    assert (sev, line, col) == ("note", 3, 1)
    assert "only the first" in msg and "line 1" in msg


def test_fwrev_list_of_commas_never_matches():
    assert one(entry("volatile-write-cache:off", fwrevs=","),
               "NVME-1017")[0] == "warning"


def test_shared_driver_conf_checks_run():
    found = lint_text("\u00ef\u00bb\u00bf" + entry("volatile-write-cache:on")
                      + "x = 08;\nbroken = ;\n")
    got = {d.code for d in found}
    assert {"byte-order-mark", "octal", "syntax"} <= got


def test_offsets_sorted_and_in_range():
    text = entry("bad,foo:1, volatile-write-cache:x", model=" m",
                 fwrevs="123456789,")
    found = lint_text(text)
    offsets = [d.offset for d in found]
    assert offsets == sorted(offsets)
    assert all(0 <= o <= len(text) for o in offsets)
