# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fake ``mdb -k``: the few dcmds sdtune uses, on the simulated kernel
(facts §8).

Commands are read from standard input (or ``-e``), split on ``;`` and
``|``.  Modelled: ``::walk sd_state``, ``::grep '.!=0'``, ``::print`` of
struct sd_lun / scsi_device / scsi_inquiry with or without members (also
as a pipeline stage), ``::sd_state [-s]`` with or without an address,
``*sd_state::softstate 0tN``, blkdev's soft state (``*bd_state::walk
softstate | ::print [-d] bd_t d_dip->devi_instance d_blkshift
d_pblkshift``: NVMe namespaces and virtio disks) and ``$q``.  A failing
dcmd prints
``mdb: ...`` on stderr and aborts its pipeline; mdb then goes on with the
next command, as it does when its input is a pipe.  Disks under blkdev
(NVMe, virtio) are no sd units: sd_state never holds them.  Runs no
commands.
"""

import re
import shlex
from typing import Dict, List, Optional, Tuple

from . import kernel
from . import sdlun

_USAGE = (
    "Usage: mdb [-fkmuwyAFKMSUW] [+/-o option] [-p pid] [-s dist] "
    "[-I path] [-L path]\n\t[-P prompt] [-R root] [-V dis-version] "
    "[-e expr] [object [core] | core | suffix]\n\n")
DASH27 = "-" * 27
DASH30 = "-" * 30
# blkdev's soft state anchor (*bd_state), its symbol, its bd_t objects
# and their dev_info nodes: stable, illustrative addresses.
_BD_ANCHOR = 0xfffffe0bc4b1f200
_BD_SYMBOL = 0xfffffffffbd3d6e0
_BD_T = 0xfffffe0bd9a40000
_BD_DIP = 0xfffffe0bd5c10000
# bd_t members modelled: (type as sdlun renders it, value key).
_BD_MEMBERS = {"d_dip": ("ptr", "dip"),
               "d_dip->devi_instance": (("int", 32, True), "instance"),
               "d_blkshift": (("int", 32, False), "blkshift"),
               "d_pblkshift": (("int", 32, False), "pblkshift")}


class Abort(Exception):
    """The dcmd failed; the pipeline stops (message already queued)."""


class Mdb:
    """One mdb process: the kernel image and the output buffers."""

    def __init__(self, state: Dict) -> None:
        self.state = state
        self.flavour = state["flavour"]
        self.out: List[str] = []
        self.err: List[str] = []
        self.anchor, self.array = kernel.sd_state_addrs(state)
        self.n_items = state["n_items"]
        self.slots: List[int] = [0] * self.n_items
        self.objs: Dict[int, Tuple[str, int]] = {}
        self.units: Dict[int, Dict] = {}
        self.addrs: Dict[int, Dict[str, int]] = {}
        for key, unit in state["units"].items():
            driver = kernel.disk(state, unit["disk"]).get("driver", "sd")
            if driver != "sd":
                # A blkdev disk is no sd unit: not in sd_state.
                continue
            inst = int(key)
            a = kernel.addresses(state, unit, inst)
            self.units[inst] = unit
            self.addrs[inst] = a
            self.slots[inst] = a["un"]
            self.objs[a["un"]] = ("struct sd_lun", inst)
            self.objs[a["sd"]] = ("struct scsi_device", inst)
            self.objs[a["inq"]] = ("struct scsi_inquiry", inst)
        self._values: Dict[int, Dict] = {}
        self.lastret = 0
        # blkdev instances (present NVMe namespaces and virtio disks).
        from . import nvme
        self.bd: Dict[int, Dict] = {}
        for d in sorted(state["scenario"]["disks"],
                        key=lambda d: d["instance"]):
            if d.get("driver") != "blkdev" or \
                    not state["present"][d["name"]]:
                continue
            blkshift, pblkshift = nvme.blkshifts(state, d)
            self.bd[_BD_T + d["instance"] * 0x400] = {
                "dip": _BD_DIP + d["instance"] * 0x1000,
                "instance": d["instance"], "blkshift": blkshift,
                "pblkshift": pblkshift}

    # -------------------------------------------------------- values

    def values(self, inst: int) -> Dict:
        if inst not in self._values:
            unit = self.units[inst]
            d = kernel.disk(self.state, unit["disk"])
            self._values[inst] = sdlun.sd_lun_values(
                unit["fields"], self.addrs[inst], d, self.flavour,
                kernel.is_busy(self.state, unit["disk"]))
        return self._values[inst]

    def struct_of(self, type_name: str, addr: int) -> Tuple[list, Dict]:
        obj = self.objs.get(addr)
        if obj is None or obj[0] != type_name:
            self.warn("failed to read %s at %x: no mapping for address"
                      % (type_name, addr))
            raise Abort()
        inst = obj[1]
        if type_name == "struct sd_lun":
            return sdlun.sd_lun_members(self.flavour), self.values(inst)
        a = self.addrs[inst]
        d = kernel.disk(self.state, self.units[inst]["disk"])
        if type_name == "struct scsi_device":
            return sdlun.SCSI_DEVICE, {"sd_dev": a["sd"] + 0x2000,
                                       "sd_inq": a["inq"], "sd_sense": 0,
                                       "sd_private": a["un"]}
        return sdlun.SCSI_INQUIRY, {
            "inq_dtype": 5 if d["dtype"] == "cdrom" else 0,
            "inq_vid": d["vid"], "inq_pid": d["pid"],
            "inq_revision": d["rev"],
            "inq_serial": (d["inq_vendor"] + "\0" * 12)[:12]}

    def warn(self, msg: str) -> None:
        self.err.append("mdb: " + msg + "\n")

    # -------------------------------------------------------- parsing

    def run_text(self, text: str) -> None:
        for line in text.splitlines():
            for command in _split(line, ";"):
                command = command.strip()
                if not command:
                    continue
                if command in ("$q", "::quit", "$Q"):
                    return
                try:
                    self.lastret = 0
                    self.pipeline(command)
                except Abort:
                    self.lastret = 1

    def pipeline(self, command: str) -> None:
        stages = [s.strip() for s in _split(command, "|")]
        inputs: Optional[List[int]] = None
        for i, stage in enumerate(stages):
            m = re.match(r"^(?P<addr>[^:]*?)\s*::\s*(?P<dcmd>[A-Za-z_]\w*)"
                         r"(?P<args>.*)$", stage)
            if not m:
                self.warn("syntax error near \"%s\"" % stage)
                raise Abort()
            last = i == len(stages) - 1
            try:
                args = shlex.split(m.group("args"))
            except ValueError:
                self.warn("syntax error near \"%s\"" % stage)
                raise Abort()
            dcmd = m.group("dcmd")
            handler = getattr(self, "dcmd_" + dcmd, None)
            if handler is None:
                self.warn("invalid command '::%s': unknown dcmd name" % dcmd)
                raise Abort()
            if inputs is None:
                addr_text = m.group("addr").strip()
                calls = [self.eval_addr(addr_text)] if addr_text \
                    else [None]
            else:
                if m.group("addr").strip():
                    self.warn("syntax error near \"%s\"" % stage)
                    raise Abort()
                calls = inputs
            outputs: List[int] = []
            for addr in calls:
                outputs += handler(addr, args, last)
            if last:
                return
            if not outputs:
                return
            inputs = outputs

    def eval_addr(self, text: str) -> int:
        if text == "*sd_state":
            return self.anchor
        if text == "sd_state":
            return 0xfffffffffbd3c5a8
        if text == "*bd_state":
            return _BD_ANCHOR
        if text == "bd_state":
            return _BD_SYMBOL
        m = re.match(r"^0[tT](\d+)$", text)
        if m:
            return int(m.group(1))
        m = re.match(r"^(0[xX])?([0-9a-fA-F]+)$", text)
        if m:
            return int(m.group(2), 16)
        self.warn("failed to dereference symbol: unknown symbol name"
                  if text.startswith("*") else
                  "syntax error near \"%s\"" % text)
        raise Abort()

    # -------------------------------------------------------- dcmds

    def dcmd_walk(self, addr, args, last) -> List[int]:
        if not args or len(args) > 2:
            self.usage("walk", "?name [variable]")
        if args[0] == "softstate":
            return self._walk_softstate(addr, last)
        if args[0] != "sd_state":
            self.warn("failed to perform walk: unknown walk name")
            self.lastret = 1
            return []
        if last:
            self.out += ["0x%x\n" % a if a else "0\n" for a in self.slots]
            return []
        return list(self.slots)

    def _walk_softstate(self, addr, last) -> List[int]:
        """The softstate walker from a soft state anchor: every
        allocated item, in instance order."""
        if addr == self.anchor:
            items = [a for a in self.slots if a]
        elif addr == _BD_ANCHOR:
            items = list(self.bd)
        else:
            self.warn("failed to perform walk: %s walk requires a "
                      "softstate pointer" % "softstate"
                      if addr is None else
                      "failed to read i_ddi_soft_state at %x" % addr)
            self.lastret = 1
            return []
        if last:
            self.out += ["%x\n" % a for a in items]
            return []
        return items

    def _print_bd(self, addr, members: List[str], dec: bool) -> None:
        bd = self.bd.get(addr)
        if bd is None:
            self.warn("failed to read bd_t at %x: no mapping for address"
                      % addr)
            raise Abort()
        if not members:
            self.warn("sim: ::print bd_t without members is not modelled")
            raise Abort()
        for member in members:
            known = _BD_MEMBERS.get(member)
            if known is None:
                self.warn("failed to find member %s of bd_t: no such "
                          "member of structure or union"
                          % member.split("->")[-1].split(".")[-1])
                raise Abort()
            t, key = known
            t = (t,) if isinstance(t, str) else t
            self.out.append("%s = %s\n" % (
                member, sdlun.scalar(t, bd[key], dec)))

    def dcmd_grep(self, addr, args, last) -> List[int]:
        if len(args) != 1:
            self.usage("grep", "command")
        expr = args[0].replace(" ", "")
        if expr == ".!=0":
            keep = addr != 0
        elif expr == ".==0":
            keep = addr == 0
        else:
            self.warn("sim: ::grep expression %r is not modelled" % args[0])
            raise Abort()
        addr = addr or 0
        if not keep:
            return []
        if last:
            self.out.append("%x\n" % addr)
            return []
        return [addr]

    def dcmd_softstate(self, addr, args, last) -> List[int]:
        if addr is None or len(args) != 1:
            self.usage("softstate", ":<instance>")
        arg = args[0]
        m = re.match(r"^0[tT](\d+)$", arg)
        inst = int(m.group(1)) if m else int(arg, 16)
        if addr != self.anchor or inst >= self.n_items:
            self.warn("couldn't determine softstate for instance %d: "
                      "Error 0" % inst)
            self.lastret = 1
            return []
        if self.slots[inst] == 0:
            self.warn("instance %d unused" % inst)
            self.lastret = 1
            return []
        if last:
            self.out.append("%x\n" % self.slots[inst])
            return []
        return [self.slots[inst]]

    def dcmd_print(self, addr, args, last) -> List[int]:
        dec = False
        while args and args[0].startswith("-") and len(args[0]) > 1:
            for flag in args[0][1:]:
                if flag == "d":
                    dec = True
                elif flag == "x":
                    dec = False
                else:
                    self.warn("sim: ::print -%s is not modelled" % flag)
                    raise Abort()
            args = args[1:]
        if not args:
            self.usage("print", "[-aCdhiLptx] [-c lim] [-l lim] [type] "
                       "[member|offset ...]")
        type_name = args[0]
        if type_name in ("struct", "union", "enum") and len(args) > 1:
            type_name = args[0] + " " + args[1]
            args = args[2:]
        else:
            args = args[1:]
        if type_name in ("bd_t", "struct bd"):
            if addr is None or not last:
                self.warn("sim: ::print bd_t is modelled as the last "
                          "stage with an address")
                raise Abort()
            self._print_bd(addr, args, dec)
            return []
        if type_name not in sdlun.TYPES:
            self.warn("failed to look up type %s: No type information "
                      "available for that name" % type_name)
            raise Abort()
        if addr is None:
            self.usage("print", "[-aCdhiLptx] [-c lim] [-l lim] [type] "
                       "[member|offset ...]")
        members, values = self.struct_of(type_name, addr)
        types = dict(members)
        if not args:
            if last:
                self.out += [x + "\n" for x in
                             sdlun.render_struct(members, values, dec)]
                return []
            return [addr]
        piped: List[int] = []
        for member in args:
            path = member.split(".")
            t: Optional[tuple] = types.get(path[0])
            v = values.get(path[0])
            for sub in path[1:]:
                if t is None or t[0] != "struct":
                    t = None
                    break
                t, v = dict(t[1]).get(sub), (v or {}).get(sub)
            if t is None:
                self.warn("failed to find member %s of %s: no such member "
                          "of structure or union" % (
                              path[-1] if len(path) > 1 else member,
                              type_name))
                raise Abort()
            if last:
                self.out += [x + "\n" for x in
                             sdlun.render("", t, v, 0, dec, prefix=member)]
            elif t[0] in ("ptr", "int", "bf", "enum"):
                piped.append((v or 0) & 0xFFFFFFFFFFFFFFFF)
            elif t[0] == "cptr":
                piped.append(v[0] if v else 0)
            else:
                piped.append(addr)
        return piped

    def dcmd_sd_state(self, addr, args, last) -> List[int]:
        silent = False
        for a in args:
            if a == "-s":
                silent = True
            else:
                self.usage("sd_state", "[-s]")
        if addr is not None:
            self.out.append("\nun: %x\n--------------\n" % addr)
            obj = self.objs.get(addr)
            if obj is None or obj[0] != "struct sd_lun":
                self.warn("failed to read softstate at %x" % addr)
                return []
            self._unit_sections(obj[1], silent)
            return []
        valid = 0
        for i, a in enumerate(self.slots):
            if i == 0:
                self.out.append("walk_addr = %x\nwalking sd_state units via "
                                "ptr: %x\n%d entries in sd_state table\n"
                                % (self.anchor, self.array, self.n_items))
            self.out.append("\nun %d: %x\n--------------\n" % (i, a))
            if a:
                self._unit_sections(i, silent)
            if i >= self.n_items - 1:
                self.out.append("%s\nProcessed %d UN softstate entries\n%s\n"
                                % (DASH27, valid, DASH27))
            if a:
                valid += 1
        return []

    def _unit_sections(self, inst: int, silent: bool) -> None:
        out = self.out
        if not silent:
            out += [x + "\n" for x in sdlun.render_struct(
                sdlun.sd_lun_members(self.flavour), self.values(inst))]
            out.append("---\n")
        x = self.addrs[inst]["xbuf"]
        if not silent:
            out.append("\nXBUF ATTR:\n----------\n")
            out.append("0x%8x:\tmutex\t\tallocsize\tpending\n" % x)
            out.append("           \t%x\t\t%d\t\t%d\n" % (0, 168, 0))
            out.append("0x%8x:\tactive_limit\tactive_count\t"
                       "active_lowater\n" % (x + 0x14))
            out.append("           \t%x\t\t%x\t\t%x\n" % (0x200, 0, 0x80))
            out.append("0x%8x:\theadp\t\ttailp\n" % (x + 0x20))
            out.append("           \t%x%s\t%x\n" % (0, "\t", 0))
            out.append("0x%8x:\treserve_mutex\treserve_limit\t"
                       "reserve_count\treserve_headp\n" % (x + 0x30))
            arena = self.addrs[inst]["arena"]
            out.append("           \t%x\t\t%x\t\t%x\t\t%x\n"
                       % (0, 0x10, 0x10, arena + 0x98c0))
            out.append("0x%8x:\ttimeid\t\ttq\n" % (x + 0x58))
            out.append("           \t%x%s\t%x\n" % (0, "\t", arena + 0xa8a0))
            out.append("---\n\nXBUF Q:\n-------\n")
        out.append("xbuf Q head: 0\n%s\nProcessed 0 XBUF Q entries\n%s\n"
                   % (DASH27, DASH27))
        if not silent:
            out.append("\nUN WAIT Q:\n----------\n")
        out.append("UN wait Q head: 0\n%s\nProcessed 0 UN WAIT Q entries\n"
                   "%s\n" % (DASH30, DASH30))

    def usage(self, name: str, text: str) -> None:
        self.err.append("Usage: ::%s %s\n" % (name, text))
        raise Abort()


def _split(text: str, sep: str) -> List[str]:
    """Split on ``sep`` outside single or double quotes."""
    parts, cur, quote = [], [], None
    for c in text:
        if quote:
            cur.append(c)
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def main(state: Dict, argv: List[str], stdin) -> Tuple[str, str, int]:
    """mdb [-k] [-e expr]: (stdout, stderr, exit status)."""
    kflag = False
    expr: Optional[str] = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        j = 1
        while j < len(a):
            c = a[j]
            if c == "k":
                kflag = True
            elif c in "S":
                pass
            elif c == "e":
                rest = a[j + 1:]
                if rest:
                    expr = rest
                else:
                    i += 1
                    if i >= len(argv):
                        return "", ("mdb: option requires an argument -- "
                                    "e\n" + _USAGE), 2
                    expr = argv[i]
                break
            else:
                return "", "mdb: illegal option -- %s\n%s" % (c, _USAGE), 2
            j += 1
        i += 1
    if i < len(argv) or not kflag:
        return "", "mdb: sim: only 'mdb -k' on the live kernel is " \
                   "modelled\n", 2
    m = Mdb(state)
    m.run_text(expr if expr is not None else stdin.read())
    status = 1 if expr is not None and m.lastret else 0
    return "".join(m.out), "".join(m.err), status
