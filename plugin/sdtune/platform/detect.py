# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Which illumos platform this is, from what the system reports.

Sources, each a query/parse pair:

  uname -v                     the kernel's version string, decisive
                               where a distribution stamps its own:
                               NexentaOS_134f (NexentaStor 3),
                               NexentaOS_4:<rev> (NexentaStor 4),
                               NexentaStor_5.x (NexentaStor 5),
                               joyent_<stamp> (SmartOS, Triton),
                               omnios-<branch>-<hash> (OmniOS),
                               oi_151aN (OpenIndiana before Hipster)
  /etc/release                 the distribution's first line (a file):
                               the answer where uname -v is a plain
                               illumos-<hash> (OpenIndiana Hipster,
                               Tribblix, ...); NexentaStor 3 and 4 print
                               "Open Storage Appliance", never their name
  bootparams                   SmartOS only: the loader's key=value pairs;
                               headnode=true on a Triton head node,
                               smartos=true on standalone SmartOS, neither
                               on a PXE-booted Triton compute node
  uname -i                     the platform directory (i86pc) of the
                               kernel module path
  zpool list -Ho name,bootfs   SmartOS booted from a pool (piadm): the
                               pool's bootfs dataset holds the boot files

identify() is the pure part: the release file's text and uname -v's
output in, the platform out, never an exception (make fuzz drives it).
The strings it keys on, each with its source, are the fixtures in
tests/fixtures/platform/.  Not keyed on: a bare "Nexenta" (NexentaCore
and illumian, Debian-style illumos distributions, say it too),
/etc/debian_version (any dpkg-based illumos has it) and /opt/HAC
(RSF-1 clustering, sold for OmniOS as well).

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
# The distributions whose sd follows illumos-gate's rules (sd.conf
# flavour "upstream"); NexentaStor's sd has its own ("nexenta").
UPSTREAM_SD = SMARTOS_FAMILY + ("omnios", "openindiana")
# Distribution words in /etc/release's first line, first match wins.
# NexentaStor 3.x and 4.x say "Open Storage Appliance v3.1.6" and "Open
# Storage Appliance 4.0.3-FP2" there.
_RELEASE_WORDS = (("SmartOS", "smartos"), ("OmniOS", "omnios"),
                  ("OpenIndiana", "openindiana"),
                  ("NexentaStor", "nexentastor"),
                  ("Open Storage Appliance", "nexentastor"))
# Distributions whose kernel may carry a Nexenta uname -v but that are
# not NexentaStor (NexentaCore 3 shared NexentaStor 3's b134 kernel,
# illumian was NexentaStor 4's base): their release file decides.
_NOT_NEXENTASTOR = ("NexentaCore", "illumian")
# uname -v prefixes that name the distribution, first match wins.
_UNAME_VERSIONS = (
    (re.compile(r"^NexentaOS_134f$"), "nexentastor", "3"),
    (re.compile(r"^NexentaOS_4(:[0-9a-fA-F]+)?$"), "nexentastor", "4"),
    (re.compile(r"^NexentaStor_(\d[0-9A-Za-z.-]*)"), "nexentastor", None),
    (re.compile(r"^joyent_(\d{8}T\d{6}Z)$"), "smartos", None),
    (re.compile(r"^omnios-(?:(r\d{6})-)?[0-9A-Za-z-]+$"), "omnios",
     None),
    (re.compile(r"^(oi_\d+[0-9a-z]*)$"), "openindiana", None),
)
# The distribution's own release number in its /etc/release line.
_RELEASE_VERSION = {
    "nexentastor": re.compile(r"(?:Open Storage Appliance|NexentaStor)"
                              r"\s+v?(\d[0-9A-Za-z.-]*)"),
    "omnios": re.compile(r"\b(r\d{6}[a-z]?)\b"),
    "openindiana": re.compile(r"OpenIndiana (?:Hipster (\d{4}\.\d{2})|"
                              r"Development (oi_[0-9.a-z]+))"),
    "smartos": re.compile(r"SmartOS (\d{8}T\d{6}Z)"),
}
_MACHINE = re.compile(r"^[a-z0-9_]+$")
# Longer is not a release line or a version string: refused as garbage.
_MAX_LINE = 256


@dataclass
class PlatformInfo:
    """What the system says it is."""

    name: str
    release: str                    # /etc/release's first line, or ""
    machine: str = "i86pc"          # uname -i
    kernel: str = ""                # uname -v, or "" when unknown
    # The distribution's release: 3.1.6, r151046l, 2023.10, ... or "".
    version: str = ""
    # SmartOS booted from a pool: its bootfs dataset (zones/boot).
    boot_pool_fs: Optional[str] = None
    bootparams: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    @property
    def smartos(self) -> bool:
        return self.name in SMARTOS_FAMILY

    def to_json(self) -> dict:
        return {"name": self.name, "release": self.release,
                "version": self.version, "kernel": self.kernel,
                "machine": self.machine, "boot_pool_fs": self.boot_pool_fs,
                "notes": list(self.notes)}


