# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Find everything in an nvme.conf that the nvme driver warns about or
silently ignores, with a byte offset for each finding.

The driver.conf syntax checks are those of driverconf/checks.py (kernel
parser warnings, byte-order mark, typographic quotes, octal integers); the
nvme-config-list and global property checks carry codes NVME-1001 to
NVME-1099.  Severities as in sdconf: `error` (the driver ignores or
misreads something), `warning` (works, but not as it reads), `note`.
Pure: no I/O.
"""

import difflib
from typing import Dict, List, Set, Tuple

from ..driverconf.checks import (SEVERITY_ORDER, check_file,
                                 too_large_for_zfs)
from ..driverconf.checks import add_diagnostic as _add
from ..driverconf.parser import ConfFile, Diagnostic, parse
from ..driverconf.strtol import ddi_strtoul
from .model import (BOOLEAN_TUNABLES, BOOLEAN_WORDS, DEFAULT_MIN_BLOCK,
                    as_word,
                    FWREV_LEN, GLOBAL_MIN_BLOCK, GLOBAL_WRITE_CACHE,
                    MIN_BLOCK, MODEL_LEN, TUNABLES, WRITE_CACHE,
                    NvmeConfigList, Triplet, config_list,
                    globals_of, min_block_problem, strtok)

LIST_COUNT = "NVME-1001"         # not a multiple of 3: whole list ignored
NOT_STRINGS = "NVME-1002"        # not a string array: whole list ignored
MALFORMED = "NVME-1003"          # no ':' / ':' first: the rest is ignored
UNKNOWN_NAME = "NVME-1004"       # unknown config
BLANKS = "NVME-1005"             # blanks around a name, model, fwrev
BAD_BOOLEAN = "NVME-1006"        # not on/true/off/false
BAD_MIN_BLOCK = "NVME-1007"      # min-phys-block-size reset to 512
TRAILING_TEXT = "NVME-1008"      # strtoul ignores text after the number
TOO_LONG = "NVME-1009"           # model > 40 or fwrev > 8 bytes
OVERRIDDEN = "NVME-1010"         # a later triplet overrides an earlier one
EMPTY_TUPLES = "NVME-1011"       # empty tuple list
GLOBAL_MIN_BLOCK_BAD = "NVME-1012"   # global min-phys-block-size refused
SECOND_LIST = "NVME-1013"        # only the first property is used
NODE_LIST = "NVME-1014"          # the list inside a node spec
GLOBAL_NOT_INT = "NVME-1015"     # a global integer property as a string
OCTAL = "NVME-1016"              # leading 0: read as octal
NO_FWREV = "NVME-1017"           # fwrev list of commas only: never matches
VALUELESS = "NVME-1018"          # `name;` is an integer 0, not "on"
USELESS_BLOCK = "NVME-1019"      # min-phys-block-size above any ashift


def lint(conf: ConfFile) -> List[Diagnostic]:
    """Every problem in the file, sorted by position."""
    out = check_file(conf)
    _check_globals(conf, out)
    clist = config_list(conf)
    _check_list(conf, clist, out)
    if clist.prop is not None and clist.prop.kind == "string":
        for triplet in clist.triplets:
            _check_model(triplet, out)
            _check_fwrevs(triplet, out)
            _check_tuples(triplet, out)
        _check_overrides(conf, clist, out)
    out.sort(key=lambda d: (d.offset, SEVERITY_ORDER[d.severity]))
    return out


def lint_text(text: str) -> List[Diagnostic]:
    return lint(parse(text))


def _check_globals(conf: ConfFile, out: List[Diagnostic]) -> None:
    glob = globals_of(conf)
    for name, origin in sorted(glob.origins.items()):
        props = [p for p in conf.global_properties() if p.name == name]
        used = origin.prop if origin.source != "fallback" or \
            origin.problem != "not an integer" else None
        # The driver's lookup asks for an integer: a string property of
        # the name is passed over.
        for prop in props:
            if prop.kind == "string" and (used is None or
                                          prop.start < used.start):
                _add(out, "error", prop.start,
                     "%s is a string: the driver passes over it and uses "
                     "%s" % (name, "line %d's value" % conf.line_col(
                         used.start)[0] if used is not None else
                         "its default, %s" % as_word(origin.value)),
                     GLOBAL_NOT_INT)
        if used is not None and used.kind == "boolean" and \
                name != GLOBAL_MIN_BLOCK:
            _add(out, "warning", used.start,
                 "%s without a value is an integer 0 to the driver: %s"
                 % (name, "the volatile write cache is DISABLED; write "
                    "%s=1 to enable it" % name if name == GLOBAL_WRITE_CACHE
                    else "the setting is off; write %s=1 to turn it on"
                    % name), VALUELESS)
    origin = glob.origins[GLOBAL_MIN_BLOCK]
    if origin.prop is not None and origin.problem and \
            origin.problem != "not an integer":
        _add(out, "error", origin.prop.start,
             "global min-phys-block-size %s: the driver uses %d"
             % (origin.problem, DEFAULT_MIN_BLOCK), GLOBAL_MIN_BLOCK_BAD)


def _check_list(conf: ConfFile, clist: NvmeConfigList,
                out: List[Diagnostic]) -> None:
    first = clist.prop
    for prop in clist.not_strings:
        _add(out, "error", prop.start,
             "nvme-config-list here is not a list of strings: the driver "
             "passes over it%s" % (
                 " and uses the list at line %d" % conf.line_col(
                     first.start)[0] if first is not None else
                 ", and there is no other list"), NOT_STRINGS)
    for prop in clist.shadowed:
        _add(out, "note", prop.start,
             "second nvme-config-list is not used: the driver reads only "
             "the first one (line %d)" % conf.line_col(first.start)[0],
             SECOND_LIST)
    for prop in clist.in_node_specs:
        _add(out, "warning", prop.start,
             "nvme-config-list inside the node spec name=\"%s\" applies "
             "only to that node (a ';' missing before it?)"
             % prop.statement.node_name, NODE_LIST)
    if first is None:
        return
    if len(first.values) % 3:
        _add(out, "error", first.values[-1].token.start,
             "nvme-config-list has %d strings, not triplets of "
             "<model>, <fwrev list>, <name:value list>: the driver ignores "
             "the whole list" % len(first.values), LIST_COUNT)


def _blanks(text: str) -> bool:
    return text != text.strip(" \t")


def _check_model(triplet: Triplet, out: List[Diagnostic]) -> None:
    model = triplet.model
    at = triplet.model_value.token.start
    if len(model) > MODEL_LEN:
        _add(out, "error", at, "model \"%s\" is %d bytes: Identify "
             "Controller's model is %d bytes, so it never matches"
             % (model, len(model), MODEL_LEN), TOO_LONG)
    if model == "" or model.strip(" \t") == "":
        _add(out, "warning", at, "empty model: it matches no controller "
             "that reports a model", BLANKS)
    elif _blanks(model):
        _add(out, "warning", at, "model \"%s\" has blanks around it: the "
             "driver compares the exact string with the model without its "
             "trailing blanks, so it never matches; write \"%s\""
             % (model, model.strip(" \t")), BLANKS)


def _check_fwrevs(triplet: Triplet, out: List[Diagnostic]) -> None:
    fwrevs = triplet.fwrevs
    tok = triplet.fwrevs_value.token
    if fwrevs == "":
        return
    tokens = strtok(fwrevs)
    if not tokens:
        _add(out, "warning", tok.start, "firmware list \"%s\" has no "
             "revision: the triplet never matches (write \"\" for every "
             "firmware)" % fwrevs, NO_FWREV)
    for pos, rev in tokens:
        at = tok.offset_of(pos)
        if len(rev) > FWREV_LEN:
            _add(out, "error", at, "firmware revision \"%s\" is %d bytes: "
                 "Identify Controller's revision is %d bytes, so it never "
                 "matches" % (rev, len(rev), FWREV_LEN), TOO_LONG)
        if _blanks(rev):
            _add(out, "warning", at, "firmware revision \"%s\" has blanks "
                 "around it: the driver does not trim them, so it never "
                 "matches; separate revisions with ',' only" % rev, BLANKS)


def _suggest(name: str) -> str:
    if name.strip(" \t") == GLOBAL_WRITE_CACHE:
        return "; did you mean '%s'? ('%s' is the name of the global " \
            "property)" % (WRITE_CACHE, GLOBAL_WRITE_CACHE)
    close = difflib.get_close_matches(name.strip(" \t").lower(), TUNABLES,
                                      1, 0.7)
    return "; did you mean '%s'?" % close[0] if close else ""


def _check_tuples(triplet: Triplet, out: List[Diagnostic]) -> None:
    tok = triplet.tunables_value.token
    tuples = strtok(triplet.tunables)
    if not tuples:
        _add(out, "note", tok.start, "empty tuple list: the triplet sets "
             "nothing", EMPTY_TUPLES)
        return
    for pos, text in tuples:
        at = tok.offset_of(pos)
        colon = text.find(":")
        if colon <= 0:
            _add(out, "error", at, "malformed tuple \"%s\" (%s): on a "
                 "controller this triplet matches, the driver stops "
                 "reading nvme-config-list here; later tuples and later "
                 "triplets are ignored" % (
                     text, "no ':'" if colon < 0 else "no name before ':'"),
                 MALFORMED)
            continue
        name, value = text[:colon], text[colon + 1:]
        if name not in TUNABLES:
            if name.strip(" \t") in TUNABLES:
                _add(out, "warning", at, "tuple name \"%s\" has blanks "
                     "around it: the driver compares names exactly and "
                     "ignores it as unknown; write \"%s\"" % (
                         name, name.strip(" \t")), BLANKS)
            else:
                _add(out, "error", at, "unknown tunable '%s': the driver "
                     "ignores it%s" % (name, _suggest(name)), UNKNOWN_NAME)
            continue
        if name in BOOLEAN_TUNABLES:
            if value not in BOOLEAN_WORDS:
                _add(out, "error", at, "%s:%s is ignored by the driver: "
                     "the value must be on, true, off or false (exactly)"
                     % (name, value), BAD_BOOLEAN)
        elif name == MIN_BLOCK:
            _check_min_block(value, at, out)


def _check_min_block(value: str, at: int, out: List[Diagnostic]) -> None:
    number, rest = ddi_strtoul(value)
    if number is None:
        _add(out, "error", at, "min-phys-block-size:%s is not a number "
             "(%s): the driver resets the minimum to %d"
             % (value, rest, DEFAULT_MIN_BLOCK), BAD_MIN_BLOCK)
        return
    why = min_block_problem(number)
    if why:
        _add(out, "error", at, "min-phys-block-size:%s is %s (%d): the "
             "driver resets the minimum to %d, even if the global property "
             "set another" % (value, why, number, DEFAULT_MIN_BLOCK),
             BAD_MIN_BLOCK)
        return
    if number > 0xFFFFFFFF:
        _add(out, "error", at, "min-phys-block-size:%s does not fit the "
             "driver's 32-bit minimum: it keeps %d" % (
                 value, number & 0xFFFFFFFF), BAD_MIN_BLOCK)
        return
    if too_large_for_zfs(number):
        _add(out, "warning", at, "min-phys-block-size:%s: the driver takes "
             "it, but it is %s" % (value, too_large_for_zfs(number)),
             USELESS_BLOCK)
    body = value.lstrip(" \t\n\r\f+-")
    if len(body) > 1 and body[0] == "0" and body[1] not in "xX":
        _add(out, "warning", at, "min-phys-block-size:%s has a leading "
             "zero: the driver reads octal %d" % (value, number), OCTAL)
    if rest:
        _add(out, "warning", at, "min-phys-block-size:%s has trailing text "
             "'%s': the driver ignores it and reads %d" % (
                 value, rest, number), TRAILING_TEXT)


def _coverage(triplet: Triplet) -> Tuple[bool, Set[str]]:
    """(every firmware?, the revisions) a triplet applies to."""
    return triplet.fwrevs == "", set(triplet.fwrev_tokens())


def _overlap(a: Triplet, b: Triplet) -> bool:
    all_a, revs_a = _coverage(a)
    all_b, revs_b = _coverage(b)
    return all_a or all_b or bool(revs_a & revs_b)


def _names_set(triplet: Triplet) -> Dict[str, int]:
    """Known names the triplet sets, with the position of the last one,
    up to its first malformed tuple."""
    names: Dict[str, int] = {}
    for pos, text in strtok(triplet.tunables):
        colon = text.find(":")
        if colon <= 0:
            break
        if text[:colon] in TUNABLES:
            names[text[:colon]] = pos
    return names


def _check_overrides(conf: ConfFile, clist: NvmeConfigList,
                     out: List[Diagnostic]) -> None:
    """A later triplet for the same model and firmware setting a name an
    earlier one sets: both apply in order, the later wins."""
    by_model: Dict[str, List[Triplet]] = {}
    for triplet in clist.triplets:
        by_model.setdefault(triplet.model, []).append(triplet)
    for triplets in by_model.values():
        for j, later in enumerate(triplets):
            later_names = _names_set(later)
            for earlier in triplets[:j]:
                if not _overlap(earlier, later):
                    continue
                common = sorted(set(_names_set(earlier)) & set(later_names))
                if not common:
                    continue
                pos = min(later_names[n] for n in common)
                _add(out, "warning",
                     later.tunables_value.token.offset_of(pos),
                     "triplet %d for model \"%s\" overrides %s of triplet "
                     "%d (line %d): every matching triplet applies, in "
                     "order, and the later one wins" % (
                         later.index + 1, later.model, ", ".join(common),
                         earlier.index + 1,
                         conf.line_col(earlier.start)[0]), OVERRIDDEN)
                break
