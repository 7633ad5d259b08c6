# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Shared tools for the adversarial regression tests (issue 10): a
simulated appliance per test, the launcher run against it, configurations
whose commands fail in a chosen way, and hand-made state files.

Each test in tests/adversarial/ names the finding of the adversarial
report it covers (U1, D3, T8 ...) in its name; every one of them failed on
8c0221c.  Nothing of the product is imported: tests run bin/sdtune by
path, as an operator would.
"""

import os
import stat
import subprocess
import sys
import time
from typing import Dict, Optional

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from sdtune.records.record import QueueDepth  # noqa: E402
from tests import builders  # noqa: E402
from tests.harness import sdtuneserver  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

LAUNCHER = os.path.join(REPO, "bin", "sdtune")
INTEL = "ATA     INTEL SSDSC2BA40"
INTEL_DISK = "c0t55CD2E404C0D8D0Ed0"


def build(tmp_path, scenario="small-nexenta") -> Appliance:
    return Appliance.build(scenario, str(tmp_path / "app"))


def run(app: Appliance, *args: str, config: Optional[str] = None,
        stdin: Optional[str] = None, env: Optional[Dict[str, str]] = None,
        timeout: float = 120, root: Optional[str] = None
        ) -> subprocess.CompletedProcess:
    """bin/sdtune -R ROOT --config CONFIG ARGS, as Appliance.sdtune, with
    optional extra environment (SDTUNE_* harness variables only)."""
    full_env = {"PATH": "/usr/bin:/bin",
                "SDTUNE_PYTHON": sdtuneserver.python(),
                "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    full_env.update(env or {})
    argv = [LAUNCHER, "-R", root if root is not None else app.root,
            "--config", config or app.config, *args]
    return subprocess.run(argv, env=full_env, input=stdin,
                          capture_output=True, text=True,
                          stdin=None if stdin is not None else
                          subprocess.DEVNULL, timeout=timeout, check=False)


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    """The exit status is one of the documented ones and nothing of
    Python leaked."""
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    assert "Error:" not in proc.stderr or "sdtune:" in proc.stderr, text
    assert proc.returncode in (0, 1, 2, 3, 4, 130), (proc.returncode, text)


def script(path: str, body: str) -> str:
    """An executable /bin/sh script at ``path``."""
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def config_with(app: Appliance, path: str, **commands: str) -> str:
    """A copy of the appliance's sdtune.conf with some [commands] entries
    pointing elsewhere (name=absolute path); written to ``path``."""
    out = []
    section = None
    for line in open(app.config).read().splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s
        elif section == "[commands]" and "=" in s:
            name = s.split("=", 1)[0].strip()
            if name in commands:
                line = "%s = %s" % (name, commands[name])
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


def failing(tmp_path, name: str,
            message: str = "internal error: cannot open /dev/zfs: "
            "Permission denied") -> str:
    """A command that prints ``message`` on stderr and exits 1."""
    return script(str(tmp_path / ("fail-" + name)),
                  "echo '%s' >&2\nexit 1" % message)


def inject_record(app: Appliance, key: Optional[str], recommended: dict,
                  nv_sup: bool = True, serial: str = "S1",
                  when: Optional[float] = None, **overrides) -> str:
    """A certification record as `sdtune certify` stores it: of the
    firmware the appliance's disks of ``key`` run (plan holds back a
    record of another firmware), unless ``firmware=`` says otherwise."""
    installed = [disk.get("firmware") for disk in app.expected_disks()
                 if key is not None and disk.get("key") == key]
    rec = builders.cert_record(
        key, serial, firmware=installed[0] if installed and installed[0]
        else "0270", when=when or time.time(), target="c9t9d9",
        device="/dev/rdsk/x", time_iso="2026-11-22T00:00:00Z",
        source="test", native=recommended.get("physical-block-size"),
        recommended=recommended, sector_reason="injected",
        cache="nonvolatile", cache_reason="injected", nv_sup=nv_sup,
        queue_depth=QueueDepth(32, {}, 32, None, 0.99, "injected"),
    ).to_json()
    rec.update(overrides)
    return builders.store_record(app.root, rec, "%s--%s.json" % (
        (key or "path").replace(" ", "_"), serial))


def sd_conf_bytes(app: Appliance) -> bytes:
    with open(app.sd_conf, "rb") as f:
        return f.read()


def journal_dir(app: Appliance) -> str:
    return os.path.join(app.root, "var", "sdtune", "journal")


def mode_of(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)
