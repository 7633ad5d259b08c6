# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for `sdio diskmgt` (plugin/engine/diskmgt.c) as a program: its
usage, its JSON document, and what it says when the library cannot be
asked.  The fake libdiskmgt (tests/sim/libdiskmgt) and Debian's libnvpair
stand in for illumos; tests/unit/inventory/test_libdiskmgt.py checks the
same path through sdtune's Python side."""

import errno
import json
import os
import sys

import pytest

from engine_run import EXIT_OK, EXIT_USAGE, run

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim", "libdiskmgt"))

import build  # noqa: E402

DISK_KEYS = {"name", "opath", "vendor_id", "product_id", "size_blocks",
             "block_bytes", "rpm", "removable", "solid_state", "ctype",
             "slices", "inuse", "errors"}

SCENARIO = "\n".join([
    "\t".join(["media", "id-a", "/dev/rdsk/c1t0d0s2", "1000", "512", "ATA",
               "SSD", "0", "1", "sata", "-"]),
    "slice\tid-a\tc1t0d0s0",
    "slice\tid-a\tc1t0d0s1",
    "inuse\tc1t0d0s0\tactive_pool\ttank",
    "inuse\tc1t0d0s0\tmount\t/a",
    "fail\tc1t0d0s1\t%d" % errno.EIO,
]) + "\n"


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """(libdiskmgt path, libnvpair path, data file path)."""
    root = tmp_path_factory.mktemp("dmroot")
    lib, nvpair = build.libraries_for_tests(str(root))
    return lib, nvpair, str(root / "diskmgt.tsv")


@pytest.fixture
def data(libs):
    def write(text):
        with open(libs[2], "w") as f:
            f.write(text)
    write(SCENARIO)
    return write


def query(sdio, libs, *extra, env=None):
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.update(env)
        proc = run(sdio, "diskmgt", "--diskmgt", libs[0], "--nvpair",
                   libs[1], *extra)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return json.loads(proc.stdout), proc.stderr


def test_document_shape(sdio, libs, data):
    doc, err = query(sdio, libs)
    assert err == ""
    assert set(doc) == {"version", "available", "reason", "disks"}
    assert (doc["version"], doc["available"], doc["reason"]) == (1, True, "")
    (d,) = doc["disks"]
    assert set(d) == DISK_KEYS
    assert d["name"] == "c1t0d0" and d["size_blocks"] == 1000
    assert (d["block_bytes"], d["rpm"], d["solid_state"]) == (512, None,
                                                              True)
    assert d["slices"] == ["/dev/dsk/c1t0d0s0", "/dev/dsk/c1t0d0s1"]
    # one record per message line, in the library's order
    assert [u["message"].split(" is ")[1][:12] for u in d["inuse"]] == [
        "part of acti", "currently mo"]
    assert all(u["slice"] == "/dev/dsk/c1t0d0s0" for u in d["inuse"])
    assert d["errors"] == ["cannot check '/dev/dsk/c1t0d0s1' for use: "
                           "%s (errno %d)" % (os.strerror(errno.EIO),
                                              errno.EIO)]


@pytest.mark.parametrize("extra,env,why", [
    (("--no-inuse",), None, "(--no-inuse)"),
    ((), {"NOINUSE_CHECK": "1"}, "NOINUSE_CHECK is set in the environment"),
])
def test_no_inuse(sdio, libs, data, extra, env, why):
    doc, _ = query(sdio, libs, *extra, env=env)
    (d,) = doc["disks"]
    assert d["inuse"] == [] and len(d["slices"]) == 2
    assert d["errors"] == [e for e in d["errors"] if why in e]
    assert len(d["errors"]) == 1 and "NOINUSE_CHECK" in d["errors"][0]


def test_enumeration_failure_and_the_library_saying_why(sdio, libs, data):
    data("media\tbroken\n")
    doc, err = query(sdio, libs)
    assert doc == {"version": 1, "available": False, "disks": [],
                   "reason": "cannot list fixed-disk media: %s (errno %d)"
                             % (os.strerror(errno.EINVAL), errno.EINVAL)}
    assert "media needs 11 fields" in err


def test_unloadable_library_is_unavailable_exit_0(sdio, libs, tmp_path):
    missing = str(tmp_path / "nope.so")
    proc = run(sdio, "diskmgt", "--diskmgt", missing, "--nvpair", libs[1],
               expect=EXIT_OK)
    doc = json.loads(proc.stdout)
    assert doc["available"] is False and doc["disks"] == []
    assert doc["reason"].startswith("cannot load '%s': " % missing)


def test_missing_function_is_unavailable(sdio, libs):
    proc = run(sdio, "diskmgt", "--diskmgt", libs[1], "--nvpair", libs[1])
    doc = json.loads(proc.stdout)
    assert doc["available"] is False
    assert doc["reason"].startswith("cannot find 'dm_get_descriptors' in "
                                    "'%s': " % libs[1])


@pytest.mark.parametrize("args", [
    (), ("--diskmgt", "/a.so"), ("--nvpair", "/a.so"),
    ("--diskmgt", "a.so", "--nvpair", "/b.so"),
    ("--diskmgt", "/a.so", "--nvpair"),
    ("--diskmgt", "/a.so", "--diskmgt", "/a.so", "--nvpair", "/b.so"),
    ("--diskmgt", "/a.so", "--nvpair", "/b.so", "--json"),
])
def test_usage(sdio, args):
    proc = run(sdio, "diskmgt", *args, expect=EXIT_USAGE)
    assert proc.stdout == ""
    assert "usage: sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH" in \
        proc.stderr


def test_main_usage_lists_diskmgt(sdio):
    proc = run(sdio, "--no-such-option", expect=EXIT_USAGE)
    assert "sdio diskmgt --diskmgt LIBPATH --nvpair LIBPATH" in proc.stderr
