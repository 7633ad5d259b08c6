"""Benchmark: time to a verdict per emulated drive, with sdtune's default
certification settings (all three phases), through the simulated
appliance.  Prints the verdict, its confidence and the wall time per
drive.  No peer tool decides this, so the reference printed beside each
time is the bare I/O time the plan needs at the drive's own speed
(steps x minimum intervals x interval): the rest is sdtune's overhead
and the steps that needed longer to become stable.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "plugin"))

from emu.drive import EmulatedDrive  # noqa: E402
from sdtune.certify.plan import Timing, build_plan  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

DRIVES = [("512n", 512, 512), ("512e", 512, 4096), ("4kn", 4096, 4096),
          ("8k", 512, 8192)]


def main() -> int:
    timing = Timing()
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    ok = True
    print("certify bench: default settings (interval %.2f s, >= %d "
          "intervals per step, all phases)" % (timing.interval_s,
                                               timing.min_intervals))
    print("  %-6s %-12s %6s %5s %-12s %8s %8s" % (
        "drive", "cache", "native", "conf", "verdict", "seconds",
        "floor"))
    for preset, logical, native in DRIVES:
        for cache in ("volatile", "nonvolatile"):
            with EmulatedDrive.preset(preset, cache) as d, \
                    tempfile.TemporaryDirectory() as tmp:
                path = d.start() if d.path is None else d.path
                app = Appliance.build({
                    "name": "bench", "flavour": "nexenta",
                    "sd_conf": "nexenta", "pools": [],
                    "disks": [{"name": "c5t0d0", "instance": 0,
                               "phys_path": "/pci@0,0/disk@0,0",
                               "ctype": "sata", "ata_model": "EMU BENCH",
                               "serial": "B1", "rev": "1.00",
                               "blocks": (1 << 30) // logical,
                               "logical_block": logical,
                               "rotation_rate": 1,
                               "nv_sup": cache == "nonvolatile",
                               "device_file": path}]}, tmp + "/app")
                t0 = time.monotonic()
                proc = subprocess.run(
                    [os.path.join(REPO, "bin", "sdtune"), "-R", app.root,
                     "--config", app.config, "certify", "c5t0d0",
                     "--confirm", "c5t0d0", "-o", "json"], env=env,
                    capture_output=True, text=True, check=False)
                took = time.monotonic() - t0
            if proc.returncode != 0:
                print("  %s %s: %s" % (preset, cache, proc.stderr.strip()))
                ok = False
                continue
            res = json.loads(proc.stdout)["results"][0]
            steps = len(build_plan(logical))
            floor = steps * (timing.min_intervals +
                             timing.warmup_intervals) * timing.interval_s
            right = res["native_sector_bytes"] == native and \
                res["cache"] == cache
            ok &= right
            print("  %-6s %-12s %6s %5.2f %-12s %8.1f %8.1f%s" % (
                preset, cache, res["native_sector_bytes"],
                res["sector_confidence"], res["cache"], took, floor,
                "" if right else "  WRONG"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
