# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Read, check, evaluate and edit /kernel/drv/sd.conf as the kernel does.

sd's rules, on the driver.conf reader and writer of driverconf/:
tunables (sd_set_properties and friends), match (VID/PID keys), model
(the sd-config-list and its evaluation), lint, edit, and actions (what
the `sdtune sdconf` subcommands do to a text).
"""
