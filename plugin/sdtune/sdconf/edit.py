# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pure edits of the sd-config-list: set and remove tunables for a key.

Edits are splices into the original text: every byte outside the changed
pair stays as it was (comments, other pairs, node specs), the single
existing list is edited in place (or created at the end of the file), and
new text follows the canonical form of facts §16.1 (one pair per line,
TAB indent, `name:value` joined by ", ", decimal values, throttle-min
before throttle-max).  Removing text never removes a comment: a comment
inside a removed pair or list stays, on a line of its own.  Inside an
existing pair, tunables keep their order and a new value replaces the
old one where it stands.  After every edit the result is parsed again
and checked: other pairs unchanged, no new syntax problems, and every
value asked for is really accepted by the sd model.  Pure: no I/O.
"""

from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Set, Tuple

from ..driverconf.edit import (MAX_STRING, EditError, NothingToUnset,
                               append_entry, quote_string, remove_group,
                               splice)
from ..driverconf.lexer import NAME
from ..driverconf.parser import ConfFile, Statement, parse
from .match import KEY_LEN, Identity, key_form, matches_everything
from .model import PROPERTY, ConfigList, Pair, config_list, evaluate
from .tunables import (NEXENTA, SdState, TUNABLE_BY_NAME, TupleResult,
                       apply_improved, canonical_value, decode_improved,
                       set_property)


@dataclass(frozen=True)
class Setting:
    name: str      # canonical (lower-case) tunable name
    value: str     # canonical value text


def parse_settings(items: Sequence[str]) -> List[Setting]:
    """`name=value` (or `name:value`) words into checked settings."""
    out: List[Setting] = []
    for item in items:
        sep = "=" if "=" in item else ":"
        name, found, value = item.partition(sep)
        name = name.strip().lower()
        if not found or not name:
            raise EditError("'%s': expected name=value" % item)
        text, why = canonical_value(name, value.strip())
        if text is None:
            raise EditError("%s=%s: %s" % (name, value.strip(), why))
        out = [s for s in out if s.name != name] + [Setting(name, text)]
    return out


def check_key(key: str) -> None:
    if matches_everything(key):
        raise EditError("key %r would match every disk" % key)
    if len(key) > MAX_STRING:
        raise EditError("key longer than %d characters" % MAX_STRING)
    for ch in key:
        if not " " <= ch <= "~" or ch in '"\\':
            raise EditError("key contains %r, which sdtune will not write"
                            % ch)


def _tuples(tunables: str) -> List[Tuple[Optional[str], str]]:
    """(lower-case name or None, tuple text) for each tuple of a pair."""
    return [(name.lower() if name is not None and value is not None
             else None, tunables[start:end].strip(" \t"))
            for name, value, start, end in decode_improved(tunables)]


def canonical_order(items: List[Tuple[Optional[str], str]]
                    ) -> List[Tuple[Optional[str], str]]:
    """throttle-min must come before throttle-max (facts §3.5)."""
    names = [n for n, _ in items]
    if "throttle-min" in names and "throttle-max" in names and \
            names.index("throttle-min") > names.index("throttle-max"):
        tmin = items.pop(names.index("throttle-min"))
        items.insert(names.index("throttle-max"), tmin)
    return items


def _merge(items: List[Tuple[Optional[str], str]],
           settings: Sequence[Setting], flavour: str
           ) -> List[Tuple[Optional[str], str]]:
    """An existing pair's tuples with `settings` applied: a value already
    there is replaced where it stands (an earlier copy of the same name
    goes), a new one is appended, except a new throttle-min, which goes
    before the throttle-max (facts §3.5).  The operator's order is kept
    unless throttle values are set and the throttle check needs
    throttle-min first for them to hold, e.g. "throttle-max:32,
    throttle-min:8" set to 4 and 2."""
    items = list(items)
    for s in settings:
        new = (s.name, "%s:%s" % (s.name, s.value))
        at = [i for i, (n, _) in enumerate(items) if n == s.name]
        if at:
            items[at[-1]] = new
            items = [t for j, t in enumerate(items)
                     if t[0] != s.name or j == at[-1]]
        elif s.name == "throttle-min" and \
                any(n == "throttle-max" for n, _ in items):
            items.insert(next(i for i, (n, _) in enumerate(items)
                              if n == "throttle-max"), new)
        else:
            items.append(new)
    ordered = canonical_order(list(items))
    asked_throttle = any(s.name.startswith("throttle-") for s in settings)
    if asked_throttle and ordered != items and \
            _pair_state(ordered, flavour) != _pair_state(items, flavour):
        return ordered
    return items


def _pair_state(items: List[Tuple[Optional[str], str]],
                flavour: str) -> SdState:
    state = SdState()
    apply_improved(state, _join(items), flavour)
    return state


def _join(items: List[Tuple[Optional[str], str]]) -> str:
    return ", ".join(text for _, text in items if text)


def _remove_pair(conf: ConfFile, clist: ConfigList, pair: Pair) -> str:
    return remove_group(conf, clist.prop, 2 * pair.index, 2)


