# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sd's rules over the files the driver.conf round-trip tests read
(tests/unit/driverconf/test_roundtrip.py): the shipped sd.conf shapes
have the sd-config-list they were built with and nothing lint warns
about, and lint never raises, whatever the text.
"""

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from sdtune.driverconf.parser import parse
from sdtune.sdconf.lint import lint
from sdtune.sdconf.model import config_list

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "fixtures", "sdconf"))
import sdconf_fixtures as fx  # noqa: E402
from tests import strategies  # noqa: E402


@pytest.mark.parametrize("name", ["nexentastor", "smartos-like"])
def test_fixture_config_list_pairs(name):
    fixture = fx.ALL[name]()
    clist = config_list(parse(fixture.text))
    assert clist.usable
    assert [(p.key, p.tunables) for p in clist.pairs] == fixture.config_list


def test_fixtures_have_no_lint_problems():
    for name, build in sorted(fx.ALL.items()):
        found = [d for d in lint(parse(build().text))
                 if d.severity in ("error", "warning")]
        assert found == [], name


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(strategies.driver_conf_text())
def test_lint_never_raises_on_any_text(text):
    conf = parse(text)
    lint(conf)
    lint(conf, "upstream")
