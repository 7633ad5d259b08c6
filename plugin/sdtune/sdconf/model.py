# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The `sd-config-list` of a parsed sd.conf, and what sd does with it.

Finds the list the kernel uses (the first driver-global property of that
name, facts §2.2), splits it into (key, tunables) pairs (§3.1) and
evaluates, for a disk's INQUIRY identity, the tunables sd ends up with
after applying every matching pair in order (§3, §4).  Pure: no I/O.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..driverconf.parser import ConfFile, Property, Value
from .match import Identity, key_matches
from .tunables import (NEXENTA, SdState, TupleResult, apply_improved,
                       apply_v1, v1_data_names)

PROPERTY = "sd-config-list"


@dataclass
class Pair:
    """One (VID/PID key, tunables) duplet of the list."""

    index: int                 # 0-based pair number
    key_value: Value
    tunables_value: Value

    @property
    def key(self) -> str:
        return self.key_value.value

    @property
    def tunables(self) -> str:
        return self.tunables_value.value

    @property
    def improved(self) -> bool:
        """sd picks the format by the presence of a colon (facts §3.2)."""
        return ":" in self.tunables.split("\0", 1)[0]

    @property
    def start(self) -> int:
        return self.key_value.token.start

    @property
    def end(self) -> int:
        return self.tunables_value.token.end


@dataclass
class ConfigList:
    """The sd-config-list as the kernel sees it.

    `usable` is False when sd would ignore the whole list; `problem` says
    why (odd number of strings, not a string array, ...).
    """

    prop: Optional[Property]
    pairs: List[Pair]
    usable: bool
    problem: str = ""
    shadowed: List[Property] = field(default_factory=list)
    in_node_specs: List[Property] = field(default_factory=list)


def config_list(conf: ConfFile) -> ConfigList:
    """Locate and split the sd-config-list the kernel would use.  The
    result is kept on the ConfFile: it never changes once parsed."""
    cached = getattr(conf, "_config_list", None)
    if cached is None:
        cached = _config_list(conf)
        conf._config_list = cached
    return cached


def _config_list(conf: ConfFile) -> ConfigList:
    globals_ = [p for p in conf.global_properties() if p.name == PROPERTY]
    in_nodes = [p for s in conf.statements if s.kind == "node"
                for p in s.properties if p.name == PROPERTY]
    if not globals_:
        return ConfigList(None, [], False, "no sd-config-list",
                          in_node_specs=in_nodes)
    prop, shadowed = globals_[0], globals_[1:]
    if prop.kind != "string":
        return ConfigList(prop, [], False,
                          "sd-config-list is not a list of strings",
                          shadowed, in_nodes)
    values = prop.values
    pairs = [Pair(i // 2, values[i], values[i + 1])
             for i in range(0, len(values) - 1, 2)]
    if len(values) % 2:
        return ConfigList(prop, pairs, False,
                          "odd number of strings (%d): sd ignores the whole "
                          "list" % len(values), shadowed, in_nodes)
    return ConfigList(prop, pairs, True, "", shadowed, in_nodes)


def v1_data(conf: ConfFile, name: str) -> Optional[List[Optional[int]]]:
    """The global integer array a legacy entry names, if there is one."""
    prop = conf.global_property(name)
    if prop is None or prop.kind != "int":
        return None
    return [v.value for v in prop.values]


@dataclass
class PairEffect:
    """What applying one pair did to a disk's sd state."""

    pair: Pair
    results: List[TupleResult]


@dataclass
class Evaluation:
    """The sd state after sd.conf processing for one identity."""

    state: SdState
    matched: List[PairEffect]
    list_problem: str = ""

    def fields(self) -> Dict[str, Optional[int]]:
        return self.state.as_dict()


def apply_pair(conf: ConfFile, pair: Pair, state: SdState,
               flavour: str = NEXENTA) -> List[TupleResult]:
    """Apply one pair's tunables to `state` as sd would."""
    if pair.improved:
        return apply_improved(state, pair.tunables, flavour)
    return [apply_v1(state, name, v1_data(conf, name))
            for name in v1_data_names(pair.tunables)]


def evaluate(conf: ConfFile, ident: Identity,
             flavour: str = NEXENTA, clist: Optional[ConfigList] = None
             ) -> Evaluation:
    """What sd.conf makes of a disk: every matching pair, in order."""
    clist = clist if clist is not None else config_list(conf)
    state = SdState()
    if not clist.usable:
        return Evaluation(state, [], clist.problem)
    effects = []
    for pair in clist.pairs:
        if key_matches(pair.key, ident):
            effects.append(PairEffect(pair, apply_pair(conf, pair, state,
                                                       flavour)))
    return Evaluation(state, effects)


def pair_alone(conf: ConfFile, pair: Pair,
               flavour: str = NEXENTA) -> Tuple[SdState, List[TupleResult]]:
    """A pair applied to a fresh disk: what its tunables do by themselves."""
    state = SdState()
    return state, apply_pair(conf, pair, state, flavour)
