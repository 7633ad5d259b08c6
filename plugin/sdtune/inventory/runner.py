# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Run one inventory command through the host and return its output,
turning a failure into a ParseError that names the command and field."""

from typing import Optional, Sequence

from ..errors import ParseError, SdtuneError
from ..host import Host


def output_of(host: Host, name: str, args: Sequence[str], field: str,
              stdin: Optional[bytes] = None) -> str:
    """stdout of `name args`; ParseError when it exits non-zero or says
    nothing on stdout but something on stderr."""
    label = " ".join([name, *args])
    result = host.run(name, args, stdin=stdin)
    if result.returncode != 0 or (not result.stdout and result.stderr):
        reason = result.stderr.strip()[:200] or \
            "exit status %d" % result.returncode
        raise ParseError(label, field, reason)
    return result.stdout


# The kernel's boot time, in seconds since 1970 (every illumos platform).
BOOT_TIME_STAT = "unix:0:system_misc:boot_time"


def boot_time(host: Host) -> Optional[int]:
    """When the host last booted, from `kstat -p` of BOOT_TIME_STAT;
    None when it cannot be read (no kstat, a failure, an answer that is
    no whole number): the caller must then assume the worst."""
    try:
        words = output_of(host, "kstat", ["-p", BOOT_TIME_STAT],
                          "boot_time").split()
    except SdtuneError:
        return None
    if len(words) != 2 or words[0] != BOOT_TIME_STAT or \
            not words[1].isdigit():
        return None
    return int(words[1])
