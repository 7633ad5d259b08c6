# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""What every command module shares: the argument parser class and Env,
the run-time bundle (host, configuration, output streams) a command's
run() gets, with the tune site built the one way."""

import argparse
import sys
from dataclasses import dataclass, field
from typing import Optional, TextIO

from ..config import Config
from ..errors import EXIT_USAGE
from ..host import Host


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as `sdtune: ...`, exit 2, and
    takes no abbreviated long options: `--conf` for `--config` would let
    the launcher's root check read FILE as the command word."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write("sdtune: %s\n" % message)
        sys.exit(EXIT_USAGE)


def json_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", dest="output", choices=("json",))


def flavour_of(host: Host, cfg: Config, args: argparse.Namespace) -> str:
    """--flavour where the command has it, else [sdconf] flavour; auto:
    the rules of the platform the host is (platform/detect.py)."""
    value = getattr(args, "flavour", None) or cfg.flavour()
    if value != "auto":
        return value
    from ..platform.detect import detect, sd_flavour
    return sd_flavour(detect(host))


def tune_site(host: Host, cfg: Config, flavour: str, driver: str = "sd"):
    """The system the tune commands change (tune/site.py), from the
    settings; `driver` picks sd.conf or nvme.conf."""
    from ..tune.site import TuneSite
    return TuneSite(host, cfg.sd_conf, cfg.state_dir, flavour,
                    cfg.generations(), cfg.known_drives, cfg.boot_media,
                    driver)


@dataclass
class Env:
    """What a command runs with."""

    host: Host
    cfg: Config
    out: TextIO
    err: TextIO = field(default_factory=lambda: sys.stderr)
    # The machine sdtune runs on, unrooted: the host itself without
    # --host, the controller with it (the power-cut check's witness).
    machine: Optional[Host] = None
    _flavour: Optional[str] = field(default=None, repr=False)

    def flavour(self, args: argparse.Namespace) -> str:
        """The sd.conf rules the command models (flavour_of), decided
        once per command."""
        if self._flavour is None:
            self._flavour = flavour_of(self.host, self.cfg, args)
        return self._flavour

    def tune_site(self, args: argparse.Namespace):
        return tune_site(self.host, self.cfg, self.flavour(args),
                         getattr(args, "driver", None) or "sd")

    def recovered_site(self, args: argparse.Namespace,
                       changes: bool = False):
        """The tune site, after finishing any transaction a crash left
        open: everything that reads or changes sd.conf starts with it.  A
        command that only reads goes on, with a warning, when the open
        transaction cannot be closed; one that changes sd.conf refuses."""
        from ..tune.site import recover_open
        site = self.tune_site(args)
        for line in recover_open(site, changes):
            self.err.write("sdtune: %s\n" % line)
        return site
