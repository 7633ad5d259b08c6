"""`sdtune sdconf check|show|set|unset|diff`: offline sd.conf tools.

They work on files the operator names, never on the running kernel, and
read and write only through the Host seam (a write is atomic: the file is
the old one or the new one), or through the `commit` callable a caller
gives set and unset.  Without `--write`, set and unset print the diff and
change nothing.

A key that is not the exact 24 characters of vendor (8) + product (16)
matches more or fewer disks than one model ("ATA" is every SATA disk, a
25th character compares the firmware revision).  set refuses to create a
pair with such a key unless `any_length_key` is given; every edit of one
prints what `sdconf check` says about the key.  unset that finds nothing
to remove exits 1, so a mistyped key does not pass for a done fix.
"""

import json
import sys
from typing import Callable, Dict, List, Optional, TextIO

from ..errors import (EXIT_OK, EXIT_PROBLEMS, RefusedError, SdtuneError,
                      UsageError)
from ..host import Host
from .edit import (EditError, NothingToUnset, Setting, check_key, key_pairs,
                   parse_settings, set_tunables, unified_diff,
                   unset_tunables)
from .lint import (exact_key, format_diagnostic, is_problem, key_diagnostics,
                   lint)
from .match import KEY_LEN, make_key
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


# commit(path, old_bytes, new_bytes, summary_lines, diff_text) writes
# `new_bytes` in place of `old_bytes` (e.g. as a journalled transaction).
Commit = Callable[[str, bytes, bytes, List[str], str], None]


def _edit(host: Host, path: str, new_text: str, old_text: str,
          write: bool, out: TextIO, summary: List[str],
          commit: Optional[Commit] = None) -> int:
    if new_text == old_text:
        out.write("%s: no change\n" % path)
        return EXIT_OK
    diff = unified_diff(old_text, new_text, path, path + " (new)")
    out.write(diff)
    if write:
        new = new_text.encode("latin-1")
        if commit is None:
            host.write_atomic(path, new)
        else:
            commit(path, old_text.encode("latin-1"), new, summary, diff)
        out.write("%s: written\n" % path)
    return EXIT_OK


def _inexact_key(verb: str, path: str, conf: ConfFile, key: str,
                 creating: bool, any_length_key: bool, err: TextIO) -> None:
    """Refuse a new pair for a key that is not one model's exact key;
    for an existing one (or when allowed), say what the key matches."""
    if exact_key(key):
        return
    at = next((p.key_value.token.start for p in config_list(conf).pairs
               if p.key.lower() == key.lower()), None)
    diags = key_diagnostics(key, at or 0)
    if creating and not any_length_key:
        what = "; ".join(d.message for d in diags) or \
            'key "%s" is %d characters' % (key, len(key))
        raise RefusedError(verb, path, "%s; write the full %d-character "
                           "key%s, vendor blank padded to 8 and product to "
                           "16 as 'sdtune disks' shows it, or give --vid and "
                           "--pid, which pad them; --any-length-key writes "
                           "this key as it is" % (what, KEY_LEN,
                                                  _cut_to_24(key)))
    for d in diags:
        if at is None:
            err.write("sdtune: %s: %s\n" % (d.severity, d.message))
        else:
            err.write(format_diagnostic(conf, path, d) + "\n")


def _cut_to_24(key: str) -> str:
    """The 24-character key that a longer prefix key starts with."""
    if len(key) > KEY_LEN and exact_key(key[:KEY_LEN]):
        return ' ("%s")' % key[:KEY_LEN]
    return ""


def cmd_set(host: Host, path: str, key: str, settings: List[str],
            flavour: str, write: bool, out: TextIO, *,
            any_length_key: bool = False, err: Optional[TextIO] = None,
            commit: Optional[Commit] = None) -> int:
    """Set tunables for KEY in the file at `path`; print the diff, and
    with `write` write it (through `commit` when given)."""
    err = sys.stderr if err is None else err
    old = host.read_bytes(path).decode("latin-1")
    conf = parse(old)
    try:
        check_key(key)      # first: keys never written, even on request
        wanted = parse_settings(settings)
        creating = not key_pairs(config_list(conf), key)
        _inexact_key("set tunables in", path, conf, key, creating,
                     any_length_key, err)
        new = set_tunables(old, key, wanted, flavour, conf)
    except EditError as e:
        raise RefusedError("set tunables in", path, str(e)) from e
    return _edit(host, path, new, old, write, out,
                 [_set_summary(key, wanted)], commit)


def _set_summary(key: str, wanted: List[Setting]) -> str:
    return '"%s" %s' % (key, ", ".join("%s:%s" % (s.name, s.value)
                                       for s in wanted))


def cmd_unset(host: Host, path: str, key: str, names: List[str],
              flavour: str, write: bool, out: TextIO, *,
              err: Optional[TextIO] = None,
              commit: Optional[Commit] = None) -> int:
    """Remove tunables (no names: every pair) of KEY; exit 1 when there
    is nothing to remove."""
    err = sys.stderr if err is None else err
    old = host.read_bytes(path).decode("latin-1")
    try:
        new = unset_tunables(old, key, names or None, flavour)
    except NothingToUnset as e:
        hint = ""
        if len(key) != KEY_LEN:
            hint = "; sd-config-list keys are %d characters, vendor (8) + " \
                "product (16) blank padded, and this one is %d: give --vid " \
                "and --pid, which pad them" % (KEY_LEN, len(key))
        raise SdtuneError("unset tunables in", path, "nothing to unset: %s "
                          "in this file%s" % (e, hint), EXIT_PROBLEMS) from e
    except EditError as e:
        raise RefusedError("unset tunables in", path, str(e)) from e
    # Removing a pair narrows what matches; still, say what this key is.
    _inexact_key("unset tunables in", path, parse(old), key, False, True,
                 err)
    summary = '"%s" %s' % (key, "unset " + ", ".join(
        n.lower() for n in names) if names else "removed")
    return _edit(host, path, new, old, write, out, [summary], commit)


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
