# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The `sdtune` command line: options, subcommands, exit codes.

Parses argv (the commands come from commands.TABLE), builds the Host
(RealHost under `-R ROOT`, with the command allow-list from the
configuration) and hands each subcommand to its module in commands/.
Errors are printed the illumos way, `sdtune: cannot <verb> '<object>':
<reason>`, with the exit codes of DESIGN.md: 0 success, 1 problems
found, 2 usage, 3 refused, 4 failed; an unexpected exception is a bug,
one line and exit 4.
"""

import argparse
import errno
import gc
import os
import signal
import sys
import traceback
from typing import Callable, List, Optional, TextIO

from . import commands
from .commands.base import Env, Parser, flavour_of, tune_site
from .config import Config, commands_for, load_config
from .errors import (EXIT_FAILED, EXIT_SIGINT, EXIT_SIGTERM, RefusedError,
                     SdtuneError, UsageError)
from .host import (Host, RealHost, discard_stdout, guard_standard_fds,
                   interrupt)

HostFactory = Callable[[str, Config], Host]


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: the global options, then every command of
    commands.TABLE, in its order."""
    parser = Parser(prog="sdtune", description="Certify SSDs and tune "
                    "sd.conf on illumos storage appliances.")
    parser.add_argument("-R", dest="root", default="/", metavar="ROOT",
                        help="system root for sd.conf and state")
    parser.add_argument("--config", metavar="FILE",
                        help="configuration overriding sdtune.conf")
    parser.add_argument("--host", dest="remote", metavar="DEST",
                        help="work on the appliance DEST over SSH "
                        "([user@]host or ssh://[user@]host[:port]); -R and "
                        "the configured paths are then the appliance's")
    sub = parser.add_subparsers(dest="command", metavar="command",
                                parser_class=Parser)
    sub.required = True
    for name, module in commands.TABLE:
        module.add_parser(sub, name)  # type: ignore[attr-defined]
    return parser


def _real_host(root: str, cfg: Config) -> Host:
    return RealHost(root=root, commands=commands_for(cfg),
                    libraries=dict(cfg.libraries))


def _ssh_host(dest: str, root: str, cfg: Config) -> Host:
    from .host.ssh import SshHost, check_destination
    try:
        check_destination(dest)
    except SdtuneError as e:
        raise UsageError("reach", dest, e.reason) from None
    ssh, options = cfg.ssh()
    return SshHost(dest, root, commands_for(cfg), ssh, options,
                   libraries=dict(cfg.libraries))


def _needs_root(args: argparse.Namespace) -> bool:
    """Commands that change the system or drive its disks.  The launcher
    refuses them to an ordinary user too; this check does not depend on
    how the options were spelled."""
    return args.command in ("certify", "apply", "rollback", "trace",
                            "recover", "powercut")


def _check_root_dir(root: str, machine: Host) -> None:
    if not root.startswith("/"):
        raise UsageError("use root", root, "-R needs an absolute path")
    if not machine.is_dir(root):
        raise UsageError("use root", root, "no such directory")


class Interrupted(BaseException):
    """SIGTERM, raised where Python raises KeyboardInterrupt for SIGINT,
    so that both stop sdtune the same way (children killed, files closed,
    nothing half written)."""

    def __init__(self, signo: int) -> None:
        super().__init__(signo)
        self.signo = signo


def _on_sigterm(signo: int, _frame) -> None:
    raise Interrupted(signo)


class GuardedOutput:
    """Standard output that never raises: a closed, full or broken stdout
    must not stop a transaction half way.  The first failure is kept and
    later output discarded; the command then exits 4."""

    def __init__(self, stream: Optional[TextIO]) -> None:
        self.stream = stream
        self.error: Optional[OSError] = None
        # Set for commands that change something: their failure message
        # then says where to see what was done.
        self.changing = False
        if stream is None:
            self.error = OSError(errno.EBADF, "standard output is closed")

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                self.stream.write(text)  # type: ignore[union-attr]
            except OSError as e:
                self.error = e
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()  # type: ignore[union-attr]
            except OSError as e:
                self.error = e

    def isatty(self) -> bool:
        return self.error is None and self.stream is not None and \
            self.stream.isatty()


def main(argv: Optional[List[str]] = None, out: Optional[TextIO] = None,
         host_factory: HostFactory = _real_host,
         machine: Optional[Host] = None) -> int:
    """The command line.  ``machine`` is the host that reads the
    configuration and checks -R before any root applies (this machine,
    unrooted, unless a test gives its own); ``host_factory`` builds the
    host the command then runs with."""
    # One short run over acyclic data (a 10,000-pair sd.conf is some
    # 300,000 objects): the cyclic collector would only rescan it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, out if out is not None else sys.stdout,
                     host_factory, machine or RealHost())
    finally:
        if gc_was_enabled:
            gc.enable()


