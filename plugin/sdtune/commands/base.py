"""What every command module shares: the argument parser class and Env,
the run-time bundle (host, configuration, output streams) a command's
run() gets, with the tune context built the one way."""

import argparse
import sys
from dataclasses import dataclass, field
from typing import TextIO

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


def tune_context(host: Host, cfg: Config, flavour: str):
    """The tune commands' context (tune/commands.py) from the settings."""
    from ..tune.commands import Context
    return Context(host, cfg.sd_conf, cfg.state_dir, flavour,
                   cfg.generations(), cfg.known_drives)


@dataclass
class Env:
    """What a command runs with."""

    host: Host
    cfg: Config
    out: TextIO
    err: TextIO = field(default_factory=lambda: sys.stderr)

    def flavour(self, args: argparse.Namespace) -> str:
        """--flavour where the command has it, else [sdconf] flavour."""
        return getattr(args, "flavour", None) or self.cfg.flavour()

    def tune_context(self, args: argparse.Namespace):
        return tune_context(self.host, self.cfg, self.flavour(args))

    def recovered_context(self, args: argparse.Namespace,
                          changes: bool = False):
        """The tune context, after finishing any transaction a crash left
        open: everything that reads or changes sd.conf starts with it.  A
        command that only reads goes on, with a warning, when the open
        transaction cannot be closed; one that changes sd.conf refuses."""
        from ..tune.commands import recover_if_needed
        ctx = self.tune_context(args)
        recover_if_needed(ctx, self.err, changes)
        return ctx
