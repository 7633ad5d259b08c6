# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The ashift a model's disks must fit, for sd's physical-block-size and
nvme's min-phys-block-size alike.

A disk that reports a physical block larger than 2^ashift of a top-level
vdev cannot replace a disk of that vdev or be attached to it (zpool
replace/attach fail with EDOM, facts §6.1, §15.13); a model's larger
block is therefore held back while any disk of the model is in such a
vdev or stands by as a spare of a pool that has one.  The rule is the
vdev's ashift, whatever it is: ashift 12 holds back 8192 as ashift 9
holds back 4096 (adversarial report 2026-11-27, U1).

A spare may replace a disk of any top-level vdev of its pool (data,
log, special, dedup), so it must fit the smallest ashift among them;
cache devices are never replaced into and do not count.  Pure.
"""

from typing import Dict, Iterable, Optional, Tuple

from ..inventory.disks import Disk, Inventory

# Roles whose vdevs a spare can never be put into.
NOT_REPLACEABLE = ("cache", "spare")


def pools_smallest_ashift(inv: Inventory) -> Dict[str, int]:
    """Pool -> the smallest ashift of its top-level vdevs, as far as the
    inventory knows them."""
    out: Dict[str, int] = {}
    for d in inv.disks:
        if d.pool and d.vdev_ashift is not None and \
                d.pool_role not in NOT_REPLACEABLE:
            out[d.pool] = min(out.get(d.pool, d.vdev_ashift), d.vdev_ashift)
    return out


def ashift_bound(disks: Iterable[Disk], smallest: Dict[str, int]
                 ) -> Optional[Tuple[int, str]]:
    """The smallest ashift any of ``disks`` must fit, with why (the disk
    and its vdev or pool); None when none is in a pool with a known
    ashift.  ``smallest``: pools_smallest_ashift of the inventory."""
    bound: Optional[Tuple[int, str]] = None
    for d in disks:
        if not d.pool:
            continue
        if d.pool_role == "spare":
            if d.pool not in smallest:
                continue
            ashift = smallest[d.pool]
            why = "%s is a spare of pool %s, which has an ashift=%d vdev" % (
                d.name, d.pool, ashift)
        elif d.vdev_ashift is not None and d.pool_role != "cache":
            ashift = d.vdev_ashift
            why = "%s is in an ashift=%d vdev of pool %s" % (
                d.name, ashift, d.pool)
        else:
            continue
        if bound is None or ashift < bound[0]:
            bound = (ashift, why)
    return bound


def too_large(block_bytes: int, bound: Optional[Tuple[int, str]]) -> bool:
    """Whether a physical block of ``block_bytes`` exceeds the bound."""
    return bound is not None and block_bytes > (1 << bound[0])
