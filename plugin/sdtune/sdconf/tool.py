"""`sdtune sdconf check|show|set|unset|diff`: offline sd.conf tools.

They work on files the operator names, never on the running kernel, and
read and write only through the Host seam (a write is atomic: the file is
the old one or the new one).  Without `--write`, set and unset print the
diff and change nothing.
"""

import json
from typing import Dict, List, Optional, TextIO

from ..errors import EXIT_OK, EXIT_PROBLEMS, RefusedError, UsageError
from ..host import Host
from .edit import EditError, parse_settings, set_tunables, unified_diff, \
    unset_tunables
from .lint import format_diagnostic, is_problem, lint
from .match import make_key
from .model import ConfigList, Pair, config_list, pair_alone, v1_data
from .parser import ConfFile, parse
from .tunables import SdState, decode_improved, v1_data_names


def read_conf(host: Host, path: str) -> ConfFile:
    return parse(host.read_bytes(path).decode("latin-1"))


def resolve_key(verb: str, path: str, key: Optional[str],
                vid: Optional[str], pid: Optional[str]) -> str:
    """The KEY argument, or one built from --vid/--pid."""
    if vid is not None or pid is not None:
        if key is not None:
            raise UsageError(verb, path, "give KEY or --vid/--pid, not both")
        if vid is None or pid is None:
            raise UsageError(verb, path, "--vid and --pid go together")
        try:
            return make_key(vid, pid)
        except ValueError as e:
            raise UsageError(verb, path, str(e)) from e
    if key is None:
        raise UsageError(verb, path, "no KEY (or --vid and --pid) given")
    return key


def cmd_check(host: Host, path: str, flavour: str, out: TextIO,
              as_json: bool = False) -> int:
    conf = read_conf(host, path)
    diags = lint(conf, flavour)
    if as_json:
        rows = []
        for d in diags:
            line, col = conf.line_col(d.offset)
            rows.append({"file": path, "line": line, "column": col,
                         "severity": d.severity, "code": d.code,
                         "message": d.message})
        json.dump({"diagnostics": rows}, out, indent=2)
        out.write("\n")
    else:
        for d in diags:
            out.write(format_diagnostic(conf, path, d) + "\n")
    return EXIT_PROBLEMS if any(is_problem(d) for d in diags) else EXIT_OK


def _written(pair: Pair) -> Dict[str, str]:
    """Tunables of a pair, name to value as written (last one wins)."""
    if not pair.improved:
        return {}
    return {name: value for name, value, _, _ in
            decode_improved(pair.tunables)
            if name is not None and value is not None}


def _pair_report(conf: ConfFile, pair: Pair, flavour: str) -> dict:
    after, results = pair_alone(conf, pair, flavour)
    default = SdState().as_dict()
    kernel = {k: v for k, v in after.as_dict().items() if v != default[k]}
    report = {
        "index": pair.index + 1,
        "line": conf.line_col(pair.start)[0],
        "key": pair.key,
        "format": "improved" if pair.improved else "legacy-v1",
        "tunables": _written(pair),
        "kernel": kernel,
        "ignored": [{"name": r.name, "value": r.value, "reason": r.reason}
                    for r in results if not r.accepted],
    }
    if not pair.improved:
        report["legacy_data"] = {n: v1_data(conf, n)
                                 for n in v1_data_names(pair.tunables)}
    return report


def show_report(conf: ConfFile, path: str, flavour: str) -> dict:
    clist = config_list(conf)
    line = conf.line_col(clist.prop.start)[0] if clist.prop else None
    return {
        "file": path,
        "flavour": flavour,
        "list": {"line": line, "usable": clist.usable,
                 "problem": clist.problem or None},
        "pairs": [_pair_report(conf, p, flavour) for p in clist.pairs],
    }


