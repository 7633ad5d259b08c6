# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated sdtune appliance: a root directory, fake illumos commands
and a model of the sd driver's configuration life cycle.

It is an independent oracle for the product's tests and therefore imports
nothing from plugin/.  Start with appliance.py (API and CLI); the fake
commands are dispatched by fakecmd.py.
"""
