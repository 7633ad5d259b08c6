# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Attach one sd unit: the values sd_unit_attach() leaves in struct
sd_lun for a simulated disk and the sd.conf list the unit attaches with
(facts §6, §16.2).

Order, as in sdattach()/sd_unit_attach(): defaults; sd-config-list then
the built-in table; target and system block size 512; the tagged-queueing
clamp of the throttle; READ CAPACITY; VPD page 0xB1 (rotation rate 1
makes the unit solid state and disables disksort); READ CAPACITY(16) and
the physical block size rules of the flavour; the flash table; write
cache; VPD page 0x86 (skipped when flushes are suppressed).  Runs no
commands.
"""

from typing import Dict, List, Tuple

from . import sdconfig

DEV_BSIZE = 512
SD_IO_TIME_UP = 60
SD_BSY_TIMEOUT = 500            # drv_usectohz(5 s) at hz = 100
SD_DEFAULT_MAX_XFER_SIZE = 256 * 1024
SD_MAX_XFER_SIZE = 1024 * 1024
FLAG_STAG = 0x4000
INTERCONNECT = {"parallel": 0, "fabric": 1, "fibre": 2, "ssa": 3,
                "sata": 4, "sas": 5}
VPD_SUPPORTED, VPD_SERIAL, VPD_DEVID = 0x01, 0x02, 0x10
VPD_EXTENDED, VPD_BLK_LIMITS, VPD_DEV_CHARACTER = 0x80, 0x400, 0x800


def inquiry_string(disk: Dict) -> str:
    """The bytes from inq_vid on, as sd's matching reads them."""
    return disk["vid"] + disk["pid"] + disk["rev"] + disk["inq_vendor"]


def _isp2(x: int) -> bool:
    return (x & (x - 1)) == 0


