# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune disks` end to end on every simulated appliance scenario: the
launcher, the configuration, the fake commands and libdiskmgt, checked
field by field against the simulator's own truth (tests/sim)."""

import io
import json
import os
import sys

import pytest

from sdtune.cli import main
from sdtune.host import RealHost

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)

from tests.sim.appliance import Appliance  # noqa: E402

SCENARIOS = sorted(n[:-5] for n in os.listdir(
    os.path.join(REPO, "tests", "sim", "scenarios")) if n.endswith(".json"))

# The in-use reason sdtune prints, by the simulator's kind of use.
REASON = {"pool": "member of pool %s", "log": "log device of pool %s",
          "l2cache": "cache device of pool %s", "spare": "spare of pool %s",
          "exported_pool": "member of exported pool %s",
          "mount": "mounted on %s", "vfstab": "in /etc/vfstab for %s",
          "swap": "swap device", "dump": "dump device",
          "unknown": "in-use state unknown"}


@pytest.fixture(scope="module")
def appliances(tmp_path_factory):
    built = {}
    for name in SCENARIOS:
        d = tmp_path_factory.mktemp(name)
        built[name] = Appliance.build(os.path.join(
            REPO, "tests", "sim", "scenarios", name + ".json"), str(d))
    return built


def sdtune(app, *args):
    return app.sdtune(*args)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_field_matches_the_appliance(appliances, scenario):
    app = appliances[scenario]
    proc = sdtune(app, "disks", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    got = {d["name"]: d for d in json.loads(proc.stdout)["disks"]}
    want = {d["name"]: d for d in app.expected_disks()}
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = got[name]
        for field in ("driver", "key", "serial", "firmware", "size_bytes",
                      "logical_block_bytes", "physical_block_bytes", "ssd",
                      "pool", "vdev_ashift", "instance"):
            assert g[field] == w[field], (name, field)
        assert g["sd"] == w["sd"], name
        reasons = g["rejected_reasons"]
        for use in w["in_use"]:
            text = REASON[use["kind"]]
            text = text % use["detail"] if "%s" in text else text
            assert any(r.startswith(text) for r in reasons), (name, use,
                                                              reasons)
        assert len(reasons) == len(w["in_use"]), (name, reasons)
        assert (g["in_use"] is None) == (not w["in_use"])


class CountingHost(RealHost):
    """A RealHost that counts the commands it runs, by name."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls = {}

    def run(self, name, args, timeout_s=None, stdin=None):
        self.calls[name] = self.calls.get(name, 0) + 1
        return super().run(name, args, timeout_s, stdin)


def count_commands(app):
    hosts = []

    def factory(root, cfg):
        h = CountingHost(root=root, commands=cfg.commands,
                         libraries=cfg.libraries)
        hosts.append(h)
        return h
    out = io.StringIO()
    assert main(["-R", app.root, "--config", app.config, "disks", "-H"],
                out=out, host_factory=factory) == 0
    return hosts[0].calls, out.getvalue()


def test_mdb_invocations_do_not_grow_with_the_number_of_disks(appliances):
    small, _ = count_commands(appliances["small-nexenta"])
    big, text = count_commands(appliances["jbod-240"])
    assert len(text.splitlines()) >= 240
    assert small == big                 # every command once, whatever N
    assert big["mdb"] == 2


def test_scripted_and_parsable_output(appliances):
    app = appliances["small-nexenta"]
    proc = sdtune(app, "disks", "-H", "-p")
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    intel = next(r for r in rows if r[0] == "c0t55CD2E404C0D8D0Ed0")
    assert intel[1] == "sd"                           # the driver
    assert intel[2] == "ATA     INTEL SSDSC2BA40"     # the exact key
    assert intel[4] == "0270"                         # firmware
    assert intel[5] == "400088457216"                 # exact bytes
    proc = sdtune(app, "disks")
    header = proc.stdout.splitlines()[0].split()
    assert header[:6] == ["NAME", "DRIVER", "KEY", "SERIAL", "FIRMWARE",
                          "SIZE"]
    assert '"ATA     INTEL SSDSC2BA40"' in proc.stdout


def test_failed_source_counts_every_disk_as_in_use(appliances, tmp_path):
    app = appliances["small-nexenta"]
    conf = tmp_path / "broken.conf"
    conf.write_text(open(app.config).read().replace(
        "zpool = %s/zpool" % app.bin, "zpool = /nonexistent/zpool"))
    proc = sdtune(app, "--config", str(conf), "disks", "-o", "json")
    assert proc.returncode == 0
    assert "sdtune: warning: zpool status:" in proc.stderr
    for d in json.loads(proc.stdout)["disks"]:
        assert "in-use state unknown: zpool status failed" in \
            d["rejected_reasons"]


def test_without_libdiskmgt_says_so_and_refuses_all(appliances, tmp_path):
    app = appliances["small-nexenta"]
    conf = tmp_path / "nolib.conf"
    conf.write_text(open(app.config).read().replace(
        "diskmgt = ", "diskmgt = /nonexistent"))
    proc = sdtune(app, "--config", str(conf), "disks", "-o", "json")
    assert proc.returncode == 0
    assert "libdiskmgt unavailable" in proc.stderr
    assert "diskinfo" in proc.stderr
    disks = json.loads(proc.stdout)["disks"]
    assert len(disks) == 9
    assert all("in-use state unknown: libdiskmgt unavailable" in
               d["rejected_reasons"] for d in disks)
