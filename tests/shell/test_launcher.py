# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for bin/sdtune, the ksh93 launcher: fixed environment, exit status
pass-through, argument passing and the global-zone refusal.  A fake python
and a fake zonename stand in for the real ones."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.sim.testing import open_to_others

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAUNCHER = os.path.join(REPO, "bin", "sdtune")
KSH = "/bin/ksh"

pytestmark = pytest.mark.skipif(not os.access(KSH, os.X_OK),
                                reason="%s (ksh93) is not installed" % KSH)

FAKE_PYTHON = """#!/bin/sh
for arg in "$@"; do
    printf 'arg=%s\\n' "$arg"
done
printf 'PATH=%s\\n' "$PATH"
printf 'LC_ALL=%s\\n' "$LC_ALL"
printf 'PYTHONPATH=%s\\n' "$PYTHONPATH"
exit 7
"""


def script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def launch(tmp_path, args, zonename=None, launcher=LAUNCHER):
    env = {
        "PATH": "/nonexistent:/usr/bin:/bin",
        "LC_ALL": "de_DE.UTF-8",
        "PYTHONPATH": "/nonexistent",
        "SDTUNE_PYTHON": script(tmp_path, "python", FAKE_PYTHON),
        # Never the real /usr/bin/zonename, which may exist on a build host.
        "SDTUNE_ZONENAME_CMD": zonename or str(tmp_path / "no-zonename"),
    }
    return subprocess.run([KSH, launcher, *args], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, check=False)


def test_exit_status_and_arguments_pass_through(tmp_path):
    proc = launch(tmp_path, ["-R", "/a root", "disks", "-o", "json", ""])
    assert proc.returncode == 7
    lines = proc.stdout.splitlines()
    args = [x[4:] for x in lines if x.startswith("arg=")]
    # python -I -S -B -c BOOTSTRAP PLUGINDIR, then the arguments
    # unchanged.
    assert args[:4] == ["-I", "-S", "-B", "-c"]
    assert "runpy.run_module(\"sdtune\"" in "\n".join(lines)
    assert os.path.join(REPO, "plugin") in args
    i = args.index(os.path.join(REPO, "plugin"))
    assert args[i + 1:] == ["-R", "/a root", "disks", "-o", "json", ""]
    assert "PATH=/usr/sbin:/usr/bin:/sbin:/bin" in lines
    assert "LC_ALL=C" in lines
    assert "PYTHONPATH=" in lines          # the caller's is dropped
    assert proc.stderr == ""


def test_current_directory_cannot_shadow_modules(tmp_path):
    """A stray sdtune.py or subprocess.py where root runs sdtune must not
    be imported instead of the real ones (real python, real package)."""
    for name in ("sdtune.py", "subprocess.py", "argparse.py"):
        (tmp_path / name).write_text("raise SystemExit('SHADOWED')\n")
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": str(tmp_path / "no-zonename"),
           "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([KSH, LAUNCHER, "--help"], env=env,
                          cwd=str(tmp_path), capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "SHADOWED" not in proc.stdout + proc.stderr
    assert "usage: sdtune" in proc.stdout


def test_symlinked_directory_finds_plugin(tmp_path):
    os.symlink(os.path.join(REPO, "bin"), str(tmp_path / "linked-bin"))
    proc = launch(tmp_path, ["audit"],
                  launcher=str(tmp_path / "linked-bin" / "sdtune"))
    assert proc.returncode == 7
    assert "arg=%s" % os.path.join(REPO, "plugin") in (
        proc.stdout.splitlines())


def test_non_global_zone_refused(tmp_path):
    zonename = script(tmp_path, "zonename", "#!/bin/sh\necho zone1\n")
    proc = launch(tmp_path, ["disks"], zonename=zonename)
    assert proc.returncode == 3
    assert proc.stderr == "sdtune: cannot run in non-global zone 'zone1'\n"
    assert proc.stdout == ""    # python never ran


def test_global_zone_runs(tmp_path):
    zonename = script(tmp_path, "zonename", "#!/bin/sh\necho global\n")
    proc = launch(tmp_path, ["disks"], zonename=zonename)
    assert proc.returncode == 7


