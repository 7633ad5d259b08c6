# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What the tests run things with, that is neither the product nor the
simulated appliance (the oracle, tests/sim): the fork servers that save
a Python start per process (forkserver.py, cmdclient.c), and the
product's own interpreter started once (sdtuneserver.py)."""
