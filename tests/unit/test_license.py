# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Every source file of the tree (the product, its engine, build and CI
scripts, the tests) says its licence at its top: the CDDL header, or the
Ansible collection's one-line form of it."""

import os
import re

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCE = re.compile(r"\.(py|c|h|sh|d)$|^Makefile(\.inc)?$")
SCRIPTS = ("bin/sdtune", ".ci/run")
# Data and what is built or cached, not source.
SKIP_DIRS = {".git", "__pycache__", ".build", ".pytest_cache",
             ".hypothesis", "build", "fixtures"}
HEAD_LINES = 15


def sources():
    for top, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, REPO)
            if SOURCE.search(name) or rel in SCRIPTS:
                yield rel


def test_every_source_file_has_the_cddl_header():
    found = list(sources())
    assert len(found) > 250 and "plugin/engine/serve.h" in found
    missing = []
    for rel in found:
        with open(os.path.join(REPO, rel), encoding="utf-8") as f:
            head = "".join(f.readline() for _ in range(HEAD_LINES))
        if "CDDL" not in head:
            missing.append(rel)
    assert missing == []
