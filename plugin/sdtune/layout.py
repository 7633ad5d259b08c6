# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Where sdtune's own files are: the one place that knows the layout.

The package is plugin/sdtune in the source tree and
<prefix>/lib/sdtune/plugin/sdtune when installed; in both, the shipped
files are two levels up: conf/ (sdtune.conf, known-drives.tsv) and
dtrace/ (the D scripts).  Only a source tree has plugin/engine/ beside
the package, with the engine's sources and, once built, sdio.  Pure:
computes paths, touches nothing.
"""

import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_TOP = os.path.normpath(os.path.join(PACKAGE_DIR, "..", ".."))
_ENGINE_DIR = os.path.normpath(os.path.join(PACKAGE_DIR, "..", "engine"))


def conf_file(name: str) -> str:
    """A shipped file in conf/: sdtune.conf, known-drives.tsv."""
    return os.path.join(_TOP, "conf", name)


def dtrace_dir() -> str:
    """The D scripts of `sdtune trace`."""
    return os.path.join(_TOP, "dtrace")


def tree_engine() -> str:
    """Where a source tree builds sdio (`make engine`)."""
    return os.path.join(_ENGINE_DIR, "sdio")


def tree_engine_marker() -> str:
    """A file only a source tree has: the engine's main source."""
    return os.path.join(_ENGINE_DIR, "sdio.c")
