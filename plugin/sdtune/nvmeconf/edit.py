# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pure edits of the nvme-config-list: set and remove a model's tunables.

Like sdconf/edit.py, and on the same driverconf/edit.py: edits are
splices into the original text, every byte outside the changed triplet
stays as it was, and removing text never removes a comment.  The
triplet edited is the model's triplet for every firmware (fwrev list
""); inside it tuples keep their order, a new value replaces the old one
where it stands and new tuples are appended.
New text is canonical: `"name:value,name:value"` with NO blank after a
comma (the driver does not trim, so " name" would be an unknown name).
After every edit the result is parsed and evaluated again: other
triplets unchanged, no new syntax problems, and a controller of that
model with any firmware gets exactly the values asked for.  Pure: no I/O.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from ..driverconf.checks import ZFS_MAX_BLOCK, too_large_for_zfs
from ..driverconf.edit import (EditError, NothingToUnset, append_entry,
                               quote_string, remove_group, splice)
from ..driverconf.lexer import NAME
from ..driverconf.parser import ConfFile, parse
from .model import (APPLIED, BOOLEAN_TUNABLES, DEFAULT_MIN_BLOCK,
                    MODEL_LEN, PROPERTY, RESET, TUNABLES, NvmeConfigList,
                    Triplet, config_list, evaluate, isp2, strtok)

# The largest minimum the driver's 32-bit n_min_block_size holds.
_BOOLEAN_INPUT = {"on": "on", "off": "off", "true": "on", "false": "off"}

__all__ = ["set_tunables", "unset_tunables", "check_model",
           "check_settings"]


def check_model(model: str) -> None:
    """A model sdtune writes: what Identify Controller can report."""
    if model == "":
        raise EditError("empty model")
    if model != model.strip(" "):
        raise EditError("model \"%s\" has leading or trailing blanks: the "
                        "driver compares the model without its trailing "
                        "blanks, so it would never match" % model)
    if len(model.encode("latin-1", "replace")) > MODEL_LEN:
        raise EditError("model \"%s\" is longer than the %d bytes of "
                        "Identify Controller's model" % (model, MODEL_LEN))
    for ch in model:
        if not " " <= ch <= "~" or ch in '"\\':
            raise EditError("model contains %r, which sdtune will not write"
                            % ch)


def check_settings(settings: Dict[str, str]) -> List[Tuple[str, str]]:
    """The settings as canonical (name, value) in TUNABLES order; an
    EditError for an unknown name or a value the driver would refuse."""
    if not settings:
        raise EditError("nothing to set")
    out: Dict[str, str] = {}
    for name, value in settings.items():
        if name not in TUNABLES:
            raise EditError("unknown tunable '%s' (nvme knows %s)"
                            % (name, ", ".join(TUNABLES)))
        if name in BOOLEAN_TUNABLES:
            if value not in _BOOLEAN_INPUT:
                raise EditError("%s:%s: the value must be on or off"
                                % (name, value))
            out[name] = _BOOLEAN_INPUT[value]
        else:
            if not (value.isascii() and value.isdigit()):
                raise EditError("%s:%s: the value must be a decimal number"
                                % (name, value))
            number = int(value)
            if number < DEFAULT_MIN_BLOCK or not isp2(number):
                raise EditError("%s:%s: the value must be a power of 2 from "
                                "%d to %d" % (name, value, DEFAULT_MIN_BLOCK,
                                              ZFS_MAX_BLOCK))
            if number > ZFS_MAX_BLOCK:
                # The driver would take it; sd's physical-block-size is
                # refused the same way.
                raise EditError("%s:%s: %s" % (name, value,
                                               too_large_for_zfs(number)))
            out[name] = str(number)
    return [(n, out[n]) for n in TUNABLES if n in out]


def _tuple_name(text: str) -> Optional[str]:
    """The known name a tuple sets, blanks around it forgiven (sdtune
    rewrites such a tuple when the name is set), else None."""
    colon = text.find(":")
    if colon <= 0:
        return None
    name = text[:colon].strip(" \t")
    return name if name in TUNABLES else None