def attach(disk: Dict, props: List[list],
           flavour: str) -> Tuple[Dict, List[str]]:
    """The attach-time fields of one unit and the console warnings sd
    printed for it.  ``props`` is the property list the node sees (node
    specs first, then the driver-global list it was initialised with)."""
    warnings: List[str] = []
    nx = flavour == "nexenta"
    is_cd = disk["dtype"] == "cdrom"
    interconnect = disk["interconnect"]
    fibre = interconnect in ("fibre", "fabric")
    retry = 3 if fibre else 5
    io_time = sdconfig.SD_IO_TIME_NX if nx else SD_IO_TIME_UP
    u: Dict = {
        "un_sys_blocksize": 0, "un_tgt_blocksize": 0,
        "un_phy_blocksize": DEV_BSIZE, "un_blockcount": 0,
        "un_ctype": 0 if is_cd else 2,
        "un_interconnect_type": INTERCONNECT[interconnect],
        "un_notready_retry_count": retry * 2 if is_cd else retry // 2,
        "un_busy_retry_count": retry, "un_retry_count": retry,
        "un_victim_retry_count": retry, "un_reset_retry_count": retry // 2,
        "un_reserve_release_time": 5,
        "un_max_xfer_size": SD_DEFAULT_MAX_XFER_SIZE,
        "un_cmd_timeout": (2 if is_cd else 1) * io_time,
        "un_busy_timeout": SD_BSY_TIMEOUT,
        "un_tagflags": 0,
        "un_throttle": sdconfig.SD_MAX_THROTTLE,
        "un_saved_throttle": sdconfig.SD_MAX_THROTTLE,
        "un_min_throttle": sdconfig.SD_MIN_THROTTLE,
        "un_vpd_page_mask": 0,
        "un_f_arq_enabled": 1, "un_f_is_fibre": int(fibre),
        "un_f_sync_cache_supported": 1, "un_f_opt_queueing": 0,
        "un_f_opt_fab_devid": 0, "un_f_opt_disable_cache": 0,
        "un_f_write_cache_enabled": 0, "un_f_cfg_tur_check": 0,
        "un_f_use_adaptive_throttle": int(fibre),
        "un_f_disksort_disabled": 0, "un_f_lun_reset_enabled": 0,
        "un_f_start_stop_supported": 1,
        "un_f_sdconf_phy_blocksize": 0,
        "un_f_is_hotpluggable": int(disk["hotpluggable"]),
        "un_f_has_removable_media": int(disk["removable"]),
        "un_f_descr_format_supported": int(not is_cd),
        "un_f_cfg_is_lsi": 0, "un_f_suppress_cache_flush": 0,
        "un_f_sync_nv_supported": 0, "un_f_rmw_type": 0,
        "un_f_power_condition_disabled": 0, "un_f_is_solid_state": 0,
        "un_f_is_rotational": 0, "un_f_mmc_gesn_polling": 1,
        "un_f_enable_rmw": 0, "un_f_cache_mode_changeable": 0,
        "un_f_blockcount_is_valid": 0, "un_f_tgt_blocksize_is_valid": 0,
    }
    for field in sdconfig._CD_FLAG_BITS.values():
        u[field] = 0
    if nx:
        u["un_io_time"] = io_time
        u["un_slow_io_threshold"] = sdconfig.SLOW_IO_THRESHOLD_NX
    inquiry = inquiry_string(disk)

    def warn(msg: str) -> None:
        warnings.append(msg)

    if not sdconfig.process_sdconf(u, inquiry, props, flavour, warn):
        sdconfig.process_table(u, inquiry, warn)
    u["un_f_cfg_is_lsi"] = int(sdconfig.is_lsi(inquiry))

    u["un_tgt_blocksize"] = u["un_sys_blocksize"] = DEV_BSIZE

    if interconnect in ("parallel", "sata", "sas"):
        if disk["tagged_queueing"]:
            u["un_tagflags"] = FLAG_STAG
        elif disk["untagged_queueing"]:
            u["un_f_opt_queueing"] = 1
            u["un_saved_throttle"] = u["un_throttle"] = \
                min(u["un_throttle"], 3)
        else:
            u["un_saved_throttle"] = u["un_throttle"] = 1
        if interconnect != "parallel":
            u["un_max_xfer_size"] = SD_MAX_XFER_SIZE
    else:
        u["un_tagflags"] = FLAG_STAG
        u["un_max_xfer_size"] = SD_MAX_XFER_SIZE

    lbasize = disk["logical_block"]
    if disk["blocks"]:
        u["un_tgt_blocksize"] = lbasize
        u["un_f_tgt_blocksize_is_valid"] = 1
        if disk["removable"]:
            u["un_blockcount"] = disk["blocks"] * (lbasize // DEV_BSIZE)
        else:
            u["un_sys_blocksize"] = lbasize
            u["un_blockcount"] = disk["blocks"]
        u["un_f_blockcount_is_valid"] = 1

    mask = VPD_SUPPORTED | VPD_SERIAL | VPD_DEVID
    if disk["nv_sup"] is not None:
        mask |= VPD_EXTENDED
    if disk["rotation_rate"] is not None:
        mask |= VPD_DEV_CHARACTER | VPD_BLK_LIMITS
    u["un_vpd_page_mask"] = 0 if is_cd else mask

    if not is_cd:
        u["un_f_is_rotational"] = 1
        rate = disk["rotation_rate"]
        if rate is not None and rate >> 8 == 0:
            if rate & 0xFF == 0:
                u["un_f_is_rotational"] = 0
            elif rate & 0xFF == 1:
                u["un_f_is_rotational"] = 0
                u["un_f_is_solid_state"] = 1
                u["un_f_disksort_disabled"] = 1

    if not is_cd:
        if disk["rc16"] is None:
            u["un_phy_blocksize"] = DEV_BSIZE
        else:
            pbsize = (lbasize << disk["rc16"]) & 0xFFFFFFFF
            if not _isp2(pbsize % DEV_BSIZE) or pbsize == 0:
                u["un_phy_blocksize"] = DEV_BSIZE
            elif pbsize > u["un_phy_blocksize"] and not (
                    nx and u["un_f_sdconf_phy_blocksize"]):
                u["un_phy_blocksize"] = pbsize
        if sdconfig.in_flash_table(inquiry):
            u["un_phy_blocksize"] = 4096
            if u["un_f_is_solid_state"] and \
                    u["un_phy_blocksize"] != u["un_tgt_blocksize"]:
                u["un_f_enable_rmw"] = 1

    u["un_f_write_cache_enabled"] = int(bool(disk["wce"]))
    u["un_f_cache_mode_changeable"] = int(not is_cd)

    u["un_f_sync_nv_supported"] = 0
    if not u["un_f_suppress_cache_flush"] and disk["nv_sup"]:
        u["un_f_sync_nv_supported"] = 1

    if disk["thin"]:
        u["un_thin_flags"] = 0x3
    if not nx:
        u.pop("un_f_sdconf_phy_blocksize", None)
        u.pop("un_f_cfg_is_lsi", None)
    return u, warnings
