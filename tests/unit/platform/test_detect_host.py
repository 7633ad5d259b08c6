# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""detect() through the host on what each platform really prints
(issue 27): a root holding the fixture's /etc/release and an
allow-listed uname printing its `uname -v` (tests/fixtures/platform).
"""

import pytest

from sdtune.host import RealHost
from sdtune.platform.detect import detect
from tests.sim.platform import release_fixture

# fixture, platform, the distribution's release (SmartOS also runs
# bootparams: tests/e2e/test_platforms.py has it end to end)
CASES = [
    ("nexentastor-3.1.6", "nexentastor", "3.1.6"),
    ("nexentastor-4.0.3-FP2", "nexentastor", "4.0.3-FP2"),
    ("nexentastor-4-observium", "nexentastor", "4"),
    ("nexentastor-5.3-inferred", "nexentastor", "5.3.0.20"),
    ("nexentacore-illumian", "illumos", ""),
    ("omnios-r151012", "omnios", "r151012"),
    ("omnios-r151020-ec2", "omnios", "r151020"),
    ("omnios-r151026", "omnios", "r151026"),
    ("openindiana-oi_151a9", "openindiana", "oi_151.1.9"),
    ("openindiana-hipster-2020.04", "openindiana", "2020.04"),
    ("tribblix-m20.6", "illumos", ""),
]


def _host(tmp_path, name, fail_uname=False):
    """A root holding the fixture's /etc/release and a uname that prints
    its `uname -v` (and i86pc for -i), as the appliance's would."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    release = release_fixture(name, "release")
    if release is not None:
        (root / "etc" / "release").write_text(release)
    uname_v = release_fixture(name, "uname-v")
    version = tmp_path / "uname-v"
    version.write_text(uname_v or "")
    script = tmp_path / "uname"
    script.write_text(
        "#!/bin/sh\n"
        "case \"$1\" in\n"
        "-i) echo i86pc ;;\n"
        "-v) %s ;;\n"
        "*) echo SunOS ;;\n"
        "esac\n" % ("echo 'uname: cannot get version' >&2; exit 1"
                    if fail_uname or uname_v is None
                    else "cat '%s'" % version))
    script.chmod(0o755)
    return RealHost(str(root), {"uname": str(script)})


@pytest.mark.parametrize("name, platform, version", CASES,
                         ids=[c[0] for c in CASES])
def test_detect_reads_both_through_the_host(tmp_path, name, platform,
                                            version):
    info = detect(_host(tmp_path, name))
    assert (info.name, info.version) == (platform, version)
    assert info.machine == "i86pc"
    doc = info.to_json()
    assert doc["name"] == platform and doc["version"] == version
    assert doc["kernel"] == (release_fixture(name, "uname-v") or "").strip()
    first = (release_fixture(name, "release") or "").strip().splitlines()
    assert info.release == (first[0].strip() if first else "")


def test_detect_without_uname_v_keeps_the_release_answer(tmp_path):
    info = detect(_host(tmp_path, "nexentastor-3.1.6", fail_uname=True))
    assert (info.name, info.version, info.kernel) == \
        ("nexentastor", "3.1.6", "")
    assert any(n.startswith("uname -v failed") for n in info.notes)


def test_detect_without_either_is_unknown_illumos(tmp_path):
    info = detect(_host(tmp_path, "nexentastor-5.3-inferred",
                        fail_uname=True))
    assert info.name == "illumos"
    assert info.notes[0] == "no /etc/release"
    assert info.notes[-1].startswith("uname -v failed")
    assert info.notes[-1].endswith(": an unknown illumos distribution")
