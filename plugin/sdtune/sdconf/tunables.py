# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The tunables of an `sd-config-list` entry and how sd applies them.

Models `sd_nvpair_str_decode()`, `sd_set_properties()` and the throttle
re-validation of usr/src/uts/common/io/scsi/targets/sd.c (facts §3.3 to
§3.5), and the legacy version-1 data lists (§3.6).  Pure: no I/O.

`SdState` holds the sd_lun fields that sd.conf can change; `apply_improved`
and `apply_v1` change one in place and return what happened to each
tuple, so that lint, `sdconf show` and the kernel evaluation all share the
same model of what the kernel does.
"""

import re
from dataclasses import dataclass, asdict
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from ..driverconf.checks import ZFS_MAX_BLOCK, too_large_for_zfs
from ..driverconf.strtol import ddi_strtol

NEXENTA = "nexenta"
UPSTREAM = "upstream"
FLAVOURS = (NEXENTA, UPSTREAM)

SD_MAX_THROTTLE = 256      # sd_max_throttle default (sddef.h)
SD_MIN_THROTTLE = 8        # sd_min_throttle default
SD_LOWEST_VALID_THROTTLE = 2
NX_IO_TIME = 15            # NexentaStor SD_IO_TIME, seconds
NX_SLOW_IO_THRESHOLD = 30  # NexentaStor sd_slow_io_threshold, seconds


@dataclass
class SdState:
    """The sd_lun fields sd.conf can set, with their attach defaults
    (facts §6 step 1).  None means "left at the driver's own default",
    for fields whose default depends on the device."""

    un_f_suppress_cache_flush: int = 0
    un_saved_throttle: int = SD_MAX_THROTTLE
    un_throttle: int = SD_MAX_THROTTLE
    un_min_throttle: int = SD_MIN_THROTTLE
    un_f_disksort_disabled: int = 0
    un_phy_blocksize: int = 512
    un_f_sdconf_phy_blocksize: int = 0     # NexentaStor only
    un_f_rmw_type: int = 0
    un_f_power_condition_disabled: Optional[int] = None
    un_f_lun_reset_enabled: Optional[int] = None
    un_f_mmc_gesn_polling: int = 1
    un_ctype: Optional[int] = None
    un_busy_timeout_us: Optional[int] = None
    un_reserve_release_time: Optional[int] = None
    un_busy_retry_count: Optional[int] = None
    un_retry_count: Optional[int] = None
    un_notready_retry_count: Optional[int] = None
    un_reset_retry_count: Optional[int] = None
    un_victim_retry_count: Optional[int] = None
    un_io_time: Optional[int] = None             # NexentaStor only
    un_slow_io_threshold_s: Optional[int] = None  # NexentaStor only

    def as_dict(self) -> Dict[str, Optional[int]]:
        return asdict(self)


@dataclass
class TupleResult:
    """What sd did with one `name:value` tuple (or v1 data value)."""

    name: Optional[str]       # as the kernel tokenised it
    value: Optional[str]
    accepted: bool
    reason: str = ""          # why it was ignored, or what it set
    start: int = 0            # index in the tunables string of the tuple
    end: int = 0


# ---------------------------------------------------------------- numbers

def to_short(value: int) -> int:
    value &= 0xFFFF
    return value - 0x10000 if value & 0x8000 else value


def is_p2(value: int) -> bool:
    """The kernel's ISP2(): x & (x - 1) == 0 (true for 0)."""
    return value & (value - 1) == 0 if value >= 0 else False


# ---------------------------------------------------------- tokenisation

def _strtok(buf: List[str], start: Optional[int], seps: str,
            lasts: List[Optional[int]]) -> Optional[int]:
    """strtok_r() over a NUL-terminated char list; returns a start index.

    `lasts` is a one-element list standing for the char ** argument.
    Separators found are overwritten with NUL, as in C.
    """
    if start is None:
        start = lasts[0]
    if start is None:
        return None
    i = start
    while buf[i] != "\0" and buf[i] in seps:
        i += 1
    if buf[i] == "\0":
        return None          # lasts is deliberately left unchanged
    j = i
    while buf[j] != "\0" and buf[j] not in seps:
        j += 1
    if buf[j] == "\0":
        lasts[0] = None
    else:
        buf[j] = "\0"
        lasts[0] = j + 1
    return i


