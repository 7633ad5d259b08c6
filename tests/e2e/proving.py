# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The appliance `sdtune prove` is tested on (tests/e2e/test_prove_cli.py
on plain files, tests/emu/test_prove_emu.py on emulated drives): SATA
SSDs of one 512e model with a non-volatile cache, one of them in pool
"tank" (busy: it keeps its old values until reboot), one whose kernel
paths ignore sd.conf (the scenario's dkio_ignores_sdconf), and a
consumer SSD with a volatile cache; and the sd.conf pair a
certification of that model leads to."""

from typing import Dict, List, Optional

MODEL = "ACME DC4K"
KEY = "ATA     " + MODEL.ljust(16)
PAIR = {"physical-block-size": 4096, "cache-nonvolatile": True,
        "throttle-max": 32}
# name -> (model, serial, nv_sup, in pool, paths ignore sd.conf)
DISKS = [("c5t0d0", MODEL, "DC4K-0000", True, True, False),
         ("c5t1d0", MODEL, "DC4K-0001", True, False, False),
         ("c5t2d0", MODEL, "DC4K-0002", True, False, True),
         ("c5t3d0", "ACME HOME", "HOME-0001", False, False, False)]
POOL_DISK, FREE_DISK, IGNORING_DISK, HOME_DISK = (d[0] for d in DISKS)


def scenario(devices: Dict[str, Optional[str]], blocks: int) -> Dict:
    """The scenario, each disk's raw node a link to devices[name]."""
    disks: List[Dict] = []
    for i, (name, model, serial, nv_sup, _, ignores) in enumerate(DISKS):
        d = {"name": name, "instance": i,
             "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@%d,0" % i,
             "ctype": "sata", "ata_model": model, "rev": "0110",
             "serial": serial, "blocks": blocks, "lbppbe": 0,
             "rotation_rate": 1, "nv_sup": nv_sup,
             "device_file": devices.get(name)}
        if ignores:
            d["dkio_ignores_sdconf"] = True
        disks.append(d)
    return {"name": "prove", "flavour": "nexenta", "hostname": "prove",
            "sd_conf": "nexenta", "disks": disks,
            "pools": [{"name": "tank", "vdevs": [
                {"type": "disk", "ashift": 12,
                 "disks": [d[0] for d in DISKS if d[4]]}]}]}


def proofs(proc) -> Dict[str, Dict]:
    """`prove -o json` by disk name."""
    import json
    return {d["name"]: d for d in json.loads(proc.stdout)["disks"]}


def check(proof: Dict, tunable: str) -> Dict:
    return next(c for c in proof["checks"] if c["tunable"] == tunable)
