# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The seams hold: only the host package runs commands or writes files,
and only the command line (cli.py, commands/) prints."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from check_seams import layer_violations, violations  # noqa: E402

PACKAGE = os.path.join(HERE, "..", "..", "plugin", "sdtune")


def test_product_has_no_io_outside_host():
    assert violations(PACKAGE) == []


def test_checker_catches_each_kind_of_violation(tmp_path):
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "local.py").write_text("import subprocess\n")
    (tmp_path / "bad.py").write_text(
        "import subprocess\n"
        "import os\n"
        "from shutil import copy\n"
        "open('x', 'w')\n"
        "os.rename('a', 'b')\n"
        "os.execv('/bin/sh', [])\n"
        "p.write_text('x')\n")
    (tmp_path / "shell.py").write_text("run(['x'], shell=True)\n")
    found = violations(str(tmp_path))
    text = "\n".join(found)
    assert "local.py" not in text         # the seam itself may do I/O
    for what in ("imports subprocess", "imports from shutil", "calls open()",
                 "calls os.rename", "calls os.execv", "calls .write_text()",
                 "shell= other than False"):
        assert what in text, what


def test_str_replace_is_not_a_file_move(tmp_path):
    """Path.replace(target) moves a file; str.replace(old, new) does not."""
    (tmp_path / "text.py").write_text("t = s.replace('\\t', ' ')\n")
    (tmp_path / "move.py").write_text("p.replace(q)\n")
    found = violations(str(tmp_path))
    assert [f.split(":")[0].rsplit("/", 1)[1] for f in found] == ["move.py"]


def test_only_the_command_line_prints(tmp_path):
    """A domain module that writes to a stream is found; cli.py and the
    commands/ package may."""
    (tmp_path / "domain.py").write_text(
        "import sys\n"
        "from typing import TextIO\n"
        "def f(out: TextIO):\n"
        "    print('x')\n"
        "    sys.stderr.write('y')\n")
    (tmp_path / "cli.py").write_text("import sys\nsys.stdout.write('x')\n")
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "x.py").write_text(
        "import sys\nfrom typing import TextIO\nprint(sys.stderr)\n")
    found = violations(str(tmp_path))
    assert {f.split(":")[0].rsplit("/", 1)[1] for f in found} == \
        {"domain.py"}
    text = "\n".join(found)
    for what in ("takes a TextIO", "calls print()", "names sys.stderr"):
        assert what in text, what


def test_imports_run_one_way():
    assert layer_violations(PACKAGE) == []


def test_layer_checker_catches_upward_imports_and_circles(tmp_path):
    """An upward import inside a function counts; a circle not known is
    found, and a known one that is gone must leave the list."""
    pkg = tmp_path / "sdtune"
    for sub in ("records", "tune"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "records" / "group.py").write_text(
        "def f():\n    from ..tune import plan\n")
    (pkg / "tune" / "plan.py").write_text("from . import verify\n")
    (pkg / "tune" / "verify.py").write_text(
        "def g():\n    from .plan import x\n")
    found = layer_violations(str(pkg), {"records": ("tune",)},
                             [{"sdtune.a", "sdtune.b"}])
    text = "\n".join(found)
    assert "sdtune.records.group imports sdtune.tune.plan" in text
    assert "import circle: sdtune.tune.plan, sdtune.tune.verify" in text
    assert "the circle sdtune.a, sdtune.b is gone" in text
    assert layer_violations(str(pkg), {}, [{"sdtune.tune.plan",
                                            "sdtune.tune.verify"}]) == []
