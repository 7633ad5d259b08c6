# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The illumos platform the simulated appliance runs, and what of sd.conf
(and nvme.conf: every driver .conf of kernel.CONF_DRIVERS is kept the
same way) survives its reboot (shared/spec/platforms.md Parts 1 and 2).

Scenario JSON may carry a top-level ``platform`` object (see
tests/sim/README.md, "Platforms"); normalize() checks it.  Its
``release`` (boot-archive platforms) names a real release in
tests/fixtures/platform, say ``nexentastor-3.1.6``: /etc/release and
uname -v then print that system's own text (NexentaStor 3 and 4 never
say "NexentaStor" in /etc/release; scenarios nexentastor-3 and -4).
Two kinds of platform are modelled:

* SmartOS and Triton (``smartos``, ``triton-hn``, ``triton-cn``): / is a
  ramdisk made from the platform image, so every reboot restores the
  root except the persistent trees, and /system/boot is rebuilt from the
  loader's boot modules (a USB key, a boot pool, or a compute node's
  CNAPI ``boot_modules``).
* Boot-archive platforms (OmniOS, OpenIndiana, NexentaStor, other
  illumos, and a scenario without ``platform``): the kernel boots from
  the boot archive's copy of sd.conf, which ``bootadm update-archive``
  (and init, on a clean reboot) refreshes; boot environments keep their
  own copies of the module-path sd.conf files.

