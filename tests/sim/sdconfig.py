# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What sd does with sd-config-list while a unit attaches (facts §3-§5).

The matching of an id string against the INQUIRY bytes (plain prefix,
blank-compressed, wildcard), the tokeniser of the name:value format with
its shared strtok state, ddi_strtol(), the effect of every tunable on the
unit's fields followed by the throttle check, the legacy version-1 data
lists, and the built-in disk and flash tables.  All functions work on a
plain dict of struct sd_lun field values; runs no commands.
"""

from typing import Dict, List, Optional, Tuple

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
SD_MAX_THROTTLE = 256
SD_MIN_THROTTLE = 8
SD_LOWEST_VALID_THROTTLE = 2
NANOSEC = 1000000000
HZ = 100
SD_IO_TIME_NX = 15
SLOW_IO_THRESHOLD_NX = 30 * NANOSEC

# SD_CONF_BSET_* bit numbers.
BIT_THROTTLE, BIT_CTYPE, BIT_FAB_DEVID, BIT_NOCACHE = 0, 1, 2, 3
BIT_NRR, BIT_BSY, BIT_RST, BIT_RSV_REL = 10, 11, 12, 13
BIT_TUR_CHECK, BIT_MIN_THROTTLE, BIT_DISKSORT = 14, 15, 16
BIT_LUN_RESET, BIT_CACHE_NV, BIT_PC_DISABLED = 17, 18, 19
SD_CONF_MAX_ITEMS = 19
SD_CONF_BIT_MASK = 0x7FFFF
_CD_FLAG_BITS = {4: "un_f_cfg_playmsf_bcd", 5: "un_f_cfg_readsub_bcd",
                 6: "un_f_cfg_read_toc_trk_bcd",
                 7: "un_f_cfg_read_toc_addr_bcd",
                 8: "un_f_cfg_no_read_header", 9: "un_f_cfg_read_cd_xd4"}


def s16(v: int) -> int:
    """Store into a C short."""
    v &= 0xFFFF
    return v - 0x10000 if v >= 0x8000 else v


def s32(v: int) -> int:
    """Store into a C int."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def s64(v: int) -> int:
    """Store into a C long / hrtime_t."""
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v


def _upper(c: str) -> str:
    return chr(ord(c) - 32) if "a" <= c <= "z" else c


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       "abcdefghijklmnopqrstuvwxyz")


def _lower(s: str) -> str:
    """ASCII-only tolower(), as the kernel's strcasecmp() has it."""
    return s.translate(_LOWER)


def _casecmp_eq(a: str, b: str) -> bool:
    return _lower(a) == _lower(b)


# ---------------------------------------------------------------- matching

def _strncasecmp_match(inq: str, ident: str) -> bool:
    """strncasecmp(inq_vid, id, strlen(id)) == 0; ``inq`` ends at its
    first NUL like the INQUIRY bytes after the vendor-specific area (the
    id, a C string, has no NUL, so a NUL in the INQUIRY never matches)."""
    seg = inq[:len(ident)]
    return len(seg) == len(ident) and _lower(seg) == _lower(ident)


def _blank_cmp(inq24: str, ident: str) -> bool:
    """sd_blank_cmp(): runs of blanks compare as one; the whole 24 bytes
    of vid+pid must be consumed and the id string must end."""
    p1 = ident + "\0"
    i = j = 0
    cnt = 24
    if ident[:1] == " " and ident[-1:] == " ":
        while True:
            while p1[i] != "\0" and p1[i] == " ":
                i += 1
            while cnt != 0 and inq24[j] == " ":
                j += 1
                cnt -= 1
            if cnt == 0 or _upper(p1[i]) != _upper(inq24[j]):
                break
            while cnt > 0 and _upper(p1[i]) == _upper(inq24[j]):
                i += 1
                j += 1
                cnt -= 1
    return p1[i] == "\0" and cnt == 0


