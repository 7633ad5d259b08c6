# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""SmartOS and Triton: / is a ramdisk rebuilt from the platform image at
every boot, so an edit of /kernel/drv/sd.conf lasts until the next reboot.

What survives is a loader boot module: the whole effective sd.conf copied
to the boot media and four lines in loader.conf.local, after which the
kernel finds it at /system/boot/kernel/drv/sd.conf, first on the module
path, before any disk attaches (smartos-docs "modifying boot files").  A
boot module replaces the platform's sd.conf wholesale, so it always
starts from the full effective file.  The boot media is the USB key
(mounted at /mnt/usbkey, with its .joyliveusb marker) or the bootfs of
the pool SmartOS boots from (piadm: loader.conf.local in custom/ and in
the active boot-<stamp>/).  A Triton compute node boots over the network
and has no local media: its boot module is handed to the operator for
CNAPI's boot_modules, never written silently.

Once a boot module is loaded, /system/boot is read-only and shadows
/kernel: a change then takes effect at the next reboot only.

Reads the media and runs kstat (boot time) through the host.

nvme.conf (issue 18) is carried the same way by its own boot module,
nvme_conf, with its own loader block: each driver's file and block are
replaced alone.
"""

import base64
from dataclasses import dataclass, field
from typing import List, Optional

from ..errors import RefusedError, SdtuneError
from ..host import Host
from ..inventory.runner import BOOT_TIME_STAT, boot_time
from .base import FileChange, ModuleConflict, NextBoot, Persistence, Platform
from .detect import PlatformInfo
from .modpath import BOOTFS_KERNEL, ConfCopies

USBKEY_MOUNT = "/mnt/usbkey"
USBKEY_MARKER = ".joyliveusb"
END = "# END sdtune"


def system_boot_conf(driver: str) -> str:
    """Where the kernel finds `driver`'s boot module: first on the module
    path."""
    return BOOTFS_KERNEL + "/drv/%s.conf" % driver


def ramdisk_conf(driver: str) -> str:
    """The platform image's copy, on the ramdisk root."""
    return "/kernel/drv/%s.conf" % driver


def module_of(driver: str) -> str:
    """The loader's name for `driver`'s boot module (sd_conf_load=...)."""
    return "%s_conf" % driver


def begin_of(driver: str) -> str:
    """The first line of sdtune's loader block for `driver`: one block
    per driver, each replaced alone."""
    return "# BEGIN sdtune: %s.conf boot module, see sdtune(8)" % driver


SYSTEM_BOOT_CONF = system_boot_conf("sd")
RAMDISK_CONF = ramdisk_conf("sd")
MODULE = module_of("sd")
BEGIN = begin_of("sd")


@dataclass
class BootMedia:
    """Where the boot module and the loader lines go (system paths)."""

    root: str
    kind: str                       # "usb key", "boot pool"
    module_name: str                # X_name: the path on the media
    module_file: str
    loader_files: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"root": self.root, "kind": self.kind,
                "module_file": self.module_file,
                "loader_files": list(self.loader_files)}


def loader_lines(module_name: str, driver: str = "sd") -> List[str]:
    module = module_of(driver)
    return [begin_of(driver), '%s_load="YES"' % module,
            '%s_type="file"' % module, '%s_name="%s"' % (module, module_name),
            '%s_flags="name=%s"' % (module, ramdisk_conf(driver)), END]


def _unquote(value: str) -> str:
    value = value.split("#", 1)[0].strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' \
        else value


