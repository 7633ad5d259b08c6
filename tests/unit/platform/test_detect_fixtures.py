# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Release detection against what each platform really prints (issue
27): the /etc/release and `uname -v` of real systems, one fixture per
platform and release (tests/fixtures/platform/, README.md there names
each source), through the pure identify(); test_detect_host.py runs
detect() on a host whose uname prints them.
"""

import pytest

from sdtune.platform.detect import (PlatformInfo, identify,
                                    parse_uname_version, sd_flavour)
from tests.sim.platform import release_fixture


# fixture, platform, the distribution's release, the source that decides
CASES = [
    ("nexentastor-3.1.6", "nexentastor", "3.1.6", "uname -v"),
    ("nexentastor-4.0.3-FP2", "nexentastor", "4.0.3-FP2", "uname -v"),
    ("nexentastor-4-observium", "nexentastor", "4", "uname -v"),
    ("nexentastor-5.3-inferred", "nexentastor", "5.3.0.20", "uname -v"),
    ("nexentacore-illumian", "illumos", "", ""),
    ("omnios-r151012", "omnios", "r151012", "uname -v"),
    ("omnios-r151020-ec2", "omnios", "r151020", "uname -v"),
    ("omnios-r151026", "omnios", "r151026", "uname -v"),
    ("openindiana-oi_151a9", "openindiana", "oi_151.1.9", "uname -v"),
    ("openindiana-hipster-2020.04", "openindiana", "2020.04",
     "/etc/release"),
    ("smartos-20120130T201844Z", "smartos", "20120130T201844Z",
     "uname -v"),
    ("smartos-20160330T234717Z", "smartos", "20160330T234717Z",
     "uname -v"),
    ("tribblix-m20.6", "illumos", "", ""),
]


@pytest.mark.parametrize("name, platform, version, by", CASES,
                         ids=[c[0] for c in CASES])
def test_each_release_models_its_kernels_sd_rules(name, platform, version,
                                                  by):
    """[sdconf] flavour = auto: illumos-gate's sd.conf rules on the
    distributions built from it, NexentaStor's own there and where the
    distribution is not known."""
    got = identify(release_fixture(name, "release"),
                   release_fixture(name, "uname-v"))
    assert sd_flavour(PlatformInfo(got.name, "")) == (
        "nexenta" if platform in ("nexentastor", "illumos") else "upstream")


@pytest.mark.parametrize("name, platform, version, by", CASES,
                         ids=[c[0] for c in CASES])
def test_each_release_is_detected_by_what_it_prints(name, platform,
                                                    version, by):
    got = identify(release_fixture(name, "release"),
                   release_fixture(name, "uname-v"))
    assert (got.name, got.version, got.by) == (platform, version, by)
    assert got.notes == ()


@pytest.mark.parametrize("name", ["nexentastor-3.1.6",
                                  "nexentastor-4.0.3-FP2"])
def test_nexentastor_3_and_4_by_their_release_file_alone(name):
    """uname failed or printed a plain illumos string: "Open Storage
    Appliance" on line 1 is NexentaStor all the same."""
    release = release_fixture(name, "release")
    for uname in (None, "illumos-c3e16711de\n"):
        got = identify(release, uname)
        assert got.name == "nexentastor", uname
        assert got.by == "/etc/release"
        assert got.version == name.split("-", 1)[1]


@pytest.mark.parametrize("uname", ["NexentaOS_134f\n",
                                   "NexentaOS_4:cd604cd066\n"])
def test_nexentacore_and_illumian_are_not_nexentastor(uname):
    """NexentaCore 3 ran NexentaStor 3's b134 kernel and illumian was
    NexentaStor 4's base: a release file that names them decides."""
    release = release_fixture("nexentacore-illumian", "release")
    assert identify(release, uname).name == "illumos"
    assert identify("  illumian 1.0\n", uname).name == "illumos"


def test_uname_decides_a_disagreement_and_says_so():
    got = identify(release_fixture("openindiana-oi_151a9", "release"),
                   "NexentaOS_134f\n")
    assert got.name == "nexentastor"
    assert got.notes == ("uname -v says nexentastor, /etc/release says "
                         "openindiana: uname -v decides",)


@pytest.mark.parametrize("text", [
    "", "\n", "illumos-c3e16711de", "tribblix-m34", "NexentaOS_20081207",
    "NexentaOS_4:xyz!", "joyent_2016", "omnios-", "Generic_147148-26",
    "NexentaStor_", "x" * 100000, "\x00\udcff\n\n",
])
def test_uname_strings_that_name_no_distribution(text):
    assert parse_uname_version(text) == (None, "")


def test_garbage_never_raises():
    for release in (None, "", "\x00" * 300, "Open Storage Appliance",
                    "NexentaStor\n" * 3, "\udcff" * 9):
        for uname in (None, "", "NexentaStor_5.", "joyent_\n\n",
                      "\x1b[2J"):
            got = identify(release, uname)
            assert got.name in ("nexentastor", "illumos")