def _replace_tunables(conf: ConfFile, pair: Pair, tunables: str) -> str:
    tok = pair.tunables_value.token
    return splice(conf.text, tok.start, tok.end, quote_string(tunables))


def _drop_names(conf: ConfFile, clist: ConfigList, pair: Pair,
                names: Set[str]) -> str:
    """The pair without the tuples of `names`; gone when none is left."""
    kept = _join([t for t in _tuples(pair.tunables) if t[0] not in names])
    if kept:
        return _replace_tunables(conf, pair, kept)
    return _remove_pair(conf, clist, pair)


def _load(text: str, conf: Optional[ConfFile] = None
          ) -> Tuple[ConfFile, ConfigList]:
    if conf is None or conf.text != text:
        conf = parse(text)
    clist = config_list(conf)
    # A broken or misplaced sd-config-list statement is not a list the
    # kernel uses, but a second list next to it would be one list too
    # many once it is fixed (facts §2.2, §16.1).
    broken = _broken_list_statements(conf)
    if broken:
        raise EditError("the sd-config-list statement at line %d has syntax "
                        "errors; fix them first (sdtune sdconf check)"
                        % conf.line_col(broken[0].start)[0])
    if clist.in_node_specs:
        raise EditError("sd-config-list at line %d is inside a node spec "
                        "(a ';' missing before it?); fix it first (sdtune "
                        "sdconf check)"
                        % conf.line_col(clist.in_node_specs[0].start)[0])
    if clist.prop is not None:
        if clist.prop.kind != "string":
            raise EditError("the existing sd-config-list is not a list of "
                            "strings; fix it first (sdtune sdconf check)")
        if not clist.usable:
            raise EditError("the existing sd-config-list has an odd number "
                            "of strings; fix it first (sdtune sdconf check)")
        stmt = clist.prop.statement
        if any(stmt.start <= d.offset < stmt.end for d in conf.diagnostics):
            raise EditError("the sd-config-list statement has syntax errors;"
                            " fix them first (sdtune sdconf check)")
    return conf, clist


def _broken_list_statements(conf: ConfFile) -> List[Statement]:
    """Statements naming sd-config-list that the kernel warned about."""
    if not conf.diagnostics:
        return []
    eof = len(conf.text)
    return [stmt for stmt in conf.statements
            if any(t.kind == NAME and t.value == PROPERTY
                   for t in stmt.tokens)
            and any(stmt.start <= d.offset < stmt.end or
                    d.offset == stmt.end == eof for d in conf.diagnostics)]


def key_pairs(clist: ConfigList, key: str) -> List[Pair]:
    """The pairs of `key` that set and unset edit: those in the improved
    (name:value) format, compared without case as sd does."""
    k = key.lower()
    return [p for p in clist.pairs
            if p.key_value.value.lower() == k and p.improved]


def set_tunables(text: str, key: str, settings: Sequence[Setting],
                 flavour: str = NEXENTA, conf: Optional[ConfFile] = None
                 ) -> str:
    """Set tunables for a key; returns the new text.  `conf` may be the
    already parsed `text`, to save parsing it again."""
    check_key(key)
    if not settings:
        raise EditError("nothing to set")
    names = {s.name for s in settings}
    before = conf
    while True:
        conf, clist = _load(text, conf)
        if before is None:
            before = conf
        targets = key_pairs(clist, key)
        # Earlier pairs with the same key lose the names being set, so the
        # value written is the only one that applies.
        stale = next((p for p in targets[:-1]
                      if names & {n for n, _ in _tuples(p.tunables)}), None)
        if stale is None:
            break
        text = _drop_names(conf, clist, stale, names)
    if targets:
        items = _merge(_tuples(targets[-1].tunables), settings, flavour)
        text = _replace_tunables(conf, targets[-1], _join(items))
    else:
        items = canonical_order([(s.name, "%s:%s" % (s.name, s.value))
                                 for s in settings])
        tunables = _join(items)
        text = append_entry(conf, clist.prop, PROPERTY, (key, tunables))
    _verify(before, text, key, settings, flavour)
    return text


def unset_tunables(text: str, key: str, names: Optional[Sequence[str]],
                   flavour: str = NEXENTA) -> str:
    """Remove tunables (or, with no names, every pair) for a key.  Raises
    NothingToUnset when there is nothing of the kind to remove."""
    wanted = {n.lower() for n in names} if names else None
    if wanted:
        unknown = sorted(n for n in wanted if n not in TUNABLE_BY_NAME)
        if unknown:
            raise EditError("unknown tunable '%s'" % unknown[0])
    before = None
    while True:
        conf, clist = _load(text)
        if before is None:
            before = conf
        k = key.lower()
        if wanted is None:
            victim = next((p for p in clist.pairs if p.key.lower() == k),
                          None)
        else:
            victim = next((p for p in key_pairs(clist, key)
                           if wanted & {n for n, _ in _tuples(p.tunables)}),
                          None)
        if victim is None:
            if conf is before:
                raise NothingToUnset(_nothing_there(clist, key, wanted))
            break
        if wanted is None:
            text = _remove_pair(conf, clist, victim)
        else:
            text = _drop_names(conf, clist, victim, wanted)
    _verify(before, text, key, [], flavour, wanted or ())
    return text


