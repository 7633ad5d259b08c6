# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""struct sd_lun (and the two structs mdb reaches from it) as the
simulated kernel's CTF, and mdb's ::print formatting of their values
(facts §8.1, §8.3).

The member order and types follow sddef.h of NexentaStor 5.3 and of
current illumos; the NX-only and UP-only members differ as the facts
list.  Values that depend on sd.conf come from the unit's attach fields;
the rest (addresses, counters) are fixed, plausible and illustrative.
Runs no commands.
"""

from typing import Dict, List, Tuple

# Type descriptors: ("int", bits, signed), ("ptr",), ("cptr",),
# ("bf", width), ("arr", elem, n), ("chars", n), ("enum", names),
# ("struct", [(name, type), ...]).
U8, S16, U16 = ("int", 8, False), ("int", 16, True), ("int", 16, False)
S32, U32 = ("int", 32, True), ("int", 32, False)
S64, U64 = ("int", 64, True), ("int", 64, False)
PTR, CPTR, BF1, BF2 = ("ptr",), ("cptr",), ("bf", 1), ("bf", 2)
NSDMAP = 53
KSEMA = ("struct", [("_opaque", ("arr", PTR, 2))])
KMUTEX = ("struct", [("_opaque", ("arr", PTR, 1))])
KCV = ("struct", [("_opaque", U16)])
OCMAP = ("struct", [("chkd", ("arr", U8, 8 * (NSDMAP + 4))),
                    ("rinfo", ("struct", [
                        ("lyr_open", ("arr", U64, NSDMAP)),
                        ("reg_open", ("arr", U64, 4))]))])
BLKLIM_NX = ("struct", [
    ("lim_opt_xfer_len_gran", U16), ("lim_max_xfer_len", U32),
    ("lim_opt_xfer_len", U32), ("lim_max_pfetch_len", U32),
    ("lim_max_unmap_lba_cnt", U32), ("lim_max_unmap_descr_cnt", U32),
    ("lim_opt_unmap_gran", U32), ("lim_unmap_gran_align", U32),
    ("lim_max_write_same_len", U64)])
BLKLIM_UP = ("struct", [(n, U32 if t == U16 else t)
                        for n, t in BLKLIM_NX[1]])
DKIO_STATE = ("enum", {0: "DKIO_NONE", 1: "DKIO_EJECTED",
                       2: "DKIO_INSERTED", 3: "DKIO_DEV_GONE"})

_WORD1 = ["un_f_arq_enabled", "un_f_blockcount_is_valid",
          "un_f_tgt_blocksize_is_valid", "un_f_allow_bus_device_reset",
          "un_f_is_fibre", "un_f_sync_cache_supported",
          "un_f_format_in_progress", "un_f_opt_queueing",
          "un_f_opt_fab_devid", "un_f_opt_disable_cache",
          "un_f_cfg_is_atapi", "un_f_write_cache_enabled",
          "un_f_cfg_playmsf_bcd", "un_f_cfg_readsub_bcd",
          "un_f_cfg_read_toc_trk_bcd", "un_f_cfg_read_toc_addr_bcd",
          "un_f_cfg_no_read_header", "un_f_cfg_read_cd_xd4",
          "un_f_mmc_cap", "un_f_mmc_writable_media",
          "un_f_dvdram_writable_device", "un_f_cfg_cdda",
          "un_f_cfg_tur_check", "un_f_use_adaptive_throttle",
          "un_f_pm_is_enabled", "un_f_watcht_stopped",
          "un_f_pkstats_enabled", "un_f_disksort_disabled",
          "un_f_lun_reset_enabled", "un_f_doorlock_supported",
          "un_f_start_stop_supported"]
_WORD2_A = ["un_f_mboot_supported", "un_f_is_hotpluggable",
            "un_f_has_removable_media", "un_f_non_devbsize_supported",
            "un_f_devid_supported", "un_f_eject_media_supported",
            "un_f_chk_wp_open", "un_f_descr_format_supported",
            "un_f_check_start_stop", "un_f_monitor_media_state",
            "un_f_attach_spinup", "un_f_log_sense_supported",
            "un_f_pm_supported"]
_WORD2_B = ["un_f_wcc_inprog", "un_f_ejecting",
            "un_f_suppress_cache_flush", "un_f_sync_nv_supported",
            "un_f_sync_cache_required", "un_f_devid_transport_defined"]
_WORD2_C = ["un_f_power_condition_disabled",
            "un_f_power_condition_supported", "un_f_pm_log_sense_smart",
            "un_f_is_solid_state", "un_f_is_rotational",
            "un_f_mmc_gesn_polling", "un_f_enable_rmw", "un_f_expnevent",
            "un_f_cache_mode_changeable"]


def sd_lun_members(flavour: str) -> List[Tuple[str, tuple]]:
    """struct sd_lun of the flavour, member by member."""
    nx = flavour == "nexenta"
    m: List[Tuple[str, tuple]] = [
        ("un_sd", PTR), ("un_rqs_bp", PTR), ("un_rqs_pktp", PTR),
        ("un_sense_isbusy", S32), ("un_buf_chain_type", S32),
        ("un_uscsi_chain_type", S32), ("un_direct_chain_type", S32),
        ("un_priority_chain_type", S32), ("un_waitq_headp", PTR),
        ("un_waitq_tailp", PTR), ("un_retry_bp", PTR),
        ("un_retry_statp", PTR), ("un_xbuf_attr", PTR),
        ("un_sys_blocksize", U32), ("un_tgt_blocksize", U32),
        ("un_phy_blocksize", U32), ("un_blockcount", U64),
        ("un_ctype", U8), ("un_node_type", CPTR),
        ("un_interconnect_type", U8), ("un_notready_retry_count", U32),
        ("un_busy_retry_count", U32), ("un_retry_count", U32),
        ("un_victim_retry_count", U32), ("un_reset_retry_count", U32),
        ("un_reserve_release_time", U16), ("un_reservation_type", U8),
        ("un_max_xfer_size", U32), ("un_partial_dma_supported", S32),
        ("un_buf_breakup_supported", S32), ("un_mincdb", S32),
        ("un_maxcdb", S32), ("un_max_hba_cdb", S32),
        ("un_status_len", S32), ("un_pkt_flags", S32),
        ("un_cmd_timeout", U16), ("un_uscsi_timeout", U16),
        ("un_busy_timeout", U16), ("un_state", U8),
        ("un_last_state", U8), ("un_last_pkt_reason", U8),
        ("un_tagflags", S32), ("un_resvd_status", S16)]
    if nx:
        m += [("un_detach_count", U64), ("un_layer_count", U64),
              ("un_opens_in_progress", U64), ("un_semoclose", KSEMA)]
    m += [("un_ncmds_in_driver", S64), ("un_ncmds_in_transport", S16),
          ("un_throttle", S16), ("un_saved_throttle", S16),
          ("un_busy_throttle", S16), ("un_min_throttle", S16),
          ("un_reset_throttle_timeid", PTR), ("un_mhd_token", PTR),
          ("un_resvd_timeid", PTR), ("un_insert_event", PTR),
          ("un_insert_cb_id", PTR), ("un_remove_event", PTR),
          ("un_remove_cb_id", PTR), ("un_start_stop_cycle_page", U32),
          ("un_dcvb_timeid", PTR), ("un_ocmap", OCMAP),
          ("un_pstats", ("arr", PTR, NSDMAP)), ("un_stats", PTR),
          ("un_unmapstats", PTR), ("un_unmapstats_ks", PTR),
          ("un_errstats", PTR)]
    if nx:
        m += [("un_lat_ksp", PTR), ("un_lat_stats", PTR)]
    m += [("un_exclopen", U64), ("un_devid", PTR),
          ("un_vpd_page_mask", U32)]
    m += [(n, BF1) for n in _WORD1]
    m.append(("un_f_sdconf_phy_blocksize" if nx else "un_f_reserved1",
              BF1))
    m += [(n, BF1) for n in _WORD2_A]
    if nx:
        m.append(("un_f_cfg_is_lsi", BF1))
    m += [(n, BF1) for n in _WORD2_B]
    m.append(("un_f_rmw_type", BF2))
    m += [(n, BF1) for n in _WORD2_C]
    m.append(("un_f_detach_waiting", BF1) if nx
             else ("un_f_reserved", BF2))
    m.append(("un_additional_codes", PTR))
    if nx:
        m.append(("un_detach_cv", KCV))
    m += [("un_pm_mutex", KMUTEX), ("un_pm_count", S32),
          ("un_pm_timeid", PTR), ("un_pm_busy", U32),
          ("un_pm_busy_cv", KCV), ("un_power_level", S16),
          ("un_save_state", U8), ("un_suspend_cv", KCV),
          ("un_disk_busy_cv", KCV), ("un_state_cv", KCV),
          ("un_mediastate", DKIO_STATE),
          ("un_specified_mediastate", DKIO_STATE), ("un_swr_token", PTR),
          ("un_wm_cache", PTR), ("un_rmw_count", U32), ("un_wm", PTR),
          ("un_rmw_incre_count", U64), ("un_rmw_msg_timeid", PTR),
          ("un_thin_flags", U64),
          ("un_blk_lim", BLKLIM_NX if nx else BLKLIM_UP),
          ("un_startstop_timeid", PTR), ("un_direct_priority_timeid", PTR),
          ("un_tran_fatal_count", U64), ("un_retry_timeid", PTR),
          ("un_pm_idle_time", S64), ("un_pm_idle_timeid", PTR)]
    if nx:
        m += [("un_sonoma_failure_count", U32), ("un_io_time", S32),
              ("un_slow_io_threshold", S64)]
    m += [("un_failfast_bp", PTR), ("un_failfast_headp", PTR),
          ("un_failfast_tailp", PTR), ("un_failfast_state", U32),
          ("un_in_callback", S16), ("un_wcc_cv", KCV),
          ("un_cmlbhandle", PTR), ("un_fm_private", PTR)]
    return m


SCSI_DEVICE = [("sd_dev", PTR), ("sd_inq", PTR), ("sd_sense", PTR),
               ("sd_private", PTR)]
SCSI_INQUIRY = [("inq_dtype", U8), ("inq_vid", ("chars", 8)),
                ("inq_pid", ("chars", 16)), ("inq_revision", ("chars", 4)),
                ("inq_serial", ("chars", 12))]
TYPES = {"struct sd_lun": None, "struct scsi_device": SCSI_DEVICE,
         "struct scsi_inquiry": SCSI_INQUIRY}
_NODE_TYPE_ADDR = {"ddi_block:channel": 0xfffffffffbc45ea0,
                   "ddi_block": 0xfffffffffbc45e90,
                   "ddi_block:cdrom": 0xfffffffffbc45ec0}


def sd_lun_values(fields: Dict, addr: Dict[str, int], disk: Dict,
                  flavour: str, busy: bool) -> Dict:
    """Every member's value for one attached unit."""
    ar = addr["arena"]
    v: Dict = {name: 0 for name, _ in sd_lun_members(flavour)}
    v.update(fields)
    v.update({
        "un_sd": addr["sd"], "un_rqs_bp": ar + 0x8c0,
        "un_rqs_pktp": ar + 0x1c00, "un_uscsi_chain_type": 8,
        "un_direct_chain_type": 8, "un_priority_chain_type": 9,
        "un_xbuf_attr": addr["xbuf"],
        "un_node_type": (_NODE_TYPE_ADDR[disk["node_type"]],
                         disk["node_type"]),
        "un_mincdb": 1, "un_partial_dma_supported": 1, "un_maxcdb": 4,
        "un_max_hba_cdb": 16,
        "un_status_len": 0x20, "un_pkt_flags": 0,
        "un_uscsi_timeout": fields["un_cmd_timeout"],
        "un_ocmap": {"chkd": {0: 0x1} if busy else {},
                     "rinfo": {"lyr_open": {0: 0x1} if busy else {},
                               "reg_open": {}}},
        "un_pstats": {i: ar + 0x10000 + 0x100 * i for i in range(7)},
        "un_stats": ar + 0x2000, "un_unmapstats": ar + 0x2800,
        "un_unmapstats_ks": ar + 0x2c00, "un_errstats": ar + 0x3400,
        "un_devid": ar + 0x4000,
        "un_f_allow_bus_device_reset": 1, "un_f_pkstats_enabled": 1,
        "un_f_non_devbsize_supported": 1, "un_f_devid_supported": 1,
        "un_f_chk_wp_open": 0, "un_f_attach_spinup": 1,
        "un_f_log_sense_supported": 1, "un_f_pm_supported": 1,
        "un_f_check_start_stop": 1, "un_f_pm_is_enabled": 1,
        "un_f_power_condition_supported": 1,
        "un_additional_codes": 0,
        "un_pm_mutex": {"_opaque": {}}, "un_pm_count": 0,
        "un_power_level": 1, "un_wm_cache": ar + 0x5000,
        "un_blk_lim": {"lim_max_xfer_len": 0xffff,
                       "lim_opt_xfer_len": 0x80},
        "un_cmlbhandle": ar + 0x6740, "un_fm_private": ar + 0x73c0,
    })
    v["un_mediastate"] = v["un_specified_mediastate"] = 0
    if flavour == "nexenta":
        v["un_semoclose"] = {"_opaque": {1: 0x1}}
        v["un_lat_ksp"] = ar + 0x8000
        v["un_lat_stats"] = ar + 0x8800
        v["un_detach_cv"] = {"_opaque": 0}
    if disk["dtype"] == "cdrom":
        v["un_f_has_removable_media"] = 1
        v["un_f_eject_media_supported"] = 1
        v["un_f_monitor_media_state"] = 1
        v["un_f_mmc_cap"] = 1
    return v


