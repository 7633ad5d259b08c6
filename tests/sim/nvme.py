# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated nvme driver: nvme.conf, what each controller takes from
it at attach, blkdev's physical block size of each namespace, and the
fake ``nvmeadm`` (shared/briefs' NVMe contract, from illumos-gate
usr/src/uts/common/io/nvme/nvme.c and usr/src/cmd/nvmeadm).

nvme.conf -- the first drv/nvme.conf on the module path, at boot from
the boot archive's copy when platform.reboot() passes one, as for
sd.conf -- is parsed at boot and by ``update_drv -f nvme`` into the
driver's loaded property list.  A controller takes its values
(min-phys-block-size, the volatile write cache, the nvme-config-list
triplets that match its model and firmware) when it attaches: at boot,
or when its drive is hot-plugged.  ``update_drv`` only reloads the list:
a controller whose namespaces are in use is not re-attached, an idle
one attaches again with the properties its node already had, so the
change shows after the next reboot (as for sd, facts §1.4).

Each namespace's blkdev physical block size is ns_best_block_size():
the best-performing LBA format without metadata, raised to the
controller's minimum.  Everything is kept in the appliance's JSON state
under ``state["nvme"]``.  Runs no commands.
"""

from typing import Dict, List, Optional, Tuple

from . import cliopt
from . import driverconf
from . import kernel

DEFAULT_MIN_BLOCK = 512
RP_NAMES = ("Best", "Better", "Good", "Degraded")
NVMEADM_USAGE = (
    "usage:\n"
    "  nvmeadm [-dhv] list [<ctl>[/<ns>][,...]]\n"
    "  nvmeadm [-dhv] identify <ctl>[/<ns>][,...]\n"
    "  nvmeadm [-dhv] get-features <ctl>[/<ns>][,...] [<feature>[,...]]\n")
# Console messages as nvme's dev_err() writes them to the system log.
_WARN = "nvme: [ID 265585 kern.warning] WARNING: %s: %s"


# ---------------------------------------------------------------- scenario

def controllers(s: Dict) -> Dict[int, Dict]:
    """Every NVMe controller of scenario ``s``: instance -> {name,
    model, serial, firmware, version, vwc_present, vwc_enabled_default,
    parent, namespaces (disks in nsid order)}.  scenario.normalize()
    has checked that the namespaces of one controller agree."""
    out: Dict[int, Dict] = {}
    for d in s["disks"]:
        if d.get("driver") != "blkdev" or not d.get("model"):
            continue
        c = out.setdefault(d["controller"], {
            "instance": d["controller"], "name": "nvme%d" % d["controller"],
            "model": d["model"], "serial": d["serial"],
            "firmware": d["firmware"], "version": d["nvme_version"],
            "vwc_present": d["vwc_present"],
            "vwc_enabled_default": d["vwc_enabled_default"],
            "parent": d["phys_path"].rsplit("/", 1)[0], "namespaces": []})
        c["namespaces"].append(d)
    for c in out.values():
        c["namespaces"].sort(key=lambda d: d["nsid"])
    return dict(sorted(out.items()))


def best_block_size(d: Dict, min_block: int) -> int:
    """ns_best_block_size(): the size of the format in use, then each
    format with a better relative performance and no metadata (up to
    the first unused entry), raised to the controller's minimum.  A
    result below the logical block is refused by blkdev, which falls
    back to the logical block (inferred from bd_attach)."""
    formats = d["lba_formats"]
    best = formats[d["lba_format"]]["data"]
    last_rp = 3
    for f in formats:
        if f["data"] == 0:
            break
        if f["ms"] != 0 or f["rp"] >= last_rp:
            continue
        last_rp = f["rp"]
        best = f["data"]
    best = max(best, min_block)
    return max(best, d["logical_block"])


# ---------------------------------------------------------------- conf

def read_conf(state: Dict,
              archive: Optional[Dict[str, Optional[str]]] = None) -> List:
    """Parse nvme.conf now (boot, update_drv): the driver-global
    properties, in lookup order."""
    path, parsed = kernel.parse_conf(state, "nvme", archive)
    props: List[list] = []
    for spec in parsed.specs:
        names = {p[0] for p in spec["props"]}
        if spec["name"] == "nvme" and not names & {"reg", "unit-address"}:
            props.extend(p for p in spec["props"] if p[0] != "class")
    props.extend(parsed.globals)
    kernel.log(state, ["genunix: [ID 469209 kern.warning] WARNING: " + w
                       for w in parsed.warnings])
    state["nvme"]["loaded_from"] = path
    return props


def _get_int(props: List, name: str, default: int) -> int:
    """ddi_prop_get_int(): the first integer property of the name (a
    string one is passed over); a name without a value is an integer 0
    (modsysfile.c make_prop()); none: the default."""
    p = next((q for q in props if q[0] == name and q[1] != "string"), None)
    if p is None:
        return default
    if p[1] == "boolean":
        return 0
    return p[2][0]


def strtoul(text: str) -> Optional[int]:
    """ddi_strtoul(text, NULL, 0): leading blanks, an optional sign,
    0x hex / 0 octal / decimal, trailing garbage ignored; None when no
    digit is formed or on overflow (64-bit unsigned long)."""
    i = 0
    while i < len(text) and text[i] in " \t\n\r\f\v":
        i += 1
    neg = False
    if i < len(text) and text[i] in "+-":
        neg = text[i] == "-"
        i += 1
    rest = text[i:]
    if rest[:1] != "0":
        base = 10
    elif rest[1:2] in ("x", "X"):
        base = 16
    else:
        base = 8
    if base == 16 and len(rest) > 2 and \
            rest[2] in "0123456789abcdefABCDEF":
        rest = rest[2:]
    digits = "0123456789abcdef"[:base]
    n = 0
    while n < len(rest) and rest[n].lower() in digits:
        n += 1
    if n == 0:
        return None
    value = int(rest[:n], base)
    if value >= 1 << 64:
        return None
    return (-value) & ((1 << 64) - 1) if neg else value


def _isp2(value: int) -> bool:
    return value & (value - 1) == 0


def attach_controller(c: Dict, props: List) -> Tuple[Dict, List[str]]:
    """What controller ``c`` takes from the property list at attach:
    ({min_block, vwc_enabled (None when no cache), ignore_unknown_vendor_
    status, config_list_applied}, warnings)."""
    warnings: List[str] = []
    min_block = _get_int(props, "min-phys-block-size", DEFAULT_MIN_BLOCK)
    if min_block < DEFAULT_MIN_BLOCK or not _isp2(min_block):
        warnings.append("min-phys-block-size %s, using default %d" % (
            "too low" if _isp2(min_block) else "not a power of 2",
            DEFAULT_MIN_BLOCK))
        min_block = DEFAULT_MIN_BLOCK
    vwc = _get_int(props, "volatile-write-cache-enable", 1) != 0
    ignore_vs = _get_int(props, "ignore-unknown-vendor-status", 0) != 0
    cfg = {"min_block": min_block, "vwc": vwc, "ignore_vs": ignore_vs,
           "applied": []}
    _config_list(c, props, cfg, warnings)
    return {"min_block": cfg["min_block"],
            "vwc_enabled": cfg["vwc"] if c["vwc_present"] else None,
            "ignore_unknown_vendor_status": cfg["ignore_vs"],
            "config_list_applied": cfg["applied"]}, warnings


def _tokens(text: str) -> List[str]:
    """strtok(text, ","): empty tokens skipped, blanks kept."""
    return [t for t in text.split(",") if t]


def _config_list(c: Dict, props: List, cfg: Dict,
                 warnings: List[str]) -> None:
    """nvme_config_list(): every triplet that matches the controller's
    model and firmware, in order; a malformed tuple stops the list."""
    # ddi_prop_lookup_string_array(): the first string property of the
    # name; one of another type is passed over.
    values = driverconf.lookup(props, "nvme-config-list", "string")
    if values is None:
        return
    if len(values) % 3 != 0:
        warnings.append("nvme-config-list: must be triplets of strings")
        return
    for i in range(0, len(values), 3):
        model, fwrevs, tuples = values[i:i + 3]
        if model != c["model"]:
            continue
        if fwrevs and c["firmware"] not in _tokens(fwrevs):
            continue
        cfg["applied"].append(i // 3)
        for tup in _tokens(tuples):
            if ":" not in tup or tup.startswith(":"):
                warnings.append("nvme-config-list: malformed entry '%s' "
                                "for model '%s'" % (tup, model))
                return
            name, value = tup.split(":", 1)
            _config_tuple(name, value, model, cfg, warnings)


def _config_tuple(name: str, value: str, model: str, cfg: Dict,
                  warnings: List[str]) -> None:
    booleans = {"ignore-unknown-vendor-status": "ignore_vs",
                "volatile-write-cache": "vwc"}
    if name in booleans:
        if value in ("on", "true"):
            cfg[booleans[name]] = True
        elif value in ("off", "false"):
            cfg[booleans[name]] = False
        else:
            warnings.append("nvme-config-list: invalid value for '%s' "
                            "'%s' for model '%s', ignoring"
                            % (name, value, model))
    elif name == "min-phys-block-size":
        size = strtoul(value)
        msg = ""
        if size is not None and not _isp2(size):
            msg = ": not a power of 2"
        elif size is not None and size < DEFAULT_MIN_BLOCK:
            msg = ": too low"
        if size is None or msg:
            warnings.append("nvme-config-list: ignoring invalid "
                            "min-phys-block-size '%s' for model '%s'%s"
                            % (value, model, msg))
            # The controller's minimum is reset, not left as it was.
            cfg["min_block"] = DEFAULT_MIN_BLOCK
        else:
            cfg["min_block"] = size
    else:
        warnings.append("nvme-config-list: unknown config '%s' for "
                        "model '%s', ignoring" % (name, model))


# ---------------------------------------------------------------- kernel

def new_state() -> Dict:
    return {"loaded": [], "loaded_from": None, "controllers": {}}


def _attach(state: Dict, c: Dict, props: List) -> None:
    values, warnings = attach_controller(c, props)
    state["nvme"]["controllers"][str(c["instance"])] = values
    kernel.log(state, [_WARN % (c["name"], w)
                       for w in warnings])


def boot(state: Dict,
         archive: Optional[Dict[str, Optional[str]]] = None) -> None:
    """A fresh nvme module reads nvme.conf and attaches every controller
    with a present namespace."""
    state["nvme"] = new_state()
    state["nvme"]["loaded"] = read_conf(state, archive)
    for c in controllers(state["scenario"]).values():
        if any(state["present"][d["name"]] for d in c["namespaces"]):
            _attach(state, c, state["nvme"]["loaded"])


def hotplug(state: Dict, d: Dict) -> None:
    """An NVMe drive pulled and re-inserted: its controller attaches
    again with the loaded list."""
    c = controllers(state["scenario"])[d["controller"]]
    _attach(state, c, state["nvme"]["loaded"])


def update_drv(state: Dict, force: bool, verbose: bool) -> Tuple[str, int]:
    """update_drv [-v] [-f] nvme: stderr text, exit status.  The list is
    reloaded; no attached controller changes its values."""
    if state["uid"] != 0:
        return "You must be root to run this program.\n", 1
    if state["drv_lock"]:
        return "add_drv/rem_drv currently busy; try later\n", 1
    err = []
    busy = any(kernel.is_busy(state, d["name"])
               for c in controllers(state["scenario"]).values()
               for d in c["namespaces"] if state["present"][d["name"]])
    if busy:
        err.append("Cannot unload module: nvme\nWill be unloaded upon "
                   "reboot.\n")
        if not force:
            if verbose:
                err.append("nvme.conf not updated in the kernel\n")
            return "".join(err), 1
        err.append("Forcing update of nvme.conf.\n")
    state["nvme"]["loaded"] = read_conf(state)
    if verbose:
        err.append("nvme.conf updated in the kernel.\n")
    return "".join(err), 0


def controller_state(state: Dict, instance: int) -> Optional[Dict]:
    return state["nvme"]["controllers"].get(str(instance))


def blkshifts(state: Dict, d: Dict) -> Tuple[int, int]:
    """(d_blkshift, d_pblkshift) of a blkdev disk: virtio's physical
    block is its logical one; an NVMe namespace's is the best block
    size with its controller's minimum."""
    lb = d["logical_block"]
    shift = lb.bit_length() - 1
    if not d.get("model"):
        return shift, shift
    c = controller_state(state, d["controller"])
    min_block = c["min_block"] if c else DEFAULT_MIN_BLOCK
    return shift, best_block_size(d, min_block).bit_length() - 1


