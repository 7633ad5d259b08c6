# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune sdconf show|set|unset` on an nvme.conf: what the nvme driver
makes of each nvme-config-list triplet, and a model's tunables set or
removed (nvmeconf.edit, every other byte kept).  The sd.conf versions
are sdconf/actions.py; commands/sdconf.py picks by the file's name or
--driver.  Pure: works on text.
"""

from typing import Dict, List

from ..errors import EXIT_PROBLEMS, RefusedError, SdtuneError, UsageError
from ..driverconf.edit import Edit, EditError, NothingToUnset
from ..driverconf.parser import ConfFile
from . import edit as nvme_edit
from .model import (APPLIED, MALFORMED, PROPERTY, READ_NOT_MODELLED,
                    apply_tuple, as_word, config_list, globals_of, strtok)


def _triplet_report(conf: ConfFile, triplet, defaults: Dict[str, object]
                    ) -> dict:
    """One triplet: what it says, and what the driver does with it for a
    controller of its model (from the driver-wide values, as if no other
    triplet matched)."""
    state = dict(defaults)
    effects = []
    for pos, text in strtok(triplet.tunables):
        effects.append(apply_tuple(state, triplet.index, pos, text))
        if effects[-1].outcome == MALFORMED:
            break           # the driver reads no further tuple, or list
    return {
        "index": triplet.index + 1,
        "line": conf.line_col(triplet.start)[0],
        "model": triplet.model,
        "firmware": triplet.fwrev_tokens(),
        "tunables": [text for _, text in strtok(triplet.tunables)],
        "driver": {e.name: e.result for e in effects
                   if e.outcome == APPLIED},
        "ignored": [{"tuple": e.text, "reason": e.reason or e.outcome}
                    for e in effects if e.outcome != APPLIED],
        "stops_the_list": bool(effects) and
        effects[-1].outcome == MALFORMED,
    }


def _other_properties(conf: ConfFile, modelled: List[str]) -> List[dict]:
    """Every driver-wide property the file sets that ``modelled`` does
    not cover, each with what the driver does with it."""
    out = []
    for prop in conf.global_properties():
        if prop.name in modelled:
            continue
        if prop.name.startswith("ddi-"):
            # ddi-forceattach, ddi-no-autodetach...: driver.conf(5).
            nvme = "read by the DDI framework, not by nvme"
        elif prop.name in READ_NOT_MODELLED:
            when = READ_NOT_MODELLED[prop.name]
            nvme = "read by nvme%s; sdtune does not evaluate it" % (
                " (%s)" % when if when else "")
        else:
            nvme = "ignored: nvme reads no property of that name"
        out.append({"name": prop.name,
                    "line": conf.line_col(prop.start)[0],
                    "value": [conf.text[v.token.start:v.token.end]
                              for v in prop.values],
                    "nvme": nvme})
    return out


def show_report(conf: ConfFile, path: str) -> dict:
    """The `sdconf show -o json` document of an nvme.conf."""
    clist = config_list(conf)
    glob = globals_of(conf)
    defaults = {"min-phys-block-size": glob.min_phys_block_size,
                "volatile-write-cache": glob.volatile_write_cache_enable,
                "ignore-unknown-vendor-status":
                glob.ignore_unknown_vendor_status}
    line = conf.line_col(clist.prop.start)[0] if clist.prop else None
    return {
        "file": path,
        "driver": "nvme",
        "globals": {name: {"value": g.value, "source": g.source,
                           "problem": g.problem or None}
                    for name, g in sorted(glob.origins.items())},
        "other": _other_properties(conf, [PROPERTY] + list(glob.origins)),
        "list": {"line": line, "usable": clist.usable,
                 "problem": clist.whole_list_ignored},
        "triplets": [_triplet_report(conf, t, defaults)
                     for t in clist.triplets],
    }


def render_show(report: dict) -> str:
    """The `sdconf show` text of an nvme.conf's show_report()."""
    path, lst = report["file"], report["list"]
    lines = ["%s: nvme driver settings: %s" % (path, ", ".join(
        "%s=%s%s" % (name, as_word(g["value"]),
                     "" if g["source"] == "default" else
                     " (file)" if g["source"] == "file" else
                     " (file's value refused: %s)" % g["problem"])
        for name, g in report["globals"].items()))]
    for other in report["other"]:
        lines.append("%s: line %d: %s%s: %s" % (
            path, other["line"], other["name"],
            "=" + ",".join(other["value"]) if other["value"] else "",
            other["nvme"]))
    if lst["line"] is None:
        lines.append("%s: no nvme-config-list" % path)
        return "\n".join(lines) + "\n"
    state = "used by nvme" if lst["usable"] else "IGNORED by nvme: " + \
        lst["problem"]
    count = len(report["triplets"])
    lines.append("%s: nvme-config-list at line %d, %d triplet%s, %s"
                 % (path, lst["line"], count, "" if count == 1 else "s",
                    state))
    if report["triplets"]:
        width = max(len(t["model"]) for t in report["triplets"]) + 2
        lines.append("%-7s %-5s %-*s %-10s %s" % (
            "TRIPLET", "LINE", width, "MODEL", "FIRMWARE", "TUNABLES"))
    for t in report["triplets"]:
        lines.append("%-7d %-5d %-*s %-10s %s" % (
            t["index"], t["line"], width, '"%s"' % t["model"],
            ",".join(t["firmware"]) or "(any)",
            ",".join(t["tunables"]) or "(none)"))
        driver = " ".join("%s=%s" % (k, as_word(v))
                          for k, v in t["driver"].items())
        lines.append("%13s nvme: %s" % ("", driver or "(no change)"))
        for ign in t["ignored"]:
            lines.append("%13s ignored: %s (%s)"
                         % ("", ign["tuple"], ign["reason"]))
        if t["stops_the_list"]:
            lines.append("%13s the driver stops reading the list here"
                         % "")
    return "\n".join(lines) + "\n"


def _settings(path: str, words: List[str]) -> Dict[str, str]:
    """name=value (or name:value) words as a dict, in order."""
    out: Dict[str, str] = {}
    for word in words:
        sep = "=" if "=" in word else ":" if ":" in word else ""
        if not sep:
            raise UsageError("set tunables in", path, "'%s' is not "
                             "name=value" % word)
        name, value = word.split(sep, 1)
        out[name.strip()] = value.strip()
    return out


def set_edit(old: str, path: str, model: str, words: List[str]) -> Edit:
    """`sdconf set` on nvme.conf: the model's tunables (every firmware)
    set in the text `old` of `path`."""
    settings = _settings(path, words)
    try:
        new = nvme_edit.set_tunables(old, model, settings)
    except EditError as e:
        raise RefusedError("set tunables in", path, str(e)) from e
    return Edit(new, ['"%s" %s' % (model, ", ".join(
        "%s:%s" % kv for kv in settings.items()))], [])


def unset_edit(old: str, path: str, model: str, names: List[str]) -> Edit:
    """`sdconf unset` on nvme.conf: the model's tunables (no names: its
    triplets for every firmware) removed; exit 1 when there is nothing
    to remove."""
    try:
        new = nvme_edit.unset_tunables(old, model, names or None)
    except NothingToUnset as e:
        raise SdtuneError("unset tunables in", path, "nothing to unset: %s "
                          "in this file" % e, EXIT_PROBLEMS) from e
    except EditError as e:
        raise RefusedError("unset tunables in", path, str(e)) from e
    return Edit(new, ['"%s" %s' % (model, "unset " + ", ".join(names)
                                   if names else "removed")], [])
