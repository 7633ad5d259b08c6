# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.nvmeconf.model: the nvme driver's reading of nvme.conf
(globals at attach, nvme-config-list triplets) and blkdev's physical
block size, one rule of the NVMe contract per test."""

import pytest

from sdtune.driverconf.parser import parse
from sdtune.errors import SdtuneError
from sdtune.nvmeconf.model import (APPLIED, INVALID, MALFORMED, RESET,
                                   UNKNOWN, best_block_size, config_list,
                                   evaluate, globals_of)

MODEL = "Samsung SSD 970 EVO 1TB"
FW = "2B2QEXE7"


def nvme_list(*strings, head=""):
    body = ",\n".join('\t"%s"' % s for s in strings)
    return head + "nvme-config-list =\n" + body + ";\n"


def ev(text, model=MODEL, fwrev=FW):
    return evaluate(parse(text), model, fwrev)


# Globals (nvme_attach).

def test_global_defaults():
    g = globals_of(parse("# empty\n"))
    assert (g.min_phys_block_size, g.volatile_write_cache_enable,
            g.ignore_unknown_vendor_status) == (512, True, False)
    assert g.origins["min-phys-block-size"].source == "default"


@pytest.mark.parametrize("value,expected", [
    ("4096", 4096), ("1024", 1024), ("768", 512), ("256", 512),
    ("0", 512), ("0x2000", 8192)])
def test_global_min_block_fallback(value, expected):
    g = globals_of(parse("min-phys-block-size=%s;\n" % value))
    assert g.min_phys_block_size == expected
    if expected == 512:
        assert g.origins["min-phys-block-size"].source == "fallback"


def test_global_write_cache_nonzero_means_enable():
    assert globals_of(parse("volatile-write-cache-enable=0;\n")) \
        .volatile_write_cache_enable is False
    assert globals_of(parse("volatile-write-cache-enable=2;\n")) \
        .volatile_write_cache_enable is True


def test_first_global_property_wins():
    g = globals_of(parse("min-phys-block-size=4096;\n"
                         "min-phys-block-size=8192;\n"))
    assert g.min_phys_block_size == 4096


# The list as a whole.

def test_list_not_multiple_of_three_ignored_whole():
    text = nvme_list(MODEL, "", "volatile-write-cache:off", "extra")
    clist = config_list(parse(text))
    assert clist.whole_list_ignored and "multiple of 3" in \
        clist.whole_list_ignored
    assert len(clist.triplets) == 1
    e = ev(text)
    assert e.volatile_write_cache is True and e.matched == []


def test_a_list_of_another_type_is_passed_over():
    """The driver looks the list up as strings: an integer (or valueless)
    nvme-config-list is passed over, and a later list of strings used."""
    clist = config_list(parse("nvme-config-list = 1, 2, 3;\n"))
    assert clist.prop is None and not clist.usable
    assert len(clist.not_strings) == 1
    assert ev("nvme-config-list = 1, 2, 3;\n").matched == []
    for first in ("nvme-config-list = 1;\n", "nvme-config-list;\n"):
        text = first + nvme_list(MODEL, "", "min-phys-block-size:4096")
        assert ev(text).min_phys_block_size == 4096


def test_globals_are_looked_up_as_integers():
    """A name without a value is an integer 0 (the cache DISABLED); a
    string property of the name is passed over for a later integer."""
    assert ev("volatile-write-cache-enable;\n").volatile_write_cache \
        is False
    assert ev("ignore-unknown-vendor-status;\n"
              ).ignore_unknown_vendor_status is False
    assert ev('min-phys-block-size="4096";\nmin-phys-block-size=4096;\n'
              ).min_phys_block_size == 4096
    assert ev('min-phys-block-size="4096";\n').min_phys_block_size == 512


def test_first_list_is_used_second_shadowed():
    text = nvme_list(MODEL, "", "volatile-write-cache:off") + \
        nvme_list(MODEL, "", "volatile-write-cache:on")
    clist = config_list(parse(text))
    assert len(clist.shadowed) == 1
    assert ev(text).volatile_write_cache is False


def test_triplet_spans():
    text = nvme_list(MODEL, "A,B", "volatile-write-cache:off")
    t = config_list(parse(text)).triplets[0]
    assert text[t.model_span[0]:t.model_span[1]] == '"%s"' % MODEL
    assert text[t.fwrevs_span[0]:t.fwrevs_span[1]] == '"A,B"'
    assert text[t.tunables_span[0]:t.tunables_span[1]] == \
        '"volatile-write-cache:off"'
    assert text[t.start:t.end].startswith('"%s"' % MODEL)
    assert text[t.start:t.end].endswith('cache:off"')


# Matching.

def test_every_matching_triplet_applies_later_wins():
    text = nvme_list(MODEL, "", "min-phys-block-size:4096,"
                     "volatile-write-cache:off",
                     MODEL, "", "min-phys-block-size:8192")
    e = ev(text)
    assert e.matched == [0, 1]
    assert e.min_phys_block_size == 8192
    assert e.volatile_write_cache is False


def test_triplet_overrides_global():
    text = nvme_list(MODEL, "", "min-phys-block-size:4096",
                     head="min-phys-block-size=8192;\n"
                     "volatile-write-cache-enable=0;\n")
    e = ev(text)
    assert e.min_phys_block_size == 4096
    assert e.volatile_write_cache is False


@pytest.mark.parametrize("model,hit", [
    (MODEL, True), (MODEL + " ", False), (" " + MODEL, False),
    (MODEL.lower(), False), (MODEL[:-1], False)])
def test_model_exact_match(model, hit):
    text = nvme_list(model, "", "volatile-write-cache:off")
    assert ev(text).matched == ([0] if hit else [])


@pytest.mark.parametrize("fwrevs,hit", [
    ("", True), (FW, True), ("OTHER," + FW, True), (",," + FW + ",", True),
    ("OTHER", False), (" " + FW, False), (FW + " ", False),
    (FW.lower(), False), (",", False), (FW[:-1], False)])
def test_fwrev_list(fwrevs, hit):
    text = nvme_list(MODEL, fwrevs, "volatile-write-cache:off")
    assert ev(text).matched == ([0] if hit else [])


def test_string_ends_at_nul_escape():
    text = ('nvme-config-list = "%s\\0junk", "", '
            '"volatile-write-cache:off";\n' % MODEL)
    assert ev(text).matched == [0]


# Tuples.

def test_malformed_tuple_stops_whole_list():
    text = nvme_list(MODEL, "", "volatile-write-cache:off,bad,"
                     "min-phys-block-size:4096",
                     MODEL, "", "ignore-unknown-vendor-status:on")
    e = ev(text)
    assert e.volatile_write_cache is False          # earlier stays
    assert e.min_phys_block_size == 512             # later tuple not read
    assert e.ignore_unknown_vendor_status is False  # later triplet not read
    assert e.stopped_at.outcome == MALFORMED and e.stopped_at.text == "bad"
    assert e.matched == [0]


def test_colon_first_is_malformed():
    e = ev(nvme_list(MODEL, "", ":on,volatile-write-cache:off"))
    assert e.stopped_at is not None and e.volatile_write_cache is True


def test_malformed_in_non_matching_triplet_does_not_stop():
    text = nvme_list("OTHER", "", "bad", MODEL, "",
                     "volatile-write-cache:off")
    e = ev(text)
    assert e.stopped_at is None and e.volatile_write_cache is False


def test_empty_tuples_skipped_no_trim():
    e = ev(nvme_list(MODEL, "", ",,volatile-write-cache:off,, "
                     "min-phys-block-size:4096"))
    outcomes = [(x.text, x.outcome) for x in e.effects]
    assert outcomes == [("volatile-write-cache:off", APPLIED),
                        (" min-phys-block-size:4096", UNKNOWN)]
    assert e.min_phys_block_size == 512


def test_value_is_everything_after_first_colon():
    e = ev(nvme_list(MODEL, "", "volatile-write-cache:off:x"))
    assert e.effects[0].value == "off:x" and e.effects[0].outcome == INVALID


def test_unknown_name_case_sensitive():
    e = ev(nvme_list(MODEL, "", "Volatile-Write-Cache:off"))
    assert e.effects[0].outcome == UNKNOWN
    assert e.volatile_write_cache is True


@pytest.mark.parametrize("word,value", [
    ("on", True), ("true", True), ("off", False), ("false", False)])
def test_boolean_words(word, value):
    text = nvme_list(MODEL, "", "volatile-write-cache:%s,"
                     "ignore-unknown-vendor-status:%s" % (word, word),
                     head="volatile-write-cache-enable=%d;\n" % (not value))
    e = ev(text)
    assert e.volatile_write_cache is value
    assert e.ignore_unknown_vendor_status is value


@pytest.mark.parametrize("word", ["ON", "yes", "1", " on", "on "])
def test_boolean_invalid_leaves_value(word):
    text = nvme_list(MODEL, "", "volatile-write-cache:off",
                     MODEL, "", "volatile-write-cache:%s" % word)
    e = ev(text)
    assert e.volatile_write_cache is False
    assert e.effects[-1].outcome == INVALID


@pytest.mark.parametrize("value,expected", [
    ("4096", 4096), ("0x1000", 4096), ("010000", 4096), (" 4096", 4096),
    ("4096abc", 4096), ("8192:x", 8192)])
def test_min_block_strtoul(value, expected):
    e = ev(nvme_list(MODEL, "", "min-phys-block-size:%s" % value))
    assert e.min_phys_block_size == expected


@pytest.mark.parametrize("value", ["abc", "", "256", "1000", "0", "-512",
                                   "99999999999999999999999"])
def test_min_block_invalid_resets_to_512_not_global(value):
    text = nvme_list(MODEL, "", "min-phys-block-size:%s" % value,
                     head="min-phys-block-size=8192;\n")
    e = ev(text)
    assert e.min_phys_block_size == 512
    assert e.effects[0].outcome == RESET


# blkdev's physical block size.

def test_best_block_prefers_best_performance():
    formats = [(512, 0, 2), (4096, 0, 0)]
    assert best_block_size(formats, 512, 512) == 4096


def test_best_block_skips_metadata_and_stops_at_an_unused_format():
    formats = [(512, 0, 2), (4096, 8, 0), (0, 0, 0), (8192, 0, 0)]
    assert best_block_size(formats, 512, 512) == 512
    # nvmeadm prints an unused format (LBADS 0) as 1 byte.
    formats = [(4096, 0, 2), (1, 0, 0), (8192, 0, 0)]
    assert best_block_size(formats, 4096, 512) == 4096


def test_best_block_needs_strictly_better():
    formats = [(4096, 0, 1), (512, 0, 1)]
    assert best_block_size(formats, 512, 512) == 4096
    formats = [(512, 0, 3)]          # Degraded is never < 3
    assert best_block_size(formats, 512, 512) == 512
    assert best_block_size([(512, 0, 3), (4096, 0, 3)], 4096, 512) == 4096


def test_best_block_raised_to_minimum():
    assert best_block_size([(512, 0, 0)], 512, 4096) == 4096
    assert best_block_size([(8192, 0, 0)], 8192, 4096) == 8192


def test_blkdev_never_reports_less_than_the_logical_block():
    """512 and 4096 both Best, the namespace formatted 4096: nvme's best
    is 512, which blkdev does not take below the 4096-byte logical
    block."""
    assert best_block_size([(512, 0, 0), (4096, 0, 0)], 4096, 512) == 4096


def test_formats_with_metadata_missing_change_nothing():
    """nvmeadm without -v hides formats with metadata: the in-use
    format is found by the logical block, not by a list position."""
    every = [(512, 0, 2), (512, 8, 1), (4096, 0, 0), (4096, 64, 0)]
    shown = [f for f in every if f[1] == 0]
    assert best_block_size(every, 512, 512) == \
        best_block_size(shown, 512, 512) == 4096


def test_best_block_unknown_logical_block():
    with pytest.raises(SdtuneError) as e:
        best_block_size([(512, 0, 0)], 0, 512)
    assert str(e.value).startswith("cannot compute 'physical block size'")