def disk_info(state: Dict, d: Dict) -> Optional[Dict]:
    """The contract's "nvme" object of a namespace (None otherwise)."""
    if d.get("driver") != "blkdev" or not d.get("model"):
        return None
    c = controller_state(state, d["controller"])
    return {"controller": "nvme%d" % d["controller"],
            "namespace": d["nsid"], "version": d["nvme_version"],
            "lba_formats": [{"index": i, "data_bytes": f["data"],
                             "metadata_bytes": f["ms"],
                             "relative_performance": RP_NAMES[f["rp"]]}
                            for i, f in enumerate(d["lba_formats"])],
            "lba_format_in_use": d["lba_format"],
            "volatile_write_cache": {
                "present": d["vwc_present"],
                "enabled": (c["vwc_enabled"] if c else
                            d["vwc_enabled_default"])
                if d["vwc_present"] else False}}


# ---------------------------------------------------------------- nvmeadm

def nvme_print(indent: int, name: str, index: Optional[int] = None,
               value: Optional[str] = None) -> str:
    """nvmeadm's nvme_print(): the name (and index), and the value
    starting at column 44 when there is one."""
    label = name if index is None else "%s %d" % (name, index)
    line = " " * indent + label
    if value is not None:
        pad = max(0, 43 - (indent + len(label) + 1))
        line += ": " + " " * pad + value
    return line + "\n"