def id_match(inquiry: str, ident: str) -> bool:
    """sd_sdconf_id_match(): ``inquiry`` is vid(8)+pid(16)+rev(4)+the
    vendor-specific bytes, as sd sees them from inq_vid on."""
    if _strncasecmp_match(inquiry, ident):
        return True
    if _blank_cmp(inquiry[:24], ident):
        return True
    if len(ident) >= 2 and ident[0] == "*" and ident[-1] == "*":
        pid = inquiry[8:24]
        sub = ident[1:-1]
        j = 16 - len(sub)
        if j < 0:
            return False
        for i in range(j):
            if pid[i:i + len(sub)] == sub:
                return True
    return False


# ---------------------------------------------------------------- strtol

def _digit(c: str) -> int:
    if "0" <= c <= "9":
        return ord(c) - 48
    if "a" <= c <= "z":
        return ord(c) - 87
    if "A" <= c <= "Z":
        return ord(c) - 55
    return 99


def ddi_strtol(s: str) -> Optional[int]:
    """ddi_strtol(s, &end, 0, &val): the value, or None for EINVAL and
    ERANGE.  Base 0: 0x → 16, leading 0 → 8; trailing junk is accepted."""
    s = s + "\0"
    i = 0
    neg = False
    c = s[0]
    if not (c.isascii() and c.isalnum()):
        while c in " \r\n\t\f\v":
            i += 1
            c = s[i]
        if c in "-+":
            neg = c == "-"
            i += 1
            c = s[i]
    if c != "0":
        base = 10
    elif s[i + 1] in "xX":
        base = 16
    else:
        base = 8
    if _digit(c) >= base:
        return None
    if base == 16 and c == "0" and s[i + 1] in "xX" and \
            s[i + 2] in "0123456789abcdefABCDEF":
        i += 2
        c = s[i]
    val = _digit(c)
    i += 1
    while _digit(s[i]) < base:
        val = val * base + _digit(s[i])
        i += 1
    val = -val if neg else val
    if val < LONG_MIN or val > LONG_MAX:
        return None
    return val


# ---------------------------------------------------------------- tunables

def _strtok_r(buf: bytearray, start: Optional[int], seps: bytes,
              lasts: List[Optional[int]]) -> Optional[int]:
    """sd_strtok_r() on a NUL-terminated buffer; indexes for pointers."""
    if start is None:
        start = lasts[0]
    if start is None:
        return None
    q = start
    while buf[q] != 0 and buf[q] in seps:
        q += 1
    if buf[q] == 0:
        return None
    r = q
    while buf[r] != 0 and buf[r] not in seps:
        r += 1
    if buf[r] == 0:
        lasts[0] = None
    else:
        buf[r] = 0
        lasts[0] = r + 1
    return q


def _cstr(buf: bytearray, at: int) -> str:
    end = buf.index(0, at)
    return buf[at:end].decode("latin-1")


def decode_tunables(tunables: str) -> List[Tuple[str, str]]:
    """sd_nvpair_str_decode(): the (name, value) pairs that reach
    sd_set_properties(), in order.  Tuples without a name or a value are
    dropped (the kernel only logs them on DEBUG builds)."""
    buf = bytearray(tunables.encode("latin-1")) + b"\0"
    nv_lasts: List[Optional[int]] = [None]
    v_lasts: List[Optional[int]] = [None]
    x_lasts: List[Optional[int]] = [None]
    out = []
    nv = _strtok_r(buf, 0, b",", nv_lasts)
    while nv is not None:
        token = _strtok_r(buf, nv, b":", v_lasts)
        name = _strtok_r(buf, token, b" \t", x_lasts)
        token = _strtok_r(buf, None, b":", v_lasts)
        value = _strtok_r(buf, token, b" \t", x_lasts)
        if name is not None and value is not None:
            out.append((_cstr(buf, name), _cstr(buf, value)))
        nv = _strtok_r(buf, None, b",", nv_lasts)
    return out


def _bool(value: str) -> Optional[int]:
    if _casecmp_eq(value, "true"):
        return 1
    if _casecmp_eq(value, "false"):
        return 0
    return None