The module also answers the platform's own commands: uname, bootparams,
bootadm and beadm, and the pool ``bootfs`` property for ``zpool list``.
Runs no commands.
"""

import base64
import hashlib
import os
import re
import shutil
import time
from typing import Dict, List, Optional, Tuple

from . import cliopt
from . import kernel
from . import scenario as scn

PLATFORMS = ("smartos", "triton-hn", "triton-cn", "omnios", "openindiana",
             "nexentastor", "illumos")
RAMDISK = ("smartos", "triton-hn", "triton-cn")
DEFAULT_STAMP = "20240627T000746Z"
# When the simulated platform image was built (2024-06-27 00:07:46 UTC).
IMAGE_TIME = 1719446866
# The datasets a SmartOS global zone keeps across a reboot (zones/opt,
# zones/var, zones/usbkey, the pools under /zones; /mnt holds the
# mounted boot media).
PERSISTENT = ("opt", "var", "usbkey", "zones", "mnt")
# devfs and sdev: the kernel makes them at boot, the ramdisk image does
# not carry them, so the simulator keeps them as they are.
KERNEL_MADE = ("dev", "devices")
# Where an extra sd.conf may be put by a scenario: the other module-path
# directories, and Oracle Solaris' /etc/driver/drv, which illumos never
# reads.  (/system/boot is the loader's, /kernel the scenario's sd_conf.)
EXTRA_PATHS = ("/platform/i86pc/kernel/drv/sd.conf",
               "/usr/kernel/drv/sd.conf", "/etc/driver/drv/sd.conf")
ARCHIVE = "/platform/i86pc/amd64/boot_archive"
IMAGE_DIR = "platform-image"
MEDIA_DIR = "usbkey-media"
USBKEY = "/mnt/usbkey"
BOOTFS = "/zones/boot"
# A real release a scenario may name (platform.release): the fixture
# tests/fixtures/platform/<release> (.release: /etc/release, .uname-v:
# uname -v, byte for byte as a real system printed them; README.md there
# names the sources).  A fixture without .release writes no /etc/release.
RELEASE_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
    "platform")
_RELEASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_BE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}$")
_STAMP_RE = re.compile(r"^\d{8}T\d{6}Z$")
_ACTIVE = ("NR", "N", "R", "")
_COPYRIGHT = {
    "smartos": "              Copyright 2010 Sun Microsystems, Inc.  All "
               "Rights Reserved.\n              Copyright 2024 MNX Cloud, "
               "Inc.  All Rights Reserved.\n                        Use is "
               "subject to license terms.\n",
    "omnios": "  Copyright (c) 2012-2017 OmniTI Computer Consulting, Inc.\n"
              "  Copyright (c) 2017-2024 OmniOS Community Edition "
              "(OmniOSce) Association.\n  All rights reserved. Use is "
              "subject to licence terms.\n",
    "openindiana": "        OpenIndiana Project, part of The Illumos "
                   "Foundation (C) 2010-2023\n                        Use "
                   "is subject to license terms.\n",
    "nexentastor": "  Copyright (c) 2019 Nexenta by DDN.  All rights "
                   "reserved.\n  Use is subject to license terms.\n",
    "illumos": "  Copyright 2023 Peter Tribble.\n  Use is subject to "
               "license terms.\n",
}
_FIRST_LINE = {
    "omnios": "  OmniOS v11 r151046l",
    "openindiana": "             OpenIndiana Hipster 2023.10 (powered by "
                   "illumos)",
    "nexentastor": "  NexentaStor 5.3.0.1 (illumos)",
    "illumos": "  Tribblix m34",
}
BOOTADM_FULL = ("bootadm: write to %s failed: No space left on device\n"
                % ARCHIVE)
_BOOTADM_USAGE = ("USAGE:\n\tbootadm update-archive [-vn] [-R altroot] "
                  "[-p platform]\n\tbootadm list-archive [-R altroot] "
                  "[-p platform]\n")
_BEADM_USAGE = ("Usage:\n\tbeadm subcommand cmd_options\n\n\tsubcommands:"
                "\n\n\tbeadm activate beName\n\tbeadm create beName\n"
                "\tbeadm list [-H] [beName]\n")


# ---------------------------------------------------------------- scenario

def normalize(raw, s: Dict) -> Dict:
    """The scenario's ``platform`` object with its defaults; ``s`` is the
    rest of the scenario, normalised (the pool boot needs pool zones).
    Absent: name None, one boot environment "default"."""
    if raw is None:
        return {"name": None, "boot": None, "stamp": None,
                "boot_environments": [{"name": "default", "active": "NR"}],
                "extra_conf": {}, "release": None}
    if not isinstance(raw, dict):
        raise scn.ScenarioError("platform: an object")
    unknown = set(raw) - {"name", "boot", "stamp", "boot_environments",
                          "extra_conf", "release"}
    if unknown:
        raise scn.ScenarioError("platform: unknown keys %s"
                                % sorted(unknown))
    name = raw.get("name")
    if name not in PLATFORMS:
        raise scn.ScenarioError("platform.name must be one of %s"
                                % ", ".join(PLATFORMS))
    p = {"name": name, "boot": None, "stamp": None,
         "boot_environments": [], "extra_conf": {}, "release": None}
    ramdisk = name in RAMDISK
    if "release" in raw:
        p["release"] = _release(name, raw["release"])
    if "boot" in raw and name not in ("smartos", "triton-hn"):
        raise scn.ScenarioError("platform.boot: only smartos and triton-hn "
                                "boot from a USB key or a pool")
    if name in ("smartos", "triton-hn"):
        p["boot"] = raw.get("boot", "usb")
        if p["boot"] not in ("usb", "pool"):
            raise scn.ScenarioError("platform.boot must be usb or pool")
        if p["boot"] == "pool" and not any(
                q["name"] == "zones" and not q["exported"]
                for q in s["pools"]):
            raise scn.ScenarioError("platform.boot: pool boot needs the "
                                    "imported pool zones")
    if "stamp" in raw and not ramdisk:
        raise scn.ScenarioError("platform.stamp: only SmartOS and Triton "
                                "have a platform stamp")
    if ramdisk:
        p["stamp"] = raw.get("stamp", DEFAULT_STAMP)
        if not isinstance(p["stamp"], str) or \
                not _STAMP_RE.match(p["stamp"]):
            raise scn.ScenarioError("platform.stamp must look like %s"
                                    % DEFAULT_STAMP)
    if "boot_environments" in raw and ramdisk:
        raise scn.ScenarioError("platform.boot_environments: SmartOS and "
                                "Triton have no boot environments")
    if not ramdisk:
        p["boot_environments"] = _bes(raw.get(
            "boot_environments", [{"name": name, "active": "NR"}]))
    extra = raw.get("extra_conf", {})
    if not isinstance(extra, dict):
        raise scn.ScenarioError("platform.extra_conf: an object "
                                "{path: sd_conf}")
    for path, conf in extra.items():
        if path not in EXTRA_PATHS:
            raise scn.ScenarioError("platform.extra_conf: %r is not one of "
                                    "%s" % (path, ", ".join(EXTRA_PATHS)))
        p["extra_conf"][path] = scn.sd_conf(
            conf, "platform.extra_conf[%s]" % path)
    return p


def _release(name: str, release) -> str:
    """platform.release: a fixture of this platform (its name begins
    with the platform's, NexentaCore and Tribblix are ``illumos``)."""
    where = "platform.release"
    if name in RAMDISK:
        raise scn.ScenarioError("%s: SmartOS and Triton print their "
                                "platform stamp (platform.stamp)" % where)
    if not isinstance(release, str) or not _RELEASE_ID.match(release):
        raise scn.ScenarioError("%s: a fixture name" % where)
    found = [k for k in ("release", "uname-v") if os.path.exists(
        os.path.join(RELEASE_DIR, "%s.%s" % (release, k)))]
    if not found:
        raise scn.ScenarioError("%s: no fixture %r in "
                                "tests/fixtures/platform" % (where, release))
    if name != "illumos" and not release.startswith(name + "-"):
        raise scn.ScenarioError("%s: %r is not a %s release"
                                % (where, release, name))
    return release


def release_fixture(release: str, kind: str) -> Optional[str]:
    """A real release's /etc/release (kind "release") or uname -v
    ("uname-v") text from tests/fixtures/platform, None when the source
    had none."""
    path = os.path.join(RELEASE_DIR, "%s.%s" % (release, kind))
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def _release_fixture(p: Dict, kind: str) -> Optional[str]:
    """The scenario's named release: release_fixture."""
    return release_fixture(p["release"], kind)


def _bes(raw) -> List[Dict]:
    where = "platform.boot_environments"
    if not isinstance(raw, list) or not raw:
        raise scn.ScenarioError("%s: a non-empty list" % where)
    out = []
    for be in raw:
        if not isinstance(be, dict) or set(be) - {"name", "active"}:
            raise scn.ScenarioError("%s: entries are {name, active}"
                                    % where)
        name = be.get("name")
        if not isinstance(name, str) or not _BE_RE.match(name):
            raise scn.ScenarioError("%s: bad BE name %r" % (where, name))
        active = be.get("active", "")
        if active not in _ACTIVE:
            raise scn.ScenarioError("%s: %s: active must be NR, N, R or "
                                    "empty" % (where, name))
        out.append({"name": name, "active": active})
    names = [be["name"] for be in out]
    if len(set(names)) != len(names):
        raise scn.ScenarioError("%s: duplicate names" % where)
    for flag, what in (("N", "running"), ("R", "active on reboot")):
        if sum(flag in be["active"] for be in out) != 1:
            raise scn.ScenarioError("%s: exactly one BE must be %s (%s)"
                                    % (where, what, flag))
    return out


def of(state: Dict) -> Dict:
    return state["scenario"]["platform"]


def is_ramdisk(state: Dict) -> bool:
    return of(state)["name"] in RAMDISK


def has_command(state: Dict, cmd: str) -> bool:
    """Whether the platform has the command at all: bootparams only on
    SmartOS and Triton, beadm everywhere else."""
    if cmd == "bootparams":
        return is_ramdisk(state)
    if cmd == "beadm":
        return not is_ramdisk(state)
    return True


def release_text(p: Dict) -> Optional[str]:
    """/etc/release, or None for a scenario without a platform."""
    name = p["name"]
    if name is None:
        return None
    if p.get("release"):
        return _release_fixture(p, "release")
    if name in RAMDISK:
        return ("                       SmartOS %s x86_64\n" % p["stamp"] +
                _COPYRIGHT["smartos"] +
                "                   See joyent_%s for assembly date and "
                "time.\n" % p["stamp"])
    return _FIRST_LINE[name] + "\n" + _COPYRIGHT[name]


# ---------------------------------------------------------------- files

def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="latin-1") as f:
        f.write(text)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _copy(src: str, dst: str) -> None:
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    elif os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst)


