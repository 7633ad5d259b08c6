# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance's `sdio`: SCSI commands are answered from the
scenario's disk (INQUIRY VPD 0x86 NV_SUP, the caching mode page's WCE,
READ CAPACITY(16)), since the emulated drives behind the device nodes are
files that take no SCSI commands (a disk under blkdev takes none at all,
as on illumos); every other use runs the REAL engine
(plugin/engine/sdio), so the I/O measured is real.

`sdio prove` runs the real engine too, with the simulated sd's answer to
its two disk ioctls preloaded (dkioshim.c, built here once per source
and cached under .build/): dkio() decides from the sd_lun the simulated
kernel attached the disk with what DKIOCGMEDIAINFOEXT reports and
whether DKIOCFLUSHWRITECACHE reaches the drive, so that a flush sd would
send costs what the emulated drive behind the node charges for it.

The disk is found from the target path: /dev/rdsk/<name>[sp]N under the
appliance's root.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from typing import Dict, Optional, Tuple

from . import kernel

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")
# The uses the simulator answers itself (scsi()) or sets up (prove(),
# powercut()); every other use is the engine's alone.
SIMULATED = ("scsi", "prove", "powercut")
SHIM_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "dkioshim.c")
SHIM_CACHE = os.path.join(os.path.dirname(SHIM_SOURCE), ".build")
# What tells the shim the simulated sd's answers (dkioshim.c).
SHIM_ENV = "SDTUNE_SIM_DKIO"
_NAME = re.compile(r"^(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)(?:[sp][0-9]+)?$")


def _disk(state: Dict, target: str) -> Optional[Dict]:
    m = _NAME.match(os.path.basename(target))
    if not m:
        return None
    for d in state["scenario"]["disks"]:
        if d["name"] == m.group(1):
            return d
    return None


def _vpd86(d: Dict) -> bytes:
    page = bytearray(64)
    page[1], page[3] = 0x86, 60
    if d.get("nv_sup"):
        page[6] |= 0x02
    return bytes(page)


def _caching_page(d: Dict) -> bytes:
    header = bytes([0, 6 + 20, 0, 0, 0, 0, 0, 0])      # no block descriptor
    page = bytearray(20)
    page[0], page[1] = 0x08, 0x12
    if d.get("wce", True):
        page[2] |= 0x04
    return header + bytes(page)


def _readcap16(d: Dict) -> Optional[bytes]:
    if d.get("rc16") is None:
        return None
    data = bytearray(32)
    data[0:8] = (d["blocks"] - 1).to_bytes(8, "big")
    data[8:12] = d["logical_block"].to_bytes(4, "big")
    data[13] = d["rc16"] & 0x0F
    return bytes(data)


def scsi(state: Dict, args) -> Tuple[str, str, int]:
    words = [a for a in args if a != "--json"]
    if len(words) < 2:
        return "", "sdio: usage: sdio scsi COMMAND [PAGE] TARGET\n", 1
    target, what = words[-1], words[0]
    d = _disk(state, target)
    if d is None:
        return "", "sdio: %s: not a SCSI device\n" % target, 4
    if d.get("driver") == "blkdev":
        # blkdev has no USCSICMD: the engine's ioctl fails with ENOTTY.
        return "", ("sdio: cannot send %s to '%s': Inappropriate ioctl "
                    "for device (the target does not take SCSI "
                    "commands)\n" % (what, target)), 4
    if what == "vpd" and len(words) == 3 and int(words[1], 0) == 0x86:
        data = _vpd86(d)
    elif what == "modesense" and len(words) == 3 and \
            int(words[1], 0) == 0x08:
        data = _caching_page(d)
    elif what == "readcap16":
        data = _readcap16(d)
        if data is None:
            doc = {"command": what, "status": 2,
                   "sense_hex": "700005000000000a00000000240000",
                   "data_hex": ""}
            return json.dumps(doc) + "\n", "", 4
    else:
        return "", "sdio: scsi %s: not simulated\n" % " ".join(words), 4
    doc = {"command": what, "status": 0, "sense_hex": "",
           "data_hex": data.hex()}
    return json.dumps(doc) + "\n", "", 0


def _rc16_pbsize(d: Dict) -> Optional[int]:
    """The physical block a fresh READ CAPACITY(16) reports (None: it
    fails)."""
    if d.get("rc16") is None:
        return None
    return d["logical_block"] << d["rc16"]