def _mib(d: Dict) -> int:
    return d["blocks"] * d["logical_block"] // 1024 // 1024


def _attached(state: Dict, c: Dict) -> bool:
    return any(state["present"][d["name"]] for d in c["namespaces"])


def nicenum(n: int) -> str:
    """libcmdutils' nicenum with a space before the unit, base 1024, as
    nvmeadm list prints sizes since 2022: whole when exact, else two
    decimals ("931.51 G", "1 G", "0 ")."""
    index = 0
    while n >= 1024 << (10 * index) and index < 6:
        index += 1
    unit = " KMGTPE"[index].strip()
    if n % (1 << (10 * index)) == 0:
        return "%d %s" % (n >> (10 * index), unit)
    return "%.2f %s" % (n / (1 << (10 * index)), unit)


def _list(state: Dict, ctrls: List[Dict]) -> str:
    """nvmeadm list as illumos prints it since 2022-09: sizes by
    nicenum; a namespace blkdev has not attached says (unattached)."""
    out = []
    for c in ctrls:
        out.append("%s: model: %s, serial: %s, FW rev: %s, NVMe v%s\n" % (
            c["name"], c["model"], c["serial"], c["firmware"],
            c["version"]))
        for d in c["namespaces"]:
            size = d["blocks"] * d["logical_block"]
            used = size if kernel.is_busy(state, d["name"]) else 0
            disk = d["name"] if state["present"][d["name"]] \
                else "unattached"
            out.append("  %s/%d (%s): Size = %sB, Capacity = %sB, "
                       "Used = %sB\n" % (c["name"], d["nsid"], disk,
                                         nicenum(size), nicenum(size),
                                         nicenum(used)))
    return "".join(out)


