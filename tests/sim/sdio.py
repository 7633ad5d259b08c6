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

The disk is found from the target path: /dev/rdsk/<name>[sp]N under the
appliance's root.
"""

import json
import os
import re
import shlex
from typing import Dict, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ENGINE = os.path.join(REPO, "plugin", "engine", "sdio")
# The one use the simulator answers itself (scsi()); every other use
# is the engine's.
SIMULATED = "scsi"
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


def wrapper(runner: str) -> str:
    """The body of bin/sdio: the engine itself, straight from the shell
    (no Python first, and the engine is the wrapper's own process, as
    make faults' strace and kills need), but for the SIMULATED use,
    which ``runner`` (fakecmd) answers."""
    return ("case $1 in\n%s) exec %s \"$@\" ;;\nesac\nexec %s \"$@\"\n"
            % (SIMULATED, runner, shlex.quote(ENGINE)))


def main(state: Dict, args) -> Tuple[str, str, int]:
    if args and args[0] == SIMULATED:
        return scsi(state, args[1:])
    os.execv(ENGINE, [ENGINE] + list(args))
    raise AssertionError("not reached")