def _cstr(buf: List[str], i: Optional[int]) -> Optional[str]:
    if i is None:
        return None
    j = buf.index("\0", i)
    return "".join(buf[i:j])


# A tunables string the simple reading below decodes the same way as the
# kernel's strtok dance: tuples of one word, a colon and one word.
_SIMPLE = re.compile(r"[ \t]*[^ \t,:\0]+[ \t]*:[ \t]*[^ \t,:\0]+[ \t]*")


def decode_improved(tunables: str) -> List[Tuple[Optional[str],
                                                 Optional[str], int, int]]:
    """Split an improved-format string the way sd_nvpair_str_decode() does.

    Returns (name, value, start, end) per comma-separated tuple, where a
    None name or value means sd ignores the tuple.  Quirks kept: text
    after the first blank of a name or value and after a second colon is
    ignored, and a tuple without a colon can still get a value from the
    rest of its name (facts §3.3).
    """
    pieces = tunables.split(",")
    if all(_SIMPLE.fullmatch(p) or not p.strip(" \t") for p in pieces):
        out, pos = [], 0
        for p in pieces:
            if p.strip(" \t"):
                name, value = p.split(":")
                out.append((name.strip(" \t"), value.strip(" \t"), pos,
                            pos + len(p)))
            elif p:
                # Blanks only: strtok(",") returns the field, but it has
                # no name (only an empty field is skipped).
                out.append((None, None, pos, pos + len(p)))
            pos += len(p) + 1
        return out
    return _decode_exact(tunables)


def _decode_exact(tunables: str) -> List[Tuple[Optional[str],
                                               Optional[str], int, int]]:
    # A C string stops at its first NUL.
    text = tunables.split("\0", 1)[0]
    buf = list(text) + ["\0"]
    nv_lasts: List[Optional[int]] = [None]
    v_lasts: List[Optional[int]] = [None]
    x_lasts: List[Optional[int]] = [None]
    out = []
    nv = _strtok(buf, 0, ",", nv_lasts)
    while nv is not None:
        end = text.find(",", nv)
        end = len(text) if end < 0 else end
        token = _strtok(buf, nv, ":", v_lasts)
        name = _strtok(buf, token, " \t", x_lasts)
        token = _strtok(buf, None, ":", v_lasts)
        value = _strtok(buf, token, " \t", x_lasts)
        out.append((_cstr(buf, name), _cstr(buf, value), nv, end))
        nv = _strtok(buf, None, ",", nv_lasts)
    return out


# ---------------------------------------------------------- the setters

def _bool(value: str) -> Optional[int]:
    low = value.lower()
    if low == "true":
        return 1
    if low == "false":
        return 0
    return None


def _number(value: str) -> Tuple[Optional[int], str]:
    val, rest = ddi_strtol(value)
    if val is None:
        return None, rest
    return val, rest


def _set_bool(attr: str, invert: bool = False) -> Callable:
    def setter(st: SdState, value: str) -> Tuple[bool, str]:
        b = _bool(value)
        if b is None:
            return False, "only true or false is accepted"
        setattr(st, attr, 1 - b if invert else b)
        return True, "%s = %d" % (attr, getattr(st, attr))
    return setter


def _set_int(attr: str, convert: Callable[[int], int] = lambda v: v,
             check: Optional[Callable[[int], Optional[str]]] = None
             ) -> Callable:
    def setter(st: SdState, value: str) -> Tuple[bool, str]:
        val, rest = _number(value)
        if val is None:
            return False, "not a number (%s)" % rest
        if check is not None:
            problem = check(val)
            if problem:
                return False, problem
        setattr(st, attr, convert(val))
        return True, "%s = %d" % (attr, getattr(st, attr))
    return setter


def _set_throttle_max(st: SdState, value: str) -> Tuple[bool, str]:
    val, rest = _number(value)
    if val is None:
        return False, "not a number (%s)" % rest
    st.un_saved_throttle = st.un_throttle = to_short(val)
    return True, "un_saved_throttle = %d" % st.un_saved_throttle


def _check_phy(val: int) -> Optional[str]:
    # un_tgt_blocksize and un_sys_blocksize are still 0 at this point of
    # attach, so only the power-of-two test bites (facts §3.4).
    if not is_p2(val) or val < 0:
        return "not a power of two"
    return None


