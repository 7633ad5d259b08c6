# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The simulated appliance: build it from a scenario, then change it the
way an operator or the hardware would (API and CLI).

    from tests.sim.appliance import Appliance
    app = Appliance.build("tests/sim/scenarios/small-nexenta.json", DIR)
    app.root, app.bin, app.config      # DIR/root, DIR/bin, DIR/sdtune.conf
    app.reboot(); app.hotplug("c1t0d0"); app.set_busy("c1t0d0", False)
    app.expected_disks()               # the simulator's own truth
    app.reboot(clean=False); app.activate_be("omnios-1")   # platforms

    python3 tests/sim/appliance.py build SCENARIO DIR
    python3 tests/sim/appliance.py reboot DIR [--crash]
    python3 tests/sim/appliance.py hotplug DIR NAME
    python3 tests/sim/appliance.py busy DIR NAME on|off
    python3 tests/sim/appliance.py expected DIR      (JSON)

Everything lives in DIR: state.json (the kernel model), root/ (the
system root for ``sdtune -R``), bin/ (the fake commands), diskmgt.tsv
and, when the fake libdiskmgt builder is available, lib/libdiskmgt.so;
on SmartOS and Triton also platform-image/ (the ramdisk's pristine
root) and usbkey-media/ (the USB key's files while it is unmounted).
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
from typing import Dict, List, Optional, Tuple

if __name__ == "__main__" and not __package__:
    # tests/sim must not be on the path: its platform.py would shadow the
    # standard library's (uuid imports it).
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") !=
                   os.path.dirname(os.path.abspath(__file__))]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    # Run as a script: make the package importable for the relative
    # imports below.
    __import__("tests.sim")
    __package__ = "tests.sim"

from . import cmdserver  # noqa: E402
from . import kernel  # noqa: E402
from . import platform  # noqa: E402
from . import rootfs  # noqa: E402
from . import scenario as scn  # noqa: E402
from . import sdio  # noqa: E402
from ..harness import sdtuneserver  # noqa: E402

SIM_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(SIM_DIR))
SCENARIO_DIR = os.path.join(SIM_DIR, "scenarios")
FAKECMD = os.path.join(SIM_DIR, "fakecmd.py")
COMMANDS = {"mdb": "mdb", "diskinfo": "diskinfo", "iostat": "iostat",
            "zpool": "zpool", "zdb": "zdb", "update_drv": "update_drv",
            "devfsadm": "devfsadm", "sdio": "sdio",
            "bootparams": "bootparams", "uname": "uname",
            "bootadm": "bootadm", "beadm": "beadm", "kstat": "kstat",
            "nvmeadm": "nvmeadm"}
FIXED_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
_OWNED = ("root", "bin", "lib", "state.json", "diskmgt.tsv",
          "sdtune.conf", platform.IMAGE_DIR, platform.MEDIA_DIR)


def scenario_path(name: str) -> str:
    """A scenario file path, or the shipped scenario of that name."""
    if os.path.exists(name):
        return name
    shipped = os.path.join(SCENARIO_DIR, name + ".json")
    if os.path.exists(shipped):
        return shipped
    raise FileNotFoundError("no scenario %s" % name)


def _build_library(directory: str) -> Dict:
    """Build the colleague's fake libdiskmgt if its builder exists."""
    target = os.path.join(directory, "lib", "libdiskmgt.so")
    try:
        from .libdiskmgt import build as builder  # type: ignore
    except ImportError as e:
        return {"built": False, "note": "no libdiskmgt builder (%s)" % e}
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        builder.build_library(target)
        nvpair = builder.nvpair_path
        if callable(nvpair):
            nvpair = nvpair()
        if not nvpair or not os.path.exists(target):
            raise RuntimeError("builder gave no library or no nvpair path")
        return {"built": True, "diskmgt": target, "nvpair": str(nvpair),
                "note": ""}
    except Exception as e:  # the builder is someone else's code
        return {"built": False,
                "note": "libdiskmgt builder failed: %s: %s"
                        % (type(e).__name__, e)}


