# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.nvmeconf.edit: lossless edits of nvme-config-list
that keep every other byte, write canonical text (no blank after a comma
inside the tuple string) and refuse what the driver would not apply."""

import pytest

from sdtune.driverconf.edit import EditError, NothingToUnset
from sdtune.driverconf.parser import parse
from sdtune.nvmeconf.edit import set_tunables, unset_tunables
from sdtune.nvmeconf.lint import lint_text
from sdtune.nvmeconf.model import config_list, evaluate

MODEL = "Samsung SSD 970 EVO 1TB"
OTHER = "INTEL SSDPE2KX010T8"

HEAD = ("#\n# nvme.conf\n#\n"
        "strict-version=1;\n")
EXISTING = (HEAD +
            "nvme-config-list =\n"
            "\t# Intel: keep the cache off\n"
            '\t"%s", "", "volatile-write-cache:off",  # why\n'
            '\t"%s", "", "min-phys-block-size:4096";\n'
            "volatile-write-cache-enable=1;\n" % (OTHER, MODEL))


def triplets(text):
    return [(t.model, t.fwrevs, t.tunables)
            for t in config_list(parse(text)).triplets]


def values(text, model=MODEL, fwrev="ANY"):
    return evaluate(parse(text), model, fwrev).values()


def test_render_of_unedited_parse_is_byte_exact():
    for text in (EXISTING, HEAD, "", "nvme-config-list = 1;", "x\x00\xff"):
        assert parse(text).render() == text


def test_create_list_canonical():
    new = set_tunables(HEAD, MODEL, {"volatile-write-cache": "off",
                                     "min-phys-block-size": "4096"})
    assert new == HEAD + ('nvme-config-list =\n\t"%s", "", '
                          '"min-phys-block-size:4096,'
                          'volatile-write-cache:off";\n' % MODEL)
    assert lint_text(new) == []


def test_create_adds_newline_at_end_of_file():
    new = set_tunables("a=1;", MODEL, {"volatile-write-cache": "on"})
    assert new.startswith("a=1;\nnvme-config-list =\n")


def test_append_triplet_keeps_comments_and_other_bytes():
    new = set_tunables(EXISTING, "WDC NEW", {"volatile-write-cache": "on"})
    assert new.startswith(EXISTING[:EXISTING.index("min-phys-block-size:")])
    assert "\t# Intel: keep the cache off\n" in new
    assert "  # why\n" in new
    assert triplets(new)[-1] == ("WDC NEW", "", "volatile-write-cache:on")
    assert new.endswith("volatile-write-cache-enable=1;\n")
    assert triplets(new)[:2] == triplets(EXISTING)


def test_append_after_trailing_comment():
    text = ('nvme-config-list =\n\t"%s", "", "volatile-write-cache:off"'
            ' # c\n\t;\n' % OTHER)
    new = set_tunables(text, MODEL, {"volatile-write-cache": "on"})
    assert "# c\n" in new
    assert triplets(new)[1] == (MODEL, "", "volatile-write-cache:on")


def test_replace_value_in_place_and_append_new():
    new = set_tunables(EXISTING, MODEL, {"min-phys-block-size": "8192",
                                         "ignore-unknown-vendor-status":
                                         "on"})
    assert new == EXISTING.replace(
        '"min-phys-block-size:4096"',
        '"min-phys-block-size:8192,ignore-unknown-vendor-status:on"')
    assert values(new)["min-phys-block-size"] == 8192


def test_existing_order_kept_and_blank_names_fixed():
    text = ('nvme-config-list = "%s", "", "volatile-write-cache:on, '
            'min-phys-block-size:512,ignore-unknown-vendor-status:off";\n'
            % MODEL)
    new = set_tunables(text, MODEL, {"min-phys-block-size": "4096"})
    assert triplets(new)[0][2] == ("volatile-write-cache:on,"
                                   "min-phys-block-size:4096,"
                                   "ignore-unknown-vendor-status:off")


def test_boolean_input_canonical():
    new = set_tunables(HEAD, MODEL, {"volatile-write-cache": "false"})
    assert triplets(new)[0][2] == "volatile-write-cache:off"


@pytest.mark.parametrize("model", [
    'a"b', "tab\there", " lead", "trail ", "", "M" * 41, "back\\slash",
    "nl\n"])
def test_refuses_bad_model(model):
    with pytest.raises(EditError):
        set_tunables(HEAD, model, {"volatile-write-cache": "on"})


@pytest.mark.parametrize("settings", [
    {}, {"volatile-write-cache-enable": "0"}, {"queue-depth": "1"},
    {"volatile-write-cache": "yes"}, {"min-phys-block-size": "1000"},
    {"min-phys-block-size": "256"}, {"min-phys-block-size": "0x1000"},
    {"min-phys-block-size": "4096k"}])
def test_refuses_bad_settings(settings):
    with pytest.raises(EditError):
        set_tunables(HEAD, MODEL, settings)


@pytest.mark.parametrize("value", ["131072", "2147483648"])
def test_refuses_a_block_no_zfs_ashift_can_use(value):
    """Adversarial report 2026-11-27, F2: nvme takes these, but no ashift
    can use them; sd's physical-block-size is refused the same way."""
    with pytest.raises(EditError) as e:
        set_tunables(HEAD, MODEL, {"min-phys-block-size": value})
    assert "larger than 65536: no ZFS ashift can use it" in str(e.value)