def _usectohz(us: int) -> int:
    if us <= 0:
        return 0
    return (us + (1000000 // HZ) - 1) // (1000000 // HZ)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _check_throttle(u: Dict) -> None:
    if (u["un_throttle"] < SD_LOWEST_VALID_THROTTLE or
            u["un_min_throttle"] < SD_LOWEST_VALID_THROTTLE or
            u["un_min_throttle"] > u["un_throttle"]):
        u["un_saved_throttle"] = u["un_throttle"] = SD_MAX_THROTTLE
        u["un_min_throttle"] = SD_MIN_THROTTLE


_RETURNING_BOOLS = {"cache-nonvolatile": ("un_f_suppress_cache_flush", 0),
                    "disksort": ("un_f_disksort_disabled", 1),
                    "power-condition": ("un_f_power_condition_disabled", 1),
                    "reset-lun": ("un_f_lun_reset_enabled", 0)}
_RETURNING_UINTS = {"retries-busy": "un_busy_retry_count",
                    "retries-timeout": "un_retry_count",
                    "retries-notready": "un_notready_retry_count",
                    "retries-reset": "un_reset_retry_count"}


def set_property(u: Dict, name: str, value: str, flavour: str) -> None:
    """sd_set_properties() for one name:value pair (facts §3.4, §3.5)."""
    lname = _lower(name)
    if lname in _RETURNING_BOOLS:
        field, invert = _RETURNING_BOOLS[lname]
        b = _bool(value)
        if b is not None:
            u[field] = b ^ invert
        return
    if lname == "controller-type":
        v = ddi_strtol(value)
        if v is not None:
            u["un_ctype"] = v & 0xFF
        return
    if lname == "delay-busy":
        v = ddi_strtol(value)
        if v is not None:
            u["un_busy_timeout"] = _usectohz(_c_div(v, 1000)) & 0xFFFF
        return
    if lname == "timeout-releasereservation":
        v = ddi_strtol(value)
        if v is not None:
            u["un_reserve_release_time"] = v & 0xFFFF
        return
    if lname in _RETURNING_UINTS:
        v = ddi_strtol(value)
        if v is not None:
            u[_RETURNING_UINTS[lname]] = v & 0xFFFFFFFF
        return
    # The names below fall through to the throttle check; an invalid
    # value jumps past it.
    if lname == "throttle-max":
        v = ddi_strtol(value)
        if v is None:
            return
        u["un_saved_throttle"] = u["un_throttle"] = s16(v)
    if lname == "throttle-min":
        v = ddi_strtol(value)
        if v is None:
            return
        u["un_min_throttle"] = s16(v)
    if lname == "rmw-type":
        v = ddi_strtol(value)
        if v is None:
            return
        u["un_f_rmw_type"] = v & 3
    if lname == "physical-block-size":
        v = ddi_strtol(value)
        # un_tgt_blocksize and un_sys_blocksize are still 0 here.
        if (v is None or (v & (v - 1)) != 0 or v < u["un_tgt_blocksize"]
                or v < u["un_sys_blocksize"]):
            return
        u["un_phy_blocksize"] = v & 0xFFFFFFFF
        if flavour == "nexenta":
            u["un_f_sdconf_phy_blocksize"] = 1
    if flavour == "nexenta" and lname == "slow-io-threshold":
        v = ddi_strtol(value)
        if v is None:
            u["un_slow_io_threshold"] = SLOW_IO_THRESHOLD_NX
            return
        u["un_slow_io_threshold"] = s64(v * NANOSEC)
    if flavour == "nexenta" and lname == "io-time":
        v = ddi_strtol(value)
        if v is None:
            u["un_io_time"] = SD_IO_TIME_NX
            return
        u["un_io_time"] = s32(v)
    if lname == "retries-victim":
        v = ddi_strtol(value)
        if v is not None:
            u["un_victim_retry_count"] = v & 0xFFFFFFFF
        return
    _check_throttle(u)
    if lname == "mmc-gesn-polling":
        b = _bool(value)
        if b is not None:
            u["un_f_mmc_gesn_polling"] = b


# ---------------------------------------------------------------- version 1

def _tunables_from_list(flags: int, data: List[int]) -> Dict[int, int]:
    """sd_get_tunables_from_conf(): value of bit i is data[i]."""
    values = {}
    for i in range(SD_CONF_MAX_ITEMS):
        mask = 1 << i
        if mask > flags:
            break
        if flags & mask:
            values[i] = data[i] if i < len(data) else 0
    return values


def chk_vers1_data(flags: int, list_len: int, name: str) -> List[str]:
    """sd_chk_vers1_data(): the warnings; an empty list means valid."""
    if flags & ~SD_CONF_BIT_MASK:
        return ["sd_chk_vers1_data: invalid bits 0x%x in data list %s. "
                "Properties not set." % ((flags & ~SD_CONF_BIT_MASK)
                                         & 0xFFFFFFFF, name)]
    index = 0
    mask = 1
    for i in range(SD_CONF_MAX_ITEMS):
        if flags & mask:
            index += 1
        mask = 1 << i
    if list_len < index + 2:
        return ["sd_chk_vers1_data: Data property list %s size is "
                "incorrect. Properties not set." % name,
                "Size expected: version + 1 flagword + %d properties"
                % SD_CONF_MAX_ITEMS]
    return []


def set_vers1_properties(u: Dict, flags: int, values: Dict[int, int],
                         warn) -> None:
    """sd_set_vers1_properties() (also used by the built-in table)."""
    if flags & (1 << BIT_NOCACHE):
        u["un_f_opt_disable_cache"] = 1
    for bit, field in _CD_FLAG_BITS.items():
        if flags & (1 << bit):
            u[field] = 1
    if flags & (1 << BIT_FAB_DEVID):
        u["un_f_opt_fab_devid"] = 1
    if flags & (1 << BIT_THROTTLE):
        u["un_saved_throttle"] = u["un_throttle"] = \
            s16(values.get(BIT_THROTTLE, 0))
    if flags & (1 << BIT_NRR) and values.get(BIT_NRR, 0):
        u["un_notready_retry_count"] = values[BIT_NRR] & 0xFFFFFFFF
    if flags & (1 << BIT_CTYPE):
        ctype = values.get(BIT_CTYPE, 0)
        if ctype in (0, 2, 3):
            u["un_ctype"] = ctype
        else:
            warn("invalid ctype value (%d)" % ctype)
    if flags & (1 << BIT_BSY):
        u["un_busy_retry_count"] = values.get(BIT_BSY, 0) & 0xFFFFFFFF
    if flags & (1 << BIT_RST):
        u["un_reset_retry_count"] = values.get(BIT_RST, 0) & 0xFFFFFFFF
    if flags & (1 << BIT_RSV_REL):
        u["un_reserve_release_time"] = values.get(BIT_RSV_REL, 0) & 0xFFFF
    if flags & (1 << BIT_TUR_CHECK):
        u["un_f_cfg_tur_check"] = 1
    if flags & (1 << BIT_MIN_THROTTLE):
        u["un_min_throttle"] = s16(values.get(BIT_MIN_THROTTLE, 0))
    if flags & (1 << BIT_DISKSORT):
        u["un_f_disksort_disabled"] = int(values.get(BIT_DISKSORT, 0) != 0)
    if flags & (1 << BIT_LUN_RESET):
        u["un_f_lun_reset_enabled"] = int(values.get(BIT_LUN_RESET, 0) != 0)
    if flags & (1 << BIT_CACHE_NV):
        u["un_f_suppress_cache_flush"] = int(
            values.get(BIT_CACHE_NV, 0) != 0)
    if flags & (1 << BIT_PC_DISABLED):
        u["un_f_power_condition_disabled"] = int(
            values.get(BIT_PC_DISABLED, 0) != 0)
    _check_throttle(u)


# ---------------------------------------------------------------- sd.conf

def process_sdconf(u: Dict, inquiry: str, props: List[list], flavour: str,
                   warn) -> bool:
    """sd_process_sdconf_file(): apply every matching pair of the first
    string-array sd-config-list in ``props`` (node props first, then the
    driver-global list).  True when a version-1 entry was applied (then
    the built-in table is skipped)."""
    from .driverconf import lookup
    config = lookup(props, "sd-config-list", "string")
    if config is None:
        return False
    if len(config) & 1:
        warn("sd-config-list should show as pairs of strings.")
        return False
    applied = False
    for i in range(0, len(config), 2):
        if not id_match(inquiry, config[i]):
            continue
        dnlist = config[i + 1]
        if ":" in dnlist:
            for name, value in decode_tunables(dnlist):
                set_property(u, name, value, flavour)
            continue
        for dataname in dnlist.replace("\t", " ").split(" "):
            if not dataname:
                continue
            data = lookup(props, dataname, "int")
            if data is None:
                continue
            version = data[0] if data else 0
            if version == 1:
                flags = data[1] if len(data) > 1 else 0
                problems = chk_vers1_data(flags, len(data), dataname)
                if problems:
                    for p in problems:
                        warn(p)
                    applied = False
                else:
                    set_vers1_properties(
                        u, flags, _tunables_from_list(flags, data[2:]), warn)
                    applied = True
            else:
                warn("data property %s version 0x%x is invalid."
                     % (dataname, version & 0xFFFFFFFF))
                applied = False
    return applied


# ---------------------------------------------------------------- tables

# sd_tunables in order: throttle, ctype, not-ready retries, busy retries,
# reset retries, reserve release time, min throttle, disksort disabled,
# lun reset enabled, cache is nv.  Values from sddef.h.
_T = {
    "seagate": (15, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    "fujitsu": (15, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    "ibm": (15, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    "purple": (64, 0, 0, 60, 36, 60, 0, 0, 0, 0),
    "sve": (10, 0, 0, 60, 36, 60, 2, 1, 0, 0),
    "maserati": (0, 0, 0, 0, 0, 0, 0, 1, 1, 0),
    "pirus": (64, 0, 60, 60, 36, 0, 16, 0, 1, 0),
    "elite": (10, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    "st31200n": (8, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    "lsi_scsi": (16, 0, 24, 0, 0, 0, 0, 0, 0, 0),
    "symbios": (16, 0, 24, 0, 0, 0, 0, 0, 0, 0),
    "lsi": (0, 0, 24, 0, 0, 0, 0, 0, 0, 0),
    "lsi_oem": (0, 0, 36, 0, 0, 0, 0, 0, 0, 1),
    "none": (0,) * 10,
}
_BITS_OF_T = (BIT_THROTTLE, BIT_CTYPE, BIT_NRR, BIT_BSY, BIT_RST,
              BIT_RSV_REL, BIT_MIN_THROTTLE, BIT_DISKSORT, BIT_LUN_RESET,
              BIT_CACHE_NV)


def _f(*bits: int) -> int:
    return sum(1 << b for b in bits)


_PIRUS = _f(BIT_THROTTLE, BIT_NRR, BIT_BSY, BIT_RST, BIT_MIN_THROTTLE,
            BIT_DISKSORT, BIT_LUN_RESET)
_PURPLE = _f(BIT_THROTTLE, BIT_BSY, BIT_RST, BIT_RSV_REL)
_NEC_CD = _f(4, 5, 7, 8, 9)
DISK_TABLE: List[Tuple[str, int, str]] = (
    [("SEAGATE " + m, _f(BIT_THROTTLE), "seagate") for m in (
        "ST34371FC", "ST19171FC", "ST39102FC", "ST39103FC", "ST118273F",
        "ST318202F", "ST318203F", "ST136403F", "ST318304F", "ST336704F",
        "ST373405F", "ST336605F", "ST336752F", "ST318452F")] +
    [("FUJITSU " + m, _f(BIT_THROTTLE), "fujitsu") for m in (
        "MAG3091F", "MAG3182F", "MAA3182F", "MAF3364F", "MAL3364F",
        "MAL3738F", "MAM3182FC", "MAM3364FC", "MAM3738FC")] +
    [("IBM     " + m, _f(BIT_THROTTLE), "ibm") for m in (
        "DDYFT1835", "DDYFT3695", "IC35LF2D2", "IC35LF2PR")] +
    [(m, _f(BIT_NRR), "lsi_oem") for m in (
        "IBM     1724-100", "IBM     1726-2xx", "IBM     1726-22x",
        "IBM     1726-4xx", "IBM     1726-42x", "IBM     1726-3xx",
        "IBM     3526", "IBM     3542", "IBM     3552", "IBM     1722",
        "IBM     1742", "IBM     1815", "IBM     FAStT", "IBM     1814",
        "IBM     1814-200", "IBM     1818", "DELL    MD3000",
        "DELL    MD3000i", "LSI     INF", "ENGENIO INF", "SGI     TP",
        "SGI     IS")] +
    [("*CSM100_*", _f(BIT_NRR, BIT_CACHE_NV), "lsi_oem"),
     ("*CSM200_*", _f(BIT_NRR, BIT_CACHE_NV), "lsi_oem"),
     ("Fujitsu SX300", _f(BIT_THROTTLE), "lsi_oem"),
     ("LSI", _f(BIT_NRR), "lsi"),
     ("SUN     T3", _PURPLE, "purple"),
     ("SUN     SESS01", _PURPLE | _f(BIT_MIN_THROTTLE, BIT_DISKSORT), "sve"),
     ("SUN     T4", _PURPLE, "purple"),
     ("SUN     SVE01", _f(BIT_DISKSORT, BIT_LUN_RESET), "maserati")] +
    [(m, _PIRUS, "pirus") for m in (
        "SUN     SE6920", "SUN     SE6940", "SUN     StorageTek 6920",
        "SUN     StorageTek 6940", "SUN     PSX1000", "SUN     SE6330")] +
    [(m, _f(BIT_NRR), "lsi_oem") for m in (
        "SUN     STK6580_6780", "SUN     SUN_6180", "STK     OPENstorage",
        "STK     OpenStorage", "STK     BladeCtlr", "STK     FLEXLINE")] +
    [("SYMBIOS", _f(BIT_NRR), "symbios"),
     ("SEAGATE ST42400N", _f(BIT_THROTTLE), "elite"),
     ("SEAGATE ST31200N", _f(BIT_THROTTLE), "st31200n"),
     ("SEAGATE ST41600N", _f(BIT_TUR_CHECK), "none"),
     ("CONNER  CP30540", _f(BIT_NOCACHE), "none")] +
    [(m, _f(BIT_FAB_DEVID), "none") for m in (
        "*SUN0104*", "*SUN0207*", "*SUN0327*", "*SUN0340*", "*SUN0424*",
        "*SUN0669*", "*SUN1.0G*", "SYMBIOS INF-01-00")] +
    [("SYMBIOS", _f(BIT_THROTTLE, BIT_NRR), "symbios"),
     ("LSI", _f(BIT_THROTTLE, BIT_NRR), "lsi_scsi"),
     (" NEC CD-ROM DRIVE:260 ", _NEC_CD, "none"),
     (" NEC CD-ROM DRIVE:270 ", _NEC_CD, "none")])

FLASH_TABLE = ("ATA     MARVELL SD88SA02", "MARVELL SD88SA02",
               "TOSHIBA THNSNV05")


def process_table(u: Dict, inquiry: str, warn) -> None:
    """sd_process_sdconf_table(): the first matching built-in entry."""
    for ident, flags, props in DISK_TABLE:
        if id_match(inquiry, ident):
            values = dict(zip(_BITS_OF_T, _T[props]))
            set_vers1_properties(u, flags, values, warn)
            return


def is_lsi(inquiry: str) -> bool:
    """sd_is_lsi(): the first matching table entry uses LSI values."""
    for ident, flags, props in DISK_TABLE:
        if ident and id_match(inquiry, ident):
            return props in ("lsi", "lsi_scsi", "lsi_oem", "symbios")
    return False


def in_flash_table(inquiry: str) -> bool:
    return any(id_match(inquiry, ident) for ident in FLASH_TABLE)
