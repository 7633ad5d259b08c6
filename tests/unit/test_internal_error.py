# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""An exception sdtune did not expect is a bug: one line naming its kind
and the innermost line of sdtune it came from, exit 4 (1 means "problems
found"), and the traceback only with SDTUNE_DEBUG=1 (issue 13)."""

from sdtune import tables
from sdtune.cli import run_guarded
from sdtune.errors import EXIT_FAILED


def broken():
    # A real bug inside the package: a table without columns.
    return tables.render_table(None, [{"a": 1}], False)


def test_unexpected_exception_is_one_line_and_exit_4(capsys, monkeypatch):
    monkeypatch.delenv("SDTUNE_DEBUG", raising=False)
    assert run_guarded(broken) == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("sdtune: internal error: TypeError in "
                          "sdtune/tables.py line ")
    assert err.endswith("; this is a bug in sdtune (SDTUNE_DEBUG=1 shows "
                        "the traceback)\n")
    assert "Traceback" not in err


def test_debug_shows_the_traceback(capsys, monkeypatch):
    monkeypatch.setenv("SDTUNE_DEBUG", "1")
    assert run_guarded(broken) == EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1].startswith("sdtune: internal error: ")


def test_a_normal_run_passes_its_status_through(capsys):
    assert run_guarded(lambda: 3) == 3
    assert capsys.readouterr().err == ""