def test_largest_block_zfs_can_use_is_written():
    text = set_tunables(HEAD, MODEL, {"min-phys-block-size": "65536"})
    assert "min-phys-block-size:65536" in text


def test_refuses_when_later_triplet_overrides():
    text = ('nvme-config-list =\n\t"%s", "", "volatile-write-cache:on",\n'
            '\t"%s", "FW1", "volatile-write-cache:off";\n' % (MODEL, MODEL))
    with pytest.raises(EditError) as e:
        set_tunables(text, MODEL, {"volatile-write-cache": "on"})
    assert "line 3" in str(e.value)


def test_refuses_when_malformed_tuple_before_ours():
    text = ('nvme-config-list =\n\t"%s", "FW1,FW2", "oops",\n'
            '\t"%s", "", "min-phys-block-size:4096";\n' % (MODEL, MODEL))
    with pytest.raises(EditError) as e:
        set_tunables(text, MODEL, {"volatile-write-cache": "on"})
    assert "malformed" in str(e.value) and "line 2" in str(e.value)


def test_refuses_unusable_list():
    with pytest.raises(EditError):
        set_tunables('nvme-config-list = "a", "b";\n', MODEL,
                     {"volatile-write-cache": "on"})
    with pytest.raises(EditError):
        set_tunables('nvme-config-list = "a", "b", \n', MODEL,
                     {"volatile-write-cache": "on"})


def test_unset_name_keeps_rest():
    text = set_tunables(EXISTING, MODEL, {"volatile-write-cache": "off"})
    new = unset_tunables(text, MODEL, ["min-phys-block-size"])
    assert triplets(new)[1] == (MODEL, "", "volatile-write-cache:off")


def test_unset_last_name_removes_triplet():
    new = unset_tunables(EXISTING, MODEL, ["min-phys-block-size"])
    assert triplets(new) == [(OTHER, "", "volatile-write-cache:off")]
    assert "  # why\n" in new and new.startswith(HEAD)
    assert new.endswith("volatile-write-cache-enable=1;\n")
    assert lint_text(new) == []


def test_unset_first_triplet_keeps_its_comment():
    new = unset_tunables(EXISTING, OTHER, None)
    assert triplets(new) == [(MODEL, "", "min-phys-block-size:4096")]
    assert "# Intel: keep the cache off" in new and "# why" in new


def test_unset_last_triplet_removes_property():
    text = set_tunables(HEAD, MODEL, {"volatile-write-cache": "off"})
    assert unset_tunables(text, MODEL, None) == HEAD


def test_set_then_unset_round_trip():
    text = set_tunables(EXISTING, "WDC NEW", {"volatile-write-cache": "on"})
    assert unset_tunables(text, "WDC NEW", None) == EXISTING


def test_nothing_to_unset():
    with pytest.raises(NothingToUnset):
        unset_tunables(EXISTING, "NOPE", None)
    with pytest.raises(NothingToUnset):
        unset_tunables(EXISTING, MODEL, ["volatile-write-cache"])
    with pytest.raises(EditError):
        unset_tunables(EXISTING, MODEL, ["queue-depth"])


def test_set_gives_values_for_any_firmware():
    text = ('nvme-config-list =\n\t"%s", "FW1", "min-phys-block-size:8192",\n'
            '\t"%s", "", "volatile-write-cache:off";\n' % (MODEL, MODEL))
    new = set_tunables(text, MODEL, {"min-phys-block-size": "4096"})
    for fw in ("FW1", "OTHER"):
        assert values(new, fwrev=fw)["min-phys-block-size"] == 4096
