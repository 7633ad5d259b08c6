# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Helpers for the simulator's own tests (tests/sim/test_*.py): the
facts document's example host as scenario dicts, a way to run a fake
command in-process (fast) or through its DIR/bin wrapper (end to end),
and the commands sdtune runs on the 240-disk JBOD head (tests/sim/
test_jbod.py checks their answers, tests/bench/bench_sim.py times them);
for the platform tests (tests/e2e), a platform scenario with its fields
changed, its idle spare, and an operator's hand edit of an sd.conf copy.
"""

import copy
import json
import os
import sys
from typing import Dict, Iterable, List, Optional, Tuple

from . import fakecmd
from .appliance import Appliance, scenario_path

JBOD_VIDPID = (
    "::walk sd_state | ::grep '.!=0' | ::print struct sd_lun un_sd | "
    "::print struct scsi_device sd_inq | ::print struct scsi_inquiry "
    "inq_vid inq_pid\n")
# (command, arguments, standard input, at least this many lines out).
JBOD_COMMANDS = [
    ("mdb", ["-k"], "::sd_state\n", 50000),
    ("mdb", ["-k"], JBOD_VIDPID, 484),
    ("mdb", ["-k"], "::sd_state\n" + JBOD_VIDPID, 50000),
    ("iostat", ["-En"], "", 1210),
    ("diskinfo", ["-Hp"], "", 242),
    ("zpool", ["status"], "", 259),
    ("zdb", ["-C", "data"], "", 2500),
]

HGST_6F8D = {
    "name": "c0t5000CCA0496E6F8Dd0", "instance": 0,
    "phys_path": "/scsi_vhci/disk@g5000cca0496e6f8d",
    "vid": "HGST", "pid": "HUS724040ALS640", "rev": "A1C4",
    "serial": "P4GB6YEX", "blocks": 7814037168, "rotation_rate": 7200,
    "nv_sup": False,
    "location": {"chassis": 0, "slot": 0, "label": "Slot 00"}}
INTEL = {
    "name": "c0t55CD2E404C0D8D0Ed0", "instance": 1,
    "phys_path": "/scsi_vhci/disk@g55cd2e404c0d8d0e",
    "ata_model": "INTEL SSDSC2BA400G3", "rev": "0270",
    "serial": "BTTV5095012Z400HGN", "blocks": 781422768,
    "rotation_rate": 1, "nv_sup": False,
    "location": {"chassis": 0, "slot": 1, "label": "Slot 01"}}
SAMSUNG_AHCI = {
    "name": "c1t0d0", "instance": 2,
    "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@0,0", "ctype": "sata",
    "ata_model": "SAMSUNG MZ7LM480HCHP-00003", "rev": "403Q",
    "serial": "S2UJNX0J101234", "blocks": 937703088,
    "rotation_rate": 1, "nv_sup": False}
INTEL_KEY = "ATA     INTEL SSDSC2BA40"


def hgst(wwn_tail: str, instance: int) -> Dict:
    """Another HUS724040ALS640 like the facts' sd0, WWN ...6E<tail>."""
    d = copy.deepcopy(HGST_6F8D)
    d["name"] = "c0t5000CCA0496E%sd0" % wwn_tail
    d["phys_path"] = "/scsi_vhci/disk@g5000cca0496e%s" % wwn_tail.lower()
    d["serial"] = "P4GB%s" % wwn_tail
    d["instance"] = instance
    d.pop("location")
    return d


def facts_host(disks: Optional[Iterable[Dict]] = None,
               pairs: Iterable = (), pools: Iterable[Dict] = (),
               flavour: str = "nexenta", text: Optional[str] = None,
               **extra) -> Dict:
    """The facts' 3-disk host (sd0 SAS HDD, sd1 SATA Intel behind
    mpt_sas, sd2 SATA Samsung on AHCI), or other disks, as a scenario."""
    if disks is None:
        disks = [HGST_6F8D, INTEL, SAMSUNG_AHCI]
    conf = {"text": text} if text is not None else \
        {"shape": flavour, "pairs": [list(p) for p in pairs]}
    s = {"name": "facts-host", "flavour": flavour,
         "hostname": "nexenta01", "hostid": 1395523420,
         "disks": copy.deepcopy(list(disks)), "sd_conf": conf,
         "pools": copy.deepcopy(list(pools))}
    s.update(extra)
    return s