def _set_phy(flavour: str) -> Callable:
    base = _set_int("un_phy_blocksize", lambda v: v & 0xFFFFFFFF, _check_phy)

    def setter(st: SdState, value: str) -> Tuple[bool, str]:
        ok, why = base(st, value)
        if ok and flavour == NEXENTA:
            st.un_f_sdconf_phy_blocksize = 1
        return ok, why
    return setter


def _set_nx_reset(attr: str, default: int) -> Callable:
    """NexentaStor io-time / slow-io-threshold: invalid resets to default."""
    def setter(st: SdState, value: str) -> Tuple[bool, str]:
        val, rest = _number(value)
        if val is None:
            setattr(st, attr, default)
            return False, "not a number (%s); reset to %d" % (rest, default)
        setattr(st, attr, val)
        return True, "%s = %d" % (attr, val)
    return setter


@dataclass(frozen=True)
class Tunable:
    name: str
    kind: str                    # "bool" or "int"
    falls_through: bool          # runs the throttle re-validation
    nexenta_only: bool = False
    doc: str = ""


# Order matters: it is the order of the tests in sd_set_properties(), and
# the throttle re-validation sits between the fall-through names and the
# last two.
TUNABLES: Tuple[Tunable, ...] = (
    Tunable("cache-nonvolatile", "bool", False,
            doc="true: sd sends no SYNCHRONIZE CACHE at all"),
    Tunable("controller-type", "int", False),
    Tunable("delay-busy", "int", False, doc="nanoseconds"),
    Tunable("disksort", "bool", False, doc="false disables disksort"),
    Tunable("power-condition", "bool", False),
    Tunable("timeout-releasereservation", "int", False),
    Tunable("reset-lun", "bool", False),
    Tunable("retries-busy", "int", False),
    Tunable("retries-timeout", "int", False),
    Tunable("retries-notready", "int", False),
    Tunable("retries-reset", "int", False),
    Tunable("throttle-max", "int", True, doc="1..32767, short"),
    Tunable("throttle-min", "int", True, doc="2..throttle-max"),
    Tunable("rmw-type", "int", True, doc="0, 1 or 2"),
    Tunable("physical-block-size", "int", True, doc="512 * 2^n"),
    Tunable("slow-io-threshold", "int", True, nexenta_only=True,
            doc="seconds"),
    Tunable("io-time", "int", True, nexenta_only=True, doc="seconds"),
    Tunable("retries-victim", "int", False),
    Tunable("mmc-gesn-polling", "bool", False),
)
TUNABLE_BY_NAME: Dict[str, Tunable] = {t.name: t for t in TUNABLES}