def _nothing_there(clist: ConfigList, key: str,
                   wanted: Optional[Set[str]]) -> str:
    k = key.lower()
    if not any(p.key.lower() == k for p in clist.pairs):
        return 'no pair for key "%s"' % key
    if not key_pairs(clist, key):
        return 'the pairs for key "%s" are legacy version-1 entries, ' \
            "which sdtune does not edit" % key
    return 'no pair for key "%s" sets %s' % (
        key, " or ".join(sorted(wanted or ())))


def _other_pairs(clist: ConfigList, key: str) -> List[Tuple[str, str]]:
    k = key.lower()
    return [(p.key_value.value, p.tunables_value.value) for p in clist.pairs
            if p.key_value.value.lower() != k]


def _effect(clist: ConfigList, key: str, flavour: str
            ) -> Tuple[SdState, List[TupleResult]]:
    """The key's own pairs applied in order to a fresh disk."""
    state = SdState()
    results: List[TupleResult] = []
    for pair in key_pairs(clist, key):
        results += apply_improved(state, pair.tunables, flavour)
    return state, results


def _verify(before: ConfFile, new: str, key: str,
            settings: Sequence[Setting], flavour: str,
            removed: Sequence[str] = ()) -> None:
    """Refuse any edit whose result is not exactly what was asked."""
    after = parse(new)
    old_list, new_list = config_list(before), config_list(after)
    if sorted(d.message for d in after.diagnostics) != \
            sorted(d.message for d in before.diagnostics):
        raise EditError("internal check failed: the edit changed the file's "
                        "syntax; nothing written")
    if new_list.prop is not None and not new_list.usable:
        raise EditError("internal check failed: the edited list is not "
                        "usable; nothing written")
    if _other_pairs(old_list, key) != _other_pairs(new_list, key):
        raise EditError("internal check failed: the edit touched other "
                        "pairs; nothing written")
    state, results = _effect(new_list, key, flavour)
    last = {r.name.lower(): r for r in results if r.name}
    for s in settings:
        r = last.get(s.name)
        why = r.reason if r is not None else "not written"
        # A value is in effect when writing it again changes nothing: this
        # catches values undone later, e.g. by the throttle reset.
        probe = replace(state)
        in_effect = r is not None and r.accepted and \
            set_property(probe, s.name, s.value, flavour)[0] and \
            probe == state
        if not in_effect:
            if r is not None and r.accepted:
                why = "a later tunable undoes it (throttle check: " \
                    "throttle-min must not exceed throttle-max)"
            if s.name == "throttle-max" and "throttle check" in why:
                why += " (below 8, set throttle-min too, e.g. throttle-min=2)"
            raise EditError("%s:%s would be ignored by sd: %s"
                            % (s.name, s.value, why))
    _verify_whole_list(after, new_list, key, settings, flavour)
    # A tuple the edit did not ask about must not stop working, e.g.
    # throttle-max:4 once its throttle-min:2 is gone (facts §3.5).
    asked = {s.name for s in settings} | set(removed)
    was = {r.name.lower(): r for r in _effect(old_list, key, flavour)[1]
           if r.name}
    for name, r in last.items():
        if name not in asked and not r.accepted and name in was and \
                was[name].accepted:
            raise EditError("%s:%s would then be ignored by sd: %s"
                            % (r.name, r.value, r.reason))


def _verify_whole_list(conf: ConfFile, clist: ConfigList, key: str,
                       settings: Sequence[Setting], flavour: str) -> None:
    """Every pair that matches the key's own disk applies, in order, and
    the last one wins (facts §3.1): a shorter prefix key may override the
    value or, through the throttle check, undo it."""
    if not settings or key_form(key) != "prefix" or \
            not KEY_LEN <= len(key) <= KEY_LEN + 16:
        return
    ident = Identity(key[:8], key[8:KEY_LEN], key[KEY_LEN:KEY_LEN + 4],
                     key[KEY_LEN + 4:])
    # str.lower() equates at least what the kernel's ASCII folding does,
    # so this cheap filter keeps every pair that can match.
    inquiry = ident.inquiry.lower()
    maybe = [p for p in clist.pairs
             if inquiry.startswith(p.key_value.value.lower())
             or p.key_value.value[:1] in " *"]
    ev = evaluate(conf, ident, flavour,
                  ConfigList(clist.prop, maybe, clist.usable, clist.problem))
    for s in settings:
        probe = replace(ev.state)
        if set_property(probe, s.name, s.value, flavour)[0] and \
                probe == ev.state:
            continue
        others = ['"%s" (pair %d)' % (e.pair.key, e.pair.index + 1)
                  for e in ev.matched if e.pair.key.lower() != key.lower()]
        raise EditError("%s:%s would not be in effect for this disk: other "
                        "pairs match it too and apply in file order: %s"
                        % (s.name, s.value, ", ".join(others)))
