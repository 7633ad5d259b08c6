# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The catalogue of audit findings: one stable id per kind of problem,
with its severity, a status sentence, the action (naming the exact
command) and a see-reference, in the manner of `zpool status`.  Text and
JSON output both come from Finding objects made here.  Pure.
"""

from dataclasses import dataclass
from typing import Dict

SEE = "sdtune(8), FINDINGS"


@dataclass(frozen=True)
class Kind:
    id: str
    severity: str          # high, medium, low, info
    title: str
    status: str            # a sentence with {placeholders}
    action: str            # names the command to run
    see: str


CATALOGUE: Dict[str, Kind] = {k.id: k for k in (
    Kind("SDT-1001", "high", "vdev ashift below the native sector",
         "Top-level vdev {vdev} of pool {pool} has ashift {ashift} "
         "({size} B) but {disk} writes in {native} B pages ({source}): "
         "every smaller write is a read-modify-write inside the drive, "
         "slower and wearing the flash.",
         "ashift is fixed when a vdev is created: only replacing the vdev "
         "helps. Add a new top-level vdev created with 'zpool add -o "
         "ashift={want} {pool} ...' (or 'zpool create -o ashift={want}' for "
         "a new pool) and move the data; 'zpool replace' cannot change it.",
         SEE),
    Kind("SDT-1002", "low", "vdev ashift above what its members need",
         "Top-level vdev {vdev} of pool {pool} has ashift {ashift} "
         "({size} B) while its largest member page is {native} B: small "
         "blocks take {size} B each.",
         "Only matters when space matters: a future vdev of these drives "
         "can use 'zpool add -o ashift={want} {pool} ...'.", SEE),
    Kind("SDT-1003", "medium", "spare or replacement that cannot replace",
         "{disk} ({key}) reports {native} B sectors to ZFS but pool {pool} "
         "has a top-level vdev with ashift {ashift}: 'zpool replace' or "
         "'attach' with it fails (EDOM).",
         "Do not raise this model's physical block size above {size} "
         "while it serves that vdev ({undo}), or replace the vdev.", SEE),
    Kind("SDT-2001", "low", "SSD without certification",
         "SSD {disk} ({key}) is in use and sdtune knows nothing about its "
         "native page size or cache: no certification record and no entry "
         "in the known-drives table.",
         "Certify a spare drive of the same model: 'sdtune certify DISK "
         "--confirm DISK' (destroys its data), then 'sdtune plan'.", SEE),
    Kind("SDT-2002", "medium", "certification older than the firmware",
         "{disk} ({key}) runs firmware {firmware} but was certified with "
         "{certified}: the page size and cache may have changed.",
         "Certify again: 'sdtune certify DISK --confirm DISK' on a spare "
         "of this model.", SEE),
    Kind("SDT-3001", "info", "sd.conf pair matches no disk",
         "sd-config-list pair {pair} ({key}) at line {line} matches no disk "
         "present.",
         "Nothing to do if the model will come back; else remove it: "
         "'sdtune sdconf unset /kernel/drv/sd.conf \"{key}\" --write'.",
         SEE),
    Kind("SDT-3002", "medium", "sd.conf pair matches several models",
         "sd-config-list pair {pair} ({key}) at line {line} applies to "
         "{count} different models: {models}.",
         "Write one pair per model with the exact 24-character key: "
         "'sdtune sdconf set /kernel/drv/sd.conf --vid V --pid P ...'.",
         SEE),
    Kind("SDT-3003", "medium", "sd.conf tunable the kernel ignores",
         "{detail}",
         "Fix the value: 'sdtune sdconf check /kernel/drv/sd.conf' shows "
         "every such place.", SEE),
    Kind("SDT-3004", "medium", "second sd-config-list",
         "{detail}",
         "Merge the pairs into the first list; 'sdtune sdconf check "
         "/kernel/drv/sd.conf' shows where.", SEE),
    Kind("SDT-3005", "medium", "sd.conf syntax error",
         "{detail}",
         "Fix the line: 'sdtune sdconf check /kernel/drv/sd.conf'.", SEE),
    Kind("SDT-3007", "medium", "nvme.conf setting the driver ignores",
         "{detail}",
         "Fix the value: 'sdtune sdconf check {conf}' shows every such "
         "place.", SEE),
    Kind("SDT-3008", "medium", "nvme.conf syntax error",
         "{detail}",
         "Fix the line: 'sdtune sdconf check {conf}'.", SEE),
    Kind("SDT-3006", "medium", "one sd.conf value for drives that "
         "disagree",
         "sd-config-list pair {pair} ({key}) at line {line} sets "
         "{tunable}:{value} for every drive under the key, but the models "
         "or certified serials it covers need different values: "
         "{members}.",
         "One pair holds one value for all of them (their ATA models "
         "differ only beyond the 16 characters of the key); {advice}: "
         "{command}.", SEE),
    Kind("SDT-4001", "info", "kernel values pending reboot",
         "{disk} still uses values from before the last sd.conf change: "
         "{detail}.",
         "Expected for disks in use: sd reads sd.conf only when a disk "
         "attaches. Reboot, or detach and attach the disk, then 'sdtune "
         "verify'.", SEE),
    Kind("SDT-4002", "medium", "sd ignores what sd.conf asks",
         "{disk}: {detail}.",
         "Change or remove the tunable: 'sdtune sdconf show "
         "/kernel/drv/sd.conf' explains each.", SEE),
    Kind("SDT-4003", "info", "NVMe namespace pending reboot",
         "{disk} still reports what nvme.conf gave before its last "
         "change: {detail}.",
         "Expected: nvme reads nvme.conf when a controller attaches, and "
         "'update_drv -vf nvme' does not re-attach one in use. Reboot, "
         "then 'sdtune verify'.", SEE),
    Kind("SDT-4004", "medium", "nvme ignores what nvme.conf asks",
         "{disk}: {detail}.",
         "Change or remove the entry: 'sdtune plan --driver nvme' writes "
         "a valid nvme-config-list triplet for the model.", SEE),
    Kind("SDT-6005", "high", "nvme.conf values lost at the next reboot",
         "{disk}: {detail}.",
         "Apply the change with 'sdtune apply --driver nvme', which makes "
         "it persistent on this platform, then 'sdtune verify'.", SEE),
    Kind("SDT-5001", "high", "cache-nonvolatile without evidence",
         "sd.conf sets cache-nonvolatile:true for {key} ({disks}) but "
         "nothing shows a power-loss-protected cache (no NV_SUP from a "
         "certification, not in the known-drives table): sd sends no cache "
         "flush, so a power loss can lose acknowledged writes and corrupt "
         "the pool.",
         "Unless the vendor documents power-loss protection for this "
         "model, remove it: 'sdtune sdconf unset /kernel/drv/sd.conf "
         "\"{key}\" cache-nonvolatile --write', then 'sdtune apply'.",
         SEE),
    Kind("SDT-5002", "high", "cache-nonvolatile over a volatile cache",
         "sd.conf sets cache-nonvolatile:true for {key} ({disks}), which "
         "covers a write cache known or measured to be volatile: "
         "{members}. sd sends no cache flush, so a power loss loses the "
         "acknowledged writes in that cache and can corrupt the pool.",
         "Remove it, whatever other drives under the key can do: "
         "'sdtune sdconf unset {conf} \"{key}\" cache-nonvolatile "
         "--write', then 'sdtune apply'.", SEE),
    Kind("SDT-5003", "high", "a drive whose flushes lie holds a pool's log "
         "or metadata",
         "{disk} is the {role} device of pool {pool}, and a witnessed power "
         "cut of its model and firmware lost writes its cache flush had "
         "acknowledged ({why}). ZFS relies on that flush for its intent "
         "log and metadata whatever sd.conf says: a power loss can lose "
         "synchronous writes and corrupt the pool.",
         "Replace it with a drive whose flushes held through a witnessed "
         "power cut, or move the {role} device off it ('zpool remove "
         "{pool} {disk}' where the pool allows it).", SEE),
    Kind("SDT-6001", "medium", "a copy of sd.conf the kernel does not read",
         "{path} is shadowed: the kernel reads only the first sd.conf on "
         "the module path, {effective}, so edits to {path} change "
         "nothing{disks}.",
         "Make changes with 'sdtune plan' and 'sdtune apply', which edit "
         "{effective}; compare with 'sdtune sdconf diff {effective} "
         "{path}', then remove {path} or keep it identical.", SEE),
    Kind("SDT-6007", "medium", "a copy of nvme.conf the kernel does not "
         "read",
         "{path} is shadowed: the kernel reads only the first nvme.conf "
         "on the module path, {effective}, so edits to {path} change "
         "nothing{disks}.",
         "Make changes with 'sdtune plan --driver nvme' and 'sdtune apply "
         "--driver nvme', which edit {effective}; compare with 'sdtune "
         "sdconf diff {effective} {path}', then remove {path} or keep it "
         "identical.", SEE),
    Kind("SDT-6002", "low", "sd.conf where illumos never looks",
         "{path} exists, but only Oracle Solaris 11 reads /etc/driver/drv: "
         "illumos ignores it.",
         "Move what it sets into {effective} with 'sdtune sdconf set' or "
         "'sdtune plan' and 'sdtune apply', then remove {path}.", SEE),
    Kind("SDT-6003", "high", "sd values lost at the next reboot",
         "{disk}: {detail}.",
         "Make the change persistent with 'sdtune apply' (on SmartOS it "
         "writes a boot module to the boot media), then 'sdtune verify'.",
         SEE),
    Kind("SDT-6006", "medium", "two boot modules deliver one driver.conf",
         "{loader} makes boot module {module} deliver {conf} ('{line}'), "
         "as sdtune's boot module does: which of the two the kernel keeps "
         "is not defined, and 'sdtune apply' refuses to add its own beside "
         "it.",
         "Move what {module}'s file sets into the driver.conf with "
         "'sdtune sdconf set' (or 'sdtune plan'), remove {module}'s lines "
         "from {loader}, then 'sdtune apply'.", SEE),
    Kind("SDT-6004", "medium", "another boot environment boots next",
         "{detail}.",
         "Boot the environment that has the change ('beadm activate "
         "{running}'), or make the change again after booting {next}.",
         SEE),
)}

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}


@dataclass(frozen=True)
class Finding:
    id: str
    subject: str             # the disk, pool/vdev, key or sd.conf line
    status: str
    action: str

    @property
    def kind(self) -> Kind:
        return CATALOGUE[self.id]

    @property
    def severity(self) -> str:
        return self.kind.severity

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity,
                "subject": self.subject, "status": self.status,
                "action": self.action, "see": self.kind.see}


def make(finding_id: str, subject: str, **values: object) -> Finding:
    kind = CATALOGUE[finding_id]
    return Finding(finding_id, subject, kind.status.format(**values),
                   kind.action.format(**values))


def is_problem(f: Finding) -> bool:
    """info findings are reported but do not make audit fail."""
    return f.severity != "info"
