# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Run one inventory command through the host and return its output,
turning a failure into a ParseError that names the command and field."""

from typing import Optional, Sequence

from ..errors import ParseError
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
