# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Running `sdtune trace`: find the D script, turn the DISK argument into
the statname the script filters on, run dtrace through the host, and print
the summary as a table or JSON (through sdtune.tables).

Runs exactly one command, `dtrace -s <script> <DEVNAME|all> <SECONDS>`,
where DEVNAME is an sd statname (sd3).  A cXtYdZ DISK is turned into its
statname from /etc/path_to_inst and the /dev/rdsk links
(inventory.devlinks.disk_names, files only, no command).
"""

import os
import posixpath
import re
from typing import List, Optional

from .. import layout
from ..errors import SdtuneError, UsageError
from ..host import CommandResult, Host
from ..inventory.devlinks import DISK_NAME, SLICE, disk_names
from ..tables import render_table
from .result import TraceResult, parse_trace
from .scripts import SCRIPTS, find_script

# dtrace needs time beyond the traced seconds: compiling the script and
# enabling probes (fbt on a large kernel takes a few seconds), then the
# END clause's printing.  Only a hung dtrace runs into this.
TIMEOUT_MARGIN_S = 30
MAX_SECONDS = 86400

_STATNAME = re.compile(r"^sd[0-9]+$")
_DISK = re.compile(r"^(?:/dev/r?dsk/)?(%s)(?:%s)?$" % (DISK_NAME, SLICE))


def script_path(name: str, host: Optional[Host] = None) -> str:
    """The file of `sdtune trace NAME` as dtrace sees it: in dtrace/,
    two levels above the package both in the source tree and installed
    (see sdtune.layout); on an appliance reached over SSH, in dtrace/
    beside the engine's bin/ (`make install-engine` puts them there)."""
    directory = host.dtrace_dir() if host is not None else \
        layout.dtrace_dir()
    path = posixpath.join(directory, find_script(name).file)
    if not (host.exists(path) if host is not None else
            os.path.isfile(path)):
        raise SdtuneError("trace", name, "script %s is missing (incomplete "
                          "installation)" % path)
    return path


def resolve_device(host: Host, disk: Optional[str]) -> str:
    """The statname a script filters on: "all", sdN as given, or the sd
    instance of a cXtYdZ name (with or without /dev/rdsk/ and slice)."""
    if disk is None or disk == "all":
        return "all"
    if _STATNAME.match(disk):
        return disk
    m = _DISK.match(disk)
    if not m:
        raise UsageError("trace", disk, "not a disk name: expected cXtYdZ "
                         "or an sd instance such as sd3")
    for instance, name in sorted(disk_names(host).items()):
        if name == m.group(1):
            return "sd%d" % instance
    raise UsageError("trace", disk, "no sd instance has this name (see "
                     "'sdtune disks')")


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _dtrace_failed(name: str, script: str, result: CommandResult) -> None:
    """Raise the error a failed dtrace run means, in the operator's terms."""
    msg = _first_error(result.stderr)
    low = result.stderr.lower()
    if "requires additional privileges" in low:
        raise SdtuneError("trace", name, "DTrace requires additional "
                          "privileges: run sdtune as root, or with the "
                          "dtrace_kernel privilege (%s)" % msg)
    m = re.search(r"probe description (\S+) does not match any probes",
                  result.stderr)
    if m:
        raise SdtuneError("trace", name, "probe %s does not match any "
                          "probes on this kernel: the sd module is not "
                          "loaded or its functions differ from those %s "
                          "was written for (see its header)"
                          % (m.group(1), os.path.basename(script)))
    if "failed to compile" in low:
        raise SdtuneError("trace", name, "dtrace could not compile %s: %s"
                          % (os.path.basename(script), msg))
    raise SdtuneError("trace", name, "dtrace exited with status %d%s"
                      % (result.returncode, ": " + msg if msg else ""))


def _warnings(stderr: str) -> List[str]:
    """dtrace's complaints that make the numbers incomplete: drops and
    probe errors."""
    return [line.strip() for line in stderr.splitlines()
            if "drop" in line or "error" in line.lower()]


def query_trace(host: Host, name: str, disk: Optional[str] = None,
                seconds: int = 10) -> TraceResult:
    """Run `dtrace -s SCRIPT DEVNAME|all SECONDS` and summarise it."""
    # Every argument is checked before dtrace runs: a mistake must not
    # cost the operator the traced seconds.
    script = script_path(name, host)
    if isinstance(seconds, bool) or not isinstance(seconds, int) or \
            not 1 <= seconds <= MAX_SECONDS:
        raise UsageError("trace", name, "seconds must be a whole number "
                         "from 1 to %d" % MAX_SECONDS)
    device = resolve_device(host, disk)
    if not host.can_run("dtrace"):
        raise SdtuneError("run", "dtrace", "DTrace is not available: the "
                          "[commands] dtrace path of sdtune.conf is missing "
                          "or not executable")
    args = ["-s", script, device, str(seconds)]
    result = host.run("dtrace", args, timeout_s=seconds + TIMEOUT_MARGIN_S)
    if result.returncode != 0:
        _dtrace_failed(name, script, result)
    trace = parse_trace(name, result.stdout, seconds,
                        "dtrace -s %s" % os.path.basename(script))
    trace.warnings = _warnings(result.stderr)
    return trace


def render_trace(trace: TraceResult, scripted: bool = False,
                 parsable: bool = False) -> str:
    """The summary as a table (one row per device, per direction for
    iosize)."""
    script = SCRIPTS[trace.name]
    return render_table(script.columns, script.rows(trace.devices),
                        scripted, parsable)
