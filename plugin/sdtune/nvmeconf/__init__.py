# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Read, check, evaluate and edit /kernel/drv/nvme.conf as the nvme
driver does.

model (the driver-global properties, the nvme-config-list triplets, their
evaluation for a controller, and blkdev's physical block size of a
namespace), lint (what the driver warns about or silently ignores) and
edit (lossless set/unset of a model's tunables).  nvme.conf is parsed,
checked and edited by the driver.conf layer sd.conf is, driverconf/.
"""