def _c_div1000(val: int) -> int:
    """C's val / 1000: truncates toward zero, also for negative values."""
    return -(-val // 1000) if val < 0 else val // 1000


def _setters(flavour: str) -> Dict[str, Callable]:
    s = {
        "cache-nonvolatile": _set_bool("un_f_suppress_cache_flush"),
        "controller-type": _set_int("un_ctype", lambda v: v & 0xFF),
        "delay-busy": _set_int("un_busy_timeout_us", _c_div1000),
        "disksort": _set_bool("un_f_disksort_disabled", invert=True),
        "power-condition": _set_bool("un_f_power_condition_disabled",
                                     invert=True),
        "timeout-releasereservation": _set_int("un_reserve_release_time",
                                               lambda v: v & 0xFFFF),
        "reset-lun": _set_bool("un_f_lun_reset_enabled"),
        "retries-busy": _set_int("un_busy_retry_count",
                                 lambda v: v & 0xFFFFFFFF),
        "retries-timeout": _set_int("un_retry_count",
                                    lambda v: v & 0xFFFFFFFF),
        "retries-notready": _set_int("un_notready_retry_count",
                                     lambda v: v & 0xFFFFFFFF),
        "retries-reset": _set_int("un_reset_retry_count",
                                  lambda v: v & 0xFFFFFFFF),
        "throttle-max": _set_throttle_max,
        "throttle-min": _set_int("un_min_throttle", to_short),
        "rmw-type": _set_int("un_f_rmw_type", lambda v: v & 0x3),
        "physical-block-size": _set_phy(flavour),
        "retries-victim": _set_int("un_victim_retry_count",
                                   lambda v: v & 0xFFFFFFFF),
        "mmc-gesn-polling": _set_bool("un_f_mmc_gesn_polling"),
    }
    if flavour == NEXENTA:
        s["io-time"] = _set_nx_reset("un_io_time", NX_IO_TIME)
        s["slow-io-threshold"] = _set_nx_reset("un_slow_io_threshold_s",
                                               NX_SLOW_IO_THRESHOLD)
    return s


_SETTERS = {f: _setters(f) for f in FLAVOURS}


def revalidate_throttle(st: SdState) -> bool:
    """The check after every fall-through name; True when it reset."""
    if st.un_throttle < SD_LOWEST_VALID_THROTTLE or \
            st.un_min_throttle < SD_LOWEST_VALID_THROTTLE or \
            st.un_min_throttle > st.un_throttle:
        st.un_saved_throttle = st.un_throttle = SD_MAX_THROTTLE
        st.un_min_throttle = SD_MIN_THROTTLE
        return True
    return False


def set_property(st: SdState, name: str, value: str,
                 flavour: str = NEXENTA) -> Tuple[bool, str]:
    """sd_set_properties() for one tuple: (accepted, explanation)."""
    key = name.lower()
    tun = TUNABLE_BY_NAME.get(key)
    setter = _SETTERS[flavour].get(key)
    if setter is None:
        # Unknown names run the throttle check too, but the state is
        # always valid between tuples, so it never changes anything.
        if tun is not None and tun.nexenta_only:
            return False, "NexentaStor-only property; upstream sd ignores it"
        return False, "unknown property name"
    ok, why = setter(st, value)
    # An invalid value jumps past the re-validation ("goto value_invalid"),
    # so only an accepted fall-through value can trigger the reset.
    if ok and tun.falls_through and revalidate_throttle(st):
        return False, ("throttle check failed (throttle-max < 2, "
                       "throttle-min < 2 or throttle-min > throttle-max): "
                       "both reset to %d/%d" % (SD_MIN_THROTTLE,
                                                SD_MAX_THROTTLE))
    return ok, why


def apply_improved(st: SdState, tunables: str,
                   flavour: str = NEXENTA) -> List[TupleResult]:
    """Apply an improved-format string to `st`, tuple by tuple."""
    results = []
    for name, value, start, end in decode_improved(tunables):
        if name is None or value is None:
            results.append(TupleResult(name, value, False,
                                       "no name or no value", start, end))
            continue
        ok, why = set_property(st, name, value, flavour)
        results.append(TupleResult(name, value, ok, why, start, end))
    return results


# ------------------------------------------------------ legacy v1 format

SD_CONF_VERSION_1 = 1
SD_CONF_MAX_ITEMS = 19
SD_CONF_BIT_MASK = 0x7FFFF
V1_BITS = {0: "THROTTLE", 1: "CTYPE", 10: "NRR_COUNT", 11: "BSY_RETRY_COUNT",
           12: "RST_RETRIES", 13: "RSV_REL_TIME", 15: "MIN_THROTTLE",
           16: "DISKSORT_DISABLED", 17: "LUN_RESET_ENABLED",
           18: "CACHE_IS_NV"}
V1_CTYPES = (0, 2, 3)   # CTYPE_CDROM, CTYPE_CCS, CTYPE_ROD (sddef.h)


def v1_data_names(tunables: str) -> List[str]:
    """The data-property names of a v1 entry (blank/TAB separated)."""
    return [w for w in re.split(r"[ \t]+", tunables.split("\0", 1)[0]) if w]


def apply_v1(st: SdState, data_name: str,
             data: Optional[List[Optional[int]]]) -> TupleResult:
    """Apply one version-1 data list (facts §3.6); `data` is None when the
    global integer-array property does not exist."""
    if data is None:
        return TupleResult(data_name, None, False,
                           "no integer-array property of that name")
    if len(data) < 2 or data[0] != SD_CONF_VERSION_1:
        version = data[0] if data else None
        return TupleResult(data_name, None, False,
                           "data property %s version 0x%x is invalid."
                           % (data_name, (version or 0) & 0xFFFFFFFF))
    flags = (data[1] or 0) & 0xFFFFFFFF
    if flags & ~SD_CONF_BIT_MASK:
        return TupleResult(data_name, None, False,
                           "invalid bits 0x%x in data list %s"
                           % (flags & ~SD_CONF_BIT_MASK, data_name))
    # sd_chk_vers1_data() counts bits 0..17 with bit 0 twice (its loop
    # bug), then wants at least that many values after version and flags.
    count = sum(1 for i in range(SD_CONF_MAX_ITEMS - 1) if flags >> i & 1)
    count += flags & 1
    if len(data) < count + 2:
        return TupleResult(data_name, None, False,
                           "Data property list %s size is incorrect"
                           % data_name)

    def slot(bit: int) -> Optional[int]:
        i = 2 + bit
        return data[i] if i < len(data) else None   # None: reads garbage

    done = []
    for bit, what in sorted(V1_BITS.items()):
        if not flags >> bit & 1:
            continue
        val = slot(bit)
        done.append(what)
        if val is None:
            continue
        if bit == 0:
            st.un_saved_throttle = st.un_throttle = to_short(val)
        elif bit == 1:
            # sd_set_vers1_properties() takes only CTYPE_CDROM, CTYPE_CCS
            # and CTYPE_ROD; any other value is refused with a CE_WARN.
            if val in V1_CTYPES:
                st.un_ctype = val
        elif bit == 10:
            if val:     # a zero count is skipped by sd_set_vers1_properties
                st.un_notready_retry_count = val & 0xFFFFFFFF
        elif bit == 11:
            st.un_busy_retry_count = val & 0xFFFFFFFF
        elif bit == 12:
            st.un_reset_retry_count = val & 0xFFFFFFFF
        elif bit == 13:
            st.un_reserve_release_time = val & 0xFFFF
        elif bit == 15:
            st.un_min_throttle = to_short(val)
        elif bit == 16:
            st.un_f_disksort_disabled = 1 if val else 0
        elif bit == 17:
            st.un_f_lun_reset_enabled = 1 if val else 0
        elif bit == 18:
            st.un_f_suppress_cache_flush = 1 if val else 0
    revalidate_throttle(st)
    return TupleResult(data_name, None, True, "set " + ", ".join(done))


# ----------------------------------------------------- canonical writing

def canonical_value(name: str, value: str) -> Tuple[Optional[str], str]:
    """Check a value an operator wants to write; (text, "") or (None, why).

    Stricter than the kernel on purpose: what the kernel would silently
    ignore or misread is refused (facts §16.1).
    """
    tun = TUNABLE_BY_NAME.get(name)
    if tun is None:
        return None, "unknown tunable"
    if tun.kind == "bool":
        if value.lower() in ("true", "false"):
            return value.lower(), ""
        return None, "must be true or false"
    text = value.strip()
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
        num = int(text, 16)
    elif re.fullmatch(r"[1-9][0-9]*|0", text):
        num = int(text)
    elif re.fullmatch(r"0[0-9]+", text):
        return None, ("leading zero: the kernel would read %s as octal"
                      % text)
    else:
        return None, "must be a decimal number"
    problem = _range_problem(name, num)
    if problem:
        return None, problem
    return str(num), ""


def _range_problem(name: str, num: int) -> str:
    if name == "physical-block-size":
        if num < 512 or not is_p2(num):
            return "must be 512 times a power of two (512, 4096, 8192, ...)"
        if num > ZFS_MAX_BLOCK:
            return too_large_for_zfs(num)
    elif name in ("throttle-max", "throttle-min"):
        if not SD_LOWEST_VALID_THROTTLE <= num <= 32767:
            return "must be between 2 and 32767"
    elif name == "rmw-type":
        if num > 2:
            return "must be 0, 1 or 2"
    elif num > 0x7FFFFFFF:
        return "too large"
    return ""


def value_text(value: object) -> str:
    """A tunable's value as sd.conf (and a record's text) writes it:
    true and false in lower case, anything else as it is."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def settings_text(settings: Mapping[str, object]) -> str:
    """"physical-block-size:4096, cache-nonvolatile:true": tunables as
    certify's verdict and the report list what a record recommends."""
    return ", ".join("%s:%s" % (k, value_text(v))
                     for k, v in settings.items())
