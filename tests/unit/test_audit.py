# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune.audit without an appliance: what render says of the findings
and of the sources it could not read.  `sdtune audit` on the simulated
appliances is tests/e2e/test_audit_cli.py."""


def test_render_gives_the_all_clear_only_when_every_source_was_read():
    from sdtune.audit import Unreadable, render
    from sdtune.findings import make
    info = make("SDT-3001", '"X"', pair=1, key="X", line=3)
    zdb = Unreadable("zdb -C", "cannot open /dev/zfs")
    assert render([info], True) == "no problems found\n"
    assert render([], False) == "no findings\n"
    assert render([info], True, [zdb]) == \
        "audit incomplete: could not read zdb -C\n"
    text = render([info], False, [zdb])
    assert text.startswith("SDT-3001") and \
        text.endswith("audit incomplete: could not read zdb -C\n")
    assert "vdev checks" in zdb.to_json()["effect"]