def _merge(tunables: str, settings: Sequence[Tuple[str, str]]) -> str:
    items = [(_tuple_name(t), t) for _, t in strtok(tunables)]
    for name, value in settings:
        new = (name, "%s:%s" % (name, value))
        at = [i for i, (n, _) in enumerate(items) if n == name]
        if at:
            items[at[-1]] = new
            items = [t for j, t in enumerate(items)
                     if t[0] != name or j == at[-1]]
        else:
            items.append(new)
    return ",".join(text for _, text in items)


def _load(text: str) -> Tuple[ConfFile, NvmeConfigList]:
    conf = parse(text)
    clist = config_list(conf)
    broken = [s for s in conf.statements
              if any(t.kind == NAME and t.value == PROPERTY
                     for t in s.tokens)
              and any(s.start <= d.offset < s.end or
                      d.offset == s.end == len(text)
                      for d in conf.diagnostics)]
    if broken:
        raise EditError("the nvme-config-list statement at line %d has "
                        "syntax errors; fix them first"
                        % conf.line_col(broken[0].start)[0])
    if clist.in_node_specs:
        raise EditError("nvme-config-list at line %d is inside a node spec "
                        "(a ';' missing before it?); fix it first"
                        % conf.line_col(clist.in_node_specs[0].start)[0])
    if clist.prop is not None and clist.whole_list_ignored:
        raise EditError("the existing %s; fix it first"
                        % clist.whole_list_ignored)
    return conf, clist


def _targets(clist: NvmeConfigList, model: str) -> List[Triplet]:
    """The model's triplets for every firmware, which sdtune edits."""
    return [t for t in clist.triplets
            if t.model_value.value == model and t.fwrevs_value.value == ""]


def _remove_triplet(conf: ConfFile, clist: NvmeConfigList,
                    triplet: Triplet) -> str:
    """The text without one triplet (and its comma); comments stay."""
    return remove_group(conf, clist.prop, 3 * triplet.index, 3)


def _replace_tunables(conf: ConfFile, clist: NvmeConfigList,
                      triplet: Triplet, tunables: str) -> str:
    if tunables == "":
        return _remove_triplet(conf, clist, triplet)
    tok = triplet.tunables_value.token
    return splice(conf.text, tok.start, tok.end, quote_string(tunables))


def _raw(triplets: Sequence[Triplet]) -> List[Tuple[str, str, str]]:
    return [(t.model_value.value, t.fwrevs_value.value,
             t.tunables_value.value) for t in triplets]


def _others(clist: NvmeConfigList, model: str) -> List[Triplet]:
    mine = {t.index for t in _targets(clist, model)}
    return [t for t in clist.triplets if t.index not in mine]


def _check_others(before: ConfFile, after: ConfFile, model: str) -> None:
    if sorted(d.message for d in after.diagnostics) != \
            sorted(d.message for d in before.diagnostics):
        raise EditError("internal check failed: the edit changed the file's "
                        "syntax; nothing written")
    new_list = config_list(after)
    if new_list.prop is not None and not new_list.usable:
        raise EditError("internal check failed: the edited list is not "
                        "usable; nothing written")
    if _raw(_others(config_list(before), model)) != \
            _raw(_others(new_list, model)):
        raise EditError("internal check failed: the edit touched other "
                        "triplets; nothing written")


def _firmwares(clist: NvmeConfigList, model: str) -> List[str]:
    """Firmware revisions to evaluate "any firmware" with: every one a
    triplet of the model names, and one that none names."""
    named = sorted({rev for t in clist.triplets if t.model == model
                    for rev in t.fwrev_tokens()})
    other = "?"
    while other in named:
        other += "?"
    return named + [other]


