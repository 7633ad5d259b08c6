# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fake update_drv(1M) and devfsadm(1M) (facts §11).

``update_drv [-v] [-f] sd|nvme`` checks root, parses its options like
the real one and hands the reload to the kernel model (kernel.py,
nvme.py); every message goes to stderr.  The options that edit driver
aliases, permissions or policy (-a -d -i -m -p -P -b -n) are not
modelled.  ``devfsadm [-v] [-i
driver]`` only confirms: the kernel model re-attaches units itself.
Runs no commands.
"""

from typing import Dict, List, Tuple

from . import cliopt
from . import kernel

UPD_DRV_USAGE = (
    "Usage:\tupdate_drv [ -f | -v ] <driver_module>\n"
    "\tupdate_drv [ -b basedir ] [ -f | -v | -n ] -a\n"
    "\t\t[-m 'permission'] [-i 'identify_name']\n"
    "\t\t[-P privilege] [-p 'policy']  <driver_module>\n"
    "\tupdate_drv [ -b basedir ] [ -f | -v | -n ] -d\n"
    "\t\t[-m 'permission'] [-i 'identify_name']\n"
    "\t\t[-P privilege] [-p 'policy']  <driver_module>\n\n"
    "NOTE: at least one of m/i/P/p must be specified with -a and -d.\n")
_DEVFSADM_USAGE = (
    "Usage: devfsadm [-v] [-p path_to_inst] [-r root_dir] [-t table_file]"
    "\n\t\t[-c device_class | -i driver_name] [-s] [-C] [-I] [-n] [-P]\n")


def update_drv(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    if state["uid"] != 0:
        return "", "You must be root to run this program.\n", 1
    try:
        opts, operands = cliopt.getopt("update_drv", argv,
                                       "m:ni:b:p:adlfuvP:")
    except cliopt.GetoptError as e:
        return "", e.message + UPD_DRV_USAGE, 1
    flags = {c for c, _ in opts}
    if len(operands) != 1:
        return "", UPD_DRV_USAGE, 1
    if flags - {"f", "v"}:
        return "", "update_drv: sim: only 'update_drv [-v] [-f] <driver>' "\
                   "is modelled\n", 1
    if operands[0] == "nvme":
        from . import nvme
        err, rc = nvme.update_drv(state, "f" in flags, "v" in flags)
        return "", err, rc
    if operands[0] != "sd":
        return "", "Driver (%s) not installed.\n" % operands[0], 1
    err, rc = kernel.update_drv(state, "f" in flags, "v" in flags)
    return "", err, rc


def devfsadm(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("devfsadm", argv,
                                       "a:c:Cd:i:IlnN:p:r:st:vV:")
    except cliopt.GetoptError as e:
        return "", e.message + _DEVFSADM_USAGE, 1
    if operands:
        return "", _DEVFSADM_USAGE, 1
    if state["uid"] != 0:
        return "", "devfsadm: you must be root to run this program\n", 1
    for c, v in opts:
        if c == "i" and v not in ("sd", "nvme", "blkdev"):
            return "", "devfsadm: driver failed to attach: %s\n" % v, 1
        if c not in "iv":
            return "", "devfsadm: sim: -%s is not modelled\n" % c, 1
    return "", "", 0
