"""Which illumos platform this is, from what the system reports.

Sources, each a query/parse pair:

  /etc/release                 the distribution's first line (a file)
  bootparams                   SmartOS only: the loader's key=value pairs;
                               headnode=true on a Triton head node,
                               smartos=true on standalone SmartOS, neither
                               on a PXE-booted Triton compute node
  uname -i                     the platform directory (i86pc) of the
                               kernel module path
  zpool list -Ho name,bootfs   SmartOS booted from a pool (piadm): the
                               pool's bootfs dataset holds the boot files

The names: smartos, triton-hn, triton-cn, omnios, openindiana,
nexentastor, illumos (any other distribution, or no /etc/release).
Unknown is said, never guessed into something safer-looking: a failed
source leaves a note, and the adapters refuse what they cannot decide.
"""

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..errors import ParseError, SdtuneError
from ..host import Host
from ..inventory.runner import output_of

RELEASE = "/etc/release"
NAMES = ("smartos", "triton-hn", "triton-cn", "omnios", "openindiana",
         "nexentastor", "illumos")
SMARTOS_FAMILY = ("smartos", "triton-hn", "triton-cn")
# Distribution words in /etc/release's first line, first match wins.
_RELEASE_WORDS = (("SmartOS", "smartos"), ("OmniOS", "omnios"),
                  ("OpenIndiana", "openindiana"),
                  ("NexentaStor", "nexentastor"))
_MACHINE = re.compile(r"^[a-z0-9_]+$")


@dataclass
class PlatformInfo:
    """What the system says it is."""

    name: str
    release: str                    # /etc/release's first line, or ""
    machine: str = "i86pc"          # uname -i
    # SmartOS booted from a pool: its bootfs dataset (zones/boot).
    boot_pool_fs: Optional[str] = None
    bootparams: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    @property
    def smartos(self) -> bool:
        return self.name in SMARTOS_FAMILY

    def to_json(self) -> dict:
        return {"name": self.name, "release": self.release,
                "machine": self.machine, "boot_pool_fs": self.boot_pool_fs,
                "notes": list(self.notes)}


def parse_release(text: str) -> tuple:
    """(name, first line) of /etc/release.

    Sample (OmniOS):

          OmniOS v11 r151046l
          Copyright (c) 2012-2017 OmniTI Computer Consulting, Inc.
    """
    first = ""
    for line in text.splitlines():
        if line.strip():
            first = line.strip()
            break
    for word, name in _RELEASE_WORDS:
        if word in first:
            return name, first
    return "illumos", first


def parse_bootparams(text: str) -> Dict[str, str]:
    """bootparams' key=value lines (values may be quoted).

    Sample:

        boot-file=/platform/i86pc/kernel/amd64/unix
        smartos=true
    """
    out: Dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq or not key:
            raise ParseError("bootparams", "line %d" % n, "not key=value")
        out[key] = value.strip('"')
    return out


def parse_bootfs(text: str) -> Dict[str, Optional[str]]:
    """pool -> bootfs dataset (None for "-"), from `zpool list -Ho
    name,bootfs`.

    Sample:

        zones	zones/boot
    """
    out: Dict[str, Optional[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0]:
            raise ParseError("zpool list -Ho name,bootfs", "line %d" % n,
                             "not 'pool<TAB>bootfs'")
        out[fields[0]] = None if fields[1] in ("-", "") else fields[1]
    return out


def detect(host: Host) -> PlatformInfo:
    """The platform, from the sources above; failures become notes."""
    path = host.sys_path(RELEASE)
    notes: List[str] = []
    if host.exists(path):
        try:
            raw = host.read_bytes(path, limit=1 << 20)
            name, first = parse_release(raw.decode("utf-8", "replace"))
        except SdtuneError as e:
            name, first = "illumos", ""
            notes.append("%s unreadable (%s): an unknown illumos "
                         "distribution" % (RELEASE, e.reason))
    else:
        name, first = "illumos", ""
        notes.append("no %s: an unknown illumos distribution" % RELEASE)
    info = PlatformInfo(name, first, notes=notes)
    try:
        machine = output_of(host, "uname", ["-i"], "platform").strip()
        if not _MACHINE.match(machine):
            raise ParseError("uname -i", "platform", "not a platform name")
        info.machine = machine
    except SdtuneError as e:
        notes.append("uname -i failed (%s): module path assumed for "
                     "i86pc" % e)
    if info.smartos:
        _smartos_role(host, info)
    return info


def _smartos_role(host: Host, info: PlatformInfo) -> None:
    try:
        params = parse_bootparams(output_of(host, "bootparams", [],
                                            "boot parameters"))
    except SdtuneError as e:
        # Standalone is assumed; its boot media checks refuse a write
        # where there is no key or boot pool (a compute node has none).
        info.notes.append("bootparams failed (%s): Triton role unknown, "
                          "treated as standalone SmartOS" % e)
        params = {"smartos": "true"}
    info.bootparams = params
    if params.get("headnode") == "true":
        info.name = "triton-hn"
    elif params.get("smartos") == "true":
        info.name = "smartos"
    else:
        info.name = "triton-cn"
        return
    pool = params.get("triton_bootpool")
    if pool:
        info.boot_pool_fs = pool + "/boot"
        return
    if info.name != "smartos":
        return
    try:
        bootfs = parse_bootfs(output_of(host, "zpool",
                                        ["list", "-Ho", "name,bootfs"],
                                        "bootfs"))
    except SdtuneError as e:
        info.notes.append("zpool list failed (%s): boot pool unknown" % e)
        return
    found = sorted(fs for fs in bootfs.values() if fs)
    if len(found) == 1:
        info.boot_pool_fs = found[0]
    elif len(found) > 1:
        info.notes.append("several pools have a bootfs (%s): set "
                          "[platform] boot_media to the one that boots"
                          % ", ".join(found))
