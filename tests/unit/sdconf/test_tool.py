# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for `sdtune sdconf check|show|set|unset|diff`: output formats,
exit codes (DESIGN.md: 0 ok, 1 problems, 2 usage, 3 refused, 4 failed),
`sdtune: cannot <verb> '<object>': <reason>` errors, and that nothing is
written without --write or when anything goes wrong.  They run in-process
through sdtune.cli.main; the same commands through the real launcher
bin/sdtune are tests/e2e/test_sdconf_launcher.py."""

import gc
import io
import json
import os
import sys

import pytest

from sdtune.cli import main

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "fixtures", "sdconf"))
from sdconf_files import (DIAG_RE, KEY_A, LIST_LINE, NX, NX_HEAD,  # noqa: E402
                          OLD_TIME, VMWARE_PAIR, Run, conf_file, diff_lines,
                          error_re, read_only_dir, snapshot, with_pair)

KEY_B = "HGST    HUS724040ALS640 "


@pytest.fixture
def cli(capsys):
    """Run sdtune in-process; stdout through `out=`, stderr captured."""
    def run(*argv):
        capsys.readouterr()
        out = io.StringIO()
        gc_was_enabled = gc.isenabled()
        try:
            rc = main([str(a) for a in argv], out=out)
        finally:
            if gc_was_enabled:      # main() switches the collector off
                gc.enable()
        return Run(rc, out.getvalue(), capsys.readouterr().err)
    return run


ODD = NX.replace(VMWARE_PAIR + ";", VMWARE_PAIR + ', "%s";' % KEY_A)


# -- check --------------------------------------------------------------------

def test_check_nexenta_file_is_clean(cli, tmp_path):
    path = conf_file(tmp_path)
    r = cli("sdconf", "check", path)
    assert r.rc == 0 and r.err == ""
    for line in r.out.splitlines():
        m = DIAG_RE.match(line)
        assert m, line
        assert m.group("file") == str(path)
        assert m.group("sev") == "note"
    assert r.out.startswith("%s:%d:2: note: " % (path, LIST_LINE + 2))


def test_check_upstream_file_prints_nothing(cli, tmp_path):
    path = conf_file(tmp_path, NX_HEAD)
    r = cli("sdconf", "check", path)
    assert (r.rc, r.out, r.err) == (0, "", "")


def test_check_reports_problems_with_file_line_col(cli, tmp_path):
    path = conf_file(tmp_path, with_pair(KEY_A, "throttle-max:4"))
    before = snapshot(path)
    r = cli("sdconf", "check", path)
    assert r.rc == 1 and r.err == ""
    diags = [DIAG_RE.match(line) for line in r.out.splitlines()]
    assert all(diags), r.out
    errors = [m for m in diags if m.group("sev") == "error"]
    assert len(errors) == 1
    # TAB, "KEY", comma, blank, quote: the tuple starts in column 31.
    assert (errors[0].group("file"), errors[0].group("line"),
            errors[0].group("col")) == (str(path), str(LIST_LINE + 3), "31")
    assert "throttle-max:4" in errors[0].group("text")
    assert snapshot(path) == before


def test_check_odd_list_and_syntax_error(cli, tmp_path):
    assert cli("sdconf", "check", conf_file(tmp_path, ODD)).rc == 1
    path = conf_file(tmp_path, NX + "bad = ;\n", "bad.conf")
    r = cli("sdconf", "check", path)
    assert r.rc == 1
    assert any(DIAG_RE.match(line).group("line") == str(LIST_LINE + 3)
               for line in r.out.splitlines())


def test_check_json(cli, tmp_path):
    path = conf_file(tmp_path, with_pair(KEY_A, "throttle-max:4"))
    r = cli("sdconf", "check", "-o", "json", path)
    assert r.rc == 1
    doc = json.loads(r.out)
    assert set(doc) == {"diagnostics"}
    rows = doc["diagnostics"]
    assert rows and all(set(row) == {"file", "line", "column", "severity",
                                     "code", "message"} for row in rows)
    err = [row for row in rows if row["severity"] == "error"]
    assert len(err) == 1
    assert (err[0]["file"], err[0]["line"]) == (str(path), LIST_LINE + 3)
    assert isinstance(err[0]["column"], int)
    text = cli("sdconf", "check", path).out.splitlines()
    assert len(text) == len(rows)
    clean = cli("sdconf", "check", "-o", "json", conf_file(tmp_path, NX_HEAD,
                                                           "up.conf"))
    assert clean.rc == 0 and json.loads(clean.out) == {"diagnostics": []}


def test_check_missing_file(cli, tmp_path):
    path = tmp_path / "nothere.conf"
    r = cli("sdconf", "check", path)
    assert r.rc == 4 and r.out == ""
    assert r.err == "sdtune: cannot read '%s': No such file or directory\n" \
        % path


# -- show ---------------------------------------------------------------------

def test_show_text(cli, tmp_path):
    path = conf_file(tmp_path, with_pair(KEY_A, "physical-block-size:4096, "
                                         "cache-nonvolatile:true"))
    r = cli("sdconf", "show", path)
    assert r.rc == 0 and r.err == ""
    lines = r.out.splitlines()
    assert lines[0] == "%s: sd-config-list at line %d, 2 pairs, used by sd" \
        % (path, LIST_LINE)
    assert lines[1].split() == ["PAIR", "LINE", "KEY", "TUNABLES"]
    assert '"VMware  Virtual disk"' in lines[2]
    assert "io-time:180 slow-io-threshold:0" in lines[2]
    row = [ln for ln in lines if '"%s"' % KEY_A in ln]
    assert len(row) == 1
    assert row[0].split()[:2] == ["2", str(LIST_LINE + 3)]
    assert "physical-block-size:4096 cache-nonvolatile:true" in row[0]


def test_show_json(cli, tmp_path):
    path = conf_file(tmp_path, with_pair(
        KEY_A, "throttle-max:0x20, Cache-NonVolatile:true"))
    r = cli("sdconf", "show", "-o", "json", path)
    assert r.rc == 0
    doc = json.loads(r.out)
    pairs = doc["pairs"]
    assert [p["key"] for p in pairs] == ["VMware  Virtual disk", KEY_A]
    assert [p["line"] for p in pairs] == [LIST_LINE + 2, LIST_LINE + 3]
    assert pairs[0]["tunables"] == {"io-time": "180",
                                    "slow-io-threshold": "0"}
    # As written: not converted, not case-folded.
    assert pairs[1]["tunables"] == {"throttle-max": "0x20",
                                    "Cache-NonVolatile": "true"}
    assert doc["list"]["usable"] is True


def test_show_without_list_and_with_unusable_list(cli, tmp_path):
    path = conf_file(tmp_path, NX_HEAD)
    r = cli("sdconf", "show", path)
    assert (r.rc, r.out) == (0, "%s: no sd-config-list\n" % path)
    doc = json.loads(cli("sdconf", "show", "-o", "json", path).out)
    assert doc["pairs"] == [] and doc["list"]["line"] is None
    odd = conf_file(tmp_path, ODD, "odd.conf")
    r = cli("sdconf", "show", odd)
    assert r.rc == 0
    assert "IGNORED by sd" in r.out.splitlines()[0]
    assert json.loads(cli("sdconf", "show", "-o", "json", odd).out)[
        "list"]["usable"] is False


# -- set / unset --------------------------------------------------------------

def test_set_prints_diff_and_changes_nothing_without_write(cli, tmp_path):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = cli("sdconf", "set", path, KEY_A, "physical-block-size=4096",
            "cache-nonvolatile=true")
    assert r.rc == 0 and r.err == ""
    assert r.out.startswith("--- %s\n+++ %s (new)\n@@ " % (path, path))
    assert diff_lines(r.out) == [
        "-\t" + VMWARE_PAIR + ";",
        "+\t" + VMWARE_PAIR + ",",
        '+\t"%s", "physical-block-size:4096, cache-nonvolatile:true";'
        % KEY_A]
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == ["sd.conf"]


def test_set_write(cli, tmp_path):
    path = conf_file(tmp_path)
    r = cli("sdconf", "set", "--write", path, KEY_A,
            "physical-block-size=4096")
    assert r.rc == 0 and r.err == ""
    assert r.out.endswith("%s: written\n" % path)
    assert path.read_text() == NX.replace(
        VMWARE_PAIR + ";", VMWARE_PAIR + ',\n\t"%s", '
        '"physical-block-size:4096";' % KEY_A)
    assert os.stat(path).st_mtime_ns != OLD_TIME * 10**9
    assert sorted(os.listdir(tmp_path)) == ["sd.conf"]
    # The same again: no change, nothing written.
    os.utime(path, (OLD_TIME, OLD_TIME))
    before = snapshot(path)
    r = cli("sdconf", "set", "--write", path, KEY_A,
            "physical-block-size=4096")
    assert (r.rc, r.out) == (0, "%s: no change\n" % path)
    assert snapshot(path) == before


def test_set_vid_pid_builds_the_padded_key(cli, tmp_path):
    path = conf_file(tmp_path)
    r = cli("sdconf", "set", path, "--vid", "INTEL", "--pid", "SSDSC2BA40",
            "throttle-max=32")
    assert r.rc == 0
    assert '+\t"INTEL   SSDSC2BA40      ", "throttle-max:32";' in \
        diff_lines(r.out)
    r = cli("sdconf", "set", path, "--vid", "ATA", "--pid",
            "INTEL SSDSC2BA40", "throttle-max=32")
    assert '+\t"%s", "throttle-max:32";' % KEY_A in diff_lines(r.out)


def test_unset_prints_diff_then_writes(cli, tmp_path):
    path = conf_file(tmp_path, with_pair(KEY_A, "throttle-max:32, "
                                         "disksort:false"))
    before = snapshot(path)
    r = cli("sdconf", "unset", path, KEY_A, "disksort")
    assert r.rc == 0 and r.err == ""
    assert diff_lines(r.out) == [
        '-\t"%s", "throttle-max:32, disksort:false";' % KEY_A,
        '+\t"%s", "throttle-max:32";' % KEY_A]
    assert snapshot(path) == before
    r = cli("sdconf", "unset", "--write", path, "--vid", "ATA", "--pid",
            "INTEL SSDSC2BA40")
    assert r.rc == 0 and r.out.endswith("%s: written\n" % path)
    assert path.read_text() == NX


def test_flavour_option(cli, tmp_path):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = cli("sdconf", "--flavour", "upstream", "set", "--write", path, KEY_A,
            "io-time=60")
    assert r.rc == 3 and r.out == ""
    assert error_re("set tunables in", path).match(r.err)
    assert "NexentaStor" in r.err
    assert snapshot(path) == before


# -- error paths: message, exit code, file untouched --------------------------

@pytest.mark.parametrize("argv,rc,verb", [
    (["set", "--write", "{f}", KEY_A, "throttle-max=4"], 3,
     "set tunables in"),
    (["set", "--write", "{f}", KEY_A, "bogus=1"], 3, "set tunables in"),
    (["set", "--write", "{f}", KEY_A, "cache-nonvolatile=yes"], 3,
     "set tunables in"),
    (["set", "--write", "{f}", "**", "disksort=false"], 3,
     "set tunables in"),
    (["set", "--write", "{f}", "", "disksort=false"], 3, "set tunables in"),
    (["unset", "--write", "{f}", KEY_A, "min-throttle"], 3,
     "unset tunables in"),
    (["set", "--write", "{f}", "--vid", "ATA", "disksort=false"], 2, "set"),
    (["set", "--write", "{f}", "--pid", "X", "disksort=false"], 2, "set"),
    (["unset", "--write", "{f}", "--vid", "ATA"], 2, "unset"),
    (["set", "--write", "{f}", "--vid", "ATA", "--pid",
      "INTEL SSDSC2BA400G3", "disksort=false"], 2, "set"),
    (["set", "--write", "{f}", "--vid", "SAMSUNG12", "--pid", "X",
      "disksort=false"], 2, "set"),
    (["set", "--write", "{f}", KEY_A], 2, "set tunables in"),
    (["unset", "--write", "{f}"], 2, "unset"),
])
def test_error_paths(cli, tmp_path, argv, rc, verb):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = cli("sdconf", *[a.replace("{f}", str(path)) for a in argv])
    assert r.rc == rc
    assert error_re(verb, path).match(r.err), r.err
    assert r.out == ""
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == ["sd.conf"]


def test_product_too_long_names_what_sd_compares(cli, tmp_path):
    path = conf_file(tmp_path)
    r = cli("sdconf", "set", path, "--vid", "ATA", "--pid",
            "INTEL SSDSC2BA400G3", "disksort=false")
    assert r.rc == 2
    assert "sd compares 'INTEL SSDSC2BA40'" in r.err


def test_key_and_vid_together_is_a_usage_error(cli, tmp_path):
    path = conf_file(tmp_path)
    before = snapshot(path)
    r = cli("sdconf", "set", "--write", path, KEY_A, "disksort=false",
            "--vid", "ATA", "--pid", "INTEL SSDSC2BA40")
    assert r.rc == 2
    assert error_re("set", path).match(r.err), r.err
    assert snapshot(path) == before
    r = cli("sdconf", "unset", "--write", path, KEY_A, "--vid", "ATA",
            "--pid", "INTEL SSDSC2BA40")
    assert r.rc == 2
    assert error_re("unset", path).match(r.err), r.err
    assert snapshot(path) == before


def test_missing_file(cli, tmp_path):
    path = tmp_path / "nothere.conf"
    for argv in (["set", "--write", path, KEY_A, "disksort=false"],
                 ["unset", "--write", path, KEY_A],
                 ["show", path]):
        r = cli("sdconf", *argv)
        assert r.rc == 4
        assert r.err == "sdtune: cannot read '%s': No such file or " \
            "directory\n" % path
        assert not path.exists()
    assert os.listdir(tmp_path) == []


def test_odd_list_is_refused(cli, tmp_path):
    path = conf_file(tmp_path, ODD)
    before = snapshot(path)
    for argv in (["set", "--write", path, KEY_B, "disksort=false"],
                 ["unset", "--write", path, "VMware  Virtual disk"]):
        r = cli("sdconf", *argv)
        assert r.rc == 3
        assert error_re(argv[0] + " tunables in", path).match(r.err)
        assert "odd number" in r.err
        assert snapshot(path) == before


def test_syntax_error_in_list_is_refused(cli, tmp_path):
    path = conf_file(tmp_path, NX.replace(VMWARE_PAIR, VMWARE_PAIR + " 5"))
    before = snapshot(path)
    r = cli("sdconf", "set", "--write", path, KEY_A, "disksort=false")
    assert r.rc == 3 and "syntax errors" in r.err
    assert snapshot(path) == before


def test_write_onto_a_symlink_is_refused(cli, tmp_path):
    real = conf_file(tmp_path, NX, "real.conf")
    link = tmp_path / "sd.conf"
    link.symlink_to(real)
    before = snapshot(real)
    r = cli("sdconf", "set", "--write", link, KEY_A, "disksort=false")
    assert r.rc == 3            # refused for safety
    assert r.err == "sdtune: cannot write '%s': '%s' is a symbolic link\n" \
        % (link, link)
    assert snapshot(real) == before
    assert link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["real.conf", "sd.conf"]


def test_write_into_a_read_only_directory_fails_cleanly(cli, tmp_path):
    conf_dir = tmp_path / "drv"
    conf_dir.mkdir()
    path = conf_file(conf_dir)
    before = snapshot(path)
    with read_only_dir(conf_dir):
        r = cli("sdconf", "set", "--write", path, KEY_A, "disksort=false")
        assert r.rc == 4
        assert error_re("write", path).match(r.err), r.err
        assert snapshot(path) == before
        assert os.listdir(conf_dir) == ["sd.conf"]


# -- diff ---------------------------------------------------------------------

def test_diff_same_files(cli, tmp_path):
    a = conf_file(tmp_path, NX, "a.conf")
    b = conf_file(tmp_path, NX, "b.conf")
    assert (lambda r: (r.rc, r.out, r.err))(cli("sdconf", "diff", a, b)) \
        == (0, "", "")


def test_diff_reports_sd_config_list_changes(cli, tmp_path):
    old = with_pair(KEY_B, "disksort:false")
    new = with_pair(KEY_A, "physical-block-size:4096").replace(
        "io-time:180", "io-time:120")
    a = conf_file(tmp_path, old, "a.conf")
    b = conf_file(tmp_path, new, "b.conf")
    r = cli("sdconf", "diff", a, b)
    assert r.rc == 1 and r.err == ""
    assert r.out.startswith("--- %s\n+++ %s\n" % (a, b))
    summary = r.out.split("\nsd-config-list changes:\n", 1)[1]
    assert summary.splitlines() == [
        '  added   "%s": physical-block-size:4096' % KEY_A,
        '  removed "%s": disksort:false' % KEY_B,
        '  changed "VMware  Virtual disk": io-time:180,slow-io-threshold:0 '
        '-> io-time:120,slow-io-threshold:0']


def test_diff_comment_only_change_has_no_list_summary(cli, tmp_path):
    a = conf_file(tmp_path, NX, "a.conf")
    b = conf_file(tmp_path, "# edited\n" + NX, "b.conf")
    r = cli("sdconf", "diff", a, b)
    assert r.rc == 1
    assert "+# edited" in r.out
    assert "sd-config-list changes:" not in r.out


def test_diff_list_becomes_unusable(cli, tmp_path):
    a = conf_file(tmp_path, NX, "a.conf")
    b = conf_file(tmp_path, ODD, "b.conf")
    r = cli("sdconf", "diff", a, b)
    assert r.rc == 1
    assert "  list: used -> odd number of strings (3)" in r.out


def test_diff_missing_file(cli, tmp_path):
    a = conf_file(tmp_path, NX, "a.conf")
    r = cli("sdconf", "diff", a, tmp_path / "b.conf")
    assert r.rc == 4
    assert r.err == "sdtune: cannot read '%s': No such file or directory\n" \
        % (tmp_path / "b.conf")
