# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`ansible-test sanity` on a copy of the sdtune.illumos collection
placed under a temporary ansible_collections/sdtune/illumos (where
ansible-test must run), and `ansible-doc` on each module.

Every sanity test that runs without docker runs.  Those that need
packages of their own (ansible-doc, import, pep8, pylint,
runtime-metadata, validate-modules, yamllint) make ansible-test build a
virtual environment each and bootstrap pip into it with a script it
downloads from ci-files.testing.ansible.com, which this machine does
not reach: tests/ansible/get_pip.py stands in for that script, and the
environments are kept in VENV_HOME between runs (about 70 s to build
them once, a few seconds after)."""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest

from marks import needs

pytestmark = pytest.mark.ansible

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COLLECTION = os.path.join(REPO, "plugin", "ansible")
MODULES = ("sdtune_info", "sdtune_records", "sdtune_tune")
SANITY = ("action-plugin-docs", "changelog", "compile", "empty-init",
          "ignores", "line-endings", "no-assert", "no-get-exception",
          "no-illegal-filenames", "no-smart-quotes", "pslint",
          "replace-urlopen", "shebang",
          "shellcheck", "symlinks", "use-argspec-type-path",
          "use-compat-six")


# Sanity tests that run in a virtual environment of their own.
IN_VENV = ("ansible-doc", "import", "pep8", "pylint", "runtime-metadata",
           "validate-modules", "yamllint")
# ansible-test keeps its virtual environments and its pip bootstrap
# script under $HOME/.ansible/test: a home of its own that outlives the
# run, like a package cache.
VENV_HOME = "/var/tmp/sdtune-ansible-test"
# The pip ansible-test 2.19 pins for its environments (the version of
# ansible-core is pinned in tests/deps.sh).
PIP_VERSION = "24.2"


def tool(name):
    needs("ansible", name)
    path = os.path.join(sysconfig.get_path("scripts"), name)
    return path if os.path.exists(path) else shutil.which(name)


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    if tool("ansible-test") is None:
        pytest.skip("ansible-core is not installed (tests/deps.sh)")
    top = str(tmp_path_factory.mktemp("sanity"))
    shutil.copytree(COLLECTION, os.path.join(
        top, "ansible_collections", "sdtune", "illumos"),
        ignore=shutil.ignore_patterns("__pycache__", "output"))
    return top


def env(top):
    return {"PATH": os.path.dirname(tool("ansible-test")) + ":/usr/bin:/bin",
            "HOME": top, "LC_ALL": "C.UTF-8", "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_COLLECTIONS_PATH": top,
            "ANSIBLE_LOCAL_TEMP": os.path.join(top, "tmp")}


def sanity(collections, tests, home, timeout):
    """Run ``tests`` of ansible-test sanity on the collection's copy,
    with ``home`` as $HOME; each must run and pass."""
    argv = [tool("ansible-test"), "sanity", "--python", "3.11", "--color",
            "no"]
    for t in tests:
        argv += ["--test", t]
    root = os.path.join(collections, "ansible_collections", "sdtune",
                        "illumos")
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=root,
                          env=dict(env(collections), HOME=home),
                          capture_output=True, text=True, timeout=timeout,
                          check=False)
    print("ansible-test sanity (%s): %.1f s"
          % (", ".join(tests), time.monotonic() - start))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    ran = [line for line in proc.stdout.splitlines()
           if line.startswith("Running sanity test")]
    assert len(ran) == len(tests), proc.stdout


def test_ansible_test_sanity(collections):
    sanity(collections, SANITY, collections, 100)


def test_ansible_test_sanity_in_virtual_environments(collections):
    cache = os.path.join(VENV_HOME, ".ansible", "test", "cache")
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(os.path.join(os.path.dirname(__file__), "get_pip.py"),
                    os.path.join(cache, "get_pip_%s.py"
                                 % PIP_VERSION.replace(".", "_")))
    sanity(collections, IN_VENV, VENV_HOME, 600)


@pytest.mark.parametrize("name", MODULES)
def test_ansible_doc(collections, name):
    proc = subprocess.run([tool("ansible-doc"), "-t", "module", "--json",
                           "sdtune.illumos." + name], cwd=collections,
                          env=env(collections), capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    doc = json.loads(proc.stdout)["sdtune.illumos." + name]
    assert doc["doc"]["description"] and doc["examples"] and doc["return"]
    options = doc["doc"]["options"]
    for common in ("sdtune", "root", "config", "host"):
        assert common in options, common
    assert options["sdtune"]["default"] == "/usr/sbin/sdtune"


@pytest.mark.parametrize("name", MODULES)
def test_documented_options_are_the_argument_spec(collections, name):
    """What validate-modules would check first, without its venv: the
    module, run by itself with an unknown option, lists the options it
    takes, which must be the documented ones."""
    path = os.path.join(collections, "ansible_collections", "sdtune",
                        "illumos", "plugins", "modules", name + ".py")
    args = os.path.join(collections, name + "-args.json")
    with open(args, "w") as f:
        json.dump({"ANSIBLE_MODULE_ARGS": {"no_such_option": 1,
                                           "src": "/nonexistent"}}, f)
    proc = subprocess.run([sys.executable, path, args], cwd=collections,
                          env=dict(env(collections),
                                   PYTHONPATH=collections),
                          capture_output=True, text=True, timeout=60,
                          check=False)
    result = json.loads(proc.stdout)
    assert result["failed"] is True
    supported = re.search(r"Supported parameters include: (.*)\.?$",
                          result["msg"]).group(1).rstrip(".")
    doc = subprocess.run([tool("ansible-doc"), "-t", "module", "--json",
                          "sdtune.illumos." + name], cwd=collections,
                         env=env(collections), capture_output=True,
                         text=True, timeout=60, check=True)
    options = json.loads(doc.stdout)["sdtune.illumos." + name]["doc"][
        "options"]
    assert sorted(supported.split(", ")) == sorted(options)