def read_confs(root: str) -> Dict[str, Optional[str]]:
    """Every module-path driver .conf (sd.conf, nvme.conf) under
    ``root``: path -> text or None."""
    out: Dict[str, Optional[str]] = {}
    for path in kernel.ALL_CONF_PATHS:
        try:
            with open(root + path, encoding="latin-1") as f:
                out[path] = f.read()
        except (FileNotFoundError, NotADirectoryError):
            out[path] = None
    return out


def _write_confs(root: str, confs: Dict[str, Optional[str]]) -> None:
    for path, text in confs.items():
        if text is None:
            _remove(root + path)
        else:
            _write(root + path, text)


def _loader_conf(p: Dict) -> str:
    lines = ['console="text,ttya,ttyb,ttyc,ttyd"\n', 'os_console="text"\n',
             'ttya-mode="115200,8,n,1,-"\n']
    if p["name"] == "smartos":
        lines.append('smartos="true"\n')
    else:
        lines.append('headnode="true"\n')
    if p["boot"] == "pool":
        lines.append('triton_bootpool="zones"\n')
    return "".join(lines)


def _install_media(state: Dict) -> None:
    """The USB key (mounted at /mnt/usbkey) or the boot pool's bootfs
    (mounted at /zones/boot), as a fresh install leaves them."""
    p = of(state)
    root = kernel.root_of(state)
    stamp = p["stamp"]
    if p["boot"] == "usb":
        key = root + USBKEY
        _write(key + "/.joyliveusb", "")
        _write(key + "/boot/loader.conf", _loader_conf(p))
        os.makedirs(key + "/platform/i86pc/kernel/amd64", exist_ok=True)
    elif p["boot"] == "pool":
        bootfs = root + BOOTFS
        _write(bootfs + "/boot-%s/loader.conf" % stamp, _loader_conf(p))
        os.makedirs(bootfs + "/custom", exist_ok=True)
        os.symlink("boot-%s" % stamp, bootfs + "/boot")
        _write(bootfs + "/platform-%s/etc/version/platform" % stamp,
               stamp + "\n")
        os.symlink("platform-%s" % stamp, bootfs + "/platform")
        _write(bootfs + "/etc/version/boot", stamp + "\n")
        if p["name"] == "triton-hn":
            _write(bootfs + "/.joyliveusb", "")


