# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.


"""The change documents of sdtune's changes (the -o json of apply,
rollback and `sdconf set|unset` on the live file: report.change_json's
shape), built from what the domain knows: a finished transaction's
journal entry (entry_json), or for a dry run the files the platform
would write and whether the disks would need a reboot to see the change
(dry_run_json, reboot_required).  The commands print them."""

from typing import Optional, Sequence

from ..driverconf.parser import parse_bytes
from ..drivers import DEFAULT, DRIVERS
from ..tables import change_json
from .journal import sha256


def reboot_required(steps: Sequence[str],
                    verify: Optional[Sequence[dict]] = None, *,
                    new: bytes = b"", disks: Sequence = (),
                    flavour: str = "", driver: str = DEFAULT.name) -> bool:
    """Whether a change of the sd.conf the kernel reads needs a reboot
    to take full effect (the change document's "reboot_required").

    * The platform's activation `steps` lack update_drv (the kernel reads
      a SmartOS boot module, read-only: it reads the change at the next
      boot only): true.
    * After the change, `verify` (the journal entry's): true when any
      disk is "pending reboot".
    * Before it (a dry run, `verify` None), what that verify will say:
      sd reads sd-config-list only when a disk attaches, and the attached
      `disks` keep the values they attached with until the next boot
      (sdtune(8), "When sd reads sd.conf"); so true when any of them
      would be "pending reboot" against sd.conf `new`: its kernel values
      differ from those `new` gives it, as for a disk the change gives
      other values (a rollback to the values the disks still have needs
      none).  For nvme.conf (`driver` nvme) the same against what blkdev
      reports for each NVMe namespace: nvme reads nvme.conf when a
      controller attaches.
    """
    if "update_drv" not in steps:
        return True
    if verify is not None:
        return any(d.get("state") == "pending reboot" for d in verify)
    conf, rules = parse_bytes(new), DRIVERS[driver]
    return any(rules.verify_disk(conf, disk, flavour).state ==
               "pending reboot" for disk in disks if rules.attaches(disk))


def _sha(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else sha256(data)


def dry_run_json(how, diff: str, new: bytes, disks: Sequence,
                 flavour: str, driver: str = DEFAULT.name, **extra) -> dict:
    """The change document of a change only shown: the files the
    platform's Persistence `how` would write (after_sha256 the new
    contents' digest), whether the change would need a reboot, and a
    Triton compute node's boot module ("handoff")."""
    files = [{"path": f.path, "role": f.role,
              "before_sha256": _sha(f.old), "after_sha256": _sha(f.new)}
             for f in how.files if f.old != f.new]
    return change_json(False, dry_run=True, diff=diff, files=files,
                       reboot_required=reboot_required(
                           how.steps, new=new, disks=disks,
                           flavour=flavour, driver=driver),
                       handoff=how.handoff, **extra)


def entry_json(entry, **extra) -> dict:
    """The change document of a finished transaction: its journal
    entry's files, id and result; "handoff" is a Triton compute node's
    boot module for CNAPI (null elsewhere)."""
    files = [{"path": r.path, "role": r.role,
              "before_sha256": r.old_sha256, "after_sha256": r.new_sha256}
             for r in entry.file_records()]
    return change_json(True, diff=entry.diff, files=files,
                       reboot_required=reboot_required(entry.steps,
                                                       entry.verify),
                       journal_entry=entry.id, result=entry.result,
                       handoff=entry.handoff, **extra)
