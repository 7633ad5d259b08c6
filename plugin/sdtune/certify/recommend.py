# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""From verdicts to sd.conf tunables, and back.

One place for the rules that join a certification's verdicts to what it
recommends, in both directions:

* ``recommend``: the sector, cache and queue-depth verdicts, the logical
  block size and whether the drive is an SSD give the tunables a record
  recommends (what certify and infer store): sd.conf's for a disk under
  sd, nvme.conf's for an NVMe namespace (``nvme_queue``: its knee is
  reported, never turned into an sd throttle);
* ``justification``: for one recommended tunable, the confidence and the
  reason of the verdict that recommends it (what plan shows next to each
  proposal).

Pure: no I/O.
"""

from dataclasses import replace
from typing import Dict, Optional, Tuple

from ..records.record import CertRecord
from .verdict import CacheVerdict, QueueVerdict, SectorVerdict

# What plan gives as the reason for disksort:false: no verdict measures
# it, the drive being solid-state is the whole argument.
DISKSORT_REASON = "solid-state drive: disksort only adds latency"


def recommend(sector: Optional[SectorVerdict], cache: CacheVerdict,
              queue: QueueVerdict, logical: int, ssd: bool
              ) -> Dict[str, object]:
    """The recommended tunables, in the order a record lists them.

    physical-block-size only when the native sector is larger than the
    logical block (and than 512 bytes, sd's default);
    cache-nonvolatile:true only when the cache verdict says so (it
    weighs the device evidence); the throttles the queue-depth verdict
    found; disksort:false for an SSD.
    """
    recommended: Dict[str, object] = {}
    if sector is not None and sector.native and \
            sector.native > max(512, logical):
        recommended["physical-block-size"] = sector.native
    if cache.recommend_nonvolatile:
        recommended["cache-nonvolatile"] = True
    if queue.throttle_min is not None:
        recommended["throttle-min"] = queue.throttle_min
    if queue.throttle_max is not None:
        recommended["throttle-max"] = queue.throttle_max
    if ssd:
        recommended["disksort"] = False
    return recommended


def recommend_nvme(sector: Optional[SectorVerdict], logical: int
                   ) -> Dict[str, object]:
    """What a record of an NVMe namespace recommends, in nvme.conf's
    terms: min-phys-block-size when the native sector is larger than the
    logical block and 512 (what blkdev reports is the larger of the
    namespace's best LBA format and this).  The cache has no nvme.conf
    tunable that skips flushes (volatile-write-cache:off only disables
    the cache), and the queue depth none at all."""
    if sector is not None and sector.native and \
            sector.native > max(512, logical):
        return {"min-phys-block-size": sector.native}
    return {}


def nvme_queue(queue: QueueVerdict) -> QueueVerdict:
    """The queue-depth verdict of an NVMe namespace: the knee, without
    throttles (sd's throttle does not apply to blkdev, and NVMe queues
    are deep: the knee is for the operator, not for a tunable).  The
    reason keeps the measurement ("reads and writes saturate at QD32
    (...)") and drops what it said about sd's throttle."""
    head = queue.reason
    if "(" not in head or ")" not in head:
        return replace(queue, throttle_max=None, throttle_min=None)
    head = head[:head.index(")") + 1]
    return replace(queue, throttle_max=None, throttle_min=None,
                   reason=head + ": reported only (NVMe: sd's throttle "
                   "does not apply to blkdev, and nvme.conf has no "
                   "queue-depth tunable)")


def justification(tunable: str, record: CertRecord
                  ) -> Tuple[Optional[float], Optional[str]]:
    """(confidence, reason) of the verdict behind ``tunable`` in
    ``record``: the sector verdict for physical-block-size, the cache
    verdict for cache-nonvolatile, the queue-depth verdict for the
    throttles; disksort has no confidence, only its reason.  A tunable
    no rule knows: (None, "")."""
    if tunable in ("physical-block-size", "min-phys-block-size"):
        return record.sector_confidence, record.sector_reason
    if tunable == "cache-nonvolatile":
        return record.cache_confidence, record.cache_reason
    if tunable.startswith("throttle"):
        return record.queue_depth.confidence, record.queue_depth.reason
    if tunable == "disksort":
        return None, DISKSORT_REASON
    return None, ""
