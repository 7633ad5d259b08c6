# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.driverconf.edit: one entry appended to a list
property, for either driver's list: an sd-config-list pair (key,
tunables) and an nvme-config-list triplet (model, firmware list,
tunables), every other byte kept; and an entry removed from either."""

import pytest

from sdtune.driverconf.edit import (EditError, append_entry, quote_string,
                                    remove_group)
from sdtune.driverconf.parser import parse

SD = "sd-config-list"
NVME = "nvme-config-list"
KEY = "ATA     INTEL SSDSC2BA40"
MODEL = "Samsung SSD 970 EVO 1TB"
SD_PAIR = (KEY, "physical-block-size:4096")
NVME_TRIPLET = (MODEL, "", "min-phys-block-size:4096")


def appended(text, name, values):
    conf = parse(text)
    return append_entry(conf, conf.global_property(name), name, values)


def values(text, name):
    conf = parse(text)
    assert conf.diagnostics == []
    return [v.value for v in conf.global_property(name).values]


@pytest.mark.parametrize("name,entry,line", [
    (SD, SD_PAIR, '\t"%s", "physical-block-size:4096";' % KEY),
    (NVME, NVME_TRIPLET, '\t"%s", "", "min-phys-block-size:4096";' % MODEL),
], ids=["sd", "nvme"])
def test_no_list_yet_makes_one_at_the_end_of_the_file(name, entry, line):
    head = "# driver.conf\nddi-forceattach=1;"     # no final newline
    new = appended(head, name, entry)
    assert new == head + "\n%s =\n%s\n" % (name, line)
    assert values(new, name) == list(entry)


@pytest.mark.parametrize("name,entry,first", [
    (SD, SD_PAIR, ('"HGST    HUS724040ALS640 "', '"disksort:false"')),
    (NVME, NVME_TRIPLET, ('"INTEL SSDPE2KX040T8"', '"VDV10131"',
                          '"volatile-write-cache:off"')),
], ids=["sd", "nvme"])
def test_entry_goes_on_a_line_of_its_own_after_the_last(name, entry, first):
    head = "a=1;\n%s =\n\t%s;\nb=2;\n" % (name, ", ".join(first))
    new = appended(head, name, entry)
    assert new == "a=1;\n%s =\n\t%s,\n\t%s;\nb=2;\n" % (
        name, ", ".join(first), ", ".join('"%s"' % v for v in entry))
    assert values(new, name) == [v.strip('"') for v in first] + list(entry)


@pytest.mark.parametrize("name,entry,first", [
    (SD, SD_PAIR, '"HGST    HUS724040ALS640 ", "disksort:false"'),
    (NVME, NVME_TRIPLET,
     '"INTEL SSDPE2KX040T8", "", "volatile-write-cache:off"'),
], ids=["sd", "nvme"])
def test_a_comment_after_the_last_entry_stays_with_it(name, entry, first):
    head = "%s =\n\t%s # the old one\n;\n" % (name, first)
    new = appended(head, name, entry)
    assert new == "%s =\n\t%s, # the old one\n\t%s\n;\n" % (
        name, first, ", ".join('"%s"' % v for v in entry))
    assert len(values(new, name)) == first.count(",") + 1 + len(entry)
    assert "# the old one" in [c.value for c in parse(new).comments]


@pytest.mark.parametrize("name,entry", [
    (SD, (KEY, 'disksort:"false"')),
    (NVME, (MODEL + "\\", "", "volatile-write-cache:on")),
], ids=["sd", "nvme"])
def test_a_string_sdtune_will_not_write_is_refused(name, entry):
    with pytest.raises(EditError, match="will not rewrite"):
        appended("a=1;\n", name, entry)


def test_quote_string_refuses_past_the_kernels_limit():
    assert quote_string("x" * 1023) == '"%s"' % ("x" * 1023)
    with pytest.raises(EditError, match="1023-character limit"):
        quote_string("x" * 1024)


@pytest.mark.parametrize("name,size,entries", [
    (SD, 2, ['"A", "disksort:false"', '"B", "disksort:true"']),
    (NVME, 3, ['"A", "", "volatile-write-cache:off"',
               '"B", "X1", "volatile-write-cache:on"']),
], ids=["sd", "nvme"])
def test_remove_group_takes_one_entry_and_its_comma(name, size, entries):
    text = "%s =\n\t%s, # first\n\t%s;\n" % (name, entries[0], entries[1])
    conf = parse(text)
    new = remove_group(conf, conf.global_property(name), 0, size)
    # The comment after the comma stays where it was, at the start of
    # what is left of its line.
    assert new == "%s =\n# first\n\t%s;\n" % (name, entries[1])
    # The last entry takes the property with it; the comment stays.
    conf = parse(new)
    assert remove_group(conf, conf.global_property(name), 0, size) == \
        "# first\n"
