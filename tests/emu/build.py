# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Build the emulated drive's C parts: the nbdkit plugin (sdemu.c) and the
nbdfuse preload shim (fuseshim.c).

Runs `cc` and `pkg-config --cflags nbdkit`.  Outputs are cached in
tests/emu/.build/ under a name keyed by the hash of the source, the
compiler flags and the nbdkit include flags, so an edited source rebuilds
(and the older build is removed) and an unchanged one costs nothing; each
is written under a temporary name and renamed, so concurrent test runs
never see half a library.
"""

import hashlib
import os
import subprocess
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".build")
CFLAGS = ["-shared", "-fPIC", "-O2", "-Wall", "-Werror"]


class BuildError(RuntimeError):
    """The compiler or pkg-config failed; the message carries its output."""


def _run(argv: List[str]) -> str:
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              timeout=120, check=False)
    except OSError as e:
        raise BuildError("cannot run %s: %s" % (argv[0], e)) from e
    if proc.returncode != 0:
        raise BuildError("%s failed (exit %d):\n%s"
                         % (" ".join(argv), proc.returncode, proc.stdout))
    return proc.stdout


def _build(source: str, extra_before: List[str],
           extra_after: List[str]) -> str:
    src = os.path.join(HERE, source)
    with open(src, "rb") as f:
        text = f.read()
    key = hashlib.sha256(text + "\0".join(
        CFLAGS + extra_before + extra_after).encode()).hexdigest()[:16]
    stem = os.path.splitext(source)[0]
    out = os.path.join(CACHE, "%s-%s.so" % (stem, key))
    if os.path.exists(out):
        return out
    os.makedirs(CACHE, exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())
    try:
        _run(["cc"] + CFLAGS + extra_before + ["-o", tmp, src] + extra_after)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    # Builds of older sources are never used again.  A process that still
    # has one loaded keeps its mapping after the unlink.
    for name in os.listdir(CACHE):
        if name.startswith(stem + "-") and name.endswith(".so") and \
                os.path.join(CACHE, name) != out:
            os.unlink(os.path.join(CACHE, name))
    return out


def build_plugin() -> str:
    """Compile sdemu.c into an nbdkit plugin; return the .so path."""
    cflags = _run(["pkg-config", "--cflags", "nbdkit"]).split()
    return _build("sdemu.c", cflags, ["-lm"])


def build_shim() -> str:
    """Compile fuseshim.c (LD_PRELOAD for nbdfuse); return the .so path."""
    return _build("fuseshim.c", [], ["-ldl"])


if __name__ == "__main__":
    print(build_plugin())
    print(build_shim())
