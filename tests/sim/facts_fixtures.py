# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fixtures printed in /work/shared/spec/illumos-facts.md (§8.2, §8.3,
§9.2, §11.2, §12.2, §13, §14), kept verbatim -- trailing blanks and TABs
included -- for the simulator's golden tests.  SD_STATE_EXCERPT keeps the
facts' "⋮" marks for omitted lines.
"""

DISKINFO = (
    'TYPE    DISK                    VID      PID              SI'
    'ZE          RMV SSD\n'
    'SCSI    c0t5000CCA0496E6F8Dd0   HGST     HUS724040ALS640  37'
    '26.02 GiB   no  no \n'
    'SCSI    c0t55CD2E404C0D8D0Ed0   INTEL    SSDSC2BA400G3     3'
    '72.61 GiB   no  yes\n'
    'SATA    c1t0d0                  SAMSUNG  MZ7LM480HCHP-00003 '
    ' 447.13 GiB   no  yes\n')

DISKINFO_H = (
    'SCSI\tc0t5000CCA0496E6F8Dd0\tHGST\tHUS724040ALS640\t3726.02 GiB\t'
    'no\tno\n'
    'SCSI\tc0t55CD2E404C0D8D0Ed0\tINTEL\tSSDSC2BA400G3\t 372.61 GiB\tn'
    'o\tyes\n'
    'SATA\tc1t0d0\tSAMSUNG\tMZ7LM480HCHP-00003\t 447.13 GiB\tno\tyes\n')

DISKINFO_HP = (
    'SCSI\tc0t5000CCA0496E6F8Dd0\tHGST\tHUS724040ALS640\t400078703001'
    '6\tno\tno\n'
    'SCSI\tc0t55CD2E404C0D8D0Ed0\tINTEL\tSSDSC2BA400G3\t400088457216\t'
    'no\tyes\n'
    'SATA\tc1t0d0\tSAMSUNG\tMZ7LM480HCHP-00003\t480103981056\tno\tyes\n')

DISKINFO_P = (
    'TYPE    DISK                    VID      PID              SI'
    'ZE          RMV SSD\n'
    'SCSI    c0t5000CCA0496E6F8Dd0   HGST     HUS724040ALS640  40'
    '00787030016 no  no \n'
    'SCSI    c0t55CD2E404C0D8D0Ed0   INTEL    SSDSC2BA400G3    40'
    '0088457216  no  yes\n'
    'SATA    c1t0d0                  SAMSUNG  MZ7LM480HCHP-00003 '
    '480103981056  no  yes\n')

DISKINFO_C = (
    'TYPE    DISK                    VID      PID              SERIAL\n'
    '\tSIZE          FLRS LOCATION\n'
    'SCSI    c0t5000CCA0496E6F8Dd0   HGST     HUS724040ALS640  P4'
    'GB6YEX            \n'
    '\t3726.02 GiB   ??-- [0] Slot 00\n'
    'SCSI    c0t55CD2E404C0D8D0Ed0   INTEL    SSDSC2BA400G3    BT'
    'TV5095012Z400HGN  \n'
    '\t 372.61 GiB   ??-S [0] Slot 01\n'
    'SATA    c1t0d0                  SAMSUNG  MZ7LM480HCHP-00003 '
    'S2UJNX0J101234      \n'
    '\t 447.13 GiB   ??-S -\n')

DISKINFO_BIG_P = (
    'DISK                    VID      PID              SERIAL    '
    '           FLT LOC LOCATION\n'
    'c0t5000CCA0496E6F8Dd0   HGST     HUS724040ALS640  P4GB6YEX  '
    '           -   -   [0] Slot 00\n'
    'c0t55CD2E404C0D8D0Ed0   INTEL    SSDSC2BA400G3    BTTV509501'
    '2Z400HGN   -   -   [0] Slot 01\n'
    'c1t0d0                  SAMSUNG  MZ7LM480HCHP-00003 S2UJNX0J'
    '101234       -   -   -\n')

VIDPID = (
    'inq_vid = [ "HGST    " ]\n'
    'inq_pid = [ "HUS724040ALS640 " ]\n'
    'inq_vid = [ "ATA     " ]\n'
    'inq_pid = [ "INTEL SSDSC2BA40" ]\n'
    'inq_vid = [ "ATA     " ]\n'
    'inq_pid = [ "SAMSUNG MZ7LM480" ]\n')

SD_STATE_EXCERPT = (
    'walk_addr = fffffe0bc4b1e9c0\n'
    'walking sd_state units via ptr: fffffe0bd0a1c000\n'
    '32 entries in sd_state table\n'
    '\n'
    'un 0: fffffe0bd8a76000\n'
    '--------------\n'
    '{\n'
    '    un_sd = 0xfffffe0bd8731d40\n'
    '    un_rqs_bp = 0xfffffe0bd8a4e8c0\n'
    '    un_rqs_pktp = 0xfffffe0bd87b0c00\n'
    '    un_sense_isbusy = 0\n'
    '    un_buf_chain_type = 0\n'
    '    un_uscsi_chain_type = 0x8\n'
    '    un_direct_chain_type = 0x8\n'
    '    un_priority_chain_type = 0x9\n'
    '    un_waitq_headp = 0\n'
    '    un_waitq_tailp = 0\n'
    '    un_retry_bp = 0\n'
    '    un_retry_statp = 0\n'
    '    un_xbuf_attr = 0xfffffe0bd88fa480\n'
    '    un_sys_blocksize = 0x200\n'
    '    un_tgt_blocksize = 0x200\n'
    '    un_phy_blocksize = 0x200\n'
    '    un_blockcount = 0x1d1c0beb0\n'
    '    un_ctype = 0x2\n'
    '    un_node_type = 0xfffffffffbc45ea0 "ddi_block:channel"\n'
    '    un_interconnect_type = 0x5\n'
    '    un_notready_retry_count = 0x2\n'
    '    un_busy_retry_count = 0x5\n'
    '    un_retry_count = 0x5\n'
    '    un_victim_retry_count = 0x5\n'
    '    un_reset_retry_count = 0x2\n'
    '    un_reserve_release_time = 0x5\n'
    '⋮\n'
    '    un_semoclose = {\n'
    '        _opaque = [ 0, 0x1 ]\n'
    '    }\n'
    '    un_ncmds_in_driver = 0\n'
    '    un_ncmds_in_transport = 0\n'
    '    un_throttle = 0x100\n'
    '    un_saved_throttle = 0x100\n'
    '    un_busy_throttle = 0\n'
    '    un_min_throttle = 0x8\n'
    '⋮\n'
    '    un_f_disksort_disabled = 0\n'
    '    un_f_lun_reset_enabled = 0\n'
    '    un_f_doorlock_supported = 0\n'
    '    un_f_start_stop_supported = 0x1\n'
    '    un_f_sdconf_phy_blocksize = 0\n'
    '⋮\n'
    '    un_f_suppress_cache_flush = 0\n'
    '    un_f_sync_nv_supported = 0\n'
    '⋮\n'
    '    un_f_rmw_type = 0\n'
    '⋮\n'
    '    un_f_is_solid_state = 0\n'
    '    un_f_is_rotational = 0x1\n'
    '⋮\n'
    '    un_cmlbhandle = 0xfffffe0bd8b1e740\n'
    '    un_fm_private = 0xfffffe0bd8b0f3c0\n'
    '}\n'
    '---\n'
    '\n'
    'XBUF ATTR:\n'
    '----------\n'
    '0xfffffe0bd88fa480:\tmutex\t\tallocsize\tpending\n'
    '           \t0\t\t168\t\t0\n'
    '0xfffffe0bd88fa494:\tactive_limit\tactive_count\tactive_lowater\n'
    '           \t200\t\t0\t\t80\n'
    '0xfffffe0bd88fa4a0:\theadp\t\ttailp\n'
    '           \t0\t\t0\n'
    '0xfffffe0bd88fa4b0:\treserve_mutex\treserve_limit\treserve_coun'
    't\treserve_headp\n'
    '           \t0\t\t10\t\t10\t\tfffffe0bd9c3a8c0\n'
    '0xfffffe0bd88fa4d8:\ttimeid\t\ttq\n'
    '           \t0\t\tfffffe0bd6e1b8a0\n'
    '---\n'
    '\n'
    'XBUF Q:\n'
    '-------\n'
    'xbuf Q head: 0\n'
    '---------------------------\n'
    'Processed 0 XBUF Q entries\n'
    '---------------------------\n'
    '\n'
    'UN WAIT Q:\n'
    '----------\n'
    'UN wait Q head: 0\n'
    '------------------------------\n'
    'Processed 0 UN WAIT Q entries\n'
    '------------------------------\n'
    '\n'
    'un 1: fffffe0bd8a7a000\n'
    '--------------\n'
    '{\n'
    '    un_sd = 0xfffffe0bd8732e80\n'
    '⋮\n'
    '    un_sys_blocksize = 0x200\n'
    '    un_tgt_blocksize = 0x200\n'
    '    un_phy_blocksize = 0x1000\n'
    '    un_blockcount = 0x2e9390b0\n'
    '⋮\n'
    '    un_throttle = 0x20\n'
    '    un_saved_throttle = 0x20\n'
    '    un_busy_throttle = 0\n'
    '    un_min_throttle = 0x8\n'
    '⋮\n'
    '    un_f_disksort_disabled = 0x1\n'
    '⋮\n'
    '    un_f_sdconf_phy_blocksize = 0x1\n'
    '⋮\n'
    '    un_f_suppress_cache_flush = 0x1\n'
    '    un_f_sync_nv_supported = 0\n'
    '⋮\n'
    '    un_f_is_solid_state = 0x1\n'
    '    un_f_is_rotational = 0\n'
    '⋮\n'
    '}\n'
    '---\n'
    '⋮ (XBUF / UN WAIT Q sections as for un 0)\n'
    '\n'
    'un 2: 0\n'
    '--------------\n'
    '\n'
    'un 3: 0\n'
    '--------------\n'
    '⋮ (slots 4..30 likewise)\n'
    '\n'
    'un 31: 0\n'
    '--------------\n'
    '---------------------------\n'
    'Processed 2 UN softstate entries\n'
    '---------------------------\n')

SOFTSTATE_PRINT = (
    'un_phy_blocksize = 0x1000\n'
    'un_tgt_blocksize = 0x200\n'
    'un_f_suppress_cache_flush = 0x1\n'
    'un_f_disksort_disabled = 0x1\n'
    'un_saved_throttle = 0x20\n'
    'un_min_throttle = 0x8\n'
    'un_f_is_solid_state = 0x1\n'
    'un_f_sync_nv_supported = 0\n')

ZDB_C_TANK = (
    '\n'
    'MOS Configuration:\n'
    '        version: 5000\n'
    "        name: 'tank'\n"
    '        state: 0\n'
    '        txg: 2916407\n'
    '        pool_guid: 7371893247236529472\n'
    '        hostid: 1395523420\n'
    "        hostname: 'nexenta01'\n"
    '        com.delphix:has_per_vdev_zaps\n'
    '        vdev_children: 2\n'
    '        vdev_tree:\n'
    "            type: 'root'\n"
    '            id: 0\n'
    '            guid: 7371893247236529472\n'
    '            is_ssd: false\n'
    '            create_txg: 4\n'
    '            children[0]:\n'
    "                type: 'mirror'\n"
    '                id: 0\n'
    '                guid: 1544381473282948383\n'
    '                metaslab_array: 256\n'
    '                metaslab_shift: 35\n'
    '                ashift: 12\n'
    '                asize: 4000771997696\n'
    '                is_log: 0\n'
    '                is_special: 0\n'
    '                is_ssd: false\n'
    '                create_txg: 4\n'
    '                com.delphix:vdev_zap_top: 129\n'
    '                children[0]:\n'
    "                    type: 'disk'\n"
    '                    id: 0\n'
    '                    guid: 10870393541185011717\n'
    "                    path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0'\n"
    "                    devid: 'id1,sd@n5000cca0496e6f8d/a'\n"
    "                    phys_path: '/scsi_vhci/disk@g5000cca0496"
    "e6f8d:a'\n"
    '                    whole_disk: 1\n'
    '                    is_ssd: false\n'
    '                    DTL: 520\n'
    '                    create_txg: 4\n'
    '                    com.delphix:vdev_zap_leaf: 130\n'
    '                children[1]:\n'
    "                    type: 'disk'\n"
    '                    id: 1\n'
    '                    guid: 3922051907430218339\n'
    "                    path: '/dev/dsk/c0t5000CCA0496E7A11d0s0'\n"
    "                    devid: 'id1,sd@n5000cca0496e7a11/a'\n"
    "                    phys_path: '/scsi_vhci/disk@g5000cca0496"
    "e7a11:a'\n"
    '                    whole_disk: 1\n'
    '                    is_ssd: false\n'
    '                    DTL: 521\n'
    '                    create_txg: 4\n'
    '                    com.delphix:vdev_zap_leaf: 131\n'
    '            children[1]:\n'
    "                type: 'disk'\n"
    '                id: 1\n'
    '                guid: 16470285937519837411\n'
    "                path: '/dev/dsk/c0t55CD2E404C0D8D0Ed0s0'\n"
    "                devid: 'id1,sd@n55cd2e404c0d8d0e/a'\n"
    "                phys_path: '/scsi_vhci/disk@g55cd2e404c0d8d0e:a'\n"
    '                whole_disk: 1\n'
    '                metaslab_array: 260\n'
    '                metaslab_shift: 31\n'
    '                ashift: 12\n'
    '                asize: 400074948608\n'
    '                is_log: 1\n'
    '                is_special: 0\n'
    '                is_ssd: true\n'
    '                DTL: 531\n'
    '                create_txg: 2916100\n'
    '                com.delphix:vdev_zap_leaf: 132\n'
    '                com.delphix:vdev_zap_top: 133\n'
    '        features_for_read:\n'
    '            com.delphix:hole_birth\n'
    '            com.delphix:embedded_data\n')

ZPOOL_STATUS = (
    '  pool: tank\n'
    ' state: ONLINE\n'
    '  scan: scrub repaired 0 in 2h41m with 0 errors on Sun Nov 1'
    '7 04:41:03 2024\n'
    'config:\n'
    '\n'
    '\tNAME                       STATE     READ WRITE CKSUM\n'
    '\ttank                       ONLINE       0     0     0\n'
    '\t  mirror-0                 ONLINE       0     0     0\n'
    '\t    c0t5000CCA0496E6F8Dd0  ONLINE       0     0     0\n'
    '\t    c0t5000CCA0496E7A11d0  ONLINE       0     0     0\n'
    '\t  mirror-1                 ONLINE       0     0     0\n'
    '\t    c0t5000CCA0496E7B52d0  ONLINE       0     0     0\n'
    '\t    c0t5000CCA0496E7C93d0  ONLINE       0     0     0\n'
    '\tlogs\n'
    '\t  c0t55CD2E404C0D8D0Ed0    ONLINE       0     0     0\n'
    '\tcache\n'
    '\t  c1t0d0                   ONLINE       0     0     0\n'
    '\tspares\n'
    '\t  c0t5000CCA0496E8D14d0    AVAIL   \n'
    '\n'
    'errors: No known data errors\n')

IOSTAT_EN = (
    'c0t5000CCA0496E6F8Dd0 Soft Errors: 0 Hard Errors: 0 Transpor'
    't Errors: 0 \n'
    'Vendor: HGST     Product: HUS724040ALS640  Revision: A1C4 Se'
    'rial No: P4GB6YEX \n'
    'Size: 4000.79GB <4000787030016 bytes>\n'
    'Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n'
    'Illegal Request: 0 Predictive Failure Analysis: 0 \n'
    'c0t55CD2E404C0D8D0Ed0 Soft Errors: 0 Hard Errors: 0 Transpor'
    't Errors: 0 \n'
    'Vendor: ATA      Product: INTEL SSDSC2BA40 Revision: 0270 Se'
    'rial No: BTTV5095012Z400 \n'
    'Size: 400.09GB <400088457216 bytes>\n'
    'Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n'
    'Illegal Request: 0 Predictive Failure Analysis: 0 \n'
    'c1t0d0           Soft Errors: 0 Hard Errors: 0 Transport Err'
    'ors: 0 \n'
    'Vendor: ATA      Product: SAMSUNG MZ7LM480 Revision: 403Q Se'
    'rial No: S2UJNX0J101234 \n'
    'Size: 480.10GB <480103981056 bytes>\n'
    'Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n'
    'Illegal Request: 0 Predictive Failure Analysis: 0 \n')

UPDATE_DRV_VF_BUSY = (
    'Cannot unload module: sd\n'
    'Will be unloaded upon reboot.\n'
    'Forcing update of sd.conf.\n'
    'sd.conf updated in the kernel.\n')

UPDATE_DRV_V_BUSY = (
    'Cannot unload module: sd\n'
    'Will be unloaded upon reboot.\n'
    'sd.conf not updated in the kernel\n')

UPDATE_DRV_VF_IDLE = (
    'sd.conf updated in the kernel.\n')
