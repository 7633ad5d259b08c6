# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The `nvme-config-list` of a parsed nvme.conf, and what nvme does with it.

nvme.conf is a driver.conf, read by the same parser as sd.conf
(driverconf/parser.py).  This module finds the driver-global properties the
illumos nvme driver reads at attach (`min-phys-block-size`,
`volatile-write-cache-enable`, `ignore-unknown-vendor-status`) and its
per-model list of (model, firmware revisions, name:value tuples)
triplets, and evaluates, for a controller's Identify model and firmware
revision, the settings the driver ends up with (nvme.c: nvme_attach(),
nvme_config_list(), nvme_init_ns()).  Pure: no I/O.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import SdtuneError
from ..driverconf.parser import ConfFile, Property, Value
from ..driverconf.strtol import ddi_strtoul

PROPERTY = "nvme-config-list"
DEFAULT_MIN_BLOCK = 512      # NVME_DEFAULT_MIN_BLOCK_SIZE
MODEL_LEN = 40               # Identify Controller id_model
FWREV_LEN = 8                # Identify Controller id_fwrev
UINT_MASK = 0xFFFFFFFF       # n_min_block_size is a uint_t

MIN_BLOCK = "min-phys-block-size"
WRITE_CACHE = "volatile-write-cache"
VENDOR_STATUS = "ignore-unknown-vendor-status"
# Names nvme_config_list() knows, compared with strcmp().
TUNABLES = (MIN_BLOCK, WRITE_CACHE, VENDOR_STATUS)
BOOLEAN_TUNABLES = (WRITE_CACHE, VENDOR_STATUS)
# The global (attach-time) property names.
GLOBAL_MIN_BLOCK = "min-phys-block-size"
GLOBAL_WRITE_CACHE = "volatile-write-cache-enable"
GLOBAL_VENDOR_STATUS = "ignore-unknown-vendor-status"
# Every other driver-wide property nvme_attach() reads (illumos-gate
# usr/src/uts/common/io/nvme/nvme.c, ddi_prop_get_int; the queue names
# changed with 11202, 2019-06-20): sdtune does not evaluate them.
READ_NOT_MODELLED = {
    "strict-version": "", "admin-queue-len": "", "async-event-limit": "",
    "io-squeue-len": "since 2019", "io-cqueue-len": "since 2019",
    "max-submission-queues": "since 2019",
    "max-completion-queues": "since 2019",
    "io-queue-len": "before 2019 only",
}
# nvme_config_boolean(): exactly these words, case-sensitive.
BOOLEAN_WORDS = {"on": True, "true": True, "off": False, "false": False}

APPLIED = "applied"
UNKNOWN = "unknown"
INVALID = "invalid"          # a boolean the driver did not accept: unchanged
RESET = "reset"              # a bad min-phys-block-size: back to 512
MALFORMED = "malformed"      # no ':' or nothing before it: the list stops


def as_word(value: object) -> str:
    """A setting as nvme.conf writes it: on/off for a boolean."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    return str(value)


def cstring(value: str) -> str:
    """What a C string of the property holds: up to its first NUL (a
    `\\0` escape in the file ends the string for the driver)."""
    return value.split("\0", 1)[0]


def strtok(text: str, sep: str = ",") -> List[Tuple[int, str]]:
    """strtok_r(): (start index, token) of each non-empty token; no blank
    is trimmed."""
    out = []
    pos = 0
    for piece in text.split(sep):
        if piece:
            out.append((pos, piece))
        pos += len(piece) + len(sep)
    return out


def isp2(value: int) -> bool:
    """The kernel's ISP2(): true for 0 too."""
    return value & (value - 1) == 0


def min_block_problem(value: int) -> str:
    """Why nvme refuses a minimum physical block size, "" if it takes it
    (the order of the driver's checks)."""
    if not isp2(value):
        return "not a power of 2"
    if value < DEFAULT_MIN_BLOCK:
        return "too low"
    return ""


