# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The known-drives table: the data-at-rest cache kind, the rows of
platforms.md part 4 and that conf/derive_known_drives.py reproduces the
shipped table from its sources."""

import os
import subprocess
import sys

import pytest

from sdtune.errors import SdtuneError
from sdtune.knowndrives import lookup, parse_table
from sdtune.sdconf.match import Identity

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHIPPED = os.path.join(REPO, "conf", "known-drives.tsv")
# The table the shipped one is derived from (provenance in its README).
COLLECTED = os.path.join(REPO, "tests", "fixtures", "knowndrives",
                         "collected.tsv")
HEAD = ("match\tpattern\tphysical_block_bytes\tnonvolatile_cache\tvendor\t"
        "source\n")


def shipped():
    with open(SHIPPED, encoding="utf-8") as f:
        return parse_table(f.read(), SHIPPED)


def rows_for(model, table=None):
    key = "ATA     " + model[:16].ljust(16)
    return lookup(table or shipped(), Identity.of_key(key), model)


def test_data_at_rest_is_a_volatile_cache_of_its_own_kind():
    (row,) = parse_table(HEAD + "ata-glob\tX*\t-\tdata-at-rest\tV\tS\n")
    assert row.data_at_rest is True and row.nonvolatile is False
    (yes, no, unknown) = parse_table(
        HEAD + "ata-glob\tX*\t-\tyes\tV\tS\n" + "ata-glob\tX*\t-\tno\tV\tS\n"
        + "ata-glob\tX*\t4096\t-\tV\tS\n")
    assert (yes.nonvolatile, yes.data_at_rest) == (True, False)
    assert (no.nonvolatile, no.data_at_rest) == (False, False)
    assert (unknown.nonvolatile, unknown.data_at_rest) == (None, False)


@pytest.mark.parametrize("glob, model, hit", [
    ("SAMSUNG MZ7*", "SAMSUNG MZ7LM480HCHP", True),
    ("SAMSUNG MZ7*", "SAMSUNG MZ6LM480", False),
    ("*MZ7LM*", "SAMSUNG MZ7LM480HCHP", True),      # wildcard first
    ("[ST]AMSUNG MZ7?M*", "SAMSUNG MZ7LM480", True),
    ("[ST]AMSUNG MZ7?M*", "XAMSUNG MZ7LM480", False),
    ("Micron_5100_*", "micron_5100_MTFD", False),    # case matters
    ("INTEL SSDSC2BA400G3", "INTEL SSDSC2BA400G3", True),   # no wildcard
    ("INTEL SSDSC2BA400G3", "INTEL SSDSC2BA400G", False),
])
def test_glob_rows_match_as_fnmatch_does(glob, model, hit):
    """A glob row is tried on its literal prefix first (the speed-up):
    the answer is still fnmatchcase's."""
    (row,) = parse_table(HEAD + "ata-glob\t%s\t4096\t-\tV\tS\n" % glob)
    assert bool(rows_for(model, [row])) == hit


def test_bad_cache_value_names_the_line_and_the_choices():
    with pytest.raises(SdtuneError) as e:
        parse_table(HEAD + "ata-glob\tX*\t-\tplp\tV\tS\n", "t.tsv")
    assert str(e.value) == ("cannot read 't.tsv': line 2: "
                            "nonvolatile_cache 'plp': must be yes, no, "
                            "data-at-rest or -")


@pytest.mark.parametrize("model", [
    "Crucial_CT525MX300SSD1", "CT525MX300SSD1", "CT500MX500SSD1",
    "CT2000MX500SSD4", "Crucial_CT256M550SSD1", "M550-MTFDDAK256MAY-1AH1"])
def test_crucial_families_are_protected_at_rest_only(model):
    rows = rows_for(model)
    assert any(r.data_at_rest for r in rows), model
    assert not any(r.nonvolatile for r in rows), model
    # The source says why and names the conflict with OpenZFS' list
    # where the vendor document is a datasheet.
    src = " ".join(r.source for r in rows if r.data_at_rest)
    assert "data" in src and "at rest" in src.replace("-", " ")


def test_mx300_row_names_the_conflict_with_openzfs():
    (row,) = [r for r in rows_for("Crucial_CT525MX300SSD1")
              if r.data_at_rest]
    assert "OpenZFS" in row.source and "https://" in row.source


def test_mx500_matches_by_key_alone():
    """Its whole model fits in the 16-byte product id: a pair for an
    absent MX500 is still recognised."""
    rows = lookup(shipped(), Identity.of_key("ATA     CT500MX500SSD1  "),
                  None)
    assert any(r.data_at_rest for r in rows)


def test_intel_g7_has_plp_and_g8_does_not_inherit_it():
    assert any(r.nonvolatile for r in rows_for("INTEL SSDSC2KB480G7"))
    assert any(r.nonvolatile for r in rows_for("INTEL SSDSC2KG960G7"))
    assert not any(r.nonvolatile for r in rows_for("INTEL SSDSC2KB480G8"))
    # Same key, so nothing is said of the key alone.
    key_rows = lookup(shipped(), Identity.of_key("ATA     INTEL SSDSC2KB48"),
                      None)
    assert not any(r.nonvolatile for r in key_rows)


@pytest.mark.parametrize("model", ["CT240BX500SSD1",
                                   "KINGSTON SA400S37120G"])
def test_consumer_drives_without_plp_claim_are_volatile(model):
    rows = rows_for(model)
    assert rows and all(r.nonvolatile is False for r in rows
                        if r.nonvolatile is not None)
    assert not any(r.data_at_rest for r in rows)


def test_kingston_e100_gains_plp_and_keeps_its_sector():
    rows = rows_for("KINGSTON SE100S3100G")
    assert any(r.nonvolatile and r.physical_block == 4096 for r in rows)
    assert any("tantalum" in r.source for r in rows)


def test_hyperx_under_report_is_in_the_source():
    (row,) = [r for r in rows_for("KINGSTON SH103S3120G")
              if r.match == "inquiry"]
    assert row.physical_block == 8192 and "pastebin" in row.source


def test_derive_reproduces_the_shipped_table():
    out = subprocess.run([sys.executable, os.path.join(REPO, "conf",
                                                       "derive_known_"
                                                       "drives.py"),
                          COLLECTED], capture_output=True, check=True)
    with open(SHIPPED, "rb") as f:
        assert out.stdout == f.read()
