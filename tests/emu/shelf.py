# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A shelf of emulated drives behind one simulated appliance (issue 16):
N EmulatedDrive (tests/emu/drive.py), one appliance disk per drive, for
tests and benchmarks of certifying many drives at once.

    with Shelf(standard_mix(24), scale=SCALE, channels=CHANNELS) as shelf:
        shelf.app.sdtune("certify", *shelf.names, "--confirm",
                         *shelf.names, "-o", "json")
        shelf.units[0].native, shelf.units[0].cache     # the truth
    assert not shelf.left                               # nothing survived

A unit is a kind of drive, (preset, cache): "512n", "512e" or "4kn"
(tests/emu/drive.py PRESETS) with a "volatile" or "nonvolatile" cache.
Units of one kind share an ata_model, as drives of one model do, so they
share an sd-config-list key; units of another kind differ in the model.
The cache is part of the kind because a real model does not come with
and without power-loss protection: drives of one preset that differ in
the cache would put every model in dispute.  `odd` gives a unit the
model of another kind (a 512n drive sold as the 4kn model), the case a
shelf exists to catch.  Disks are c5t<i>d0, instance i, serial
SHELF<i>; a nonvolatile unit reports NV_SUP, as in tests/emu/
test_certify.py.

Drives are started one after another from the calling thread (about
0.05 s each: 24 in 1.2 s), not from worker threads: nbdkit and nbdfuse
die with the thread that started them (PR_SET_PDEATHSIG).  Every drive
is stopped whatever happens, also when a start fails; stop() records in
`left` what survived (drive.leftovers: processes by PID, mounts, temp
dirs), empty when all is gone.

The default model parameters, SCALE and CHANNELS, are the ones measured
for issue 16 (see their comment): slow enough that 24 drives at once
leave the machine idle, fast enough that one drive certifies in well
under a minute.
"""

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

try:
    from .drive import PRESETS, EmulatedDrive, leftovers
except ImportError:     # imported as a top-level module
    from drive import PRESETS, EmulatedDrive, leftovers  # type: ignore

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402

# Measured for issue 16 on the 2-vCPU test machine: at scale 300 an
# aligned 4 KiB random write takes 10-11 ms and a 4 KiB read 8.7 ms, so a
# one-channel drive saturates near 90-100 writes or 115 reads a second,
# and 24 of them at their deepest queue ask for at most ~2,750 I/O a
# second in all (bench_shelf.py prints it): half of what the machine can
# push through FUSE, and the queue-depth phase of 24 drives at once
# measured the same IOPS as one drive alone.  One drive with the default
# phases certifies in ~52 s, most of it the queue-depth phase; 24 at once
# took 1.3x that.  One channel: two would double the peak (or, at half
# the scale, the sector phase's time).
SCALE = 300
CHANNELS = 1
SIZE = 1 << 30
KINDS = ("512n", "512e", "4kn")
CACHES = ("volatile", "nonvolatile")
# The standard shelf cycles through these, so that any prefix of 4 or
# more units has both native sizes and both caches.
STANDARD_CYCLE = (("512n", "volatile"), ("4kn", "nonvolatile"),
                  ("512e", "volatile"), ("512n", "nonvolatile"),
                  ("4kn", "volatile"), ("512e", "nonvolatile"))

Kind = Tuple[str, str]


def standard_mix(n: int) -> List[Kind]:
    """n units of STANDARD_CYCLE in turn: 512-native and 4K-native (4kn
    and 512e), volatile and non-volatile caches."""
    return [STANDARD_CYCLE[i % len(STANDARD_CYCLE)] for i in range(n)]


def model_of(preset: str, cache: str) -> str:
    """The ata_model every unit of this kind reports."""
    # At most 16 characters: the model is the key's product field.
    return "EMU %s%s" % (preset.upper(),
                         " PLP" if cache == "nonvolatile" else "")


def sd_key(model: str) -> str:
    """The sd-config-list key of a SATA disk of this ata_model."""
    return "ATA     " + model[:16].ljust(16)


@dataclass(frozen=True)
class Unit:
    """One drive on the shelf and its disk on the appliance."""

    index: int
    name: str           # c5t<i>d0
    serial: str
    preset: str
    cache: str
    model: str          # ata_model: model_of(kind), or another's if odd
    logical: int
    native: int
    drive: EmulatedDrive

    @property
    def odd(self) -> bool:
        """Whether the unit reports another kind's model."""
        return self.model != model_of(self.preset, self.cache)