def _pci_vendor(c: Dict) -> str:
    """The PCI vendor ID from the controller's node name (pciVVVV,DDDD)."""
    leaf = c["parent"].rsplit("/", 1)[-1]
    if leaf.startswith("pci") and "," in leaf:
        return "0x" + leaf[3:leaf.index(",")]
    return "0x0"


def _identify_ctrl(state: Dict, c: Dict) -> str:
    vwc = "yes" if c["vwc_present"] else "no"
    return "".join([
        "%s: Identify Controller\n" % c["name"],
        nvme_print(2, "Controller Capabilities and Features"),
        nvme_print(4, "Model", value=c["model"]),
        nvme_print(4, "Serial", value=c["serial"]),
        nvme_print(4, "Firmware Revision", value=c["firmware"]),
        nvme_print(4, "PCI vendor ID", value=_pci_vendor(c)),
        nvme_print(2, "NVM Command Set Attributes"),
        nvme_print(4, "Number of Namespaces",
                   value="%d" % max(d["nsid"] for d in c["namespaces"])),
        nvme_print(4, "Volatile Write Cache"),
        nvme_print(6, "Present", value=vwc)])


def _identify_ns(state: Dict, c: Dict, d: Dict, verbose: bool) -> str:
    size = "%dMB" % _mib(d)
    used = "%dMB" % (_mib(d) if kernel.is_busy(state, d["name"]) else 0)
    out = ["%s/%d: Identify Namespace\n" % (c["name"], d["nsid"]),
           nvme_print(2, "Namespace Capabilities and Features"),
           nvme_print(4, "Namespace Size", value=size),
           nvme_print(4, "Namespace Capacity", value=size),
           nvme_print(4, "Namespace Utilization", value=used),
           nvme_print(4, "Number of LBA Formats",
                      value="%d" % len(d["lba_formats"])),
           nvme_print(4, "Formatted LBA Size"),
           nvme_print(6, "LBA Format", value="%d" % d["lba_format"]),
           nvme_print(6, "Extended Data LBA", value="no")]
    for i, f in enumerate(d["lba_formats"]):
        if f["ms"] != 0 and not verbose:
            continue
        out += [nvme_print(4, "LBA Format", i),
                nvme_print(6, "Metadata Size", value="%d bytes" % f["ms"]),
                nvme_print(6, "LBA Data Size",
                           value="%d bytes" % f["data"]),
                nvme_print(6, "Relative Performance",
                           value=RP_NAMES[f["rp"]])]
    return "".join(out)