def run(app, cmd: str, *args: str, stdin: str = "") -> Tuple[str, str, int]:
    """A fake command in-process: (stdout, stderr, status)."""
    import io
    return fakecmd.run(app.dir, "/usr/sbin/" + cmd, cmd, list(args),
                       io.StringIO(stdin))


def mdb(app, text: str) -> Tuple[str, str, int]:
    return run(app, "mdb", "-k", stdin=text)


def unit_fields(app, name: str) -> Dict:
    """The attach fields of one disk's unit, from the kernel state."""
    for u in app.state()["units"].values():
        if u["disk"] == name:
            return u["fields"]
    raise KeyError(name)


def print_members(app, instance: int, members: List[str]) -> Dict[str, str]:
    """``*sd_state::softstate 0tN | ::print struct sd_lun ...`` parsed."""
    out, err, _ = mdb(app, "*sd_state::softstate 0t%d | ::print struct "
                      "sd_lun %s\n" % (instance, " ".join(members)))
    assert not err, err
    result = {}
    for line in out.splitlines():
        name, _, value = line.partition(" = ")
        result[name] = value
    return result


def platform_appliance(directory: str, scenario: str,
                       **platform) -> Appliance:
    """A shipped platform scenario (scenarios/), its platform fields
    changed, built in `directory`."""
    with open(scenario_path(scenario)) as f:
        s = json.load(f)
    s["platform"] = dict(s["platform"], **platform)
    return Appliance.build(s, directory)


def spare_disk(app: Appliance) -> Dict:
    """The expected disk that is a pool's idle spare."""
    return next(d for d in app.expected_disks()
                if any(u["kind"] == "spare" for u in d["in_use"]))


def add_pair(app: Appliance, path: str, key: str, tunables: str) -> None:
    """The operator's hand edit of the sd.conf copy at system path
    `path`: one pair at the head of its list (or a new list)."""
    full = os.path.join(app.root, path.lstrip("/"))
    with open(full, encoding="latin-1") as f:
        text = f.read()
    if "sd-config-list=" in text:
        text = text.replace("sd-config-list=", 'sd-config-list=\n    '
                            '"%s", "%s",' % (key, tunables), 1)
    else:
        text += 'sd-config-list = "%s", "%s";\n' % (key, tunables)
    with open(full, "w", encoding="latin-1") as f:
        f.write(text)


def open_to_others(tmp_path) -> None:
    """Let an ordinary user (the tests that run sdtune as nobody) reach
    ``tmp_path``: pytest makes its temporary directories private to
    root, one level deeper under pytest-xdist (popen-gwN), so every
    directory from pytest-of-<user> down is opened for reading."""
    path = os.path.abspath(str(tmp_path))
    while True:
        os.chmod(path, 0o755)
        if os.path.basename(path).startswith("pytest-of-") or \
                os.path.dirname(path) == path:
            return
        path = os.path.dirname(path)


def read_system_file(app: Appliance, path: str) -> Optional[bytes]:
    """The bytes of the appliance's file at system path `path`; None
    when it does not exist."""
    full = os.path.join(app.root, path.lstrip("/"))
    if not os.path.exists(full):
        return None
    with open(full, "rb") as f:
        return f.read()


def sdtune_checked(app: Appliance, *args: str):
    """`sdtune ARGS` on the appliance; never a traceback."""
    proc = app.sdtune(*args)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def sdtune_json(app: Appliance, *args: str) -> Dict:
    """The document of `sdtune ARGS -o json` (exit 0 or 1)."""
    proc = sdtune_checked(app, *args, "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


# Ctrl-C reaches a command run in the foreground of a terminal, where
# SIGINT is at its default.  A test run started in the background by a
# shell without job control (a CI script, `make check &`) inherits SIGINT
# ignored, and so would the sdtune it starts: Python then leaves it
# ignored, as it should, and a SIGINT test would test nothing.  This
# prefix execs the command (same PID) with SIGINT at its default.
AS_FOREGROUND = [sys.executable, "-c",
                 "import os, signal, sys; "
                 "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                 "os.execv(sys.argv[1], sys.argv[1:])"]


def as_foreground(argv: List[str]) -> List[str]:
    """argv, run as a terminal's foreground job would be (SIGINT at its
    default whatever this test run inherited)."""
    return AS_FOREGROUND + list(argv)