def install(state: Dict) -> None:
    """At build, after rootfs.build(): /etc/release, the extra sd.conf
    copies, the boot media and platform image (SmartOS, Triton) or the
    boot archive and boot environments (the others)."""
    from . import rootfs
    p = of(state)
    root = kernel.root_of(state)
    release = release_text(p)
    if release is not None:
        _write(root + "/etc/release", release)
    for path, conf in p["extra_conf"].items():
        _write(root + path, rootfs.sd_conf_text(conf, state["flavour"]))
    plat: Dict = {"bootadm_fail": False, "calls": [], "boot_modules": [],
                  "usbkey_mounted": p["boot"] == "usb", "archive": {},
                  "bes": [], "running": None, "next": None}
    state["plat"] = plat
    if is_ramdisk(state):
        if p["name"] in ("smartos", "triton-hn"):
            _write(root + "/usbkey/config",
                   "hostname=%s\n" % state["scenario"]["hostname"])
        _install_media(state)
        image = os.path.join(state["dir"], IMAGE_DIR)
        _remove(image)
        skip = set(PERSISTENT + KERNEL_MADE)
        shutil.copytree(root, image, symlinks=True,
                        ignore=lambda d, names: [
                            n for n in names if d == root and n in skip])
        # The image was built before the platform stamp's date, long
        # before any boot: its files keep that time on the ramdisk, and a
        # file changed since boot is newer than the boot time (kstat).
        built = IMAGE_TIME
        for d, dirs, files in os.walk(image):
            for n in dirs + files:
                os.utime(os.path.join(d, n), (built, built),
                         follow_symlinks=False)
        return
    confs = read_confs(root)
    plat["archive"] = dict(confs)
    for i, be in enumerate(p["boot_environments"]):
        plat["bes"].append(_be_record(be["name"], confs, confs,
                                      1719446400 + i * 86400))
        if "N" in be["active"]:
            plat["running"] = be["name"]
        if "R" in be["active"]:
            plat["next"] = be["name"]


def _be_record(name: str, confs: Dict, archive: Dict, created: int) -> Dict:
    h = hashlib.sha256(("be/" + name).encode()).hexdigest()
    return {"name": name, "created": created,
            "uuid": "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20],
                                        h[20:32]),
            "confs": dict(confs), "archive": dict(archive)}


# ---------------------------------------------------------------- reboot

