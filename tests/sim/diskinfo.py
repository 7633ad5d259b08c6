# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fake diskinfo(1M) (facts §9): every mode of ``diskinfo [-Hp]
[{-c|-P}]`` from the devinfo properties (split ATA model for SATA
disks; for blkdev the model nvme split the same way, or virtio's
"Virtio" / "Block Device"), the logical block size and the solid-state
flag of the attached sd unit or of the blkdev media.  TYPE is the
controller type upper-cased: NVME for an NVMe namespace, "-" for a disk
without a controller type (virtio).  Runs no commands.
"""

from typing import Dict, List, Tuple

from . import cliopt
from . import kernel


def _tristate(v) -> str:
    return "-" if v is None else ("yes" if v else "no")


def _condensed(v, c: str) -> str:
    return "?" if v is None else (c if v else "-")


def rows(state: Dict) -> List[Dict]:
    """One record per fixed disk, in enumeration order."""
    out = []
    for d in state["scenario"]["disks"]:
        if d["dtype"] != "disk" or not state["present"][d["name"]]:
            continue
        if d.get("driver") == "blkdev":
            ssd = bool(d["solid_state"])
        else:
            unit = kernel.unit_of(state, d["name"])
            ssd = bool(unit and unit["fields"]["un_f_is_solid_state"])
        loc = d["location"] or {}
        out.append({
            "ctype": (d["ctype"] or "-").upper(), "device": d["name"],
            "vid": d["vendor_id"] or "-", "pid": d["product_id"] or "-",
            "bytes": d["blocks"] * d["logical_block"],
            "removable": bool(d["removable"]), "ssd": ssd,
            "serial": d["serial"] or None,
            "chassis": loc.get("chassis", -1), "slot": loc.get("slot", -1),
            "label": loc.get("label"), "faulty": d["faulty"],
            "locate": d["locate"]})
    return out


def main(state: Dict, argv0: str, argv: List[str]) -> Tuple[str, str, int]:
    scripted = parseable = physical = condensed = False
    err = "Usage: %s [-Hp] [{-c|-P}]\n" % argv0
    try:
        opts, _ = cliopt.getopt(argv0, argv, ":cHPp")
    except cliopt.GetoptError as e:
        return "", err + "unknown option -%s\n" % e.opt, 1
    for c, _ in opts:
        if c == "c":
            if physical:
                return "", err + "-c and -P are mutually exclusive\n", 1
            condensed = True
        elif c == "H":
            scripted = True
        elif c == "P":
            if condensed:
                return "", err + "-c and -P are mutually exclusive\n", 1
            physical = True
        elif c == "p":
            parseable = True
    out = []
    if not scripted:
        if physical:
            out.append("DISK                    VID      PID"
                       "              SERIAL               FLT LOC"
                       " LOCATION\n")
        elif condensed:
            out.append("TYPE    DISK                    VID      PID"
                       "              SERIAL\n")
            out.append("\tSIZE          FLRS LOCATION\n")
        else:
            out.append("TYPE    DISK                    VID      PID"
                       "              SIZE          RMV SSD\n")
    nx = state["flavour"] == "nexenta"
    for r in rows(state):
        if parseable:
            size = "%d" % r["bytes"]
            slot = r["slot"] if nx else -1
            where = "%d,%d" % (r["chassis"], slot)
        else:
            size = "%7.2f GiB" % (r["bytes"] / 1024.0 / 1024.0 / 1024.0)
            if r["label"] is not None and (nx or r["chassis"] >= 0):
                where = "[%d] %s" % (r["chassis"], r["label"])
            elif r["label"] is not None:
                where = r["label"]
            else:
                where = "-"
        serial = r["serial"] or "-"
        flags = (_condensed(r["faulty"], "F") + _condensed(r["locate"], "L")
                 + _condensed(r["removable"], "R")
                 + _condensed(r["ssd"], "S"))
        if physical:
            fields = (r["device"], r["vid"], r["pid"], serial,
                      _tristate(r["faulty"]), _tristate(r["locate"]), where)
            fmt = "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" if scripted else \
                "%-22s  %-8s %-16s %-20s %-3s %-3s %s\n"
        elif condensed:
            fields = (r["ctype"], r["device"], r["vid"], r["pid"], serial,
                      size, flags, where)
            fmt = "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" if scripted else \
                "%-7s %-22s  %-8s %-16s %-20s\n\t%-13s %-4s %s\n"
        else:
            fields = (r["ctype"], r["device"], r["vid"], r["pid"], size,
                      _tristate(r["removable"]), _tristate(r["ssd"]))
            fmt = "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" if scripted else \
                "%-7s %-22s  %-8s %-16s %-13s %-3s %-3s\n"
        out.append(fmt % fields)
    return "".join(out), "", 0
