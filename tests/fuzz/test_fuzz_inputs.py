# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The fuzz harness of every importer and parser (tests/fuzz/fuzz_inputs.py,
`make fuzz`): a short run of each target finds nothing and reaches both
results and refusals, and its checker does fail on a crash, Python's
words in a message, a message not in sdtune's form, one that echoes the
input whole, a hang, and NaN in --json output."""

import json
import os
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuzz_inputs  # noqa: E402
from sdtune.errors import ParseError, SdtuneError  # noqa: E402

SEED = 20240611
INPUTS = 300
# Targets that answer every input: they never refuse (any text is some
# format, some runs, some platform).
NEVER_REFUSE = {"detect_format", "classify", "identify_platform"}


@pytest.mark.parametrize("name", [t.name for t in fuzz_inputs.TARGETS])
def test_short_run_of_each_target_finds_nothing(name):
    outcome = fuzz_inputs.run(name, INPUTS, SEED)
    found = ["%s: %s" % (sig, item["failure"]["detail"][:200])
             for sig, item in outcome.distinct.items()]
    assert outcome.failures == 0, found
    assert outcome.inputs == INPUTS
    assert outcome.results + outcome.refusals == INPUTS
    # Inputs that are all refused (or all read) test too little.
    assert outcome.results > 0
    if name not in NEVER_REFUSE:
        assert outcome.refusals > 0


def test_new_zdb_targets_are_fed_label_dumps():
    seeds = fuzz_inputs._formats()["zdb"].seeds
    assert any("LABEL 0" in text for text in seeds)
    assert len(fuzz_inputs.parse_zdb_label(fuzz_inputs.ZDB_LABELS)) == 3


def _target(call, fmt="zdb"):
    return fuzz_inputs.Target("probe", call, fmt)


def _fails(call, value="ashift: 9\n"):
    verdict, failure = fuzz_inputs.check(_target(call), value)
    assert verdict == "failure"
    return failure


def test_checker_fails_a_crash():
    def crash(text):
        raise ValueError("Exceeds the limit (4300 digits)")
    failure = _fails(crash)
    assert failure["kind"] == "ValueError"
    assert "Exceeds the limit" in failure["detail"]
    assert "test_fuzz_inputs.py" in failure["where"]


def test_checker_fails_python_words_in_a_message():
    def leak(text):
        raise ParseError("zdb", "ashift", "invalid literal for int() with "
                         "base 10: 'x'")
    failure = _fails(leak)
    assert failure["kind"] == "message holds Python text 'invalid literal'"
    # The same words taken from the input are a quote, not a leak.
    verdict, _ = fuzz_inputs.check(_target(leak), "invalid literal")
    assert verdict == "refusal"


def test_checker_fails_a_message_not_starting_with_cannot():
    class Odd(SdtuneError):
        def __str__(self):
            return "zdb: bad ashift"

    def odd(text):
        raise Odd("parse", "zdb", "bad ashift")
    assert _fails(odd)["kind"] == "message does not start with 'cannot '"


def test_checker_fails_a_message_that_echoes_the_input_whole():
    def echo(text):
        raise ParseError("zdb", "ashift", "not a number: %s" % text)
    failure = _fails(echo, "9" * 5000)
    assert failure["kind"].startswith("message longer than")
    # Cut short, the same value is a refusal.
    verdict, _ = fuzz_inputs.check(_target(echo), "9" * 40)
    assert verdict == "refusal"


def test_checker_fails_a_hang():
    verdict, failure = fuzz_inputs.check(
        _target(lambda text: time.sleep(5)), "ashift: 9\n", hang_s=0.2)
    assert verdict == "failure" and failure["kind"] == "no answer in 0.2 s"


def test_checker_fails_nan_in_json_output():
    def infer(path, fmt, text, out, as_json, trust_timing):
        out.write(json.dumps({"iops": float("nan")}))
        return 0
    real = fuzz_inputs.BY_NAME["cmd_infer"]
    target = fuzz_inputs.Target("cmd_infer", fuzz_inputs.infer_call(infer),
                                real.fmt, real.text_of, real.with_text)
    verdict, failure = fuzz_inputs.check(target, ("x", None, True, False))
    assert verdict == "failure" and failure["kind"] == "bad result"
    assert "NaN" in failure["detail"]
    # The same output as text (not --json) is no failure.
    assert fuzz_inputs.check(target, ("x", None, False, False))[0] == \
        "result"


def test_a_failing_target_fails_the_run_and_its_report():
    def crash(text):
        raise ValueError("boom")
    probe = _target(crash)
    outcome = fuzz_inputs.run(probe, 20, SEED)
    assert outcome.inputs == 20 and outcome.failures == 20
    (sig,) = outcome.distinct
    assert sig.startswith("ValueError at ")
    lines = fuzz_inputs.report({"probe": outcome}, {}, {"probe": probe})
    assert lines[0].startswith("FAIL probe: ValueError at ")
    assert "  says: boom" in lines