@dataclass(frozen=True)
class Identity:
    """What identify() decides: the platform's name, the release file's
    first line, the distribution's release, and which source decided."""

    name: str
    release: str
    version: str
    by: str                         # "uname -v", RELEASE or "" (neither)
    notes: tuple = ()


def parse_release(text: str) -> tuple:
    """(name, first line) of /etc/release.

    Samples (OmniOS; NexentaStor 4, which never names itself there):

          OmniOS v11 r151046l
          Copyright (c) 2012-2017 OmniTI Computer Consulting, Inc.

                            Open Storage Appliance 4.0.3-FP2
               Copyright (c) 2014 Nexenta Systems, Inc.  All Rights Reserved.
    """
    first = ""
    for line in text.splitlines():
        if line.strip():
            first = line.strip()[:_MAX_LINE]
            break
    if any(word in first for word in _NOT_NEXENTASTOR):
        return "illumos", first
    for word, name in _RELEASE_WORDS:
        if word in first:
            return name, first
    return "illumos", first


def parse_uname_version(text: str) -> tuple:
    """(name or None, version or "") from `uname -v`: None where the
    string names no distribution (a plain illumos-<hash> build, as
    OpenIndiana Hipster and Tribblix print).

    Samples (NexentaStor 3, NexentaStor 4, OmniOS):

        NexentaOS_134f
        NexentaOS_4:cd604cd066
        omnios-r151046-0d49ad5c1b
    """
    word = text.strip().split("\n")[0].strip()[:_MAX_LINE]
    for pattern, name, version in _UNAME_VERSIONS:
        m = pattern.match(word)
        if m:
            if version is None:
                version = (m.group(1) or "") if m.groups() else ""
                # NexentaStor_5.3.0.20:<rev>: the release before the ':'.
                version = version.split(":")[0]
            return name, version
    return None, ""


def identify(release: Optional[str], uname_v: Optional[str]) -> Identity:
    """The platform from /etc/release's text and `uname -v`'s output
    (None: not available).  uname -v decides where it names a
    distribution, except that a release file naming NexentaCore or
    illumian is never NexentaStor; /etc/release decides otherwise.
    Pure, and total: any text gives an answer."""
    rel_name, first = parse_release(release) if release is not None \
        else ("illumos", "")
    uname_name, uname_version = parse_uname_version(uname_v) \
        if uname_v is not None else (None, "")
    notes = []
    vetoed = any(word in first for word in _NOT_NEXENTASTOR)
    if uname_name is not None and not (vetoed and
                                       uname_name == "nexentastor"):
        name, by = uname_name, "uname -v"
        if release is not None and rel_name not in ("illumos", name):
            notes.append("uname -v says %s, %s says %s: uname -v "
                         "decides" % (name, RELEASE, rel_name))
    elif release is not None:
        name, by = rel_name, RELEASE if rel_name != "illumos" else ""
    else:
        name, by = "illumos", ""
    version = ""
    pattern = _RELEASE_VERSION.get(name)
    m = pattern.search(first) if pattern is not None else None
    if m is not None:
        version = next((g for g in m.groups() if g), "")
    if not version and uname_name == name:
        version = uname_version
    return Identity(name, first, version, by, tuple(notes))


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


def sd_flavour(info: PlatformInfo) -> str:
    """The sd.conf rules the detected platform's kernel follows, for
    `[sdconf] flavour = auto`: upstream on a distribution built from
    illumos-gate, nexenta on NexentaStor and where the distribution is
    not known (sdtune's rules before auto existed).  Pure."""
    return "upstream" if info.name in UPSTREAM_SD else "nexenta"


def detect(host: Host) -> PlatformInfo:
    """The platform, from the sources above; failures become notes."""
    path = host.sys_path(RELEASE)
    notes: List[str] = []
    release: Optional[str] = None
    if host.exists(path):
        try:
            raw = host.read_bytes(path, limit=1 << 20)
            release = raw.decode("utf-8", "replace")
        except SdtuneError as e:
            notes.append("%s unreadable (%s)" % (RELEASE, e.reason))
    else:
        notes.append("no %s" % RELEASE)
    uname_v: Optional[str] = None
    try:
        uname_v = output_of(host, "uname", ["-v"], "version")
    except SdtuneError as e:
        notes.append("uname -v failed (%s)" % e)
    found = identify(release, uname_v)
    notes.extend(found.notes)
    if not found.by and notes:
        notes[-1] += ": an unknown illumos distribution"
    kernel = _kernel_word(uname_v)
    info = PlatformInfo(found.name, found.release, kernel=kernel,
                        version=found.version, notes=notes)
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


def _kernel_word(text: Optional[str]) -> str:
    """uname -v's one word as reports show it ("" when unknown)."""
    if text is None:
        return ""
    word = text.strip().split("\n")[0].strip()
    return word if len(word) <= _MAX_LINE and word.isprintable() else ""


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
