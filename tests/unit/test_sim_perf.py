"""The simulated 240-disk JBOD head answers every command well under a
second, through its DIR/bin wrappers as sdtune runs them."""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.sim.appliance import Appliance  # noqa: E402

LIMIT = 1.0
VIDPID = ("::walk sd_state | ::grep '.!=0' | ::print struct sd_lun un_sd | "
          "::print struct scsi_device sd_inq | ::print struct scsi_inquiry "
          "inq_vid inq_pid\n")


@pytest.fixture(scope="module")
def jbod(tmp_path_factory):
    return Appliance.build("jbod-240", str(tmp_path_factory.mktemp("jbod")))


@pytest.mark.parametrize("cmd,args,stdin,lines", [
    ("mdb", ["-k"], "::sd_state\n", 50000),
    ("mdb", ["-k"], VIDPID, 484),
    ("mdb", ["-k"], "::sd_state\n" + VIDPID, 50000),
    ("iostat", ["-En"], "", 1210),
    ("diskinfo", ["-Hp"], "", 242),
    ("zpool", ["status"], "", 259),
    ("zdb", ["-C", "data"], "", 2500),
])
def test_jbod_commands_are_fast(jbod, cmd, args, stdin, lines):
    start = time.monotonic()
    p = jbod.run(cmd, *args, stdin=stdin)
    elapsed = time.monotonic() - start
    assert p.returncode == 0 and p.stderr == b""
    assert p.stdout.count(b"\n") >= lines
    assert elapsed < LIMIT, "%s %s took %.2f s" % (cmd, args, elapsed)


def test_jbod_shape(jbod):
    exp = jbod.expected_disks()
    assert len(exp) == 242
    p = jbod.run("mdb", "-k", stdin="::sd_state -s\n")
    out = p.stdout.decode()
    assert "256 entries in sd_state table" in out
    assert "Processed 242 UN softstate entries" in out
    pools = {d["pool"] for d in exp}
    assert pools == {"rpool", "data", None}
    assert sum(1 for d in exp if d["in_use"] and
               d["in_use"][0]["kind"] == "exported_pool") == 12
