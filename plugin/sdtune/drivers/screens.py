# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The screens every driver's proposals pass, written once: each returns
what it holds back (Held, with the reason) and what it warns about,
and never touches a plan.

* firmware_screen: a certification made with a firmware no installed
  disk of its key or model runs is not used (a firmware update can
  change what a drive needs) — `--allow-firmware-mismatch` uses it, with
  a warning;
* ashift_hold: a physical block larger than 2^ashift of a vdev a disk
  of the model sits in, or may sit in when pool membership is unknown,
  makes `zpool replace`/`attach` fail (ashift.py) —
  `--allow-ashift-mismatch` overrides;
* operator_value: a value the operator already wrote for the key or
  model is kept, and said.

The words a driver's own entries are named by (its .conf, "key" or
"model", "disks" or "namespaces") come from the driver.  Pure.
"""

from typing import (Callable, Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from ..inventory.disks import Disk
from ..records.group import certified_when, measured_firmware
from ..records.record import CertRecord
from .ashift import too_large
from .planning import Held, Overrides


class Screened(NamedTuple):
    """What a screen lets through, holds back and warns about."""

    usable: List[CertRecord]
    held: List[Held]
    warnings: List[str]


def _firmware(text: Optional[str]) -> str:
    return (text or "").strip()


def firmware_screen(key: str, records: Sequence[CertRecord],
                    disks: Sequence[Disk], entry: str,
                    holds: Callable[[CertRecord], Dict[str, str]],
                    options: Overrides) -> Screened:
    """The records of `key` (a key or model; `entry` says which, as
    "disks of this key") plan may use: not those made with a firmware
    that no installed disk of it runs, or that name none (when the
    installed firmware is known).  Each unit certified only with another
    firmware has what its latest record proposes (`holds`) held, naming
    both firmwares, or a warning that it is not used when it proposes
    nothing; --allow-firmware-mismatch uses them all, with a warning."""
    running = sorted({_firmware(d.firmware) for d in disks
                      if _firmware(d.firmware)})
    usable: List[CertRecord] = []
    stale: Dict[str, CertRecord] = {}
    for rec in records:
        # A record that names no firmware is of an unknown one: held like
        # one of another firmware (adversarial 2026-11-27, F3: an
        # imported record with "firmware": null bypassed the screen).
        if not running or _firmware(rec.firmware) in running:
            usable.append(rec)
            continue
        unit = rec.unit_serial or "#%d" % id(rec)
        if unit not in stale or stale[unit].time < rec.time:
            stale[unit] = rec
    current = {r.unit_serial for r in usable}
    held: List[Held] = []
    warnings: List[str] = []
    for unit, rec in sorted(stale.items()):
        if unit in current:
            continue    # the unit also has a record of a firmware in use
        what = "certification %s (serial %s) measured %s; the installed " \
            "%s run firmware %s" % (certified_when(rec), rec.serial or "?",
                                    measured_firmware(rec), entry,
                                    ", ".join(running))
        if options.allow_firmware_mismatch:
            warnings.append("%s: %s: used (--allow-firmware-mismatch)"
                            % (key, what))
            continue
        proposes = holds(rec)
        held += [Held(key, tunable, value, "%s: a firmware update can "
                      "change what the drive needs; certify it again, or "
                      "--allow-firmware-mismatch to use it" % what)
                 for tunable, value in proposes.items()]
        if not proposes:
            warnings.append("%s: %s: not used (certify it again, or "
                            "--allow-firmware-mismatch)" % (key, what))
    if options.allow_firmware_mismatch:
        usable = list(records)
    return Screened(usable, held, warnings)


def ashift_hold(size: int, setting: str, entry: str,
                bound: Optional[Tuple[int, str]],
                unknown_pools: Optional[str],
                options: Overrides) -> Optional[str]:
    """Why a physical block of `size` bytes (`setting`, as the .conf
    writes it) is held back for a key or model whose disks must fit
    `bound` (ashift.ashift_bound), or None.  `entry` names one of its
    disks ("a disk of this model")."""
    if options.allow_ashift_mismatch or size <= 512:
        return None
    if unknown_pools:
        return "pool membership and vdev ashift are unknown (%s): %s may " \
            "be in an ashift=9 vdev, where %s makes zpool replace/attach " \
            "fail; --allow-ashift-mismatch to override" % (
                unknown_pools, entry, setting)
    if too_large(size, bound):
        assert bound is not None
        return "%s: with %s, zpool replace/attach of this model into that " \
            "vdev fails (EDOM); --allow-ashift-mismatch to override" % (
                bound[1], setting)
    return None


def operator_value(key: str, tunable: str, written: str, value: str,
                   source: str, conf_name: str, noun: str
                   ) -> Tuple[Held, str]:
    """The hold and the warning for a `value` that differs from the one
    the operator `written` for the key or model (`noun`): the operator's
    is kept."""
    return (Held(key, tunable, value, "%s already sets %s:%s for this %s; "
                 "the operator's value is kept" % (conf_name, tunable,
                                                   written, noun)),
            "%s: keeping the operator's %s:%s (%s suggests %s)"
            % (key, tunable, written, source, value))
