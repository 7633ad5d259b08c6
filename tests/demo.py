# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`make demo`: sdtune's whole job on the simulated appliance with emulated
drives, step by step, with each step's output.

The appliance (tests/sim) has three kinds of SATA SSD, each an emulated
drive (tests/emu) that really takes the I/O:

  c5t1d0  ACME DC512N      512-byte native pages, power-loss protection
  c5t2d0  ACME DC4K        4 KiB pages behind 512-byte sectors (512e),
                           power-loss protection (reports NV_SUP)
  c5t3d0  ACME HOME        a consumer SSD: 4 KiB pages, volatile cache
  c5t0d0  ACME DC4K        a second DC4K, in pool "fast", whose only vdev
                           was created with ashift 9

and runs: disks, certify (and a refused certify of the pool member),
plan, prove, apply, verify, a simulated reboot, verify, prove, audit and
rollback, then writes the HTML report of the records (kept as
/tmp/sdtune-demo-report.html) and shows one drive's record with its text
charts; two steps run over SSH (`sdtune --host`), through a real OpenSSH
server on 127.0.0.1 that serves the same appliance (tests/ssh/sshd.py).
Everything lives in a temporary directory, removed at the end; the
emulated drives are stopped whatever happens.
"""

import os
import shutil
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from emu.drive import EmulatedDrive  # noqa: E402
from ssh.sshd import Sshd  # noqa: E402
from tests.sim.appliance import Appliance  # noqa: E402

# Where the demo's report is kept: the demo's own directory is removed.
REPORT = "/tmp/sdtune-demo-report.html"
CERTIFY = ("\n[certify]\ninterval_s = 0.1\nmin_intervals = 6\n"
           "step_max_s = 3\n")


def ssd(name, instance, model, serial, nv_sup, device):
    return {"name": name, "instance": instance,
            "phys_path": "/pci@0,0/pci15d9,805@1f,2/disk@%d,0" % instance,
            "ctype": "sata", "ata_model": model, "rev": "0110",
            "serial": serial, "blocks": (1 << 30) // 512, "lbppbe": 0,
            "rotation_rate": 1, "nv_sup": nv_sup, "device_file": device}


class Demo:
    def __init__(self, work: str) -> None:
        self.work = work
        self.app = None
        self.t0 = time.monotonic()

    def sdtune(self, *args: str, config: str = None) -> int:
        shown = " ".join('"%s"' % a if " " in a else a for a in args)
        print("\n$ sdtune %s" % shown.replace(self.work + "/", ""))
        sys.stdout.flush()
        proc = self.app.sdtune(*args, config=config)
        sys.stdout.write(proc.stdout.replace(self.work + "/", ""))
        sys.stdout.write(proc.stderr.replace(self.work + "/", ""))
        if proc.returncode:
            print("(exit status %d)" % proc.returncode)
        return proc.returncode

    def say(self, text: str) -> None:
        print("\n# %s" % text)

    def run(self, drives) -> None:
        d512n, d4k, dhome = drives
        scenario = {
            "name": "demo", "flavour": "nexenta", "hostname": "demo",
            "sd_conf": "nexenta",
            "disks": [
                # The pool member's node leads to c5t2d0's drive: prove
                # (which writes nothing) reaches it through the pool's
                # disk, and certify refuses it before any write.
                ssd("c5t0d0", 0, "ACME DC4K", "DC4K-0000", True, d4k.path),
                ssd("c5t1d0", 1, "ACME DC512N", "DC512N-01", True,
                    d512n.path),
                ssd("c5t2d0", 2, "ACME DC4K", "DC4K-0001", True, d4k.path),
                ssd("c5t3d0", 3, "ACME HOME", "HOME-0001", False,
                    dhome.path)],
            "pools": [{"name": "fast", "vdevs": [
                {"type": "disk", "ashift": 9, "disks": ["c5t0d0"]}]}]}
        self.app = Appliance.build(scenario, os.path.join(self.work, "app"))
        with open(self.app.config, "a") as f:
            f.write(CERTIFY)
        self.say("The simulated appliance: four SSDs, one of them in pool "
                 "'fast' (ashift 9).")
        self.sdtune("disks")
        self.say("Certification refuses a disk in use, before any write.")
        self.sdtune("certify", "c5t0d0", "--confirm", "c5t0d0")
        self.say("Certify the three free SSDs (real I/O on the emulated "
                 "drives; their data is destroyed).")
        self.sdtune("certify", "c5t1d0", "c5t2d0", "c5t3d0", "--confirm",
                    "c5t1d0", "c5t2d0", "c5t3d0")
        self.sdtune("results")
        plan = os.path.join(self.work, "plan.json")
        self.say("The plan: one pair per model, each tunable with its "
                 "reason; what would be unsafe is held back.")
        self.sdtune("plan", "--save", plan)
        self.say("Before apply, what the kernel's own paths show (no byte "
                 "written, so the pool member too): 512-byte physical "
                 "blocks, and every cache flush reaches the drive.")
        self.sdtune("prove")
        self.sdtune("apply", plan, "--yes")
        self.say("sd reads sd.conf only when a disk attaches:")
        self.sdtune("verify")
        self.remote()
        self.say("Simulated reboot.")
        self.app.reboot()
        self.sdtune("verify")
        self.say("The proof, through the ioctls ZFS uses: the flushes of the "
                 "drives with power-loss protection no longer reach them "
                 "(microseconds, against the cost certify measured), and "
                 "the kernel reports the physical block size applied.")
        self.sdtune("prove")
        self.sdtune("disks")
        self.say("The audit: pool 'fast' was built with ashift 9 on drives "
                 "with 4 KiB pages.")
        self.sdtune("audit")
        self.sdtune("history")
        self.say("Roll the change back (a transaction too), then reboot.")
        self.sdtune("rollback", "--last", "--yes")
        self.app.reboot()
        self.sdtune("verify")
        self.pictures()
        print("\n# demo finished in %.0f s; cleaning up"
              % (time.monotonic() - self.t0))

    def pictures(self) -> None:
        """The records as pictures: the HTML report of every drive,
        copied where it outlives the demo, and one drive's record with
        its text charts, as a terminal shows them."""
        self.say("The records as pictures: one HTML page with the charts "
                 "of every drive (inline SVG, no script, nothing fetched).")
        self.sdtune("report")
        page = os.path.join(self.app.root, "var", "sdtune", "report.html")
        if os.path.exists(page):
            shutil.copyfile(page, REPORT)
            print("# open %s in a browser (a copy: the demo's directory is "
                  "removed at the end)" % REPORT)
        self.say("One drive's record in full, with text charts of what was "
                 "measured:")
        self.sdtune("results", "c5t2d0")

    def remote(self) -> None:
        """The same appliance seen from another machine: one ssh session,
        the engine serving files and commands there."""
        with Sshd(os.path.join(self.work, "sshd")) as sshd:
            config = sshd.sdtune_config(
                self.app.config, os.path.join(self.work, "remote.conf"))
            self.say("From an administrator's workstation, over SSH (the "
                     "appliance needs only the engine, no Python): the "
                     "same journal, the same answers.")
            self.sdtune("--host", sshd.alias, "history", config=config)
            self.say("prove runs the engine on the appliance, as certify "
                     "does: the same over SSH.")
            self.sdtune("--host", sshd.alias, "prove", "c5t2d0",
                        config=config)


def main() -> int:
    work = tempfile.mkdtemp(prefix="sdtune-demo-")
    drives = [EmulatedDrive.preset("512n", "nonvolatile"),
              EmulatedDrive.preset("512e", "nonvolatile"),
              EmulatedDrive.preset("512e", "volatile")]
    try:
        for d in drives:
            d.start()
        Demo(work).run(drives)
    finally:
        for d in drives:
            d.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
