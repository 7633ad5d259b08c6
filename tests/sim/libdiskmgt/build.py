# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Build the fake libdiskmgt (fake_libdiskmgt.c) for tests and the simulator.

The fake links against the real libnvpair that Debian ships in the contrib
package libnvpair3linux (tests/deps.sh installs it).  Builds are cached
under .build/ beside this file, keyed by a hash of the source, the compiler
command and the libnvpair path, so a test session compiles at most once.

    nvpair_path()          absolute path of Debian's libnvpair shared object
    build_library(dest)    compile (or reuse) the fake into dest, return dest
"""

import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fake_libdiskmgt.c")
CACHE = os.path.join(HERE, ".build")
CFLAGS = ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-pthread"]

_INSTALL_HINT = ("install Debian's libnvpair3linux (contrib component; "
                 "run 'sh tests/deps.sh' as root)")


class BuildError(RuntimeError):
    """The fake library cannot be built on this machine."""


def _ldconfig_candidates() -> List[str]:
    for ldconfig in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        exe = shutil.which(ldconfig) if "/" not in ldconfig else (
            ldconfig if os.access(ldconfig, os.X_OK) else None)
        if exe is None:
            continue
        try:
            out = subprocess.run([exe, "-p"], capture_output=True,
                                 text=True, timeout=30, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        # "	libnvpair.so.3 (libc6,x86-64) => /lib/x86_64-linux-gnu/..."
        found = []
        for line in out.splitlines():
            m = re.match(r"\s*libnvpair\.so(\.\d+)*\s+\(([^)]*)\)\s+=>\s+"
                         r"(\S+)$", line)
            if m and (sys.maxsize > 2 ** 32) == ("64" in m.group(2)):
                found.append(m.group(3))
        return found
    return []


def _multiarch_candidates() -> List[str]:
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    dirs = ["/lib/%s" % arch, "/usr/lib/%s" % arch] if arch else []
    dirs += ["/lib", "/usr/lib", "/lib64", "/usr/lib64"]
    found = []
    for d in dirs:
        found += sorted(glob.glob(os.path.join(d, "libnvpair.so.*")))
    return found


# Once per process: the answer is the machine's, and asking ldconfig costs
# about 12 ms of the 30 ms an appliance takes to build (a thousand of them
# in the quick tier).
@functools.lru_cache(maxsize=None)
def nvpair_path() -> str:
    """Absolute path of the libnvpair shared object to link and load."""
    for path in _ldconfig_candidates() + _multiarch_candidates():
        # Prefer the SONAME link (libnvpair.so.3) to the versioned file.
        if os.path.isabs(path) and os.path.exists(path) and \
                re.search(r"libnvpair\.so\.\d+$", path):
            return path
    for path in _multiarch_candidates():
        if os.path.exists(path):
            return path
    raise BuildError("libnvpair not found: " + _INSTALL_HINT)


@functools.lru_cache(maxsize=None)
def compiler() -> Optional[str]:
    """The C compiler to use, or None when there is none."""
    for name in (os.environ.get("CC"), "cc", "gcc"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _command(cc: str, nvpair: str, output: str) -> List[str]:
    libdir, libname = os.path.split(nvpair)
    return [cc, *CFLAGS, "-o", output, SOURCE, "-L" + libdir,
            "-l:" + libname, "-Wl,-rpath," + libdir]


def build_library(dest_path: str) -> str:
    """Compile fake_libdiskmgt.c into ``dest_path`` (directories created),
    reusing a cached build of the same source; returns ``dest_path``."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler (cc or gcc): install gcc")
    nvpair = nvpair_path()
    with open(SOURCE, "rb") as f:
        source = f.read()
    key = hashlib.sha256(b"\0".join(
        [source] + [a.encode() for a in _command(cc, nvpair, "")]
    )).hexdigest()[:20]
    cached = os.path.join(CACHE, key, "libdiskmgt.so.1")
    if not os.path.exists(cached):
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(cached),
                                   suffix=".so.tmp")
        os.close(fd)
        try:
            proc = subprocess.run(_command(cc, nvpair, tmp),
                                  capture_output=True, text=True,
                                  timeout=300, check=False)
            if proc.returncode != 0:
                raise BuildError("cannot compile %s:\n%s" % (
                    SOURCE, proc.stderr.strip()))
            # Concurrent builders race harmlessly: the rename is atomic.
            os.replace(tmp, cached)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    dest_path = os.path.abspath(dest_path)
    os.makedirs(os.path.dirname(dest_path), exist_ok=True)
    # A copy, not a link: the library finds its data file beside its own
    # path (dladdr), which must be the destination's directory.
    tmp = dest_path + ".tmp.%d" % os.getpid()
    shutil.copyfile(cached, tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest_path)
    return dest_path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: build.py DEST_PATH")
    try:
        print(build_library(sys.argv[1]))
    except BuildError as e:
        sys.exit("build.py: %s" % e)


def libraries_for_tests(directory: str):
    """(libdiskmgt, libnvpair) for a test fixture: the fake built into
    DIRECTORY/lib.  Where it cannot be built the test is skipped, except
    under CI, which installs what it needs (tests/deps.sh): never a skip
    there."""
    import pytest
    try:
        nvpair = nvpair_path()
        lib = build_library(os.path.join(directory, "lib",
                                         "libdiskmgt.so.1"))
    except BuildError as e:
        if os.environ.get("CI"):
            raise
        pytest.skip("fake libdiskmgt cannot be built here: %s" % e)
    return lib, nvpair