def _verify_set(before: ConfFile, new: str, model: str,
                settings: Sequence[Tuple[str, str]]) -> None:
    """Refuse an edit whose result is not exactly what was asked."""
    after = parse(new)
    _check_others(before, after, model)
    clist = config_list(after)
    ours = _targets(clist, model)
    if not ours:
        raise EditError("internal check failed: the triplet is missing; "
                        "nothing written")
    mine = ours[-1].index
    for fwrev in _firmwares(clist, model):
        ev = evaluate(after, model, fwrev, clist)
        for name, value in settings:
            # The last tuple that changed the name decides.
            last = None
            for effect in ev.effects:
                if effect.name == name and effect.outcome in (APPLIED,
                                                              RESET):
                    last = effect
            if last is not None and last.triplet == mine and \
                    last.outcome == APPLIED:
                continue
            if last is not None and last.triplet != mine:
                where = clist.triplets[last.triplet].start
                raise EditError("%s:%s would not be in effect: the triplet "
                                "at line %d also matches model \"%s\"%s and "
                                "is applied later" % (
                                    name, value, after.line_col(where)[0],
                                    model, _firmware_words(fwrev, clist,
                                                           model)))
            if ev.stopped_at is not None:
                where = clist.triplets[ev.stopped_at.triplet]
                offset = where.tunables_value.token.offset_of(
                    ev.stopped_at.position)
                raise EditError("%s:%s would not be in effect: the driver "
                                "stops at the malformed tuple \"%s\" at line "
                                "%d before it" % (
                                    name, value, ev.stopped_at.text,
                                    after.line_col(offset)[0]))
            raise EditError("%s:%s would not be in effect: %s" % (
                name, value, last.reason if last is not None
                else "not written"))


def _firmware_words(fwrev: str, clist: NvmeConfigList, model: str) -> str:
    named = {rev for t in clist.triplets if t.model == model
             for rev in t.fwrev_tokens()}
    return " with firmware %s" % fwrev if fwrev in named else ""


def set_tunables(text: str, model: str, settings: Dict[str, str]) -> str:
    """Set tunables for a model (every firmware); returns the new text."""
    check_model(model)
    items = check_settings(settings)
    conf, clist = _load(text)
    targets = _targets(clist, model)
    if targets:
        merged = _merge(targets[-1].tunables_value.value, items)
        new = _replace_tunables(conf, clist, targets[-1], merged)
    else:
        tunables = ",".join("%s:%s" % item for item in items)
        new = append_entry(conf, clist.prop, PROPERTY,
                           (model, "", tunables))
    _verify_set(conf, new, model, items)
    return new


def unset_tunables(text: str, model: str,
                   names: Optional[List[str]] = None) -> str:
    """Remove tunables (None: every triplet) of a model for every
    firmware.  NothingToUnset when there is nothing of the kind."""
    if names is not None:
        unknown = sorted(n for n in names if n not in TUNABLES)
        if unknown:
            raise EditError("unknown tunable '%s'" % unknown[0])
        if not names:
            raise EditError("nothing to unset")
    wanted = set(names) if names is not None else None
    before = None
    while True:
        conf, clist = _load(text)
        if before is None:
            before = conf
        victim = None
        for triplet in _targets(clist, model):
            if wanted is None or wanted & {
                    _tuple_name(t) for _, t in strtok(
                        triplet.tunables_value.value)}:
                victim = triplet
                break
        if victim is None:
            if conf is before:
                raise NothingToUnset(_nothing_there(clist, model, wanted))
            break
        if wanted is None:
            text = _remove_triplet(conf, clist, victim)
        else:
            kept = [t for _, t in strtok(victim.tunables_value.value)
                    if _tuple_name(t) not in wanted]
            text = _replace_tunables(conf, clist, victim, ",".join(kept))
    after = parse(text)
    _check_others(before, after, model)
    left = {_tuple_name(t) for tr in _targets(config_list(after), model)
            for _, t in strtok(tr.tunables_value.value)}
    if wanted is None and _targets(config_list(after), model) or \
            wanted is not None and wanted & left:
        raise EditError("internal check failed: the tunables are still "
                        "there; nothing written")
    return text


def _nothing_there(clist: NvmeConfigList, model: str,
                   wanted: Optional[set]) -> str:
    if not _targets(clist, model):
        return 'no triplet for model "%s" and every firmware' % model
    return 'the triplet for model "%s" sets no %s' % (
        model, " or ".join(sorted(wanted or ())))
