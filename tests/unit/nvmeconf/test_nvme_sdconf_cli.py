# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune sdconf show|set|unset` on an nvme.conf (issue 18): chosen by
the file's name or --driver nvme, keyed by the controller's model, read
by the nvme driver's rules (what nvme makes of each triplet, what it
ignores, where a malformed tuple stops the list), edits that keep every
other byte and refuse what the driver would not take.  In-process
through sdtune.cli.main, like tests/unit/sdconf/test_tool.py."""

import gc
import io
import json

import pytest

from sdtune.cli import main

MODEL = "INTEL SSDPE2KX020T8"
SHIPPED = """#
# nvme.conf as shipped: every setting commented out.
#
#min-phys-block-size=4096;
#nvme-config-list =
#\t"Example Model Name", "", "min-phys-block-size:4096";
"""


@pytest.fixture
def cli(capsys):
    def run(*argv):
        capsys.readouterr()
        out = io.StringIO()
        was = gc.isenabled()
        try:
            rc = main([str(a) for a in argv], out=out)
        finally:
            if was:
                gc.enable()
        return rc, out.getvalue(), capsys.readouterr().err
    return run


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / "nvme.conf"
    path.write_text(SHIPPED)
    return path


def test_set_writes_one_triplet_for_the_model_and_keeps_every_byte(cli,
                                                                   conf):
    rc, out, err = cli("sdconf", "set", conf, MODEL,
                       "min-phys-block-size=4096")
    assert (rc, err) == (0, "")
    assert out.endswith('+nvme-config-list =\n+\t"%s", "", '
                        '"min-phys-block-size:4096";\n' % MODEL)
    assert conf.read_text() == SHIPPED          # no --write: a diff only
    rc, out, _ = cli("sdconf", "set", conf, MODEL,
                     "min-phys-block-size=4096", "volatile-write-cache=off",
                     "--write")
    assert rc == 0 and out.endswith("%s: written\n" % conf)
    text = conf.read_text()
    assert text.startswith(SHIPPED)
    assert text[len(SHIPPED):] == (
        'nvme-config-list =\n\t"%s", "", '
        '"min-phys-block-size:4096,volatile-write-cache:off";\n' % MODEL)
    rc, out, _ = cli("sdconf", "show", conf)
    assert rc == 0
    assert "nvme-config-list at line 7, 1 triplet, used by nvme" in out
    assert "nvme: min-phys-block-size=4096 volatile-write-cache=off" in out
    rc, out, _ = cli("sdconf", "unset", conf, MODEL, "volatile-write-cache",
                     "--write")
    assert rc == 0
    assert '"%s", "", "min-phys-block-size:4096";' % MODEL in \
        conf.read_text()
    # No names: the model's triplets go, and with the last the list.
    rc, _, _ = cli("sdconf", "unset", conf, MODEL, "--write")
    assert rc == 0 and conf.read_text() == SHIPPED


def test_show_says_what_the_driver_ignores_and_where_it_stops(cli,
                                                              tmp_path):
    path = tmp_path / "other-name.conf"
    path.write_text('min-phys-block-size=4096;\nnvme-config-list =\n'
                    '\t"A", "", "min-phys-block-size:4000,bogus:1",\n'
                    '\t"B", "X,Y", "junk,volatile-write-cache:on";\n')
    rc, out, _ = cli("sdconf", "show", "--driver", "nvme", path)
    assert rc == 0
    assert "min-phys-block-size=4096 (file)" in out
    assert "2 triplets, used by nvme" in out
    assert "ignored: min-phys-block-size:4000 (not a power of 2: reset " \
        "to 512)" in out
    assert "ignored: bogus:1 (unknown config: ignored)" in out
    assert "ignored: junk (no ':')" in out
    assert "the driver stops reading the list here" in out
    rc, out, _ = cli("sdconf", "show", "--driver", "nvme", "-o", "json",
                     path)
    doc = json.loads(out)
    assert doc["driver"] == "nvme"
    assert [t["model"] for t in doc["triplets"]] == ["A", "B"]
    assert doc["triplets"][1]["firmware"] == ["X", "Y"]
    assert doc["triplets"][1]["stops_the_list"] is True
    assert doc["globals"]["min-phys-block-size"] == {
        "value": 4096, "source": "file", "problem": None}


def test_show_lists_every_property_the_file_sets(cli, tmp_path):
    """Issue 27: a real nvme.conf's strict-version=0 was left out of
    show, although sdtune(8) says show prints the driver-wide settings.
    Every property is shown, with what the driver does with it."""
    path = tmp_path / "nvme.conf"
    path.write_text('strict-version=0;\nio-queue-len=1024;\n'
                    'ddi-forceattach=1;\nmy-own="x";\n'
                    'volatile-write-cache-enable=0;\n')
    rc, out, _ = cli("sdconf", "show", path)
    assert rc == 0
    assert "line 1: strict-version=0: read by nvme; sdtune does not " \
        "evaluate it" in out
    assert "line 2: io-queue-len=1024: read by nvme (before 2019 only)" \
        in out
    assert "line 3: ddi-forceattach=1: read by the DDI framework" in out
    assert 'line 4: my-own="x": ignored: nvme reads no property' in out
    assert "volatile-write-cache-enable=off (file)" in out
    assert "line 5" not in out          # modelled: in the settings line
    rc, out, _ = cli("sdconf", "show", "-o", "json", path)
    other = json.loads(out)["other"]
    assert [(o["name"], o["line"], o["value"]) for o in other] == [
        ("strict-version", 1, ["0"]), ("io-queue-len", 2, ["1024"]),
        ("ddi-forceattach", 3, ["1"]), ("my-own", 4, ['"x"'])]


@pytest.mark.parametrize("argv,rc,why", [
    (("set", MODEL, "min-phys-block-size=4000"), 3,
     "min-phys-block-size:4000: the value must be a power of 2"),
    (("set", MODEL, "queue-depth=8"), 3, "queue-depth"),
    (("set", "--vid", "ATA", "--pid", "X", "min-phys-block-size=4096"), 2,
     "--vid and --pid are sd's INQUIRY ids"),
    (("unset", "NOPE"), 1, 'nothing to unset: no triplet for model "NOPE"'),
])
def test_refusals_change_nothing(cli, conf, argv, rc, why):
    got, out, err = cli("sdconf", argv[0], conf, *argv[1:], "--write")
    assert got == rc, err
    assert err.startswith("sdtune: cannot ") and why in err, err
    assert "Traceback" not in err
    assert conf.read_text() == SHIPPED