def _disk(unit: Unit, path: str, size: int) -> Dict:
    return {"name": unit.name, "instance": unit.index,
            "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@%d,0" % unit.index,
            "ctype": "sata", "ata_model": unit.model, "rev": "1.00",
            "serial": unit.serial, "blocks": size // unit.logical,
            "logical_block": unit.logical, "lbppbe": 0,
            "rotation_rate": 1, "nv_sup": unit.cache == "nonvolatile",
            "device_file": path}


class Shelf:
    """N emulated drives and a simulated appliance with one disk each.

    mix: one (preset, cache) per unit; odd: unit index -> the (preset,
    cache) kind whose model that unit reports instead of its own; scale,
    channels, size and overrides: sdemu parameters of every drive
    (tests/emu/sdemu.c); phases: the [certify] phases written to the
    appliance's configuration (None: sdtune's defaults); certify: further
    [certify] keys; directory: where the appliance is built (None: a
    temporary directory, removed by stop())."""

    def __init__(self, mix: Sequence[Kind],
                 odd: Optional[Mapping[int, Kind]] = None,
                 scale: float = SCALE, channels: int = CHANNELS,
                 size: int = SIZE, phases: Optional[str] = None,
                 certify: Optional[Mapping[str, object]] = None,
                 directory: Optional[str] = None,
                 **overrides: object) -> None:
        odd = dict(odd or {})
        for preset, cache in list(mix) + list(odd.values()):
            if preset not in KINDS or cache not in CACHES:
                raise ValueError("unknown kind %r (presets %s; caches %s)"
                                 % ((preset, cache), ", ".join(KINDS),
                                    ", ".join(CACHES)))
        bad = [i for i in odd if not 0 <= i < len(mix)]
        if bad:
            raise ValueError("odd units %s: no such unit" % bad)
        self.size = size
        self.phases = phases
        self.certify = dict(certify or {})
        self._own_dir = directory is None
        self.directory = directory
        self.app: Optional[Appliance] = None
        self.left: List[str] = []
        self._made: List[Tuple[List[int], str]] = []
        self.units: List[Unit] = []
        for i, (preset, cache) in enumerate(mix):
            logical, native = PRESETS[preset]
            model = model_of(*odd.get(i, (preset, cache)))
            drive = EmulatedDrive.preset(preset, cache, scale=scale,
                                         channels=channels, size=size,
                                         **overrides)
            self.units.append(Unit(i, "c5t%dd0" % i, "SHELF%02d" % i,
                                   preset, cache, model, logical, native,
                                   drive))

    @property
    def names(self) -> List[str]:
        """The disk names, in unit order."""
        return [u.name for u in self.units]

    @property
    def pids(self) -> List[int]:
        """Every live nbdkit and nbdfuse of the shelf."""
        return [pid for u in self.units for pid in u.drive.pids]

    def unit(self, name: str) -> Unit:
        """The unit of a disk name (KeyError if none)."""
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(name)

    def start(self) -> "Shelf":
        """Start every drive and build the appliance; on any failure
        stop what was started and raise."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_one(self, unit: Unit) -> None:
        unit.drive.start()
        assert unit.drive.tmpdir is not None
        # Recorded at once, so that stop() can prove this drive gone even
        # if another drive's start fails.
        self._made.append((unit.drive.pids, unit.drive.tmpdir))

    def _start(self) -> None:
        for unit in self.units:
            self._start_one(unit)
        if self.directory is None:
            self.directory = tempfile.mkdtemp(prefix="sdtune-shelf-")
        scenario = {"name": "shelf", "flavour": "nexenta",
                    "hostname": "shelf", "sd_conf": "nexenta",
                    "pools": [],
                    "disks": [_disk(u, str(u.drive.path), self.size)
                              for u in self.units]}
        self.app = Appliance.build(scenario,
                                   os.path.join(self.directory, "app"))
        keys = dict(self.certify)
        if self.phases is not None:
            keys["phases"] = self.phases
        if keys:
            with open(self.app.config, "a", encoding="utf-8") as f:
                f.write("\n[certify]\n" + "".join(
                    "%s = %s\n" % kv for kv in keys.items()))

    def stop(self) -> List[str]:
        """Stop every drive, remove the appliance if the shelf made its
        directory; return (and keep in `left`) what survived.  Safe to
        call twice and after a failed start."""
        failure: Optional[BaseException] = None
        for unit in self.units:
            # One drive that cannot be stopped must not keep the others
            # running: the first failure is raised once all were tried.
            try:
                unit.drive.stop()
            except BaseException as e:  # noqa: B902
                failure = failure or e
        if self._own_dir and self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        self.left = [x for pids, tmp in self._made
                     for x in leftovers(pids, [tmp])]
        if failure is not None:
            raise failure
        return self.left

    def __enter__(self) -> "Shelf":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