def loader_settings(text: str) -> dict:
    """name -> value of a loader.conf(.local)'s assignments."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = _unquote(value)
    return out


def with_loader_block(text: Optional[bytes], module_name: str,
                      shown: str, driver: str = "sd") -> bytes:
    """loader.conf.local with sdtune's block, idempotently: the block is
    replaced where it is, added at the end where it is not; every other
    line is kept byte for byte, its line end included (an operator's
    CRLF stays CRLF).  Refused, for the operator to merge: sd_conf_*
    lines of the operator's own outside the block, and another module
    that delivers the same file (two modules for one file: which one
    the kernel keeps is not sdtune's to guess)."""
    kept = (text or b"").decode("latin-1").splitlines(True)
    lines = [line.rstrip("\r\n") for line in kept]
    block = loader_lines(module_name, driver)
    begin, module = begin_of(driver), module_of(driver)
    if begin in lines:
        start = lines.index(begin)
        end = lines.index(END, start) if END in lines[start:] else start
        outside = lines[:start] + lines[end + 1:]
    else:
        start, outside = None, lines
    theirs = [n for n in outside if n.strip().startswith(module + "_")]
    if theirs:
        raise RefusedError("apply", shown, "it already defines boot module "
                           "%s outside sdtune's block ('%s'): remove those "
                           "lines or merge them" % (module, theirs[0].strip()))
    for other in other_modules("\n".join(outside), shown):
        if other.conf == ramdisk_conf(driver):
            raise RefusedError("apply", shown, "its boot module %s already "
                               "delivers %s ('%s'): remove it or merge it "
                               "with sdtune's" % (other.module, other.conf,
                                                  other.line))
    ours = [line + "\n" for line in block]
    if start is None:
        if kept and not kept[-1].endswith(("\n", "\r")):
            kept[-1] += "\n"
        new = kept + ours
    else:
        new = kept[:start] + ours + kept[end + 1:]
    return "".join(new).encode("latin-1")


def other_modules(text: str, loader: str) -> List[ModuleConflict]:
    """The lines of a loader file that make a module not sdtune's
    deliver sd.conf or nvme.conf, the files sdtune's modules deliver.
    Pure."""
    found = []
    for line in text.splitlines():
        for driver in ("sd", "nvme"):
            other = _delivers(line, ramdisk_conf(driver))
            if other and other != module_of(driver):
                found.append(ModuleConflict(loader, other, line.strip(),
                                            ramdisk_conf(driver)))
    return found


def _delivers(line: str, path: str) -> Optional[str]:
    """The module a loader line `X_flags="name=PATH ..."` makes deliver
    ``path``, else None."""
    key, sep, value = line.strip().partition("=")
    key = key.strip()
    if not sep or line.strip().startswith("#") or \
            not key.endswith("_flags"):
        return None
    words = _unquote(value).replace(",", " ").split()
    return key[:-len("_flags")] if "name=" + path in words else None


class SmartOSPlatform(Platform):
    """Standalone SmartOS and a Triton head node (boot media here) and a
    Triton compute node (handoff)."""

    def __init__(self, host: Host, info: PlatformInfo, copies: ConfCopies,
                 boot_media: Optional[str] = None) -> None:
        super().__init__(host, info, copies)
        self.configured_media = boot_media
        self._media: Optional[BootMedia] = None
        self._media_error = ""

    @property
    def compute_node(self) -> bool:
        return self.info.name == "triton-cn"

    @property
    def module_loaded(self) -> bool:
        """A boot module is what the kernel reads now (read-only)."""
        return self.effective == system_boot_conf(self.driver)

    # ---------------------------------------------------------- media

    def media(self) -> Optional[BootMedia]:
        """The boot media, or None (media_error says why)."""
        if self._media is None and not self._media_error:
            try:
                self._media = self._find_media()
            except SdtuneError as e:
                self._media_error = e.reason
        return self._media

    def _find_media(self) -> BootMedia:
        if self.compute_node:
            raise SdtuneError("find", "boot media", "a Triton compute node "
                              "boots over the network: its boot modules "
                              "are set in CNAPI")
        if self.configured_media:
            root = self.configured_media
        elif self.info.boot_pool_fs:
            root = "/" + self.info.boot_pool_fs
        else:
            root = USBKEY_MOUNT
        real = self.host.sys_path(root)
        if not self.host.is_dir(real):
            raise SdtuneError("find", root, "the boot media is not mounted "
                              "there (USB key: 'sdc-usbkey mount' on Triton, "
                              "'mount -F pcfs /dev/dsk/<key>p1 %s' on "
                              "SmartOS; or set [platform] boot_media)"
                              % USBKEY_MOUNT)
        boot = real + "/boot"
        try:
            stamp_dir = self.host.readlink(boot)
        except SdtuneError:
            stamp_dir = None
        if stamp_dir is not None:
            # piadm's pool layout: boot -> boot-<stamp>; custom/ is kept
            # across platform updates, each boot-<stamp>/ reads its own
            # loader.conf.local (often a link to custom's).
            stamp_dir = stamp_dir.rstrip("/").rsplit("/", 1)[-1]
            if not stamp_dir.startswith("boot-") or "/" in stamp_dir:
                raise SdtuneError("find", root + "/boot", "not a link to a "
                                  "boot-<stamp> directory")
            loaders = [root + "/custom/loader.conf.local"]
            active = "%s/%s/loader.conf.local" % (root, stamp_dir)
            if not (self.host.exists(self.host.sys_path(active)) and
                    self.host.same_file(self.host.sys_path(active),
                                        self.host.sys_path(loaders[0]))):
                loaders.append(active)
            name = "/custom/bootfs/kernel/drv/%s" % self.conf_name
            return BootMedia(root, "boot pool", name, root + name, loaders)
        if root == USBKEY_MOUNT and not self.host.exists(
                real + "/" + USBKEY_MARKER):
            raise SdtuneError("find", root, "no %s there: not a mounted "
                              "SmartOS USB key" % USBKEY_MARKER)
        name = "/boot/bootfs/kernel/drv/%s" % self.conf_name
        kind = "boot pool" if root != USBKEY_MOUNT else "usb key"
        return BootMedia(root, kind, name, root + name,
                         [root + "/boot/loader.conf.local"])

    def boot_module_conflicts(self) -> List[ModuleConflict]:
        media = self.media()
        if media is None:
            return []
        found = []
        for path in media.loader_files:
            text = self.read(path)
            if text is not None:
                found += other_modules(text.decode("latin-1"), path)
        return found

    def _media_or_refuse(self) -> BootMedia:
        media = self.media()
        if media is None:
            raise RefusedError("apply", "boot media", "%s; without it the "
                               "change would be lost at the next reboot"
                               % self._media_error)
        return media

    # ---------------------------------------------------------- change

    def persistence(self, base: bytes, new: bytes) -> Persistence:
        files: List[FileChange] = []
        steps: List[str] = []
        notes: List[str] = []
        handoff = None
        if not self.module_loaded:
            # The ramdisk copy: update_drv makes idle disks use it now.
            files.append(FileChange(self.effective, "%s (ramdisk)"
                                    % self.conf_name,
                                    self.read(self.effective), new,
                                    volatile=True))
            steps = self.activation([self.effective])
        else:
            notes.append("the kernel reads the boot module %s (read-only): "
                         "the change takes effect at the next reboot"
                         % system_boot_conf(self.driver))
        if self.compute_node:
            handoff = {"path": "kernel/drv/" + self.conf_name,
                       "type": "base64",
                       "content": base64.b64encode(new).decode("ascii")}
            notes.append("a Triton compute node boots over the network: set "
                         "this boot module in the node's CNAPI boot_modules "
                         "(bootParams) to keep the change after a reboot")
            return Persistence(files, steps, notes, handoff)
        media = self._media_or_refuse()
        files.append(FileChange(media.module_file, "boot module (%s)"
                                % media.kind, self.read(media.module_file),
                                new))
        for path in media.loader_files:
            old = self.read(path)
            updated = with_loader_block(old, media.module_name, path,
                                        self.driver)
            if updated != old:
                files.append(FileChange(path, "loader lines", old, updated))
        return Persistence(files, steps, notes)

    # ---------------------------------------------------------- reboot

    def next_boot(self) -> NextBoot:
        if self.compute_node:
            if self.module_loaded:
                return NextBoot("CNAPI boot module", self.read(
                    system_boot_conf(self.driver)))
            return self._platform_copy()
        media = self.media()
        if media is None:
            return NextBoot("boot media", None, "the boot media cannot be "
                            "read: %s" % self._media_error)
        # The first loader file is the one every boot image reads (the
        # key's, or custom/'s on a boot pool).
        text = self.read(media.loader_files[0])
        settings = loader_settings((text or b"").decode("latin-1"))
        module_name = module_of(self.driver)
        configured = \
            settings.get(module_name + "_load", "").upper() == "YES" \
            and settings.get(module_name + "_name") == media.module_name
        module = self.read(media.module_file)
        if configured and module is not None:
            return NextBoot(media.module_file, module, newer=True)
        return self._platform_copy()

    def _platform_copy(self) -> NextBoot:
        """No boot module: the next boot reads the platform image's
        driver.conf.  Its text is not on the system, but an unchanged
        ramdisk copy is it: a copy changed since boot is not."""
        image = "the platform image's %s" % self.conf_name
        if self.module_loaded:
            return NextBoot(image, None, "no boot module is configured on "
                            "the boot media: the next boot reads %s" % image)
        edited = self.edited_since_boot()
        ramdisk = ramdisk_conf(self.driver)
        if edited is None:
            return NextBoot(ramdisk, self.read(ramdisk))
        return NextBoot(image, None, edited)

    def edited_since_boot(self) -> Optional[str]:
        """Why the ramdisk copy is not the platform image's, or None
        when it is unchanged since boot."""
        ramdisk = ramdisk_conf(self.driver)
        real = self.host.sys_path(ramdisk)
        if not self.host.exists(real):
            return None
        boot = boot_time(self.host)
        if boot is None:
            return ("the boot time cannot be read (kstat %s), so whether "
                    "%s changed since boot is unknown" % (BOOT_TIME_STAT,
                                                          ramdisk))
        if self.host.stat(real).st_mtime >= boot:
            return ("%s (ramdisk) was changed since boot and no boot module "
                    "carries it: the next boot reads the platform image's "
                    "%s" % (ramdisk, self.conf_name))
        return None

    def shadowed_edits(self) -> List[str]:
        """With a boot module loaded, the platform image's ramdisk copy
        is shadowed by design; it matters only when someone edited it
        since boot (the old habit, which now changes nothing)."""
        out = list(self.copies.shadowed)
        ramdisk = ramdisk_conf(self.driver)
        if self.module_loaded and ramdisk in out and \
                self.edited_since_boot() is None:
            out.remove(ramdisk)
        return out

    def warnings(self) -> List[str]:
        out = []
        if not self.compute_node and self.media() is None:
            out.append("boot media not found (%s): a change cannot be made "
                       "persistent" % self._media_error)
        return out

    def describe(self):
        doc = super().describe()
        media = None if self.compute_node else self.media()
        doc["boot_media"] = media.to_json() if media else None
        return doc
