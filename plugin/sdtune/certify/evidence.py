# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Device evidence from SCSI commands sent with `sdio scsi`: the
non-volatile cache bit, the write-cache-enable bit and the physical block
exponent (facts §6.1, §6.4, §7).

sdio sends the CDB and prints the raw response as hex; decoding happens
here, in pure functions, so it is tested without a device.  Runs
`sdio scsi ...` through the host.
"""

import json
from dataclasses import dataclass
from typing import Optional

from ..errors import SdtuneError
from ..host import Host


@dataclass
class DeviceEvidence:
    nv_sup: Optional[bool] = None          # VPD 0x86 byte 6 bit 1
    wce: Optional[bool] = None             # caching mode page byte 2 bit 2
    logical_block: Optional[int] = None    # READ CAPACITY(16)
    physical_block: Optional[int] = None
    capacity_bytes: Optional[int] = None   # READ CAPACITY(16)
    notes: str = ""

    def to_json(self) -> dict:
        return {"nv_sup": self.nv_sup, "wce": self.wce,
                "logical_block_bytes": self.logical_block,
                "reported_physical_block_bytes": self.physical_block,
                "capacity_bytes": self.capacity_bytes,
                "notes": self.notes}


def decode_vpd86_nv_sup(data: bytes) -> Optional[bool]:
    """Extended INQUIRY Data VPD page: byte 1 is the page code 0x86,
    byte 6 bit 1 is NV_SUP (sd_get_nv_sup(), SD_VPD_NV_SUP)."""
    if len(data) < 7 or data[1] != 0x86:
        return None
    return bool(data[6] & 0x02)


def decode_caching_page_wce(data: bytes) -> Optional[bool]:
    """MODE SENSE(10) of page 0x08: an 8-byte header whose bytes 6-7 give
    the block descriptor length, then the page; WCE is bit 2 of the
    page's byte 2."""
    if len(data) < 8:
        return None
    bd_len = (data[6] << 8) | data[7]
    page = data[8 + bd_len:]
    if len(page) < 3 or (page[0] & 0x3F) != 0x08:
        return None
    return bool(page[2] & 0x04)


def decode_readcap16(data: bytes) -> Optional[tuple]:
    """(logical, physical, capacity): bytes 0-7 the last logical block
    address, bytes 8-11 the logical block length, byte 13's low nibble
    the logical-per-physical exponent."""
    if len(data) < 14:
        return None
    logical = int.from_bytes(data[8:12], "big")
    if logical == 0:
        return None
    capacity = (int.from_bytes(data[0:8], "big") + 1) * logical
    return logical, logical << (data[13] & 0x0F), capacity


def _scsi(host: Host, args, target: str) -> Optional[bytes]:
    try:
        result = host.run("sdio", ["scsi", *args, target, "--json"])
    except SdtuneError:
        return None
    if result.returncode != 0:
        return None
    try:
        doc = json.loads(result.stdout)
        if doc.get("status", 0) != 0:
            return None
        return bytes.fromhex(doc.get("data_hex", ""))
    except ValueError:
        return None


def query_evidence(host: Host, target: str) -> DeviceEvidence:
    """Ask the device; what cannot be read stays None (unknown)."""
    ev = DeviceEvidence()
    data = _scsi(host, ["vpd", "0x86"], target)
    ev.nv_sup = decode_vpd86_nv_sup(data) if data is not None else None
    data = _scsi(host, ["modesense", "0x08"], target)
    ev.wce = decode_caching_page_wce(data) if data is not None else None
    data = _scsi(host, ["readcap16"], target)
    sizes = decode_readcap16(data) if data is not None else None
    if sizes:
        ev.logical_block, ev.physical_block, ev.capacity_bytes = sizes
    missing = [n for n, v in (("NV_SUP", ev.nv_sup), ("WCE", ev.wce),
                              ("READ CAPACITY(16)", sizes)) if v is None]
    if missing:
        ev.notes = "not answered: " + ", ".join(missing)
    return ev
