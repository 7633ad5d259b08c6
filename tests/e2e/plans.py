# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Saved plans for the concurrency tests (tests/e2e, tests/ssh): several
valid plans made from the same sd.conf, each changing something else."""

import hashlib
import itertools
import json
import os

from sdtune.sdconf.edit import Setting, set_tunables

INTEL = "ATA     INTEL SSDSC2BA40"


def sd_conf(app):
    with open(os.path.join(app.root, "kernel", "drv", "sd.conf"), "rb") as f:
        return f.read()


def subset_plans(app, tmp_path, n, key=INTEL):
    """n saved plans, each setting a different subset of what the plan
    made now proposes: all valid alone, all made from the same sd.conf."""
    full = str(tmp_path / "full.json")
    assert app.sdtune("plan", "--save", full).returncode == 0
    doc = json.load(open(full))
    change = next(c for c in doc["changes"] if c["key"] == key)
    items = sorted(change["set"].items())
    subsets = [s for k in range(1, len(items) + 1)
               for s in itertools.combinations(items, k)][:n]
    assert len(subsets) == n, items
    text = sd_conf(app).decode("latin-1")
    plans = []
    for i, subset in enumerate(subsets):
        new = set_tunables(text, key, [Setting(t, v) for t, v in subset],
                           doc["flavour"])
        plan = dict(doc, changes=[{"key": key, "disks": change["disks"],
                                   "set": dict(subset), "why": []}],
                    new_text=new, new_sha256=hashlib.sha256(
                        new.encode("latin-1")).hexdigest())
        path = str(tmp_path / ("plan%d.json" % i))
        with open(path, "w") as f:
            json.dump(plan, f)
        plans.append(path)
    return plans