def dkio(state: Dict, d: Dict) -> Optional[str]:
    """SHIM_ENV for disk ``d``: "LBSIZE PBSIZE CAPACITY drive|none", or
    None when no unit is attached (the engine then meets the node as
    it is).

    sd (facts §6.1, §6.4): dki_pbsize is, on NexentaStor, un_phy_blocksize
    as sd.conf set it, else the larger of it and what a fresh READ
    CAPACITY(16) reports (upstream: always the larger); a flush reaches
    the drive unless un_f_suppress_cache_flush is set or the write cache
    is off.  blkdev: 1 << d_pblkshift, and the flush reaches the drive
    while its volatile write cache is on.  A disk with
    ``dkio_ignores_sdconf`` answers as if sd.conf set nothing for it,
    whatever sd_lun says: the kernel whose paths disagree with its soft
    state, which prove must call contradicted."""
    lb = d["logical_block"]
    cap = d["blocks"]
    if not kernel.is_sd(d):
        from . import nvme
        if not state["present"][d["name"]]:
            return None
        pb = 1 << nvme.blkshifts(state, d)[1]
        c = nvme.controller_state(state, d["controller"]) \
            if d.get("model") else None
        flush = "drive" if c is None or c.get("vwc_enabled") else "none"
        return "%d %d %d %s" % (lb, pb, cap, flush)
    u = kernel.unit_of(state, d["name"])
    if u is None:
        return None
    f = u["fields"]
    device = _rc16_pbsize(d)
    if d["dkio_ignores_sdconf"]:
        pb, flush = device or lb, "drive" if d["wce"] else "none"
        return "%d %d %d %s" % (lb, pb, cap, flush)
    pb = f["un_phy_blocksize"]
    if not (state["flavour"] == "nexenta" and
            f.get("un_f_sdconf_phy_blocksize")):
        pb = max(pb, device or 0)
    suppressed = f["un_f_suppress_cache_flush"] or \
        not f["un_f_write_cache_enabled"]
    return "%d %d %d %s" % (lb, pb, cap, "none" if suppressed else "drive")


def shim() -> str:
    """The built dkioshim.so, compiled at most once per source."""
    with open(SHIM_SOURCE, "rb") as f:
        source = f.read()
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler (cc or gcc) for dkioshim.c")
    cmd = [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror"]
    key = hashlib.sha256(source + " ".join(cmd).encode()).hexdigest()[:20]
    out = os.path.join(SHIM_CACHE, key, "dkioshim.so")
    if os.path.exists(out):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), suffix=".tmp")
    os.close(fd)
    try:
        proc = subprocess.run(cmd + ["-o", tmp, SHIM_SOURCE, "-ldl"],
                              capture_output=True, text=True, timeout=120,
                              check=False)
        if proc.returncode != 0:
            raise RuntimeError("cannot compile %s: %s"
                               % (SHIM_SOURCE, proc.stderr.strip()))
        # Concurrent builders race harmlessly: the rename is atomic.
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def prove(state: Dict, args) -> Tuple[str, str, int]:
    """Run the real engine's prove with the simulated sd's answers."""
    env = dict(os.environ)
    target = next((a for a in args if a.startswith("/")), None)
    d = _disk(state, target) if target else None
    answer = dkio(state, d) if d is not None else None
    if answer is not None:
        try:
            env["LD_PRELOAD"] = shim()
        except RuntimeError as e:
            return "", "sdio: %s\n" % e, 2
        env[SHIM_ENV] = answer
    os.execve(ENGINE, [ENGINE, "prove"] + list(args), env)
    raise AssertionError("not reached")


def wrapper(runner: str) -> str:
    """The body of bin/sdio: the engine itself, straight from the shell
    (no Python first, and the engine is the wrapper's own process, as
    make faults' strace and kills need), but for the SIMULATED uses,
    which ``runner`` (fakecmd) answers or sets up."""
    return ("case $1 in\n%s) exec %s \"$@\" ;;\nesac\nexec %s \"$@\"\n"
            % ("|".join(SIMULATED), runner, shlex.quote(ENGINE)))


def powercut(state: Dict, args) -> Tuple[str, str, int]:
    """The real engine's power-cut writer or read-back; the writer first
    waits what the appliance's state says (Appliance.hold_powercut), so
    that a test can cut the power before any write."""
    if args[:1] == ["write"] and state.get("powercut_hold_s"):
        time.sleep(float(state["powercut_hold_s"]))
    os.execv(ENGINE, [ENGINE, "powercut"] + list(args))
    raise AssertionError("not reached")


def main(state: Dict, args) -> Tuple[str, str, int]:
    if args and args[0] == "scsi":
        return scsi(state, args[1:])
    if args and args[0] == "prove":
        return prove(state, args[1:])
    if args and args[0] == "powercut":
        return powercut(state, args[1:])
    os.execv(ENGINE, [ENGINE] + list(args))
    raise AssertionError("not reached")
