# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune.trace.scripts: the record table against the D scripts of
dtrace/ and the command line, and the scripts themselves."""

import argparse
import os

import pytest

from sdtune.cli import build_parser
from sdtune.errors import UsageError
from sdtune.trace.run import script_path
from sdtune.trace.scripts import SCRIPTS, find_script

DTRACE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                          "dtrace")


# -- the record table ---------------------------------------------------------

def test_one_record_per_script_the_command_line_accepts():
    """`sdtune trace NAME` takes the table's names, in the table's order
    (the order of the usage message for an unknown name)."""
    sub = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    script_arg = next(a for a in sub.choices["trace"]._actions
                      if a.dest == "script")
    assert tuple(script_arg.choices) == tuple(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_record_names_its_file_command_and_columns(name):
    script = SCRIPTS[name]
    assert script.name == name
    assert script.file == "sdtune-%s.d" % name
    assert script.command == "dtrace -s sdtune-%s.d" % name
    headers = [header for header, _ in script.columns]
    assert headers[0] == "DEVICE"
    assert len(set(headers)) == len(headers)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_summariser_reads_only_the_sections_of_its_record(name):
    """Given the record's sections and no other, each as printed by an
    aggregation that never fired, the summariser finds no device."""
    script = SCRIPTS[name]
    sections = {agg: "\n" for agg in script.sections}
    assert script.summarise(sections, script.command) == []


def test_find_script():
    assert find_script("qdepth") is SCRIPTS["qdepth"]
    with pytest.raises(UsageError) as e:
        find_script("iopattern")
    assert str(e.value) == ("cannot trace 'iopattern': unknown script: "
                            "expected iosize, align, flush, qdepth")
    assert e.value.exit_code == 2


# -- the D scripts ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_scripts_exist_with_pragma_usage_and_markers(name):
    path = os.path.join(DTRACE_DIR, SCRIPTS[name].file)
    assert os.path.samefile(script_path(name), path)
    with open(path) as f:
        text = f.read()
    assert text.startswith("#!/usr/sbin/dtrace -s\n/*\n")
    header = text[:text.index("*/")]
    assert "Usage" in header
    assert "dtrace -s %s [DEVNAME [SECONDS]]" % SCRIPTS[name].file \
        in header
    assert "Probes" in header
    assert "#pragma D option quiet\n" in text
    assert "#pragma D option defaultargs\n" in text
    # The device filter, the time limit and nothing but tick-1sec.
    assert '$$1 == ""' in text and "$2 > 0" in text
    assert "exit(0);" in text
    body = text[text.index("*/"):]
    ticks = [w for w in body.split() if "tick-" in w]
    assert set(ticks) == {"profile:::tick-1sec"}
    # Every aggregation the parser expects is printed after its marker.
    end = text[text.index("\nEND\n"):]
    for agg in SCRIPTS[name].sections:
        assert 'printf("sdtune-agg %s\\n");\n\tprinta(@%s);' % (agg, agg) \
            in end
    assert 'printf("sdtune-end %d\\n", timestamp - sdtune_start);' in end
    # D has no // comments without the C preprocessor.
    assert not any(line.lstrip().startswith("//")
                   for line in text.splitlines())


def test_scripts_use_stable_io_provider_and_fbt_only_for_flush():
    for name, script in SCRIPTS.items():
        with open(os.path.join(DTRACE_DIR, script.file)) as f:
            body = f.read().split("*/", 1)[1]
        if name == "flush":
            assert "fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry" in body
            assert "fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE_biodone:entry" \
                in body
            assert "io:::" not in body
        else:
            assert "io:::start" in body and "fbt" not in body