def reboot(state: Dict, clean: bool = True) -> None:
    """Reboot the appliance.  ``clean``: init runs (the boot archive is
    updated first); otherwise a panic or power loss."""
    # The kernel's boot time (kstat unix:0:system_misc:boot_time): whole
    # seconds, the one before the first file written after the boot.
    state["plat"]["boot_time"] = int(time.time())
    if is_ramdisk(state):
        _restore_image(state)
        _load_boot_modules(state)
        kernel.boot(state)
        return
    plat = state["plat"]
    if clean:
        _, err = update_archive(state)
        if err:
            kernel.log(state, ["svc.startd: [ID 652011 daemon.warning] "
                               + err.rstrip("\n")])
    if plat["next"] != plat["running"]:
        _switch_be(state)
    kernel.boot(state, archive=plat["archive"])


def _restore_image(state: Dict) -> None:
    """/ is a ramdisk: everything but the persistent trees comes back
    from the platform image.  path_to_inst is the kernel's instance
    record (rewritten as disks attach), so it is kept."""
    root = kernel.root_of(state)
    image = os.path.join(state["dir"], IMAGE_DIR)
    keep = set(PERSISTENT + KERNEL_MADE)
    try:
        with open(root + "/etc/path_to_inst", encoding="latin-1") as f:
            path_to_inst: Optional[str] = f.read()
    except FileNotFoundError:
        path_to_inst = None
    for name in os.listdir(root):
        if name not in keep:
            _remove(os.path.join(root, name))
    for name in sorted(os.listdir(image)):
        if name not in keep:
            _copy(os.path.join(image, name), os.path.join(root, name))
    if path_to_inst is not None:
        _write(root + "/etc/path_to_inst", path_to_inst)


def media_root(state: Dict) -> Optional[str]:
    """Where the boot media's files are now: the mounted key, the key
    kept in DIR while unmounted, or the boot pool's bootfs."""
    p = of(state)
    if p["boot"] == "usb":
        if state["plat"]["usbkey_mounted"]:
            return kernel.root_of(state) + USBKEY
        return os.path.join(state["dir"], MEDIA_DIR)
    if p["boot"] == "pool":
        return kernel.root_of(state) + BOOTFS
    return None


def resolve(media: str, path: str) -> Optional[str]:
    """``path`` (relative to the media root, "/" being that root) as a
    file on this machine, symlinks followed inside the media; None if it
    does not exist there."""
    parts = [c for c in path.split("/") if c and c != "."]
    cur: List[str] = []
    links = 0
    while parts:
        c = parts.pop(0)
        if c == "..":
            if cur:
                cur.pop()
            continue
        cand = os.path.join(media, *cur, c)
        if os.path.islink(cand):
            links += 1
            if links > 40:
                return None
            target = os.readlink(cand)
            if target.startswith("/"):
                cur = []
            parts = [x for x in target.split("/") if x and x != "."] + parts
            continue
        cur.append(c)
    full = os.path.join(media, *cur)
    return full if os.path.isfile(full) else None


