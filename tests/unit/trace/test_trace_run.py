# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""sdtune.trace.run: the tables; and `sdtune trace` (commands/trace.py)
against a fake dtrace."""

import argparse
import json
import sys
import os
import stat

import pytest

from sdtune.errors import ParseError, SdtuneError, UsageError
from sdtune.host import RealHost
from sdtune.commands import trace as trace_command
from sdtune.commands.base import Env
from sdtune.config import Config
from sdtune.trace.result import parse_trace
from sdtune.trace.run import query_trace, render_trace, script_path

from dtrace_output import (align_output, flush_output, iosize_output,
                           output, qdepth_output)


# -- render_trace -------------------------------------------------------------

def test_render_tables():
    t = parse_trace("flush", flush_output(), 10)
    lines = render_trace(t).splitlines()
    assert lines[0].split() == ["DEVICE", "CALLS", "SENT", "SUPPRESSED",
                                "MEAN", "P50", "P99", "MAX"]
    assert lines[1].split()[:5] == ["sd3", "1000", "1000", "0", "2.46ms"]
    assert lines[3].split() == ["sd5", "2400", "0", "2400", "-", "-", "-",
                                "-"]
    rows = render_trace(parse_trace("iosize", iosize_output()),
                        scripted=True, parsable=True).splitlines()
    assert rows[1].split("\t")[:5] == ["sd3", "W", "21743", "7382", "0.46"]
    assert "4K:2210" in render_trace(
        parse_trace("iosize", iosize_output()))


# -- `sdtune trace` through a fake dtrace -------------------------------------

def cmd_trace(host, script, disk, seconds, out, as_json, scripted=False,
              parsable=False, err=None):
    """The command's run() with the arguments its parser would give."""
    args = argparse.Namespace(script=script, disk=disk, seconds=seconds,
                              scripted=scripted, parsable=parsable,
                              output="json" if as_json else None)
    return trace_command.run(args, Env(host, Config(), out,
                                       err or sys.stderr))


def fake_dtrace(tmp_path, stdout="", stderr="", status=0):
    """A dtrace that records its arguments and prints a fixture."""
    (tmp_path / "out.txt").write_text(stdout)
    (tmp_path / "err.txt").write_text(stderr)
    path = tmp_path / "dtrace"
    path.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do printf '%%s\\n' \"$a\"; done > '%s'\n"
        "cat '%s'\ncat '%s' >&2\nexit %d\n" % (
            tmp_path / "args.txt", tmp_path / "out.txt",
            tmp_path / "err.txt", status))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return RealHost(root=str(tmp_path), commands={"dtrace": str(path)})


def args_of(tmp_path):
    return (tmp_path / "args.txt").read_text().splitlines()


def test_cmd_trace_json(tmp_path, capsys):
    host = fake_dtrace(tmp_path, align_output(),
                       "dtrace: 3 dynamic variable drops\n")
    out = _Out()
    assert cmd_trace(host, "align", "sd3", 5, out, True) == 0
    assert args_of(tmp_path) == ["-s", script_path("align"), "sd3",
                                 "5"]
    doc = json.loads(out.text)
    assert doc["trace"] == "align" and doc["seconds"] == 5
    assert doc["devices"][0]["rmw_writes"] == 121
    assert doc["elapsed_ns"] == 10000412377
    assert doc["warnings"] == ["dtrace: 3 dynamic variable drops"]
    assert "warning: dtrace: 3 dynamic variable drops" in \
        capsys.readouterr().err


def test_cmd_trace_table_all_disks(tmp_path):
    host = fake_dtrace(tmp_path, qdepth_output())
    out = _Out()
    assert cmd_trace(host, "qdepth", None, 10, out, False) == 0
    assert args_of(tmp_path)[2:] == ["all", "10"]
    lines = out.text.splitlines()
    assert lines[0].split() == ["DEVICE", "IOS", "MEAN", "P50", "P99",
                                "MAX"]
    assert lines[1].split()[:3] == ["sd3", "5031", "3.3"]