def run_command_line() -> int:
    """`python3 -m sdtune`: main() with the process-wide guards: standard
    descriptors, signals, a standard output whose failure is exit 4."""
    guard_standard_fds()
    signal.signal(signal.SIGTERM, _on_sigterm)
    # Work that registers a stop hook (a shelf's engines) is killed the
    # instant a signal arrives, not when the main thread next runs
    # (sdtune(8), certify and EXIT STATUS).
    interrupt.install()
    # A warning or error that cannot be written has nowhere else to go:
    # it must not turn into a traceback, nor stop a transaction.
    sys.stderr = GuardedOutput(sys.stderr)  # type: ignore[assignment]
    out = GuardedOutput(sys.stdout)
    code = run_guarded(lambda: main(out=out))
    # The work is done (main flushed its output): a signal now would only
    # turn a finished command into a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out.flush()
    if out.error is not None:
        discard_stdout()
        if out.error.errno != errno.EPIPE:
            # The reader of a pipe that went away needs no message.
            sys.stderr.write("sdtune: cannot write standard output: %s%s\n"
                             % (out.error.strerror or "failed",
                                " (the command went on: 'sdtune history' "
                                "shows what it changed)" if out.changing
                                else ""))
        code = max(code, EXIT_FAILED)
    return code


def run_guarded(run: Callable[[], int]) -> int:
    """``run()``, but an exception sdtune did not expect is a bug: one
    line saying where, exit 4 (never 1, which means "problems found"),
    and the traceback only when SDTUNE_DEBUG=1 asks for it."""
    try:
        return run()
    except Exception as e:     # the last line of defence
        if os.environ.get("SDTUNE_DEBUG") == "1":
            traceback.print_exc()
        sys.stderr.write("sdtune: internal error: %s; this is a bug in "
                         "sdtune (SDTUNE_DEBUG=1 shows the traceback)\n"
                         % _where(e))
        return EXIT_FAILED


def _where(exc: BaseException) -> str:
    """The exception's kind and the innermost line of sdtune it came
    from, e.g. "KeyError in sdtune/audit.py line 120"."""
    package = os.path.dirname(os.path.abspath(__file__))
    place = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(package + os.sep):
            place = " in sdtune/%s line %d" % (
                os.path.relpath(path, package), frame.lineno or 0)
    return type(exc).__name__ + place


def _parse(argv: Optional[List[str]]) -> argparse.Namespace:
    """The command line; words argparse leaves over are an error unless
    the command takes them (sdconf set|unset after --vid/--pid)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not (args.command == "sdconf" and
                      commands.sdconf.extra_words(args, extra)):
        parser.error("unrecognized arguments: %s" % " ".join(extra))
    return args


def _main(argv: Optional[List[str]], out: TextIO,
          host_factory: HostFactory, machine: Host) -> int:
    args = _parse(argv)
    host: Optional[Host] = None
    cfg: Optional[Config] = None
    # `--host ''` (an unset variable in a script) is a destination to
    # refuse, never this machine.
    remote = args.remote is not None
    try:
        try:
            if not remote:
                _check_root_dir(args.root, machine)
            # The configuration is read before -R applies: it names the
            # commands and paths that the root then scopes.  It is this
            # machine's, also for --host: it says how to reach the
            # appliance and what is where there.
            cfg = load_config(machine, args.config)
            if remote:
                host = _ssh_host(args.remote, args.root, cfg)
                _check_root_dir(args.root, host)
            else:
                host = host_factory(args.root, cfg)
            if _needs_root(args) and not host.is_root():
                raise RefusedError("run", args.command, "must be root")
            if isinstance(out, GuardedOutput):
                out.changing = args.command in _CHANGING or (
                    args.command == "sdconf" and
                    getattr(args, "write", False))
            env = Env(host, cfg, out, sys.stderr, machine=machine)
            code = commands.BY_NAME[args.command].run(  # type: ignore
                args, env)
            out.flush()
            return code
        except (KeyboardInterrupt, Interrupted) as e:
            signo = e.signo if isinstance(e, Interrupted) else signal.SIGINT
            out.flush()
            said = _interrupted(args, host, cfg, signo)
            sys.stderr.write("sdtune: %s\n" % said)
            return EXIT_SIGTERM if signo == signal.SIGTERM else EXIT_SIGINT
    except SdtuneError as e:
        out.flush()
        sys.stderr.write("sdtune: %s\n" % e)
        return e.exit_code
    except MemoryError:
        out.flush()
        sys.stderr.write("sdtune: cannot %s: out of memory\n"
                         % args.command)
        return EXIT_FAILED
    finally:
        if host is not None:
            host.close()


_CHANGING = commands.tune.CHANGING


def _interrupted(args: argparse.Namespace, host: Optional[Host],
                 cfg: Optional[Config], signo: int) -> str:
    """One line: what was stopped and whether sd.conf is half changed."""
    what = "interrupted by %s" % ("SIGTERM" if signo == signal.SIGTERM
                                  else "SIGINT")
    if host is None or cfg is None or args.command not in _CHANGING + (
            "sdconf",):
        return "%s: %s" % (args.command, what)
    from .tune.site import open_change
    try:
        # Ignore a second Ctrl-C while looking: the answer matters more.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        said = open_change(tune_site(host, cfg,
                                     flavour_of(host, cfg, args)))
    except SdtuneError as e:
        said = "could not read the journal (%s): run 'sdtune history'" % e
    return "%s: %s; %s" % (args.command, what, said)