def parse_loader_conf(text: str) -> Dict[str, str]:
    """loader.conf variables: name=value, value optionally quoted, "#"
    comments, blank lines; a later assignment wins."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r'\s*([A-Za-z0-9_.-]+)\s*=\s*(.*)$', line)
        if not m:
            continue
        value = m.group(2).strip()
        if value.startswith('"'):
            end = value.find('"', 1)
            value = value[1:end if end > 0 else len(value)]
        else:
            value = re.split(r"[\s#]", value, 1)[0]
        out[m.group(1)] = value
    return out


def boot_modules_of(conf: Dict[str, str]) -> List[Tuple[str, str]]:
    """(media file, /system/boot name) of every X_load=YES, X_type=file
    module, in the order of their X_load lines."""
    out = []
    for key in conf:
        if not key.endswith("_load"):
            continue
        mod = key[:-len("_load")]
        if conf[key].lower() != "yes" or \
                conf.get(mod + "_type", "").lower() != "file":
            continue
        src = conf.get(mod + "_name", "/boot/" + mod)
        dest = src
        for word in re.split(r"[\s,]+", conf.get(mod + "_flags", "")):
            if word.startswith("name="):
                dest = word[len("name="):]
        out.append((src, dest))
    return out


def _loader_local(state: Dict) -> Optional[str]:
    """The loader.conf.local the loader reads, or None."""
    media = media_root(state)
    if media is None:
        return None
    p = of(state)
    where = "/boot/loader.conf.local" if p["boot"] == "usb" else \
        "/boot-%s/loader.conf.local" % p["stamp"]
    path = resolve(media, where)
    if path is None:
        return None
    with open(path, encoding="latin-1") as f:
        return f.read()


def _load_boot_modules(state: Dict) -> None:
    """Rebuild /system/boot from what the loader loads."""
    root = kernel.root_of(state)
    system_boot = root + "/system/boot"
    _remove(system_boot)
    os.makedirs(system_boot, exist_ok=True)
    lines = []
    if of(state)["name"] == "triton-cn":
        for m in state["plat"]["boot_modules"]:
            _write_bytes(system_boot + "/" + m["path"].lstrip("/"),
                         base64.b64decode(m["content"]))
        return
    text = _loader_local(state)
    if text is None:
        return
    media = media_root(state)
    for src, dest in boot_modules_of(parse_loader_conf(text)):
        found = resolve(media, src)
        target = os.path.normpath("/" + dest).lstrip("/")
        if found is None or not target:
            lines.append("loader: can't load file '%s': No such file or "
                         "directory" % src)
            continue
        os.makedirs(os.path.dirname(os.path.join(system_boot, target)),
                    exist_ok=True)
        shutil.copyfile(found, os.path.join(system_boot, target))
    kernel.log(state, lines)


def _write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def set_boot_modules(state: Dict, modules: List[Dict]) -> None:
    """A Triton compute node's CNAPI bootParams.boot_modules."""
    if of(state)["name"] != "triton-cn":
        raise ValueError("boot_modules are a Triton compute node's boot "
                         "parameters")
    checked = []
    for m in modules:
        if not isinstance(m, dict) or set(m) != {"path", "type",
                                                 "content"}:
            raise ValueError("a boot module is {path, type, content}")
        parts = m["path"].strip("/").split("/")
        if not m["path"].strip("/") or ".." in parts:
            raise ValueError("bad boot module path %r" % m["path"])
        if m["type"] != "base64":
            raise ValueError("boot module type must be base64")
        try:
            base64.b64decode(m["content"], validate=True)
        except (ValueError, TypeError) as e:
            raise ValueError("boot module %s: bad base64" % m["path"]) \
                from e
        checked.append(dict(m))
    state["plat"]["boot_modules"] = checked


def _move_all(src: str, dst: str) -> None:
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        shutil.move(os.path.join(src, name), os.path.join(dst, name))


def set_usbkey_mounted(state: Dict, mounted: bool) -> None:
    """Mount the USB key at /mnt/usbkey or unmount it (its files are
    then kept in DIR/usbkey-media)."""
    if of(state)["boot"] != "usb":
        raise ValueError("this appliance does not boot from a USB key")
    plat = state["plat"]
    if plat["usbkey_mounted"] == mounted:
        return
    key = kernel.root_of(state) + USBKEY
    kept = os.path.join(state["dir"], MEDIA_DIR)
    if mounted:
        _move_all(kept, key)
        os.rmdir(kept)
    else:
        _move_all(key, kept)
    plat["usbkey_mounted"] = mounted


# ---------------------------------------------------------------- archive

def update_archive(state: Dict) -> Tuple[bool, str]:
    """Copy every module-path driver .conf of the root into the archive:
    (changed, error text)."""
    plat = state["plat"]
    if plat["bootadm_fail"]:
        return False, BOOTADM_FULL
    confs = read_confs(kernel.root_of(state))
    changed = confs != plat["archive"]
    plat["archive"] = confs
    return changed, ""


def _be(state: Dict, name: str) -> Optional[Dict]:
    for be in state["plat"]["bes"]:
        if be["name"] == name:
            return be
    return None


def _switch_be(state: Dict) -> None:
    """Boot the BE activated for the next boot: the running BE keeps its
    files, the other BE's files (and archive) become the root's."""
    plat = state["plat"]
    root = kernel.root_of(state)
    cur = _be(state, plat["running"])
    nxt = _be(state, plat["next"])
    cur["confs"] = read_confs(root)
    cur["archive"] = dict(plat["archive"])
    _write_confs(root, nxt["confs"])
    plat["archive"] = dict(nxt["archive"])
    plat["running"] = nxt["name"]