@dataclass
class Triplet:
    """One ("<model>", "<fwrev list>", "<name:value,...>") of the list."""

    index: int                 # 0-based triplet number
    model_value: Value
    fwrevs_value: Value
    tunables_value: Value

    @property
    def model(self) -> str:
        return cstring(self.model_value.value)

    @property
    def fwrevs(self) -> str:
        return cstring(self.fwrevs_value.value)

    @property
    def tunables(self) -> str:
        return cstring(self.tunables_value.value)

    def fwrev_tokens(self) -> List[str]:
        return [tok for _, tok in strtok(self.fwrevs)]

    def matches(self, model: str, fwrev: str) -> bool:
        """nvme_config_list(): same model exactly; an empty fwrev list
        is every firmware, else one token must equal the revision."""
        if self.model != model:
            return False
        return self.fwrevs == "" or fwrev in self.fwrev_tokens()

    @staticmethod
    def _span(value: Value) -> Tuple[int, int]:
        return value.token.start, value.token.end

    @property
    def model_span(self) -> Tuple[int, int]:
        """[start, end) of the quoted model string, quotes included."""
        return self._span(self.model_value)

    @property
    def fwrevs_span(self) -> Tuple[int, int]:
        return self._span(self.fwrevs_value)

    @property
    def tunables_span(self) -> Tuple[int, int]:
        return self._span(self.tunables_value)

    @property
    def start(self) -> int:
        return self.model_value.token.start

    @property
    def end(self) -> int:
        return self.tunables_value.token.end


@dataclass
class NvmeConfigList:
    """The nvme-config-list as the driver sees it.

    `prop` is the first driver-global nvme-config-list of strings: the
    driver's lookup asks for a string array and passes over a property
    of the name of another type (`not_strings`; an integer, or a name
    without a value, which the conf parser makes an integer 0).
    `whole_list_ignored` says why the driver ignores every triplet
    (element count not a multiple of 3); None when the list is used or
    there is none.  `triplets` holds the complete triplets even then,
    for lint and edits.
    """

    prop: Optional[Property]
    triplets: List[Triplet]
    whole_list_ignored: Optional[str] = None
    shadowed: List[Property] = field(default_factory=list)
    in_node_specs: List[Property] = field(default_factory=list)
    not_strings: List[Property] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return self.prop is not None and self.whole_list_ignored is None


def config_list(conf: ConfFile) -> NvmeConfigList:
    """The nvme-config-list the driver uses: the first driver-global
    property of the name that is a list of strings (the lookup is by
    name and type); later ones are `shadowed`.  Kept on the ConfFile
    once computed."""
    cached = getattr(conf, "_nvme_config_list", None)
    if cached is None:
        cached = _config_list(conf)
        conf._nvme_config_list = cached
    return cached


