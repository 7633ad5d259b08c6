# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Adversarial regressions for the offline `sdtune sdconf` tools and the
scripted (-H) tables: findings U5, D8, W10, F8 and the `disks -H` half
of F11.

The end-to-end tests run bin/sdtune by path on files in a scratch
directory (the sdconf tools are offline) or on a simulated appliance.
A few unit-level tests call the product directly where the behaviour is
an API: `sdconf set`'s override flag and its `commit` hook, and the table
renderer.
"""

import io
import json
import os
import sys

from tests.adversarial.support import REPO, build, no_traceback, run
from tests.sim.appliance import Appliance
from tests.sim.testing import HGST_6F8D, INTEL, facts_host

PLUGIN = os.path.join(REPO, "plugin")
if PLUGIN not in sys.path:
    sys.path.insert(0, PLUGIN)

KEY = "ATA     INTEL SSDSC2BA40"
VMWARE = "VMware  Virtual disk"
COMMENT = "\t# virtual disks: longer timeout, no slow-io detector\n"
U1 = ('name="sd" class="scsi" target=0 lun=0;\n'
      "sd-config-list =\n" + COMMENT +
      '\t"%s", "slow-io-threshold:0";\n' % VMWARE)
WITH_INTEL = ('name="sd" class="scsi" target=0 lun=0;\n'
              "sd-config-list =\n"
              '\t"%s", "throttle-max:032, throttle-min:08";\n' % KEY)


def conf_file(tmp_path, text: str, name: str = "sd.conf") -> str:
    path = str(tmp_path / name)
    with open(path, "w", encoding="latin-1") as f:
        f.write(text)
    return path


def content(path: str) -> str:
    with open(path, encoding="latin-1") as f:
        return f.read()


# -- U5: keys that are not vendor (8) + product (16) --------------------------

def test_U5_set_with_vendor_only_key_is_refused(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, U1)
    proc = run(app, "sdconf", "set", path, "ATA", "disksort=false",
               "--write")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("sdtune: cannot set tunables in '%s': "
                                  % path), proc.stderr
    # What the key would match, and how to write the right one.
    assert "every SATA disk" in proc.stderr
    assert "24-character key" in proc.stderr
    assert "--vid and --pid" in proc.stderr
    assert content(path) == U1
    # The way the message shows works, silently.
    proc = run(app, "sdconf", "set", path, "--vid", "ATA", "--pid",
               "INTEL SSDSC2BA40", "disksort=false", "--write")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert '"%s", "disksort:false"' % KEY in content(path)


def test_U5_set_with_25_character_key_is_refused(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, U1)
    proc = run(app, "sdconf", "set", path, KEY + "0", "disksort=false",
               "--write")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "firmware" in proc.stderr
    # The 24-character key it starts with is offered.
    assert '"%s"' % KEY in proc.stderr
    assert content(path) == U1
    # The empty key stays refused, for what it is.
    proc = run(app, "sdconf", "set", path, "", "disksort=false", "--write")
    no_traceback(proc)
    assert proc.returncode == 3
    assert "every disk" in proc.stderr
    assert content(path) == U1


def test_U5_edit_of_an_existing_short_key_pair_says_what_it_matches(
        tmp_path):
    # The pair is already there: the edit goes ahead, with the note that
    # `sdconf check` gives for the key, at the pair's line.
    app = build(tmp_path)
    path = conf_file(tmp_path, U1)
    proc = run(app, "sdconf", "set", path, VMWARE, "io-time=60", "--write")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    check = run(app, "sdconf", "check", path)
    note = [ln for ln in check.stdout.splitlines() if "key \"%s\"" % VMWARE
            in ln]
    assert note and note[0] in proc.stderr.splitlines(), \
        (check.stdout, proc.stderr)
    assert "%s:4:2: note:" % path in proc.stderr


def test_U5_any_length_key_override_writes_with_the_lint_warning(tmp_path):
    from sdtune.host import RealHost
    from sdtune.commands import sdconf
    path = conf_file(tmp_path, U1)
    out, err = io.StringIO(), io.StringIO()
    assert sdconf.set_(RealHost(), sdconf.EditRequest(
        path, "ATA", ["disksort=false"], "nexenta", write=True,
        any_length_key=True), out, err) == 0
    assert '"ATA", "disksort:false"' in content(path)
    assert err.getvalue().startswith("sdtune: warning: key \"ATA\"")
    assert "every SATA disk" in err.getvalue()


# -- D8: keep every other byte ------------------------------------------------

def test_D8_unset_of_the_last_pair_keeps_the_operator_comment(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, U1)
    proc = run(app, "sdconf", "unset", path, VMWARE, "slow-io-threshold",
               "--write")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert content(path) == 'name="sd" class="scsi" target=0 lun=0;\n' + \
        COMMENT
    check = run(app, "sdconf", "check", path)
    assert check.returncode == 0, check.stdout


def test_D8_set_keeps_the_order_of_existing_tunables(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, WITH_INTEL)
    proc = run(app, "sdconf", "set", path, KEY, "physical-block-size=4096",
               "--write")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert content(path) == WITH_INTEL.replace(
        "throttle-min:08", "throttle-min:08, physical-block-size:4096")


def test_D8_set_replaces_a_value_where_it_stands(tmp_path):
    app = build(tmp_path)
    text = WITH_INTEL.replace("throttle-max:032, throttle-min:08",
                              "throttle-max:32, disksort:true, "
                              "throttle-min:8")
    path = conf_file(tmp_path, text)
    proc = run(app, "sdconf", "set", path, KEY, "disksort=false",
               "throttle-max=64", "--write")
    assert proc.returncode == 0, proc.stderr
    assert content(path) == text.replace(
        "throttle-max:32, disksort:true",
        "throttle-max:64, disksort:false")


# -- W10: nothing to unset ----------------------------------------------------

def test_W10_unset_of_a_key_with_no_pair_exits_1(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, WITH_INTEL)
    proc = run(app, "sdconf", "unset", path, "--vid", "ATA", "--pid",
               "NOPE", "--write")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == (
        "sdtune: cannot unset tunables in '%s': nothing to unset: no pair "
        "for key \"ATA     NOPE            \" in this file\n" % path)
    assert content(path) == WITH_INTEL


def test_W10_unset_of_a_tunable_the_key_does_not_set_exits_1(tmp_path):
    app = build(tmp_path)
    path = conf_file(tmp_path, WITH_INTEL)
    proc = run(app, "sdconf", "unset", path, KEY, "cache-nonvolatile",
               "--write")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "nothing to unset" in proc.stderr
    assert "sets cache-nonvolatile" in proc.stderr
    assert content(path) == WITH_INTEL
    # Without --write too: the command would do nothing.
    proc = run(app, "sdconf", "unset", path, KEY + "0")
    assert proc.returncode == 1
    assert "this one is 25" in proc.stderr


# -- F8: a UTF-8 byte-order mark ----------------------------------------------

def test_F8_byte_order_mark_is_reported_as_such(tmp_path):
    app = build(tmp_path)
    text = "\xef\xbb\xbf" + WITH_INTEL.replace("032", "32").replace(
        "08", "8")
    path = conf_file(tmp_path, text)
    proc = run(app, "sdconf", "check", path)
    no_traceback(proc)
    assert proc.returncode == 1
    assert "typographic" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    assert lines[0].startswith("%s:1:1: error: UTF-8 byte-order mark"
                               % path)
    assert "Unexpected token" in lines[0]
    proc = run(app, "sdconf", "check", path, "-o", "json")
    (diag,) = json.loads(proc.stdout)["diagnostics"]
    assert (diag["line"], diag["column"], diag["code"]) == \
        (1, 1, "byte-order-mark")


# -- F11: TAB-separated fields stay separated ---------------------------------

def test_F11_disks_H_escapes_a_tab_in_an_inquiry_id(tmp_path):
    odd = dict(HGST_6F8D, pid="HUS72\tODD")
    app = Appliance.build(facts_host(disks=[odd, INTEL]),
                          str(tmp_path / "app"))
    proc = run(app, "disks", "-H")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert len(rows) == 2, proc.stdout
    # The table, then a blank line and the platform line.
    header = run(app, "disks").stdout.splitlines()
    assert len(header) == 5 and header[4].startswith("platform: "), header
    fields = len(header[0].split())
    for row in rows:
        assert len(row.split("\t")) == fields, row
    odd_row = next(r for r in rows if r.startswith(odd["name"]))
    assert odd_row.split("\t")[2] == '"HGST    HUS72\\tODD       "'
    assert '"HGST    HUS72\\tODD       "' in header[1] + header[2]


def test_F11_render_table_escapes_control_characters():
    from sdtune.tables import render_table
    cols = [("A", lambda r, p: r[0]), ("B", lambda r, p: r[1])]
    rows = [("x\ty\nz", "back\\slash\x01"), ("plain", "-")]
    assert render_table(cols, rows, scripted=True) == \
        "x\\ty\\nz\tback\\\\slash\\001\nplain\t-\n"
    table = render_table(cols, rows)
    assert table.count("\n") == 3 and "\t" not in table


# -- D4 (structure): the commit hook for the sd.conf transaction --------------

def test_D4_set_and_unset_write_through_a_given_commit(tmp_path):
    from sdtune.host import RealHost
    from sdtune.commands import sdconf
    path = conf_file(tmp_path, WITH_INTEL)
    calls = []

    def commit(*args):
        calls.append(args)

    out = io.StringIO()
    assert sdconf.set_(RealHost(), sdconf.EditRequest(
        path, KEY, ["disksort=false"], "nexenta", write=True,
        commit=commit), out, io.StringIO()) == 0
    assert content(path) == WITH_INTEL          # commit did the write
    ((where, old, new, summary, diff),) = calls
    assert (where, old) == (path, WITH_INTEL.encode("latin-1"))
    assert b"throttle-min:08, disksort:false" in new
    assert summary == ['"%s" disksort:false' % KEY]
    assert diff in out.getvalue() and diff.startswith("--- ")
    calls.clear()
    assert sdconf.unset(RealHost(), sdconf.EditRequest(
        path, KEY, [], "nexenta", write=True, commit=commit),
        io.StringIO(), io.StringIO()) == 0
    assert calls[0][3] == ['"%s" removed' % KEY]
    assert content(path) == WITH_INTEL
