"""From verdicts to sd.conf tunables, and back.

One place for the rules that join a certification's verdicts to what it
recommends, in both directions:

* ``recommend``: the sector, cache and queue-depth verdicts, the logical
  block size and whether the drive is an SSD give the tunables a record
  recommends (what certify and infer store);
* ``justification``: for one recommended tunable, the confidence and the
  reason of the verdict that recommends it (what plan shows next to each
  proposal).

Pure: no I/O.
"""

from typing import Dict, Optional, Tuple

from .records import CertRecord
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


def justification(tunable: str, record: CertRecord
                  ) -> Tuple[Optional[float], Optional[str]]:
    """(confidence, reason) of the verdict behind ``tunable`` in
    ``record``: the sector verdict for physical-block-size, the cache
    verdict for cache-nonvolatile, the queue-depth verdict for the
    throttles; disksort has no confidence, only its reason.  A tunable
    no rule knows: (None, "")."""
    if tunable == "physical-block-size":
        return record.sector_confidence, record.sector_reason
    if tunable == "cache-nonvolatile":
        return record.cache_confidence, record.cache_reason
    if tunable.startswith("throttle"):
        return record.queue_depth.confidence, record.queue_depth.reason
    if tunable == "disksort":
        return None, DISKSORT_REASON
    return None, ""
