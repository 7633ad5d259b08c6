# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What tests ask about processes they made end, from /proc (Linux)."""

import time


def ended(pid: int, within: float = 30.0) -> bool:
    """Whether process pid ends (or is a zombie: killed, and left to an
    init that may not reap it) within so many seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