def test_failing_zonename_refused(tmp_path):
    zonename = script(tmp_path, "zonename", "#!/bin/sh\nexit 1\n")
    proc = launch(tmp_path, ["disks"], zonename=zonename)
    assert proc.returncode == 3
    assert proc.stderr == (
        "sdtune: cannot determine zone: '%s' failed\n" % zonename)
    assert proc.stdout == ""


def test_missing_python(tmp_path):
    env = {"SDTUNE_PYTHON": str(tmp_path / "no-python"),
           "SDTUNE_ZONENAME_CMD": str(tmp_path / "no-zonename")}
    proc = subprocess.run([KSH, LAUNCHER, "disks"], env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 4
    assert proc.stderr == (
        "sdtune: cannot run '%s': not found\n" % env["SDTUNE_PYTHON"])


def test_launcher_is_executable():
    assert os.access(LAUNCHER, os.X_OK)
    with open(LAUNCHER) as f:
        assert f.readline() == "#!/bin/ksh\n"


def test_shellcheck_clean():
    shellcheck = shutil.which("shellcheck") or "/usr/bin/shellcheck"
    if not os.access(shellcheck, os.X_OK):
        pytest.skip("shellcheck is not installed")
    proc = subprocess.run([shellcheck, "-s", "ksh", LAUNCHER],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_installed_layout_finds_lib_plugin(tmp_path):
    """Installed as <prefix>/sbin/sdtune, the package is in
    <prefix>/lib/sdtune/plugin (make install)."""
    sbin = tmp_path / "usr" / "sbin"
    plugin = tmp_path / "usr" / "lib" / "sdtune" / "plugin"
    (plugin / "sdtune").mkdir(parents=True)
    sbin.mkdir(parents=True)
    shutil.copy(LAUNCHER, str(sbin / "sdtune"))
    proc = launch(tmp_path, ["disks"], launcher=str(sbin / "sdtune"))
    assert proc.returncode == 7, proc.stderr
    assert "arg=%s" % os.path.realpath(str(plugin)) in (
        proc.stdout.splitlines())


def test_tree_layout_wins_over_installed_layout(tmp_path):
    bindir = tmp_path / "bin"
    (tmp_path / "plugin" / "sdtune").mkdir(parents=True)
    (tmp_path / "lib" / "sdtune" / "plugin" / "sdtune").mkdir(parents=True)
    bindir.mkdir()
    shutil.copy(LAUNCHER, str(bindir / "sdtune"))
    proc = launch(tmp_path, ["disks"], launcher=str(bindir / "sdtune"))
    assert proc.returncode == 7, proc.stderr
    assert "arg=%s" % os.path.realpath(str(tmp_path / "plugin")) in (
        proc.stdout.splitlines())


def test_no_package_found(tmp_path):
    bindir = tmp_path / "sbin"
    bindir.mkdir()
    shutil.copy(LAUNCHER, str(bindir / "sdtune"))
    proc = launch(tmp_path, ["disks"], launcher=str(bindir / "sdtune"))
    assert proc.returncode == 4
    assert proc.stderr == ("sdtune: cannot find '%s/../lib/sdtune/plugin'\n"
                           % os.path.realpath(str(bindir)))
    assert proc.stdout == ""


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to become nobody")
@pytest.mark.parametrize("args, refused", [
    (["apply", "--yes"], True),
    (["-R", "/r", "certify", "c0t0d0"], True),
    (["--config", "/c", "rollback", "--last"], True),
    (["trace", "flush"], True),
    (["disks"], False),
    (["-R", "/apply", "audit"], False),
    (["sdconf", "check", "/x"], False)])
def test_ordinary_user_refused_for_root_commands(tmp_path, args, refused):
    fake = script(tmp_path, "python", FAKE_PYTHON)
    open_to_others(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": fake,
           "SDTUNE_ZONENAME_CMD": str(tmp_path / "no-zonename")}
    proc = subprocess.run(NOBODY + [KSH, LAUNCHER, *args], env=env,
                          cwd="/", capture_output=True, text=True,
                          check=False)
    if refused:
        name = next(a for a in args if a in ("apply", "certify",
                                             "rollback", "trace"))
        assert proc.returncode == 3
        assert proc.stderr == "sdtune: cannot run '%s': must be root\n" \
            % name
        assert proc.stdout == ""                # python never ran
    else:
        assert proc.returncode == 7, proc.stderr  # the fake python ran