def boot_environments(state: Dict) -> List[Dict]:
    """Per BE: name, uuid, active (NR, N, R or ""), mountpoint, space,
    policy, created (epoch)."""
    plat = state["plat"]
    out = []
    for i, be in enumerate(plat["bes"]):
        running = be["name"] == plat["running"]
        active = ("N" if running else "") + \
            ("R" if be["name"] == plat["next"] else "")
        out.append({"name": be["name"], "uuid": be["uuid"],
                    "active": active, "mountpoint": "/" if running else "",
                    "space": 2516582400 if running else 8388608 * (i + 1),
                    "policy": "static", "created": be["created"]})
    return out


def activate_be(state: Dict, name: str) -> Tuple[str, str, int]:
    if _be(state, name) is None:
        return "", ("%s does not exist or appear to be a valid BE.\nPlease "
                    "check that the name of the BE provided is correct.\n"
                    % name), 1
    state["plat"]["next"] = name
    return "Activated successfully\n", "", 0


def create_be(state: Dict, name: str) -> Tuple[str, str, int]:
    """A clone of the running BE: its files as they are now, its boot
    archive as it is (stale or not)."""
    plat = state["plat"]
    if not _BE_RE.match(name):
        return "", "Unable to create %s.\nInvalid BE name.\n" % name, 1
    if _be(state, name) is not None:
        return "", ("Unable to create %s.\nBE %s already exists. Please "
                    "choose a different BE name.\n" % (name, name)), 1
    created = max(be["created"] for be in plat["bes"]) + 3600
    plat["bes"].append(_be_record(
        name, read_confs(kernel.root_of(state)), plat["archive"], created))
    return "Created successfully\n", "", 0


def bootfs(state: Dict, pool: str) -> str:
    """The pool's bootfs property: the SmartOS boot pool's zones/boot,
    the BE activated for the next boot on rpool, else "-"."""
    p = of(state)
    if p["boot"] == "pool" and pool == "zones":
        return "zones/boot"
    if not is_ramdisk(state) and pool == "rpool":
        return "rpool/ROOT/" + state["plat"]["next"]
    return "-"


# ---------------------------------------------------------------- commands

def uname_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("uname", argv, "amnprsvi")
    except cliopt.GetoptError as e:
        return "", e.message + "usage:\tuname [-snrvmapiX]\n", 1
    if operands:
        return "", "usage:\tuname [-snrvmapiX]\n", 1
    name = of(state)["name"]
    named = _release_fixture(of(state), "uname-v") \
        if of(state).get("release") else None
    if named is not None:
        version = named.strip()
    elif name in RAMDISK:
        version = "joyent_" + of(state)["stamp"]
    elif name == "omnios":
        version = "omnios-r151046-0d49ad5c1b"
    else:
        version = "illumos-2023.10"
    fields = {"s": "SunOS", "n": state["scenario"]["hostname"],
              "r": "5.11", "v": version, "m": "i86pc", "p": "i386",
              "i": "i86pc"}
    flags = {c for c, _ in opts}
    if "a" in flags:
        flags |= set("snrvmpi")
    chosen = [fields[c] for c in "snrvmpi" if c in flags] or ["SunOS"]
    return " ".join(chosen) + "\n", "", 0


def bootparams_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    p = of(state)
    lines = ["boot-file=/platform/i86pc/kernel/amd64/unix",
             "console=text"]
    if p["name"] == "smartos":
        lines.append("smartos=true")
    elif p["name"] == "triton-hn":
        lines.append("headnode=true")
        if p["boot"] == "pool":
            lines.append("triton_bootpool=zones")
    elif p["name"] == "triton-cn":
        lines.append("rabbitmq=guest:guest:10.99.99.20:5672")
    return "".join(line + "\n" for line in lines), "", 0


def _record(state: Dict, cmd: str, argv: List[str]) -> None:
    state["plat"]["calls"].append([cmd] + list(argv))


