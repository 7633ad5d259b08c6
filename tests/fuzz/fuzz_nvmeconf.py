# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fuzz the nvme.conf engine: every input parses, renders back byte for
byte, lints with in-range offsets, evaluates without a crash, and edits
either succeed (and then give the asked values) or are refused with an
EditError.  Never another exception.

Modelled on fuzz_sdconf.py; run with a small count by the test suite.
Usage:

    python3 tests/fuzz/fuzz_nvmeconf.py [COUNT] [--seed N] [--jobs N]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "plugin"))
sys.path.insert(0, HERE)

import edit_runs  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa
from hypothesis import strategies as st  # noqa: E402

from sdtune.driverconf.checks import format_diagnostic  # noqa: E402
from sdtune.driverconf.edit import EditError  # noqa: E402
from sdtune.driverconf.parser import parse  # noqa: E402
from sdtune.nvmeconf.edit import set_tunables  # noqa: E402
from sdtune.nvmeconf.edit import unset_tunables  # noqa: E402
from sdtune.nvmeconf.lint import lint  # noqa: E402
from sdtune.nvmeconf.model import (best_block_size, evaluate,  # noqa: E402
                                   globals_of)

SEED_FILE = (
    "#\n# nvme.conf\n#\n"
    "strict-version=1;\n"
    "min-phys-block-size=512;\n"
    "nvme-config-list =\n"
    "\t# a comment inside the list\n"
    '\t"Samsung SSD 970 EVO 1TB", "", "min-phys-block-size:4096",\n'
    '\t"INTEL SSDPE2KX010T8", "VDV10131,VDV10170", '
    '"volatile-write-cache:off,ignore-unknown-vendor-status:on";\n'
    "volatile-write-cache-enable=1;\n"
)

ALPHABET = st.sampled_from(list(
    'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
    '"\\#=,;:-_~*&|/ \t\n\r\f\x00\x93\x94\xe2\x80\x9c\xff'))
TOKENS = st.sampled_from([
    "nvme-config-list", "=", ",", ";", '"Samsung SSD 970 EVO 1TB"', '""',
    '"2B2QEXE7"', '"A,,B"', '"volatile-write-cache:off"',
    '"min-phys-block-size:4096"', '"min-phys-block-size:0x1000k"',
    '"ignore-unknown-vendor-status:on,bad,x:1"', '":on"', '" "',
    "min-phys-block-size", "volatile-write-cache-enable", "0x10", "010",
    "089", "-5", "# c\n", "\n", " ", "\t", '"\\0"', '"unterminated\n',
    "name", '"nvme"', "parent", ':', '"' + "x" * 1030 + '"'])


INPUTS = edit_runs.inputs(SEED_FILE, ALPHABET, TOKENS)
MODELS = st.sampled_from(["Samsung SSD 970 EVO 1TB", "INTEL SSDPE2KX010T8",
                          "NEW MODEL", "x"])
SETTINGS = st.dictionaries(
    st.sampled_from(["min-phys-block-size", "volatile-write-cache",
                     "ignore-unknown-vendor-status"]),
    st.sampled_from(["on", "off", "4096", "512", "1000", "yes"]),
    min_size=1, max_size=3)
FORMATS = st.lists(st.tuples(st.sampled_from([0, 512, 4096, 8192]),
                             st.sampled_from([0, 8]), st.integers(0, 3)),
                   min_size=1, max_size=4)

_EXPECTED = {"on": True, "off": False}


class Counts:
    inputs = 0
    located = 0
    edits_done = 0
    edits_refused = 0


def check_one(text: str, model: str, settings_: dict, formats) -> None:
    conf = parse(text)
    assert conf.render() == text, "render differs"
    diags = lint(conf)
    for d in diags:
        assert 0 <= d.offset <= len(text), d
        line = format_diagnostic(conf, "f", d)
        assert line.startswith("f:") and ": " in line, line
    if any(d.severity == "error" for d in diags):
        Counts.located += 1
    for fwrev in ("2B2QEXE7", "VDV10131", ""):
        ev = evaluate(conf, model, fwrev)
        assert ev.min_phys_block_size >= 0
        best_block_size(formats, formats[0][0] or 512,
                        ev.min_phys_block_size)
    globals_of(conf)
    try:
        new = set_tunables(text, model, settings_)
    except EditError:
        Counts.edits_refused += 1
    else:
        Counts.edits_done += 1
        after = parse(new)
        for fwrev in ("2B2QEXE7", "VDV10131", "?"):
            got = evaluate(after, model, fwrev).values()
            for name, value in settings_.items():
                want = _EXPECTED.get(value, int(value) if value.isdigit()
                                     else None)
                assert got[name] == want, (name, value, got)
        try:
            unset_tunables(new, model, list(settings_))
        except EditError:
            pass
    Counts.inputs += 1


def run(count: int, seed_value: int) -> dict:
    @seed(seed_value)
    @settings(max_examples=count, deadline=None, database=None,
              phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(INPUTS, MODELS, SETTINGS, FORMATS)
    def fuzz(text, model, settings_, formats):
        check_one(text, model, settings_, formats)

    fuzz()
    return {"inputs": Counts.inputs, "located": Counts.located,
            "edits_done": Counts.edits_done,
            "edits_refused": Counts.edits_refused}


def _worker(args):
    return run(*args)


def main() -> int:
    return edit_runs.main("nvmeconf", _worker)


if __name__ == "__main__":
    sys.exit(main())
