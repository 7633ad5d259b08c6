# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What `sdtune sdconf` makes of sd.conf texts, with no I/O: the `show`
report, the new text of a `set` or `unset` with its journal summary and
the notes on an inexact key, and the sd-config-list changes between two
texts.  The command line and the file access are commands/sdconf.py.

A key that is not the exact 24 characters of vendor (8) + product (16)
matches more or fewer disks than one model ("ATA" is every SATA disk, a
25th character compares the firmware revision).  set refuses to create a
pair with such a key unless `any_length_key` is given; every edit of one
comes back with what `sdconf check` says about the key.  unset that finds
nothing to remove is an error with exit 1, so a mistyped key does not
pass for a done fix.
"""

from typing import Dict, List, Optional

from ..driverconf.checks import format_diagnostic
from ..driverconf.edit import Edit, EditError, NothingToUnset
from ..driverconf.parser import ConfFile, parse
from ..errors import EXIT_PROBLEMS, RefusedError, SdtuneError, UsageError
from .edit import (Setting, check_key, key_pairs, parse_settings,
                   set_tunables, unset_tunables)
from .lint import exact_key, key_diagnostics
from .match import KEY_LEN, make_key
from .model import ConfigList, Pair, config_list, pair_alone, v1_data
from .tunables import SdState, decode_improved, v1_data_names


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


def render_show(report: dict) -> str:
    """The `sdconf show` table of a show_report()."""
    path, lst = report["file"], report["list"]
    if lst["line"] is None:
        return "%s: no sd-config-list\n" % path
    state = "used by sd" if lst["usable"] else "IGNORED by sd: " + \
        lst["problem"]
    lines = ["%s: sd-config-list at line %d, %d pairs, %s"
             % (path, lst["line"], len(report["pairs"]), state)]
    if report["pairs"]:
        width = max(len(p["key"]) for p in report["pairs"]) + 2
        lines.append("%-4s %-5s %-*s %s"
                     % ("PAIR", "LINE", width, "KEY", "TUNABLES"))
    for p in report["pairs"]:
        tunables = " ".join("%s:%s" % kv for kv in p["tunables"].items())
        if p["format"] != "improved":
            tunables = "legacy v1: " + " ".join(p["legacy_data"])
        lines.append("%-4d %-5d %-*s %s"
                     % (p["index"], p["line"], width, '"%s"' % p["key"],
                        tunables))
        kernel = " ".join("%s=%s" % kv for kv in p["kernel"].items())
        lines.append("%11s kernel: %s" % ("", kernel or "(no change)"))
        for ign in p["ignored"]:
            lines.append("%11s ignored: %s:%s (%s)" % (
                "", ign["name"], ign["value"], ign["reason"]))
    return "\n".join(lines) + "\n"


def _key_notes(verb: str, path: str, conf: ConfFile, key: str,
               creating: bool, any_length_key: bool) -> List[str]:
    """Refuse a new pair for a key that is not one model's exact key;
    for an existing one (or when allowed), say what the key matches."""
    if exact_key(key):
        return []
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
    if at is None:
        return ["sdtune: %s: %s" % (d.severity, d.message) for d in diags]
    return [format_diagnostic(conf, path, d) for d in diags]


def _cut_to_24(key: str) -> str:
    """The 24-character key that a longer prefix key starts with."""
    if len(key) > KEY_LEN and exact_key(key[:KEY_LEN]):
        return ' ("%s")' % key[:KEY_LEN]
    return ""


def set_edit(old: str, path: str, key: str, settings: List[str],
             flavour: str, any_length_key: bool = False) -> Edit:
    """`sdconf set`: KEY's tunables set in the text ``old`` of ``path``."""
    conf = parse(old)
    try:
        check_key(key)      # first: keys never written, even on request
        wanted = parse_settings(settings)
        creating = not key_pairs(config_list(conf), key)
        notes = _key_notes("set tunables in", path, conf, key, creating,
                           any_length_key)
        new = set_tunables(old, key, wanted, flavour, conf)
    except EditError as e:
        raise RefusedError("set tunables in", path, str(e)) from e
    return Edit(new, [_set_summary(key, wanted)], notes)


def _set_summary(key: str, wanted: List[Setting]) -> str:
    return '"%s" %s' % (key, ", ".join("%s:%s" % (s.name, s.value)
                                       for s in wanted))


def unset_edit(old: str, path: str, key: str, names: List[str],
               flavour: str) -> Edit:
    """`sdconf unset`: tunables (no names: every pair) of KEY removed
    from ``old``; exit 1 when there is nothing to remove."""
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
    notes = _key_notes("unset tunables in", path, parse(old), key, False,
                       True)
    summary = '"%s" %s' % (key, "unset " + ", ".join(
        n.lower() for n in names) if names else "removed")
    return Edit(new, [summary], notes)


def _pairs_by_key(clist: ConfigList) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for p in clist.pairs:
        out.setdefault(p.key, []).append(p.tunables)
    return out


def list_changes(ta: str, tb: str) -> List[str]:
    """What changes in the sd-config-list from text ``ta`` to ``tb``,
    key by key, one line each."""
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
    return lines