class Appliance:
    """A simulated appliance in a directory."""

    def __init__(self, directory: str) -> None:
        self.dir = os.path.abspath(directory)
        self.root = os.path.join(self.dir, "root")
        self.bin = os.path.join(self.dir, "bin")
        self.config = os.path.join(self.dir, "sdtune.conf")
        self.lib = os.path.join(self.dir, "lib")
        self.sd_conf = os.path.join(self.root, "kernel", "drv", "sd.conf")

    # -------------------------------------------------------- lifecycle

    @classmethod
    def build(cls, scenario, directory: str) -> "Appliance":
        """Create the appliance for ``scenario`` (a dict, a path or the
        name of a shipped scenario) in ``directory``, and boot it."""
        if isinstance(scenario, str):
            scenario = scenario_path(scenario)
        s = scn.load(scenario)
        app = cls(directory)
        os.makedirs(app.dir, exist_ok=True)
        existing = os.listdir(app.dir)
        if existing:
            if "state.json" not in existing:
                raise FileExistsError("%s is not empty" % app.dir)
            for name in _OWNED:
                path = os.path.join(app.dir, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                elif os.path.lexists(path):
                    os.unlink(path)
        rootfs.build(app.root, s)
        state = kernel.new_state(s, app.dir)
        platform.install(state)
        platform.reboot(state)
        state["library"] = _build_library(app.dir)
        kernel.save(state)
        app._write_bin(state)
        app._write_config(state)
        return app

    @classmethod
    def load(cls, directory: str) -> "Appliance":
        app = cls(directory)
        if not os.path.exists(os.path.join(app.dir, "state.json")):
            raise FileNotFoundError("%s is not a simulated appliance"
                                    % app.dir)
        return app

    def _write_bin(self, state: Dict) -> None:
        os.makedirs(self.bin, exist_ok=True)
        # Through this process's fork server when it runs (cmdserver.py:
        # the same process per command, without a Python start each).
        server = cmdserver.ensure_started()
        script = (server.runner(sys.executable) if server else
                  [sys.executable])
        for cmd in COMMANDS:
            if not platform.has_command(state, cmd):
                # bootparams exists only on SmartOS/Triton, beadm only
                # off them: no wrapper, as on the real system.
                continue
            path = os.path.join(self.bin, cmd)
            args = [FAKECMD, "--state", self.dir, "--argv0", "$0", cmd]
            # The client as the wrapper's interpreter where it can be: a
            # shell per command cost about 1 ms of CPU, some 15,000 times
            # in the quick tier.  sdio's wrapper chooses in shell.
            text = server.script(sys.executable, args) \
                if server and cmd != "sdio" else None
            if text is None:
                runner = "%s %s" % (" ".join(shlex.quote(w) for w in script),
                                    " ".join('"$0"' if w == "$0" else
                                             shlex.quote(w) for w in args))
                text = "#!/bin/sh\n" + (
                    sdio.wrapper(runner) if cmd == "sdio"
                    else "exec %s \"$@\"\n" % runner)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)

    def _write_config(self, state: Dict) -> None:
        lines = ["# sdtune.conf for the simulated appliance in %s\n"
                 % self.dir, "[commands]\n"]
        for cmd in COMMANDS:
            lines.append("%s = %s\n" % (cmd, os.path.join(self.bin, cmd)))
        lib = state.get("library", {})
        if lib.get("built"):
            lines.append("\n[libraries]\ndiskmgt = %s\nnvpair = %s\n"
                         % (lib["diskmgt"], lib["nvpair"]))
        else:
            lines.append("\n# [libraries] left out: %s\n"
                         % lib.get("note", ""))
        lines.append("\n[sdconf]\nflavour = %s\n" % state["flavour"])
        with open(self.config, "w") as f:
            f.write("".join(lines))

    # -------------------------------------------------------- changes

    def _change(self, fn, *args) -> None:
        state = kernel.load(self.dir)
        fn(state, *args)
        kernel.save(state)

    def reboot(self, clean: bool = True) -> None:
        """Every disk attaches again with the sd.conf the platform boots
        with.  ``clean``: init updates the boot archive first; False is
        a panic or power loss (the archive is booted as it is)."""
        self._change(platform.reboot, clean)

    def hold_powercut(self, seconds: float) -> None:
        """Make the engine's power-cut writer wait SECONDS before its
        first line (0: start at once): a cut in that time comes before
        any write."""
        self._change(lambda st: st.update(powercut_hold_s=seconds))

    def hotplug(self, name: str) -> None:
        """Pull and re-insert one disk: it attaches with the loaded list
        (a disk absent from the scenario's start appears now)."""
        self._change(kernel.hotplug, name)

    def set_busy(self, name: str, busy: bool) -> None:
        """Mark a disk busy (sd cannot detach it) or idle."""
        self._change(kernel.set_busy, name, busy)

    def set_root(self, is_root: bool) -> None:
        """Run the fake commands as root (default) or as another user."""
        self._change(lambda st: st.update(uid=0 if is_root else 101))

    def set_drv_lock(self, held: bool) -> None:
        """Hold the add_drv/rem_drv lock so that update_drv is refused."""
        self._change(lambda st: st.update(drv_lock=bool(held)))

    def set_bootadm_fail(self, fail: bool) -> None:
        """Make bootadm update-archive fail (a full root file system)."""
        self._change(lambda st: st["plat"].update(bootadm_fail=bool(fail)))

    def set_boot_modules(self, modules: List[Dict]) -> None:
        """Triton CN: CNAPI bootParams.boot_modules, [{path, type:
        "base64", content}], applied at every reboot (ValueError if
        not a Triton compute node or malformed)."""
        self._change(platform.set_boot_modules, modules)

    def unmount_usbkey(self) -> None:
        """Unmount the USB key from /mnt/usbkey (its files are kept)."""
        self._change(platform.set_usbkey_mounted, False)

    def mount_usbkey(self) -> None:
        self._change(platform.set_usbkey_mounted, True)

    def activate_be(self, name: str) -> None:
        """beadm activate NAME (KeyError if there is no such BE)."""
        self._be_change(platform.activate_be, name)

    def create_be(self, name: str) -> None:
        """beadm create NAME: a clone of the running BE."""
        self._be_change(platform.create_be, name)

    def _be_change(self, fn, name: str) -> None:
        state = kernel.load(self.dir)
        _, err, status = fn(state, name)
        if status:
            raise KeyError(err.strip())
        kernel.save(state)

    # -------------------------------------------------------- queries

    def platform(self) -> Dict:
        """The scenario's platform, normalised (name None: no platform
        given; see platform.normalize)."""
        return self.state()["scenario"]["platform"]

    def effective_conf(self) -> Optional[str]:
        """The sd.conf (a system path) that update_drv would read now:
        the first on the module path under root/."""
        return kernel.effective_conf(self.root)

    def boot_environments(self) -> List[Dict]:
        """Per BE: name, uuid, active, mountpoint, space, policy,
        created (empty on SmartOS and Triton)."""
        return platform.boot_environments(self.state())

    def archive(self) -> Dict[str, Optional[str]]:
        """The boot archive's copy of every module-path sd.conf."""
        return dict(self.state()["plat"]["archive"])

    def platform_calls(self) -> List[List[str]]:
        """Every bootadm run and beadm activate / create so far, as
        [cmd, args...]."""
        return self.state()["plat"]["calls"]

    def state(self) -> Dict:
        return kernel.load(self.dir)

    def expected_disks(self) -> List[Dict]:
        """Per disk: name, instance, key, serial, firmware, size_bytes,
        logical_block_bytes, physical_block_bytes (un_phy_blocksize as
        attached), ssd, in_use [{kind, detail}], pool, vdev_ashift, sd
        {suppress_cache_flush, throttle_max, throttle_min, disksort},
        driver ("sd", or "blkdev": then key and the sd values are None
        and physical_block_bytes is blkdev's), nvme (the NVMe contract's
        object, None but for NVMe namespaces), plus busy and
        attached_with_loaded_list."""
        return kernel.expected_disks(self.state())

    def library(self) -> Dict:
        return self.state().get("library", {})

    def messages(self) -> str:
        with open(os.path.join(self.root, "var/adm/messages"),
                  encoding="latin-1") as f:
            return f.read()

    def run(self, cmd: str, *args: str, stdin: str = "",
            timeout: float = 30) -> subprocess.CompletedProcess:
        """Run DIR/bin/<cmd> the way sdtune does: argv list, fixed
        environment, cwd /."""
        return subprocess.run([os.path.join(self.bin, cmd)] + list(args),
                              input=stdin.encode("latin-1"),
                              capture_output=True, env=dict(FIXED_ENV),
                              cwd="/", timeout=timeout, check=False)

    def sdtune_argv(self, *args: str, config: Optional[str] = None
                    ) -> Tuple[List[str], Dict[str, str]]:
        """The command line and environment of sdtune(): the product's
        launcher (bin/sdtune, by path: nothing of the product is
        imported) against this appliance, `-R root --config
        sdtune.conf`, the test python (through this process's
        tests/harness/sdtuneserver.py when it runs), no zonename."""
        env = {"PATH": "/usr/bin:/bin",
               "SDTUNE_PYTHON": sdtuneserver.python(),
               "SDTUNE_ZONENAME_CMD": "/nonexistent"}
        launcher = os.path.join(REPO, "bin", "sdtune")
        return [launcher, "-R", self.root, "--config", config or self.config,
                *args], env

    def sdtune(self, *args: str, config: Optional[str] = None,
               stdin: Optional[str] = None) -> subprocess.CompletedProcess:
        """Run sdtune (sdtune_argv) to its end."""
        argv, env = self.sdtune_argv(*args, config=config)
        return subprocess.run(argv, env=env, input=stdin,
                              capture_output=True, text=True,
                              stdin=None if stdin is not None else
                              subprocess.DEVNULL, check=False)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = ("usage: appliance.py build SCENARIO DIR | reboot DIR "
             "[--crash] | "
             "hotplug DIR NAME | busy DIR NAME on|off | expected DIR\n")
    if not argv:
        sys.stderr.write(usage)
        return 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "build" and len(args) == 2:
            app = Appliance.build(args[0], args[1])
            lib = app.library()
            print("built %s: %d disks; config %s%s" % (
                app.dir, len(app.expected_disks()), app.config,
                "" if lib.get("built") else " (%s)" % lib.get("note")))
        elif cmd == "reboot" and len(args) == 1:
            Appliance.load(args[0]).reboot()
        elif cmd == "reboot" and len(args) == 2 and args[1] == "--crash":
            Appliance.load(args[0]).reboot(clean=False)
        elif cmd == "hotplug" and len(args) == 2:
            Appliance.load(args[0]).hotplug(args[1])
        elif cmd == "busy" and len(args) == 3 and args[2] in ("on", "off"):
            Appliance.load(args[0]).set_busy(args[1], args[2] == "on")
        elif cmd == "expected" and len(args) == 1:
            json.dump(Appliance.load(args[0]).expected_disks(), sys.stdout,
                      indent=1)
            sys.stdout.write("\n")
        else:
            sys.stderr.write(usage)
            return 2
    except (scn.ScenarioError, FileNotFoundError, FileExistsError,
            KeyError) as e:
        sys.stderr.write("appliance.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