def bootadm_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    """bootadm update-archive [-v] [-R root]; the caller saves state."""
    _record(state, "bootadm", argv)
    if is_ramdisk(state):
        return "", "bootadm: not supported on this platform\n", 1
    if not argv or argv[0] != "update-archive":
        if argv and argv[0] in ("list-archive", "install-bootloader",
                                "list-menu", "set-menu"):
            return "", "bootadm: sim: %s is not modelled\n" % argv[0], 1
        return "", _BOOTADM_USAGE, 1
    try:
        opts, operands = cliopt.getopt("bootadm", argv[1:], ":vR:p:")
    except cliopt.GetoptError as e:
        # bootadm's own message (usr/src/cmd/boot/bootadm/message.h).
        return "", ("bootadm: invalid option or missing option argument: "
                    "-%s\n" % e.opt), 1
    if operands:
        return "", _BOOTADM_USAGE, 1
    if state["uid"] != 0:
        return "", "bootadm: you must be root to run this command\n", 1
    for c, v in opts:
        if c == "R":
            root = kernel.root_of(state)
            if os.path.realpath(v) != os.path.realpath(root):
                return "", ("bootadm: %s: not the root of this appliance "
                            "(%s)\n" % (v, root)), 1
        if c == "p" and v != "i86pc":
            return "", "bootadm: invalid platform %s\n" % v, 1
    changed, err = update_archive(state)
    if err:
        return "", err, 1
    return ("updating %s\n" % ARCHIVE if changed else ""), "", 0


def beadm_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    """beadm list [-H] [BE], activate BE, create BE; the caller saves
    the state after activate and create (recorded), never after list: a
    read-only command must not race a concurrent update_drv's save."""
    if not argv:
        return "", _BEADM_USAGE, 1
    sub, rest = argv[0], argv[1:]
    if sub == "list":
        return _beadm_list(state, rest)
    if sub in ("activate", "create"):
        _record(state, "beadm", argv)
        if len(rest) != 1 or rest[0].startswith("-"):
            return "", _BEADM_USAGE, 1
        if state["uid"] != 0:
            return "", ("Unable to %s %s.\nYou have insufficient privileges "
                        "to execute this command.\n" % (sub, rest[0])), 1
        return (activate_be if sub == "activate" else create_be)(
            state, rest[0])
    if sub in ("destroy", "mount", "unmount", "rename", "rollback"):
        return "", "beadm: sim: %s is not modelled\n" % sub, 1
    return "", "Invalid command: %s\n%s" % (sub, _BEADM_USAGE), 1


def _beadm_list(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    try:
        opts, operands = cliopt.getopt("beadm", argv, "H")
    except cliopt.GetoptError as e:
        return "", e.message + _BEADM_USAGE, 1
    bes = boot_environments(state)
    if len(operands) > 1:
        return "", _BEADM_USAGE, 1
    if operands:
        bes = [be for be in bes if be["name"] == operands[0]]
        if not bes:
            return "", ("be_list: %s does not exist or appear to be a "
                        "valid BE.\nPlease check that the name of the BE "
                        "provided is correct.\n" % operands[0]), 1
    if opts:
        return "".join("%s;%s;%s;%s;%d;%s;%d\n" % (
            be["name"], be["uuid"], be["active"], be["mountpoint"],
            be["space"], be["policy"], be["created"]) for be in bes), "", 0
    from . import zfs
    rows = [["BE", "Active", "Mountpoint", "Space", "Policy", "Created"]]
    for be in bes:
        rows.append([be["name"], be["active"] or "-",
                     be["mountpoint"] or "-", zfs.nicenum(be["space"]),
                     be["policy"], time.strftime(
                         "%Y-%m-%d %H:%M", time.gmtime(be["created"]))])
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    return "".join(" ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                   + "\n" for r in rows), "", 0


def kstat_main(state: Dict, argv: List[str]) -> Tuple[str, str, int]:
    """kstat -p unix:0:system_misc:boot_time, the one statistic sdtune
    reads (its -p format: name, TAB, value)."""
    stat = "unix:0:system_misc:boot_time"
    if argv != ["-p", stat]:
        return "", "kstat: only '-p %s' is simulated\n" % stat, 2
    return "%s\t%d\n" % (stat, state["plat"]["boot_time"]), "", 0


def saves(cmd: str, argv: List[str]) -> bool:
    """Whether the command changes the state (fakecmd then saves it)."""
    if cmd == "bootadm":
        return True
    return cmd == "beadm" and argv[:1] in (["activate"], ["create"])
