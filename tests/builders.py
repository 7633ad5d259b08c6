# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""One way for every test to build what it needs of certifications and
disks, so that a change of the record or of Disk is made here once:

* disk(): a Disk as the inventory reads it, by default an idle SATA SSD
  under sd whose key is made from its ATA model;
* cert_record(): a CertRecord as certify makes it, by default a
  confident certification of that disk with the firmware it runs;
* store_record(): a record's JSON written into an appliance's state
  directory under the name certify gives it, as a later plan, audit or
  results finds it (a dict is written as given, for records that are
  wrong on purpose).

Every field of the real types can be given; a test names only what
matters to it.
"""

import json
import os
from typing import Optional, Union

from sdtune.inventory.disks import Disk, SdValues
from sdtune.records.record import CertRecord, QueueDepth
from sdtune.records.storage import SUBDIR, record_name

MODEL = "ACME DC4K"
KEY = "ATA     " + MODEL.ljust(16)
FIRMWARE = "0100"


def disk(name: str = "c1t1d0", key: Optional[str] = None, *,
         model: str = MODEL, serial: str = "S1", firmware: str = FIRMWARE,
         driver: str = "sd", pool: Optional[str] = None,
         ashift: Optional[int] = None, **fields) -> Disk:
    """A disk: under sd (key from the ATA model unless given), or of
    another driver (no key unless given; `model` is then the driver's
    own, say an NVMe controller's)."""
    if key is None and driver == "sd":
        key = "ATA     " + model[:16].ljust(16)
    values = dict(name=name, instance=None, key=key,
                  vid=key[:8] if key else None,
                  pid=key[8:] if key else None, serial=serial,
                  firmware=firmware, size_bytes=1 << 39,
                  logical_block_bytes=512, physical_block_bytes=512,
                  ssd=True, in_use=None, rejected_reasons=[], pool=pool,
                  pool_role="data" if pool else None, vdev_ashift=ashift,
                  sd=SdValues(), ata_model=model if key else None,
                  model=None if driver == "sd" else model, driver=driver)
    values.update(fields)
    return Disk(**values)


def cert_record(key: Optional[str] = KEY, serial: str = "S1", *,
                firmware: Optional[str] = FIRMWARE, when: float = 1.0,
                native: Optional[int] = None, cache: Optional[str] = None,
                nv_sup: bool = False, recommended: Optional[dict] = None,
                **fields) -> CertRecord:
    """A confident certification of unit `serial` of `key`; `native`
    (above 512) is also recommended as physical-block-size unless
    `recommended` says what is."""
    if recommended is None:
        recommended = {"physical-block-size": native} \
            if native and native > 512 else {}
    values = dict(key=key, serial=serial, firmware=firmware, time=when,
                  time_iso="2026-11-2%dT00:00:00Z" % (int(when) % 10),
                  source="sdio", logical_block_bytes=512,
                  native_sector_bytes=native, sector_confidence=0.99,
                  cache=cache, cache_confidence=0.99,
                  queue_depth=QueueDepth(confidence=0.99),
                  recommended=dict(recommended),
                  evidence={"device": {"nv_sup": nv_sup}})
    values.update(fields)
    return CertRecord(**values)


def store_record(root: str, record: Union[CertRecord, dict],
                 name: Optional[str] = None) -> str:
    """Write `record` into the state directory of the system rooted at
    `root` (/var/sdtune/certify), as certify names it unless `name` is
    given; its path."""
    doc = record.to_json() if isinstance(record, CertRecord) else record
    directory = os.path.join(root, "var", "sdtune", SUBDIR)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name or record_name(
        doc.get("key"), doc.get("serial"), doc.get("firmware"),
        doc.get("target") or "", doc.get("driver"), doc.get("model")))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path