def _get_features_cache(state: Dict, c: Dict) -> Tuple[str, str, int]:
    if not c["vwc_present"]:
        # nvmeadm before libnvme (2024): the header, the driver's EINVAL
        # on stderr, exit 0.
        return "%s: Get Features\n" % c["name"], (
            "nvmeadm: unsupported feature: Volatile Write Cache\n"), 0
    cs = controller_state(state, c["instance"])
    enabled = cs["vwc_enabled"] if cs else c["vwc_enabled_default"]
    return ("%s: Get Features\n" % c["name"] +
            nvme_print(2, "Volatile Write Cache") +
            nvme_print(4, "Volatile Write Cache",
                       value="enabled" if enabled else "disabled")), "", 0


def _target(state: Dict, ctrls: Dict[str, Dict], text: str
            ) -> Tuple[Optional[Dict], Optional[Dict], str]:
    """(controller, namespace or None, error) of nvmeN[/M]."""
    name, _, ns = text.partition("/")
    c = ctrls.get(name)
    if c is None:
        return None, None, "nvmeadm: %s: no such controller\n" % name
    if not ns:
        return c, None, ""
    for d in c["namespaces"]:
        if ns == str(d["nsid"]):
            return c, d, ""
    return None, None, "nvmeadm: %s: no such namespace\n" % text


def nvmeadm_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    """nvmeadm [-v] list | identify | get-features ... cache."""
    try:
        opts, operands = cliopt.getopt("nvmeadm", argv, "dhv")
    except cliopt.GetoptError as e:
        return "", e.message + NVMEADM_USAGE, 2
    flags = {o for o, _ in opts}
    if "h" in flags or not operands:
        return "", NVMEADM_USAGE, 0 if "h" in flags else 2
    if state["uid"] != 0:
        return "", "nvmeadm: failed to open /devices: Permission denied\n", 1
    verb, args = operands[0], operands[1:]
    ctrls = {c["name"]: c
             for c in controllers(state["scenario"]).values()
             if _attached(state, c)}
    if verb == "list":
        if len(args) > 1:
            return "", NVMEADM_USAGE, 2
        chosen = list(ctrls.values())
        if args:
            chosen = []
            for text in args[0].split(","):
                c, _, err = _target(state, ctrls, text.split("/")[0])
                if c is None:
                    return "", err, 1
                chosen.append(c)
        return _list(state, chosen), "", 0
    if verb == "identify":
        if len(args) != 1:
            return "", "nvmeadm: missing controller/namespace name\n", 2
        out = []
        for text in args[0].split(","):
            c, d, err = _target(state, ctrls, text)
            if c is None:
                return "".join(out), err, 1
            out.append(_identify_ns(state, c, d, "v" in flags) if d
                       else _identify_ctrl(state, c))
        return "".join(out), "", 0
    if verb == "get-features":
        if len(args) != 2 or args[1] != "cache":
            return "", ("nvmeadm: sim: only 'get-features nvmeN cache' is "
                        "modelled\n"), 2
        c, d, err = _target(state, ctrls, args[0])
        if c is None or d is not None:
            return "", err or ("nvmeadm: %s: feature \"cache\" is a "
                               "controller feature\n" % args[0]), 1
        return _get_features_cache(state, c)
    if verb in ("get-logpage", "format", "secure-erase", "detach",
                "attach", "get-param", "set-feature", "firmware-load",
                "firmware-commit", "activate-firmware"):
        return "", "nvmeadm: sim: %s is not modelled\n" % verb, 2
    return "", "nvmeadm: unknown command: %s\n%s" % (
        verb, NVMEADM_USAGE), 2