# ---------------------------------------------------------------- print

def fmt_int(value: int, bits: int, signed: bool, dec: bool) -> str:
    """print_int_val(): %#x of the C width (0 prints as 0), or %#d."""
    value &= (1 << bits) - 1
    if not dec:
        return "0x%x" % value if value else "0"
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return ("-" if value < 0 else "") + \
        ("0t%d" % abs(value) if abs(value) > 9 else "%d" % abs(value))


def _printable(s: str) -> bool:
    return all(0x20 <= ord(c) <= 0x7e for c in s)


def scalar(t: tuple, value, dec: bool = False) -> str:
    """One non-struct value as ::print shows it."""
    kind = t[0]
    if kind == "int":
        return fmt_int(value or 0, t[1], t[2], dec)
    if kind == "bf":
        value = (value or 0) & ((1 << t[1]) - 1)
        if dec:
            return "0t%d" % value if value > 9 else "%d" % value
        return "0x%x" % value if value else "0"
    if kind == "ptr":
        return "0x%x" % value if value else "0"
    if kind == "cptr":
        if not value:
            return "0"
        addr, text = value
        return '0x%x "%s"' % (addr, text) if _printable(text) \
            else "0x%x" % addr
    if kind == "enum":
        value = value or 0
        return "%s (%s)" % (fmt_int(value, 32, True, True),
                            t[1].get(value, "???"))
    if kind == "chars":
        s = (value or "")[:t[1]]
        s = s.split("\0", 1)[0]
        if _printable(s[:8]) and _printable(s):
            return '[ "%s" ]' % s
        return "[ " + ", ".join("'%s'" % c for c in s) + " ]"
    if kind == "arr":
        elem, n = t[1], t[2]
        values = value or {}
        limit = min(n, 32)
        parts = [scalar(elem, values.get(i, 0), dec) for i in range(limit)]
        return "[ " + ", ".join(parts) + (", ... ]" if limit < n else " ]")
    raise ValueError(kind)


def render(name: str, t: tuple, value, depth: int, dec: bool,
           prefix: str = "") -> List[str]:
    """Lines of one member at ``depth`` (4 blanks per level).  With a
    prefix (the ::print member argument), members at depth 1 repeat it
    as ``prefix.name`` like elt_print() does."""
    pad = " " * (4 * depth)
    label = name
    if prefix and depth == 1:
        label = prefix + "." + name
    elif prefix and depth == 0:
        label = prefix
    if t[0] != "struct":
        return ["%s%s = %s" % (pad, label, scalar(t, value, dec))]
    lines = ["%s%s = {" % (pad, label)]
    value = value or {}
    for sub, st in t[1]:
        lines += render(sub, st, value.get(sub), depth + 1, dec, prefix)
    lines.append(pad + "}")
    return lines


def render_struct(members: List[Tuple[str, tuple]], values: Dict,
                  dec: bool = False) -> List[str]:
    """::print TYPE at an address, without members: the whole struct."""
    lines = ["{"]
    for name, t in members:
        lines += render(name, t, values.get(name), 1, dec)
    lines.append("}")
    return lines
