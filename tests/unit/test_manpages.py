# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The man pages conf/sdtune.8 and conf/sdtune.conf.5: mandoc-clean, and
tied to the code so they cannot drift: every subcommand, option and
choice of the command line is in the SYNOPSIS, every finding of the
catalogue in FINDINGS, every table column in OUTPUT FIELDS, every exit
code in EXIT STATUS, and every section and key of conf/sdtune.conf in
sdtune.conf(5)."""

import argparse
import configparser
import os
import re
import shutil
import subprocess
from typing import Dict, List, Set

import pytest
from sdtune import errors
from sdtune.commands.certify import RESULT_COLUMNS
from sdtune.cli import build_parser
from sdtune.commands.disks import COLUMNS as DISKS_COLUMNS
from sdtune.findings import CATALOGUE
from sdtune.commands.tune import HISTORY_COLUMNS
from sdtune.commands.verify import COLUMNS as VERIFY_COLUMNS
from sdtune.commands.verify import PROVE_COLUMNS
from sdtune.drivers.diskstate import STATES

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PAGE8 = os.path.join(REPO, "conf", "sdtune.8")
PAGE5 = os.path.join(REPO, "conf", "sdtune.conf.5")
CONF = os.path.join(REPO, "conf", "sdtune.conf")
MANDOC = shutil.which("mandoc") or "/usr/bin/mandoc"

MACROS = {"Ar", "Cm", "Fl", "Op", "Oo", "Oc", "Ns", "Brq", "Bq", "Pq",
          "Ic", "Li", "Nm", "No", "Sy", "Ql", "Dq", "Qq"}


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def section(text: str, name: str) -> List[str]:
    """The source lines of `.Sh name`, up to the next .Sh."""
    lines = text.splitlines()
    start = lines.index(".Sh " + name) + 1
    end = next((i for i in range(start, len(lines))
                if lines[i].startswith(".Sh ")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("page", [PAGE8, PAGE5])
def test_mandoc_lint_clean(page):
    if not os.access(MANDOC, os.X_OK):
        pytest.skip("mandoc is not installed")
    proc = subprocess.run([MANDOC, "-Tlint", "-W", "warning", page],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# -- SYNOPSIS against the argument parser ------------------------------

def _subparsers(parser: argparse.ArgumentParser
                ) -> Dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _synopsis_blocks() -> List[Dict[str, Set[str]]]:
    """One block per `.Nm` of the SYNOPSIS: its Cm words and its flags."""
    blocks: List[Dict[str, Set[str]]] = []
    for line in section(read(PAGE8), "SYNOPSIS"):
        if line == ".Nm":
            blocks.append({"cm": set(), "fl": set(), "first": set()})
            continue
        if not blocks or not line.startswith("."):
            continue
        words = line[1:].split()
        macro = None
        for word in words:
            if word in MACROS:
                macro = word
                continue
            if word == "|":
                continue
            if macro == "Cm":
                if not blocks[-1]["first"]:
                    blocks[-1]["first"].add(word)
                blocks[-1]["cm"].add(word)
            elif macro == "Fl":
                if word.startswith("-"):
                    blocks[-1]["fl"].add("-" + word)
                else:
                    blocks[-1]["fl"].update("-" + c for c in word)
    return blocks


def _documented(parser: argparse.ArgumentParser, blocks, what: str) -> None:
    """Every option and every choice of parser appears in blocks."""
    flags = set().union(*(b["fl"] for b in blocks))
    words = set().union(*(b["cm"] for b in blocks))
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction,
                               argparse._SubParsersAction)):
            continue
        for opt in action.option_strings:
            assert opt in flags, "%s: %s not in the SYNOPSIS" % (what, opt)
        for choice in action.choices or ():
            assert str(choice) in words, "%s: %s not in the SYNOPSIS" % (
                what, choice)


def test_synopsis_covers_every_subcommand_option_and_choice():
    parser = build_parser()
    blocks = _synopsis_blocks()
    _documented(parser, blocks[:1], "sdtune")
    commands = _subparsers(parser)
    assert commands
    for name, sub in commands.items():
        mine = [b for b in blocks[1:] if name in b["first"]]
        assert mine, "sdtune %s has no SYNOPSIS line" % name
        nested = _subparsers(sub)
        if not nested:
            _documented(sub, mine, name)
            continue
        for action, subsub in nested.items():
            theirs = [b for b in mine if action in b["cm"]]
            assert theirs, "sdtune %s %s has no SYNOPSIS line" % (name,
                                                                  action)
            _documented(sub, theirs, name)
            _documented(subsub, theirs, "%s %s" % (name, action))


def test_every_subcommand_has_a_subsection():
    text = read(PAGE8)
    for name in _subparsers(build_parser()):
        assert re.search(r"^\.Ss sdtune %s\b" % re.escape(name), text,
                         re.M), name


def test_every_subcommand_of_help_is_mentioned():
    from sdtune.cli import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["--help"])
    listed = re.findall(r"^    (\S+)", out.getvalue(), re.M)
    assert listed == list(_subparsers(build_parser()))
    text = read(PAGE8)
    for name in listed:
        assert ".Cm %s" % name in text, name


# -- the rest of sdtune(8) against the code ----------------------------

def test_findings_section_has_every_catalogue_entry():
    lines = section(read(PAGE8), "FINDINGS")
    for kind in CATALOGUE.values():
        assert ".It Sy %s No (%s) %s" % (kind.id, kind.severity,
                                         kind.title) in lines, kind.id
    documented = {m.group(1) for m in (re.match(r"\.It Sy (SDT-\d+)", line)
                                       for line in lines) if m}
    assert documented == set(CATALOGUE)


@pytest.mark.parametrize("table,columns", [
    ("disks", DISKS_COLUMNS), ("results", RESULT_COLUMNS),
    ("verify", VERIFY_COLUMNS), ("prove", PROVE_COLUMNS),
    ("history", HISTORY_COLUMNS)])
def test_output_fields_name_every_column(table, columns):
    lines = section(read(PAGE8), "OUTPUT FIELDS")
    start = lines.index(".Ss " + table) + 1
    end = next(i for i in range(start, len(lines))
               if lines[i].startswith(".Ss "))
    names = set()
    for line in lines[start:end]:
        if line.startswith(".It Sy "):
            names.update(w for w in line[7:].split() if w != ",")
    assert names == {name for name, _ in columns}


def test_output_fields_name_every_trace_column():
    """Every column of every `sdtune trace` table is in OUTPUT FIELDS,
    under the scripts whose tables have it, and nothing else is."""
    # Imported here, not at the top, so that this test is the only one an
    # import error of sdtune.trace fails.
    from sdtune.trace.scripts import SCRIPTS
    in_code: Dict[str, Set[str]] = {}
    for script in SCRIPTS.values():
        for name, _ in script.columns:
            in_code.setdefault(name, set()).add(script.name)
    assert in_code.pop("DEVICE") == set(SCRIPTS)

    lines = section(read(PAGE8), "OUTPUT FIELDS")
    start = lines.index(".Ss trace") + 1
    end = next((i for i in range(start, len(lines))
                if lines[i].startswith(".Ss ")), len(lines))
    lines = lines[start:end]
    # DEVICE is in the paragraph about every table, before the list.
    intro = lines[:next(i for i, line in enumerate(lines)
                        if line.startswith(".Bl "))]
    assert ".Pq Sy DEVICE ," in intro
    # Each `.It Sy NAME [, NAME]` entry names its scripts as `.Cm SCRIPT`.
    documented: Dict[str, Set[str]] = {}
    names: List[str] = []
    for line in lines:
        if line.startswith(".It Sy "):
            names = [w for w in line[7:].split() if w != ","]
            for name in names:
                documented.setdefault(name, set())
        elif line.startswith(".Cm ") and names:
            for name in names:
                documented[name].add(line.split()[1])
        elif line == ".El":
            break
    for name in in_code:
        assert name in documented, name
    assert documented == in_code


def test_verify_states_documented():
    text = read(PAGE8)
    for state in STATES:
        assert ".It %s\n" % state in text, state


def test_exit_status_lists_every_code():
    lines = section(read(PAGE8), "EXIT STATUS")
    codes = {int(line[4:]) for line in lines if re.match(r"\.It \d+$", line)}
    assert codes == {errors.EXIT_OK, errors.EXIT_PROBLEMS, errors.EXIT_USAGE,
                     errors.EXIT_REFUSED, errors.EXIT_FAILED}


def test_see_also():
    lines = section(read(PAGE8), "SEE ALSO")
    refs = {tuple(line.split()[1:3]) for line in lines
            if line.startswith(".Xr ")}
    for ref in [("sd", "4D"), ("sd", "7D"), ("update_drv", "8"),
                ("zpool", "8"), ("zdb", "8"), ("diskinfo", "8"),
                ("mdb", "1"), ("dtrace", "8"), ("sdtune.conf", "5")]:
        assert ref in refs, ref


# -- sdtune.conf(5) against conf/sdtune.conf ---------------------------

def test_conf_page_documents_every_section_and_key():
    parser = configparser.ConfigParser(interpolation=None,
                                       inline_comment_prefixes=("#",))
    parser.read(CONF, encoding="utf-8")
    text = read(PAGE5)
    sections = {m.group(1) for m in re.finditer(
        r"^\.Ss \\&\[(\w+)\]\\&$", text, re.M)}
    wanted = {name: set(parser[name]) for name in parser.sections()}
    # Read by the code, not in the shipped file.
    wanted.setdefault("data", set()).add("known_drives")
    wanted.setdefault("silence", set())
    assert set(wanted) <= sections
    lines = text.splitlines()
    for name, keys in wanted.items():
        start = lines.index(".Ss \\&[%s]\\&" % name) + 1
        end = next((i for i in range(start, len(lines))
                    if lines[i].startswith((".Ss ", ".Sh "))), len(lines))
        items = {line.split()[2] for line in lines[start:end]
                 if line.startswith(".It Cm ")}
        for key in keys:
            assert key in items, "[%s] %s" % (name, key)
