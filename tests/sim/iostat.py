"""Fake iostat(1M) for ``-E`` / ``-En`` (facts §14): the sd error kstats
of every attached sd unit, printed by show_disk_errors()'s column
counter, with the serial cut to 15 characters and the GB value computed
from a float.  Other report types are not modelled.  Runs no commands.
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
    serial = d["serial"][:15]
    stats = [("Soft Errors", "u", 0), ("Hard Errors", "u", 0),
             ("Transport Errors", "u", 0), ("Vendor", "c", d["vid"]),
             ("Product", "c", d["pid"]), ("Revision", "c", d["rev"]),
             ("Serial No", "c", serial), ("Size", "ull", size),
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
    out = []
    for key in sorted(state["units"], key=int):
        unit = state["units"][key]
        d = kernel.disk(state, unit["disk"])
        inst = int(key)
        f = unit["fields"]
        size = f["un_blockcount"] * f["un_sys_blocksize"] \
            if f.get("un_f_blockcount_is_valid") else 0
        dev = d["name"] if pretty else "sd%d" % inst
        if operands and d["name"] not in operands and \
                "sd%d" % inst not in operands:
            continue
        out.append(_entry("pretty" if pretty else "sd", dev, d, size))
    return "".join(out), "", 0