def cmd_show(host: Host, path: str, flavour: str, out: TextIO,
             as_json: bool = False) -> int:
    report = show_report(read_conf(host, path), path, flavour)
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
        return EXIT_OK
    lst = report["list"]
    if lst["line"] is None:
        out.write("%s: no sd-config-list\n" % path)
        return EXIT_OK
    state = "used by sd" if lst["usable"] else "IGNORED by sd: " + \
        lst["problem"]
    out.write("%s: sd-config-list at line %d, %d pairs, %s\n"
              % (path, lst["line"], len(report["pairs"]), state))
    if not report["pairs"]:
        return EXIT_OK
    width = max(len(p["key"]) for p in report["pairs"]) + 2
    out.write("%-4s %-5s %-*s %s\n"
              % ("PAIR", "LINE", width, "KEY", "TUNABLES"))
    for p in report["pairs"]:
        tunables = " ".join("%s:%s" % kv for kv in p["tunables"].items())
        if p["format"] != "improved":
            tunables = "legacy v1: " + " ".join(p["legacy_data"])
        out.write("%-4d %-5d %-*s %s\n"
                  % (p["index"], p["line"], width, '"%s"' % p["key"],
                     tunables))
        kernel = " ".join("%s=%s" % kv for kv in p["kernel"].items())
        out.write("%11s kernel: %s\n" % ("", kernel or "(no change)"))
        for ign in p["ignored"]:
            out.write("%11s ignored: %s:%s (%s)\n" % (
                "", ign["name"], ign["value"], ign["reason"]))
    return EXIT_OK


def _edit(host: Host, path: str, new_text: str, old_text: str,
          write: bool, out: TextIO) -> int:
    if new_text == old_text:
        out.write("%s: no change\n" % path)
        return EXIT_OK
    out.write(unified_diff(old_text, new_text, path, path + " (new)"))
    if write:
        host.write_atomic(path, new_text.encode("latin-1"))
        out.write("%s: written\n" % path)
    return EXIT_OK


def cmd_set(host: Host, path: str, key: str, settings: List[str],
            flavour: str, write: bool, out: TextIO) -> int:
    old = host.read_bytes(path).decode("latin-1")
    try:
        new = set_tunables(old, key, parse_settings(settings), flavour)
    except EditError as e:
        raise RefusedError("set tunables in", path, str(e)) from e
    return _edit(host, path, new, old, write, out)


def cmd_unset(host: Host, path: str, key: str, names: List[str],
              flavour: str, write: bool, out: TextIO) -> int:
    old = host.read_bytes(path).decode("latin-1")
    try:
        new = unset_tunables(old, key, names or None, flavour)
    except EditError as e:
        raise RefusedError("unset tunables in", path, str(e)) from e
    return _edit(host, path, new, old, write, out)


def _pairs_by_key(clist: ConfigList) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for p in clist.pairs:
        out.setdefault(p.key, []).append(p.tunables)
    return out


def cmd_diff(host: Host, a: str, b: str, out: TextIO) -> int:
    """Text diff, then what changes in the sd-config-list, key by key."""
    ta = host.read_bytes(a).decode("latin-1")
    tb = host.read_bytes(b).decode("latin-1")
    if ta == tb:
        return EXIT_OK
    out.write(unified_diff(ta, tb, a, b))
    la, lb = config_list(parse(ta)), config_list(parse(tb))
    pa, pb = _pairs_by_key(la), _pairs_by_key(lb)
    lines = []
    if la.usable != lb.usable:
        lines.append("list: %s -> %s" % (
            "used" if la.usable else la.problem or "absent",
            "used" if lb.usable else lb.problem or "absent"))
    for key in sorted(set(pa) | set(pb)):
        before, after = pa.get(key), pb.get(key)
        if before == after:
            continue
        if before is None:
            lines.append('added   "%s": %s' % (key, " | ".join(after)))
        elif after is None:
            lines.append('removed "%s": %s' % (key, " | ".join(before)))
        else:
            lines.append('changed "%s": %s -> %s' % (
                key, " | ".join(before), " | ".join(after)))
    if lines:
        out.write("\nsd-config-list changes:\n")
        out.write("".join("  %s\n" % line for line in lines))
    return EXIT_PROBLEMS
