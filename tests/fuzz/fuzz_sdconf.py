# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fuzz the sd.conf engine: every input parses, renders back byte for byte,
lints with located messages, and edits either succeed exactly or are
refused with an EditError.  Never a crash.

Run by `make fuzz` (100,000 inputs by default, split over the CPUs) and,
with a small count, by the test suite.  Usage:

    python3 tests/fuzz/fuzz_sdconf.py [COUNT] [--seed N]

Inputs come from hypothesis: raw text over an alphabet dense in
driver.conf syntax, mutated copies of realistic files, and token soups.
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
from sdtune.sdconf.edit import Setting, set_tunables  # noqa: E402
from sdtune.sdconf.edit import unset_tunables  # noqa: E402
from sdtune.sdconf.lint import lint  # noqa: E402
from sdtune.sdconf.match import Identity  # noqa: E402
from sdtune.sdconf.model import config_list, evaluate  # noqa: E402

SEED_FILE = (
    "#\n# sd.conf\n#\n"
    'name="sd" class="scsi" target=0 lun=0;\n'
    'name="sd" class="scsi-self-identifying";\n'
    "ddi-forceattach=1;\n"
    "sd-config-list=\n"
    "\t# a comment inside the list\n"
    '\t"VMware  Virtual disk", "io-time:180,slow-io-threshold:0",\n'
    '\t"ATA     INTEL SSDSC2BA40", "physical-block-size:4096, '
    'cache-nonvolatile:true",\n'
    '\t"HGST    HUS724040ALS640 ", "throttle-min:2, throttle-max:16";\n'
    'legacy-data = 1, 0x40000, 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1;\n'
)

ALPHABET = st.sampled_from(list(
    'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
    '"\\#=,;:-_~*&|/ \t\n\r\f\x00\x93\x94\xe2\x80\x9c\xff'))
TOKENS = st.sampled_from([
    "name", "=", '"sd"', "class", '"scsi"', "sd-config-list", ",", ";",
    '"ATA     INTEL SSDSC2BA40"', '"physical-block-size:4096"',
    '"throttle-max:4"', '"cache-nonvolatile:true, disksort:false"',
    "0x10", "010", "089", "-5", "~1", "# c\n", "\n", " ", "\t", '"\\101"',
    '"unterminated\n', "\f", "parent", "target", "=", "0X1", "\\",
    '"' + "x" * 1030 + '"', ':', "*"])


INPUTS = edit_runs.inputs(SEED_FILE, ALPHABET, TOKENS)
KEYS = st.sampled_from(["ATA     INTEL SSDSC2BA40", "ATA     NEW MODEL X     ",
                        "VMware  Virtual disk", "HGST    HUS724040ALS640 "])
SETTINGS = st.lists(st.sampled_from([
    Setting("physical-block-size", "4096"), Setting("cache-nonvolatile",
                                                    "true"),
    Setting("throttle-max", "4"), Setting("throttle-min", "2"),
    Setting("throttle-max", "64"), Setting("disksort", "false")]),
    min_size=1, max_size=3)


class Counts:
    inputs = 0
    located = 0
    edits_done = 0
    edits_refused = 0


def check_one(text: str, key: str, settings_: list) -> None:
    conf = parse(text)
    assert conf.render() == text, "render differs"
    diags = lint(conf)
    for d in diags:
        assert 0 <= d.offset <= len(text), d
        line = format_diagnostic(conf, "f", d)
        assert line.startswith("f:") and ": " in line, line
    if any(d.severity == "error" for d in diags):
        Counts.located += 1
    # The first statement-dropping error must come with a message.
    for stmt in conf.statements:
        if stmt.kind == "dropped":
            assert any(stmt.start <= d.offset <= stmt.end
                       for d in conf.diagnostics), "silent drop"
    try:
        new = set_tunables(text, key, settings_)
    except EditError:
        Counts.edits_refused += 1
    else:
        Counts.edits_done += 1
        after = parse(new)
        vid, pid = key[:8], key[8:].ljust(16)[:16]
        ev = evaluate(after, Identity(vid, pid))
        assert config_list(after).usable and ev.matched, "edit lost"
        try:
            unset_tunables(new, key, [s.name for s in settings_])
        except EditError:
            pass
    Counts.inputs += 1


def run(count: int, seed_value: int) -> dict:
    @seed(seed_value)
    @settings(max_examples=count, deadline=None, database=None,
              phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(INPUTS, KEYS, SETTINGS)
    def fuzz(text, key, settings_):
        check_one(text, key, settings_)

    fuzz()
    return {"inputs": Counts.inputs, "located": Counts.located,
            "edits_done": Counts.edits_done,
            "edits_refused": Counts.edits_refused}


def _worker(args):
    return run(*args)


def main() -> int:
    return edit_runs.main("sdconf", _worker)


if __name__ == "__main__":
    sys.exit(main())
