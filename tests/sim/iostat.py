# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fake iostat(1M) for ``-E`` / ``-En`` (facts §14): the error kstats
of every attached sd unit and of every blkdev disk, printed by
show_disk_errors()'s column counter, and the GB value computed from a
float.  sd's are character kstats (printed at most 16 characters, the
serial cut to 15 by sd); blkdev's are string kstats printed whole
(blkdev.c bd_create_errstats()): an NVMe namespace shows its Model (the
40-character Identify Controller field, blanks kept), Revision (8) and
Serial No (20, blanks kept) and no Vendor or Product; a virtio disk its
unpadded Vendor and Product.  Devices come in iostat's order: by module
name (blkdev before sd), then instance.  Other report types are not
modelled.  Runs no commands.
"""

import struct
from typing import Dict, List, Tuple

from . import cliopt
from . import kernel

_USAGE = ("Usage: iostat [-cCdDeEiImMnpPrstxXYz]  [-l n] [-T d|u] "
          "[disk ...] [interval [count]]\n")


def _float(x: int) -> float:
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def _entry(name: str, dev: str, d: Dict, size: int) -> str:
    """show_disk_errors() for one disk."""
    out: List[str] = []
    line: List[str] = []

    def push(s: str) -> None:
        line.append(s)

    def newline() -> None:
        if line:
            out.append("".join(line) + "\n")
            line.clear()

    n = len(dev)
    if n > 20:
        push("%s " % dev)
    elif n > 16:
        push("%-20.20s " % dev)
    elif name == "pretty":
        push("%-16.16s " % dev)
    else:
        push("%-9.9s " % dev)
    if d.get("driver") == "blkdev" and d["model"]:
        # nvme hands blkdev the full space-padded Identify fields.
        ident = [("Model", "s", d["model"].ljust(40)),
                 ("Revision", "s", d["firmware"].ljust(8)),
                 ("Serial No", "s", d["serial"].ljust(20))]
    elif d.get("driver") == "blkdev":
        ident = [("Vendor", "s", d["vendor_id"]),
                 ("Product", "s", d["product_id"]),
                 ("Revision", "s", d["firmware"] or "0001"),
                 ("Serial No", "s", d["serial"] or "0               ")]
    else:
        ident = [("Vendor", "c", d["vid"]), ("Product", "c", d["pid"]),
                 ("Revision", "c", d["rev"]),
                 ("Serial No", "c", d["serial"][:15])]
    stats = [("Soft Errors", "u", 0), ("Hard Errors", "u", 0),
             ("Transport Errors", "u", 0)] + ident + [
             ("Size", "ull", size),
             ("Media Error", "u", 0), ("Device Not Ready", "u", 0),
             ("No Device", "u", 0), ("Recoverable", "u", 0),
             ("Illegal Request", "u", 0),
             ("Predictive Failure Analysis", "u", 0)]
    col = 0
    for i, (label, kind, value) in enumerate(stats):
        col += len(label)
        if kind == "c":
            text = value[:16].split("\0", 1)[0]
            push("%s: %s " % (label, text))
            col += len(text)
        elif kind == "s":
            push("%s: %s " % (label, value))
            col += len(value)
        elif label == "Size":
            newline()
            push("%s: %2.2fGB <%d bytes>" % (label, _float(value) / 1e9,
                                             value))
            newline()
            col = 0
        else:
            push("%s: %u " % (label, value))
            col += 4
        if col >= 62 or i == 2:
            newline()
            col = 0
    if col > 0:
        newline()
    newline()
    return "".join(out)


def main(state: Dict, argv0: str, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("iostat", argv,
                                       "tdDxXYCciIpPfFnmMeEszrT:l:")
    except cliopt.GetoptError as e:
        return "", e.message + _USAGE, 1
    flags = {c for c, _ in opts}
    if "E" not in flags or flags - {"E", "n"} or \
            any(o[:1].isdigit() for o in operands):
        return "", "iostat: sim: only 'iostat -E[n] [disk ...]' is " \
                   "modelled\n", 2
    pretty = "n" in flags
    devices = []
    for d in state["scenario"]["disks"]:
        if d.get("driver") == "blkdev" and state["present"][d["name"]]:
            devices.append(("blkdev", d["instance"], d,
                            d["blocks"] * d["logical_block"]))
    for key, unit in state["units"].items():
        d = kernel.disk(state, unit["disk"])
        if d.get("driver", "sd") != "sd":
            continue            # the kernel model's stand-in, not sd's
        f = unit["fields"]
        size = f["un_blockcount"] * f["un_sys_blocksize"] \
            if f.get("un_f_blockcount_is_valid") else 0
        devices.append(("sd", int(key), d, size))
    out = []
    for module, inst, d, size in sorted(devices, key=lambda x: x[:2]):
        short = "%s%d" % (module, inst)
        dev = d["name"] if pretty else short
        if operands and d["name"] not in operands and \
                short not in operands:
            continue
        out.append(_entry("pretty" if pretty else "sd", dev, d, size))
    return "".join(out), "", 0
