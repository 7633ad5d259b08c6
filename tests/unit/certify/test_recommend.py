# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The verdict-to-tunable rules, in both directions: what a record
recommends (recommend) and which verdict plan cites for each tunable
(justification)."""

import pytest

from sdtune.certify.recommend import (DISKSORT_REASON, justification,
                                      recommend)
from sdtune.records.record import CertRecord, QueueDepth
from sdtune.certify.verdict import CacheVerdict, QueueVerdict, SectorVerdict

NO_CACHE = CacheVerdict("volatile", 0.99, False, "flushes cost")
NONVOLATILE = CacheVerdict("nonvolatile", 0.99, True, "NV_SUP")
NO_QUEUE = QueueVerdict(None, None, None, 0.0, "not measured")


def sector(native):
    return SectorVerdict(native, 0.99, "penalty below %s" % native)


@pytest.mark.parametrize("native, logical, want", [
    (None, 512, None),              # inconclusive
    (512, 512, None),               # sd's default already
    (4096, 512, 4096),
    (4096, 4096, None),             # the logical block says it
    (8192, 4096, 8192),
])
def test_physical_block_size_only_above_the_logical_block(native, logical,
                                                          want):
    got = recommend(sector(native), NO_CACHE, NO_QUEUE, logical, False)
    assert got.get("physical-block-size") == want


def test_no_sector_verdict_recommends_no_block_size():
    assert recommend(None, NO_CACHE, NO_QUEUE, 512, False) == {}


def test_cache_nonvolatile_only_when_the_cache_verdict_says_so():
    assert recommend(None, NONVOLATILE, NO_QUEUE, 512, False) == \
        {"cache-nonvolatile": True}
    assert "cache-nonvolatile" not in recommend(None, NO_CACHE, NO_QUEUE,
                                                512, False)


def test_throttles_when_found():
    queue = QueueVerdict(32, 32, 8, 0.99, "knee at QD32")
    assert recommend(None, NO_CACHE, queue, 512, False) == \
        {"throttle-min": 8, "throttle-max": 32}
    queue = QueueVerdict(32, 32, None, 0.99, "knee at QD32")
    assert recommend(None, NO_CACHE, queue, 512, False) == \
        {"throttle-max": 32}


def test_disksort_false_for_an_ssd_only():
    assert recommend(None, NO_CACHE, NO_QUEUE, 512, True) == \
        {"disksort": False}
    assert recommend(None, NO_CACHE, NO_QUEUE, 512, False) == {}


def test_order_is_the_records_order():
    queue = QueueVerdict(32, 32, 8, 0.99, "knee")
    assert list(recommend(sector(4096), NONVOLATILE, queue, 512, True)) == \
        ["physical-block-size", "cache-nonvolatile", "throttle-min",
         "throttle-max", "disksort"]


RECORD = CertRecord(key=None, time=1.0, sector_confidence=0.97,
                    sector_reason="sector says", cache_confidence=0.96,
                    cache_reason="cache says",
                    queue_depth=QueueDepth(confidence=0.95,
                                           reason="queue says"))


@pytest.mark.parametrize("tunable, want", [
    ("physical-block-size", (0.97, "sector says")),
    ("cache-nonvolatile", (0.96, "cache says")),
    ("throttle-max", (0.95, "queue says")),
    ("throttle-min", (0.95, "queue says")),
    ("disksort", (None, DISKSORT_REASON)),
    ("retries-timeout", (None, "")),
])
def test_justification_names_the_verdict_behind_each_tunable(tunable,
                                                             want):
    assert justification(tunable, RECORD) == want


def test_justification_of_a_record_without_the_verdicts():
    bare = CertRecord.from_json({"key": None, "time": 1})
    assert justification("physical-block-size", bare) == (None, "")
    assert justification("cache-nonvolatile", bare) == (None, "")
    assert justification("throttle-max", bare) == (None, "")
    assert DISKSORT_REASON == "solid-state drive: disksort only adds latency"


# ------------------------------------------------------- NVMe namespaces

@pytest.mark.parametrize("native, logical, want", [
    (None, 512, {}),                # inconclusive
    (512, 512, {}),                 # nvme's default minimum already
    (4096, 512, {"min-phys-block-size": 4096}),
    (4096, 4096, {}),               # the LBA format in use says it
    (16384, 4096, {"min-phys-block-size": 16384}),
])
def test_nvme_recommends_min_phys_block_size_only(native, logical, want):
    from sdtune.certify.recommend import recommend_nvme
    # Never a cache or queue tunable: nvme.conf has none that skips
    # flushes, and none for the queue.
    assert recommend_nvme(sector(native), logical) == want


def test_nvme_queue_reports_the_knee_without_a_throttle():
    from sdtune.certify.recommend import nvme_queue
    sd = QueueVerdict(16, 16, None, 0.97, "reads and writes saturate at "
                      "QD16 (writes QD1 900, QD16 9000): throttle-max 16",
                      knees={"write": 16, "read": 16})
    got = nvme_queue(sd)
    assert (got.knee, got.knees, got.confidence) == (16, sd.knees, 0.97)
    assert got.throttle_max is None and got.throttle_min is None
    assert got.reason == ("reads and writes saturate at QD16 (writes QD1 "
                          "900, QD16 9000): reported only (NVMe: sd's "
                          "throttle does not apply to blkdev, and "
                          "nvme.conf has no queue-depth tunable)")
    assert "throttle-max" not in got.reason
    # A reason without the measurement in parentheses is kept as it is.
    bare = nvme_queue(QueueVerdict(8, 8, 2, 0.9, "not measured"))
    assert (bare.throttle_max, bare.throttle_min, bare.reason) == \
        (None, None, "not measured")
