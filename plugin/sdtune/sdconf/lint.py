# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Find everything in an sd.conf that the kernel warns about or silently
ignores, with a byte offset for each finding (facts §2 to §4, §15, §16):
the checks of any driver.conf (driverconf/checks.py), then the
sd-config-list's.

Severities: `error` (the kernel ignores or misreads something), `warning`
(it works, but not the way it reads, or it is a hazard), `note` (worth
knowing, not a problem).  `sdtune sdconf check` fails on errors and
warnings.  Pure: no I/O.
"""

import difflib
from typing import Dict, List

from ..driverconf.checks import SEVERITY_ORDER, check_file
from ..driverconf.checks import add_diagnostic as _add
from ..driverconf.parser import ConfFile, Diagnostic, parse
from ..driverconf.strtol import ddi_strtol
from .match import KEY_LEN, broad_prefix, key_form, matches_everything
from .model import ConfigList, Pair, config_list, v1_data
from .tunables import (NEXENTA, TUNABLE_BY_NAME, TUNABLES, UPSTREAM, SdState,
                       apply_v1, decode_improved, set_property, v1_data_names)

_BAD_PREFIX_SPELLINGS = {"min-throttle": "throttle-min",
                         "max-throttle": "throttle-max"}


def lint(conf: ConfFile, flavour: str = NEXENTA) -> List[Diagnostic]:
    """Every problem in the file, sorted by position."""
    out = check_file(conf)
    clist = config_list(conf)
    _check_list(conf, clist, out)
    if clist.prop is not None and clist.prop.kind == "string":
        seen: Dict[str, Pair] = {}
        for pair in clist.pairs:
            _check_key(pair, seen, out)
            if pair.improved:
                _check_improved(pair, flavour, out)
            else:
                _check_v1(conf, pair, out)
        _check_overlaps(clist, out)
    out.sort(key=lambda d: (d.offset, SEVERITY_ORDER[d.severity]))
    return out


def lint_text(text: str, flavour: str = NEXENTA) -> List[Diagnostic]:
    return lint(parse(text), flavour)


def _check_list(conf: ConfFile, clist: ConfigList,
                out: List[Diagnostic]) -> None:
    first = clist.prop
    for prop in clist.shadowed:
        line = conf.line_col(first.start)[0]
        _add(out, "error", prop.start,
             "second sd-config-list is ignored: the kernel uses only the "
             "first one (line %d)" % line, "second-list")
    for prop in clist.in_node_specs:
        stmt = prop.statement
        _add(out, "warning", prop.start,
             "sd-config-list inside the node spec name=\"%s\" applies only "
             "to that node (a ';' missing before it?)" % stmt.node_name,
             "node-list")
    if first is None:
        return
    if first.kind != "string":
        _add(out, "error", first.start,
             "sd-config-list must be a list of strings; sd ignores it",
             "not-strings")
    elif not clist.usable:
        last = first.values[-1].token
        _add(out, "error", last.start,
             "sd-config-list has an odd number of strings (%d): sd ignores "
             "the whole list" % len(first.values), "odd-count")


def _check_key(pair: Pair, seen: Dict[str, Pair],
               out: List[Diagnostic]) -> None:
    key, at = pair.key, pair.key_value.token.start
    out.extend(key_diagnostics(key, at))
    folded = key.lower()
    if folded in seen:
        first = seen[folded]
        _add(out, "warning", at, "key \"%s\" already has pair %d: both "
             "apply, later values win" % (key, first.index + 1),
             "key-duplicate")
    else:
        seen[folded] = pair


def exact_key(key: str) -> bool:
    """A key in the form sd compares best: vendor (8) + product (16),
    blank padded, nothing more, and nothing a check below warns about."""
    return len(key) == KEY_LEN and not key_diagnostics(key)


def key_diagnostics(key: str, at: int = 0) -> List[Diagnostic]:
    """What a key matches when that is not one model of disk: every
    disk, a whole vendor, a model family, only some firmware, or no disk
    at all.  The sd-config-list check and `sdconf set`/`unset` both use
    these; `at` is where the key is in the file."""
    out: List[Diagnostic] = []
    form = key_form(key)
    if matches_everything(key):
        _add(out, "error", at, "key %r matches every disk" % key,
             "key-everything")
    elif form == "prefix" and _unpadded_vendor(key):
        _add(out, "warning", at, "key \"%s\": the vendor field is 8 "
             "characters, blank padded, so this key matches no disk of "
             "vendor '%s'; did you mean \"%s\"?" % (
                 key, key.split(" ", 1)[0], _unpadded_vendor(key)),
             "key-vendor-padding")
    elif form == "prefix":
        broad = broad_prefix(key)
        if broad:
            # A vendor-only key is rarely meant; a product prefix usually
            # names a model family on purpose.
            severity = "warning" if len(key) <= 8 else "note"
            _add(out, severity, at, "key \"%s\" is shorter than vendor (8) "
                 "+ product (16): it matches %s" % (key, broad), "key-broad")
        elif len(key) > KEY_LEN + 4:
            _add(out, "warning", at, "key \"%s\" is %d characters: past 28 "
                 "it compares vendor-specific INQUIRY bytes" % (key,
                                                                len(key)),
                 "key-long")
        elif len(key) > KEY_LEN:
            _add(out, "note", at, "key \"%s\" is %d characters: past "
                 "vendor (8) + product (16) sd also compares the firmware "
                 "revision, so it matches only firmware starting with '%s'"
                 % (key, len(key), key[KEY_LEN:]), "key-revision")
    elif form == "wildcard":
        _add(out, "note", at, "wildcard key %r: any vendor, case-sensitive, "
             "and never matches text ending at the last product byte"
             % key, "key-wildcard")
    elif form == "blank":
        _add(out, "note", at, "key \"%s\" starts and ends with a blank: "
             "sd compares it with every run of blanks taken as one, against "
             "the whole vendor and product" % key, "key-blank")
    return out


def _unpadded_vendor(key: str) -> str:
    """For "ATA INTEL SSDSC2BA40" (one blank where INQUIRY pads the vendor
    to 8 characters) the key that was meant; "" when the key is fine."""
    head = key[:8]
    if len(key) <= 8 or " " not in head.rstrip(" ") or "  " in head:
        return ""
    vendor, _, product = key.partition(" ")
    product = product.lstrip(" ")
    if not vendor or len(vendor) > 8 or not product or len(product) > 16:
        return ""
    return vendor.ljust(8) + product


def _check_overlaps(clist: ConfigList, out: List[Diagnostic]) -> None:
    """Prefix keys that also cover a longer key listed in the file."""
    prefix = sorted((p.key.lower(), p.index, p) for p in clist.pairs
                    if key_form(p.key) == "prefix" and p.key)
    for (k1, _, p1), (k2, _, p2) in zip(prefix, prefix[1:]):
        if k1 != k2 and k2.startswith(k1):
            _add(out, "note", p1.key_value.token.start,
                 "key \"%s\" also applies to the disks of \"%s\" (pair %d)"
                 % (p1.key, p2.key, p2.index + 1), "key-overlap")


def _suggest(name: str) -> str:
    low = name.lower()
    if low in _BAD_PREFIX_SPELLINGS:
        return "; did you mean '%s'?" % _BAD_PREFIX_SPELLINGS[low]
    close = difflib.get_close_matches(low, [t.name for t in TUNABLES], 1)
    return "; did you mean '%s'?" % close[0] if close else ""


def _check_improved(pair: Pair, flavour: str, out: List[Diagnostic]) -> None:
    tok = pair.tunables_value.token
    text = pair.tunables
    state = SdState()
    for name, value, start, end in decode_improved(text):
        raw = text[start:end]
        # Point at the tuple's first character, not the blank before it.
        at = tok.offset_of(start + len(raw) - len(raw.lstrip(" \t")))
        shown = raw.strip(" \t")
        if name is None or value is None:
            if not shown:
                # sd skips an empty tuple; harmless, worth tidying.
                _add(out, "note", at, "empty tuple between commas",
                     "tuple-empty")
                continue
            _add(out, "error", at, "tuple \"%s\" has no %s: sd ignores it"
                 % (shown, "name" if name is None else "value"),
                 "tuple-ignored")
            continue
        if ":" not in raw:
            _add(out, "warning", at, "tuple \"%s\" has no ':' (sd still "
                 "reads %s=%s by accident); write %s:%s" % (
                     shown, name, value, name, value), "tuple-no-colon")
        else:
            _check_extra_text(raw, name, value, at, out)
        tun = TUNABLE_BY_NAME.get(name.lower())
        accepted, why = set_property(state, name, value, flavour)
        if tun is None:
            _add(out, "error", at, "unknown tunable '%s': sd ignores it%s"
                 % (name, _suggest(name)), "unknown-tunable")
            continue
        if tun.nexenta_only and flavour == UPSTREAM:
            _add(out, "warning", at, "'%s' exists only on NexentaStor; "
                 "upstream sd ignores it" % name, "nexenta-only")
            continue
        if tun.kind == "int":
            _check_number(name, value, at, out)
        if not accepted:
            code = "throttle-reset" if "throttle check" in why else \
                "invalid-value"
            _add(out, "error", at, "%s:%s is ignored by sd: %s"
                 % (name, value, why), code)
            continue
        if tun.name == "physical-block-size":
            val = ddi_strtol(value)[0]
            if val < 512:
                _add(out, "error", at, "physical-block-size %d is below the "
                     "512-byte logical block: use 512 * 2^n" % val,
                     "block-size")
        if tun.name == "cache-nonvolatile" and value.lower() == "true":
            _add(out, "note", at, "cache-nonvolatile:true stops every cache "
                 "flush: only for drives with power-loss protection",
                 "cache-nonvolatile")


def _check_extra_text(raw: str, name: str, value: str, at: int,
                      out: List[Diagnostic]) -> None:
    left, _, rest = raw.partition(":")
    right, second, _ = rest.partition(":")
    if left.strip(" \t") != name or right.strip(" \t") != value:
        _add(out, "warning", at, "text after a blank in \"%s\" is ignored: "
             "sd reads %s:%s" % (raw.strip(" \t"), name, value),
             "ignored-text")
    elif second:
        _add(out, "warning", at, "text after the second ':' in \"%s\" is "
             "ignored" % raw.strip(" \t"), "ignored-text")


def _check_number(name: str, value: str, at: int,
                  out: List[Diagnostic]) -> None:
    val, rest = ddi_strtol(value)
    if val is None:
        return
    body = value.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] not in "xX":
        _add(out, "warning", at, "%s:%s has a leading zero: sd reads octal "
             "%d" % (name, value, val), "octal")
    if rest:
        _add(out, "warning", at, "%s:%s has trailing text '%s': sd reads %d"
             % (name, value, rest, val), "trailing-junk")


def _check_v1(conf: ConfFile, pair: Pair, out: List[Diagnostic]) -> None:
    at = pair.tunables_value.token.start
    names = v1_data_names(pair.tunables)
    if not names:
        _add(out, "error", at, "empty tunables: the pair does nothing",
             "tuple-ignored")
        return
    known = [n for n in names if v1_data(conf, n) is not None]
    if not known:
        _add(out, "error", at, "tunables \"%s\" have no ':': sd reads them "
             "as legacy data-property names and finds none; write "
             "name:value" % pair.tunables, "no-colon")
        return
    _add(out, "note", at, "legacy version-1 entry; sdtune keeps it but "
         "never writes this format", "legacy-v1")
    for name in names:
        data = v1_data(conf, name)
        result = apply_v1(SdState(), name, data)
        if not result.accepted:
            _add(out, "error", at, "legacy data '%s': %s; properties not "
                 "set" % (name, result.reason), "legacy-v1")
        elif data is not None and len(data) < 21:
            _add(out, "warning", at, "legacy data '%s' has %d integers: "
                 "write version, flags and all 19 values (21)" % (
                     name, len(data)), "legacy-v1")