def test_cmd_trace_maps_ctd_name_to_sd_instance(tmp_path):
    host = fake_dtrace(tmp_path, iosize_output())
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "path_to_inst").write_text(
        '"/pci@0,0/pci15ad,1976@10/sd@0,0" 0 "sd"\n'
        '"/scsi_vhci/disk@g5000cca0496e6f8d" 10 "sd"\n')
    rdsk = tmp_path / "dev" / "rdsk"
    rdsk.mkdir(parents=True)
    os.symlink("../../devices/scsi_vhci/disk@g5000cca0496e6f8d:a,raw",
               str(rdsk / "c0t5000CCA0496E6F8Dd0s0"))
    os.symlink("../../devices/pci@0,0/pci15ad,1976@10/sd@0,0:a,raw",
               str(rdsk / "c1t0d0s0"))
    out = _Out()
    cmd_trace(host, "iosize", "c0t5000CCA0496E6F8Dd0", 3, out, True)
    assert args_of(tmp_path)[2:] == ["sd10", "3"]
    cmd_trace(host, "iosize", "/dev/rdsk/c1t0d0s0", 3, out, True)
    assert args_of(tmp_path)[2:] == ["sd0", "3"]
    with pytest.raises(UsageError):
        cmd_trace(host, "iosize", "c9t9d9", 3, out, True)


@pytest.mark.parametrize("stderr, words", [
    ("dtrace: failed to initialize dtrace: DTrace requires additional "
     "privileges\n", "requires additional privileges: run sdtune as root"),
    ("dtrace: failed to compile script sdtune-flush.d: line 96: probe "
     "description fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry does not "
     "match any probes\n",
     "probe fbt:sd:sd_send_scsi_SYNCHRONIZE_CACHE:entry does not match any "
     "probes on this kernel"),
    ("dtrace: failed to compile script sdtune-flush.d: line 99: un_sd is "
     "not a member of struct sd_ssc\n", "dtrace could not compile"),
    ("", "dtrace exited with status 1"),
])
def test_cmd_trace_dtrace_errors(tmp_path, stderr, words):
    host = fake_dtrace(tmp_path, "", stderr, 1)
    with pytest.raises(SdtuneError) as e:
        cmd_trace(host, "flush", None, 1, _Out(), False)
    assert words in str(e.value)
    assert str(e.value).startswith("cannot trace 'flush': ")


def test_cmd_trace_no_activity(tmp_path):
    """Nothing traced: the table's header alone, and a note on stderr."""
    host = fake_dtrace(tmp_path, output(
        ("writes", "\n"), ("sub4k", "\n"), ("misaligned", "\n"),
        ("rmw", "\n")))
    out, err = _Out(), _Out()
    assert cmd_trace(host, "align", "sd3", 2, out, False, err=err) == 0
    assert out.text == ("DEVICE  WRITES  SUB4K  SUB4K%  MISALIGNED  "
                        "MISALIGNED%  RMW  RMW%\n")
    assert err.text == "sdtune: trace align: no activity on sd3 in 2 s\n"


def test_cmd_trace_dtrace_missing(tmp_path):
    host = RealHost(root=str(tmp_path),
                    commands={"dtrace": str(tmp_path / "no-dtrace")})
    with pytest.raises(SdtuneError) as e:
        cmd_trace(host, "iosize", None, 1, _Out(), False)
    assert "DTrace is not available" in str(e.value)


def test_cmd_trace_cut_output_is_a_parse_error(tmp_path):
    text = flush_output()
    host = fake_dtrace(tmp_path, text[:text.index("sdtune-agg latsum")])
    with pytest.raises(ParseError) as e:
        cmd_trace(host, "flush", "sd3", 2, _Out(), False)
    assert e.value.command == "dtrace -s sdtune-flush.d"
    assert e.value.field == "sdtune-end"


@pytest.mark.parametrize("name, disk, seconds", [
    ("iopattern", None, 5), ("iosize", "sd3x", 5), ("iosize", None, 0),
    ("iosize", None, -1), ("iosize", None, True),
])
def test_bad_arguments(tmp_path, name, disk, seconds):
    host = fake_dtrace(tmp_path, iosize_output())
    with pytest.raises(UsageError):
        query_trace(host, name, disk, seconds)
    assert not (tmp_path / "args.txt").exists()


class _Out:
    """A text stream that is not a terminal."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s


def test_trace_through_the_command_line(tmp_path, capsys):
    """`sdtune trace` as wired in cli.py: the config's dtrace runs the
    script with the device and seconds, and the summary is printed."""
    from sdtune.cli import main
    host = fake_dtrace(tmp_path, align_output())
    conf = tmp_path / "conf"
    conf.write_text("[commands]\ndtrace = %s\n" % host.commands["dtrace"])
    rc = main(["-R", str(tmp_path), "--config", str(conf), "trace", "align",
               "-d", "sd3", "-t", "5", "-o", "json"])
    assert rc == 0
    assert args_of(tmp_path) == ["-s", script_path("align"), "sd3",
                                 "5"]
    doc = json.loads(capsys.readouterr().out)
    assert doc["trace"] == "align" and doc["devices"][0]["rmw_writes"] == 121