def _config_list(conf: ConfFile) -> NvmeConfigList:
    globals_ = [p for p in conf.global_properties() if p.name == PROPERTY]
    in_nodes = [p for s in conf.statements if s.kind == "node"
                for p in s.properties if p.name == PROPERTY]
    strings = [p for p in globals_ if p.kind == "string"]
    others = [p for p in globals_ if p.kind != "string"]
    if not strings:
        return NvmeConfigList(None, [], None, [], in_nodes, others)
    prop, shadowed = strings[0], strings[1:]
    values = prop.values
    triplets = [Triplet(i // 3, values[i], values[i + 1], values[i + 2])
                for i in range(0, len(values) - 2, 3)]
    ignored = None
    if len(values) % 3:
        ignored = ("nvme-config-list has %d strings, not a multiple of 3: "
                   "the driver ignores the whole list" % len(values))
    return NvmeConfigList(prop, triplets, ignored, shadowed, in_nodes,
                          others)


@dataclass
class GlobalSetting:
    """Where a driver-global value came from."""

    name: str
    value: object              # int or bool, what the driver uses
    source: str                # "default", "file" or "fallback"
    prop: Optional[Property] = None
    problem: str = ""          # why the file's value was not used as is


@dataclass
class NvmeGlobals:
    """The attach-time values, before any nvme-config-list triplet."""

    min_phys_block_size: int
    volatile_write_cache_enable: bool
    ignore_unknown_vendor_status: bool
    origins: Dict[str, GlobalSetting] = field(default_factory=dict)


def _get_int(conf: ConfFile, name: str, default: int
             ) -> Tuple[int, str, Optional[Property], str]:
    """ddi_prop_get_int(): (value, source, property, problem).  The
    lookup is by name and type: the first integer property of the name
    (a name without a value is an integer 0 to the conf parser; an
    array gives its first integer); a string one is passed over, and
    with no integer one the default holds ("not an integer" names the
    string property)."""
    props = [p for p in conf.global_properties() if p.name == name]
    ints = [p for p in props if p.kind in ("int", "boolean")]
    if not ints:
        if props:
            return default, "fallback", props[0], "not an integer"
        return default, "default", None, ""
    prop = ints[0]
    if prop.kind == "boolean":
        return 0, "file", prop, ""
    value = prop.values[0].value
    if value is None:
        return default, "fallback", prop, "not a valid number"
    return value, "file", prop, ""


def globals_of(conf: ConfFile) -> NvmeGlobals:
    """What nvme_attach() reads, with its fallback rules."""
    origins: Dict[str, GlobalSetting] = {}
    raw, source, prop, problem = _get_int(conf, GLOBAL_MIN_BLOCK,
                                          DEFAULT_MIN_BLOCK)
    # The int lands in a uint_t: a negative value is a huge one.
    min_block = raw & UINT_MASK
    why = min_block_problem(min_block)
    if why:
        min_block, source = DEFAULT_MIN_BLOCK, "fallback"
        problem = "%d is %s" % (raw, why)
    origins[GLOBAL_MIN_BLOCK] = GlobalSetting(GLOBAL_MIN_BLOCK, min_block,
                                              source, prop, problem)
    raw, source, prop, problem = _get_int(conf, GLOBAL_WRITE_CACHE, 1)
    cache = raw != 0
    origins[GLOBAL_WRITE_CACHE] = GlobalSetting(GLOBAL_WRITE_CACHE, cache,
                                                source, prop, problem)
    raw, source, prop, problem = _get_int(conf, GLOBAL_VENDOR_STATUS, 0)
    vendor = raw == 1
    origins[GLOBAL_VENDOR_STATUS] = GlobalSetting(
        GLOBAL_VENDOR_STATUS, vendor, source, prop, problem)
    return NvmeGlobals(min_block, cache, vendor, origins)


@dataclass
class TupleEffect:
    """What one name:value tuple of a matching triplet did."""

    triplet: int               # index of its triplet
    position: int              # index of the tuple in the tunables string
    text: str                  # the tuple as strtok() gave it
    name: Optional[str]        # None for a malformed tuple
    value: Optional[str]
    outcome: str               # APPLIED, UNKNOWN, INVALID, RESET, MALFORMED
    reason: str = ""
    result: object = None      # the value the driver now has, if any


@dataclass
class NvmeEvaluation:
    """The driver's settings for one controller after nvme.conf."""

    min_phys_block_size: int
    volatile_write_cache: bool
    ignore_unknown_vendor_status: bool
    matched: List[int]
    stopped_at: Optional[TupleEffect]
    effects: List[TupleEffect]
    globals: NvmeGlobals
    list_ignored: Optional[str] = None

    def values(self) -> Dict[str, object]:
        return {MIN_BLOCK: self.min_phys_block_size,
                WRITE_CACHE: self.volatile_write_cache,
                VENDOR_STATUS: self.ignore_unknown_vendor_status}


def apply_tuple(state: Dict[str, object], triplet: int, position: int,
                text: str) -> TupleEffect:
    """One tuple of a matching triplet, applied to `state` (a dict of
    the three tunable names) as nvme_config_list() does."""
    colon = text.find(":")
    if colon <= 0:
        return TupleEffect(triplet, position, text, None, None, MALFORMED,
                           "no ':'" if colon < 0 else "no name before ':'")
    name, value = text[:colon], text[colon + 1:]
    if name in BOOLEAN_TUNABLES:
        if value in BOOLEAN_WORDS:
            state[name] = BOOLEAN_WORDS[value]
            return TupleEffect(triplet, position, text, name, value,
                               APPLIED, result=state[name])
        return TupleEffect(triplet, position, text, name, value, INVALID,
                           "not on/true/off/false: value unchanged",
                           state[name])
    if name == MIN_BLOCK:
        number, rest = ddi_strtoul(value)
        why = rest if number is None else min_block_problem(number)
        if why:
            state[name] = DEFAULT_MIN_BLOCK
            return TupleEffect(triplet, position, text, name, value, RESET,
                               "%s: reset to %d" % (why, DEFAULT_MIN_BLOCK),
                               DEFAULT_MIN_BLOCK)
        state[name] = number & UINT_MASK
        return TupleEffect(triplet, position, text, name, value, APPLIED,
                           result=state[name])
    return TupleEffect(triplet, position, text, name, value, UNKNOWN,
                       "unknown config: ignored")


def evaluate(conf: ConfFile, model: str, fwrev: str,
             clist: Optional[NvmeConfigList] = None) -> NvmeEvaluation:
    """What nvme.conf gives a controller whose Identify model and
    firmware revision (trailing blanks removed) are `model`, `fwrev`:
    the globals, then every matching triplet in order, the later
    overriding the earlier, until a malformed tuple stops the list."""
    glob = globals_of(conf)
    clist = clist if clist is not None else config_list(conf)
    state: Dict[str, object] = {
        MIN_BLOCK: glob.min_phys_block_size,
        WRITE_CACHE: glob.volatile_write_cache_enable,
        VENDOR_STATUS: glob.ignore_unknown_vendor_status}
    matched: List[int] = []
    effects: List[TupleEffect] = []
    stopped: Optional[TupleEffect] = None
    if clist.usable:
        for triplet in clist.triplets:
            if not triplet.matches(model, fwrev):
                continue
            matched.append(triplet.index)
            for position, text in strtok(triplet.tunables):
                effect = apply_tuple(state, triplet.index, position, text)
                effects.append(effect)
                if effect.outcome == MALFORMED:
                    stopped = effect
                    break
            if stopped is not None:
                break
    return NvmeEvaluation(state[MIN_BLOCK], state[WRITE_CACHE],
                          state[VENDOR_STATUS], matched, stopped, effects,
                          glob, clist.whole_list_ignored)


# Relative Performance of an LBA format, as nvmeadm prints it.
RELATIVE_PERFORMANCE = {"Best": 0, "Better": 1, "Good": 2, "Degraded": 3}


def best_block_size(lba_formats: Sequence[Tuple[int, int, int]],
                    logical: int, min_block: int) -> int:
    """The physical block size blkdev reports for a namespace whose LBA
    format in use has `logical`-byte blocks.  nvme_init_ns() starts from
    the format in use, takes the first format of the best relative
    performance among those without metadata, in index order, stopping
    at an unused one (LBADS 0: 1 byte as nvmeadm prints it, 0 here too),
    and raises that to the controller's `min_block`; blkdev then reports
    it only when it is at least the logical block (else the logical
    block).  `lba_formats` are (data bytes, metadata bytes, relative
    performance 0..3) in index order; formats with metadata may be
    missing (nvmeadm shows them only with -v): they never win."""
    if logical <= 0:
        raise SdtuneError("compute", "physical block size",
                          "the logical block size is unknown")
    best = logical
    last_rp = 3
    for data, metadata, rp in lba_formats:
        if data <= 1:
            break
        if metadata != 0 or rp >= last_rp:
            continue
        last_rp, best = rp, data
    best = max(best, min_block)
    return best if best >= logical else logical
