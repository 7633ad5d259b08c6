"""The `sdtune` command line: options, subcommands, exit codes.

Parses argv, builds the Host (RealHost under `-R ROOT`, with the command
allow-list from the configuration) and hands each subcommand to the
module that does the work.  Errors are printed the illumos way,
`sdtune: cannot <verb> '<object>': <reason>`, with the exit codes of
DESIGN.md: 0 success, 1 problems found, 2 usage, 3 refused, 4 failed.
"""

import argparse
import errno
import gc
import os
import signal
import sys
import traceback
from typing import Callable, List, Optional, TextIO

from .config import Config, commands_for, load_config
from .errors import (EXIT_FAILED, EXIT_SIGINT, EXIT_SIGTERM, EXIT_USAGE,
                     RefusedError, SdtuneError, UsageError)
from .host import Host, RealHost, discard_stdout, guard_standard_fds
from .sdconf import tool
from .sdconf.tunables import FLAVOURS, TUNABLE_BY_NAME

HostFactory = Callable[[str, Config], Host]


class _Parser(argparse.ArgumentParser):
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


def _key_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vid", help="INQUIRY vendor id (padded for you)")
    p.add_argument("--pid", help="INQUIRY product id (padded for you)")
    p.add_argument("--write", action="store_true",
                   help="write the file (default: print the diff only)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sdtune", description="Certify SSDs and tune "
                     "sd.conf on illumos storage appliances.")
    parser.add_argument("-R", dest="root", default="/", metavar="ROOT",
                        help="system root for sd.conf and state")
    parser.add_argument("--config", metavar="FILE",
                        help="configuration overriding sdtune.conf")
    sub = parser.add_subparsers(dest="command", metavar="command",
                                parser_class=_Parser)
    sub.required = True

    disks = sub.add_parser("disks", help="inventory of the disks behind "
                           "sd: keys, sizes, block sizes, pools, sd values, "
                           "in-use state")
    disks.add_argument("-H", dest="scripted", action="store_true",
                       help="no header, fields separated by TABs")
    disks.add_argument("-p", dest="parsable", action="store_true",
                       help="exact numbers (bytes)")
    disks.add_argument("-o", dest="output", choices=("json",))

    cert = sub.add_parser("certify", help="measure SSDs (destroys their "
                          "data) and decide native sector size, cache and "
                          "queue depth")
    cert.add_argument("targets", nargs="+", metavar="DISK|PATH")
    cert.add_argument("--confirm", nargs="+", action="extend", default=[],
                      metavar="DISK|PATH", required=True,
                      help="repeat every target: its data will be lost")
    cert.add_argument("-o", dest="output", choices=("json",))
    cert.add_argument("--trust-flush-timing", action="store_true",
                      help="allow cache-nonvolatile from flush timing alone,"
                      " without the drive's NV_SUP evidence")
    cert.add_argument("--logical-block", type=int, metavar="BYTES",
                      help="logical block size of a file target")

    infer = sub.add_parser("infer", help="the certify verdict from "
                           "existing vdbench or fio output, without I/O")
    infer.add_argument("--from", dest="source", required=True,
                       metavar="FILE")
    infer.add_argument("--format", choices=("vdbench", "fio"))
    infer.add_argument("-o", dest="output", choices=("json",))
    infer.add_argument("--trust-flush-timing", action="store_true")

    results = sub.add_parser("results", help="stored certification records")
    results.add_argument("-H", dest="scripted", action="store_true")
    results.add_argument("-o", dest="output", choices=("json",))

    def allow_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--allow-ashift-mismatch", action="store_true",
                       help="propose physical-block-size even for models "
                       "in or spare for ashift=9 vdevs")
        p.add_argument("--allow-no-nv-evidence", action="store_true",
                       help="propose cache-nonvolatile from flush timing "
                       "without the drive's NV_SUP")

    plan = sub.add_parser("plan", help="proposed sd-config-list changes, "
                          "with the reason for each")
    plan.add_argument("--save", dest="plan_file", metavar="FILE",
                      help="also write the plan to FILE (a new file) for "
                      "`apply FILE`")
    plan.add_argument("-o", dest="output", choices=("json",))
    allow_flags(plan)
    apply_ = sub.add_parser("apply", help="apply a plan as one transaction: "
                            "lock, back up, atomic write, update_drv, verify")
    apply_.add_argument("plan_file", nargs="?", metavar="PLAN")
    apply_.add_argument("--yes", action="store_true",
                        help="apply without asking (else a dry run unless "
                        "on a terminal)")
    allow_flags(apply_)
    verify = sub.add_parser("verify", help="per disk: applied, pending "
                            "reboot, not matched or ignored by sd")
    verify.add_argument("-H", dest="scripted", action="store_true")
    verify.add_argument("-o", dest="output", choices=("json",))
    audit = sub.add_parser("audit", help="findings for pools, drives and "
                           "sd.conf; exit 1 when any problem remains")
    audit.add_argument("-x", dest="only_problems", action="store_true",
                       help="only problems, or a one-line all-clear")
    audit.add_argument("-o", dest="output", choices=("json",))
    history = sub.add_parser("history", help="the journal of changes")
    history.add_argument("-H", dest="scripted", action="store_true")
    history.add_argument("-p", dest="parsable", action="store_true",
                         help="exact times (seconds) and full checksums")
    history.add_argument("-o", dest="output", choices=("json",))
    rollback = sub.add_parser("rollback", help="restore the sd.conf of "
                              "before a journal entry, as a transaction")
    rollback.add_argument("entry", nargs="?", metavar="ID")
    rollback.add_argument("--last", action="store_true")
    rollback.add_argument("--yes", action="store_true")
    recover = sub.add_parser("recover", help="finish or undo a change an "
                             "interruption left open; --accept-current "
                             "when sd.conf matches neither side")
    recover.add_argument("--accept-current", action="store_true",
                         help="keep sd.conf as it is now and close the "
                         "open journal entry")

    tr = sub.add_parser("trace", help="run a DTrace script on the sd "
                        "disks and summarise it")
    tr.add_argument("script", choices=("iosize", "align", "flush",
                                       "qdepth"))
    tr.add_argument("-d", dest="disk", metavar="DISK",
                    help="cXtYdZ or sdN (default: every sd disk)")
    tr.add_argument("-t", dest="seconds", type=int, default=10,
                    metavar="SECONDS", help="how long to trace (default 10)")
    tr.add_argument("-H", dest="scripted", action="store_true")
    tr.add_argument("-p", dest="parsable", action="store_true")
    tr.add_argument("-o", dest="output", choices=("json",))

    sdconf = sub.add_parser("sdconf", help="offline sd.conf tools")
    sdconf.add_argument("--flavour", choices=FLAVOURS,
                        help="kernel rules to model (default from config)")
    ssub = sdconf.add_subparsers(dest="action", metavar="action",
                                 parser_class=_Parser)
    ssub.required = True
    p = ssub.add_parser("check", help="report what the kernel would warn "
                        "about or ignore; exit 1 on problems")
    p.add_argument("file")
    p.add_argument("-o", dest="output", choices=("json",))
    p = ssub.add_parser("show", help="pairs, decoded tunables and what "
                        "sd makes of them")
    p.add_argument("file")
    p.add_argument("-o", dest="output", choices=("json",))
    p = ssub.add_parser("set", help="set tunables for a key")
    p.add_argument("file")
    p.add_argument("words", nargs="+", metavar="KEY|name=value",
                   help="KEY (unless --vid/--pid) then name=value ...")
    _key_args(p)
    p.add_argument("--any-length-key", action="store_true",
                   help="write a KEY that is not vendor (8) + product (16) "
                   "characters, e.g. a vendor-only or wildcard key")
    p = ssub.add_parser("unset", help="remove tunables, or every pair, "
                        "for a key")
    p.add_argument("file")
    p.add_argument("words", nargs="*", metavar="KEY|name",
                   help="KEY (unless --vid/--pid) then tunable names")
    _key_args(p)
    p = ssub.add_parser("diff", help="text and sd-config-list differences;"
                        " exit 1 when the files differ")
    p.add_argument("a")
    p.add_argument("b")
    return parser


def _looks_like_key(action: str, word: str) -> bool:
    """Whether a word after FILE is a KEY rather than a setting/name."""
    if action == "set":
        return "=" not in word and ":" not in word
    return word.lower() not in TUNABLE_BY_NAME


def _split_key(args: argparse.Namespace) -> List[str]:
    """Separate KEY from the rest of the words unless --vid/--pid give it."""
    words = list(args.words)
    if args.vid is None and args.pid is None:
        key = words.pop(0) if words else None
    elif words and _looks_like_key(args.action, words[0]):
        # KEY given as well: let resolve_key() say it is one or the other.
        key = words.pop(0)
    else:
        key = None
    args.key = tool.resolve_key(args.action, args.file, key, args.vid,
                                args.pid)
    return words


def _flavour(args: argparse.Namespace, cfg: Config) -> str:
    return getattr(args, "flavour", None) or cfg.flavour()


def _run_sdconf(args: argparse.Namespace, host: Host, cfg: Config,
                out: TextIO) -> int:
    flavour = _flavour(args, cfg)
    action = args.action
    if action == "check":
        return tool.cmd_check(host, args.file, flavour, out,
                              args.output == "json")
    if action == "show":
        return tool.cmd_show(host, args.file, flavour, out,
                             args.output == "json")
    if action == "diff":
        return tool.cmd_diff(host, args.a, args.b, out)
    words = _split_key(args)
    commit = _live_commit(args, host, cfg, out) if args.write else None
    if action == "set":
        if not words:
            raise SdtuneError("set tunables in", args.file,
                              "no name=value given", EXIT_USAGE)
        return tool.cmd_set(host, args.file, args.key, words, flavour,
                            args.write, out, commit=commit,
                            any_length_key=args.any_length_key)
    return tool.cmd_unset(host, args.file, args.key, words, flavour,
                          args.write, out, commit=commit)


def _live_commit(args: argparse.Namespace, host: Host, cfg: Config,
                 out: TextIO):
    """For `sdconf set|unset --write` on the sd.conf this system uses: a
    commit that goes through the lock, the journal and update_drv like
    apply, so that no write to the live file escapes them.  None for any
    other file."""
    from .tune.commands import report_entry
    from .tune.journal import sha256
    ctx = tune_context(host, cfg, _flavour(args, cfg))
    if not host.same_file(args.file, host.sys_path(ctx.sd_conf)):
        return None

    def commit(path: str, old: bytes, new: bytes, summary: List[str],
               diff: str) -> None:
        entry = ctx.transaction().run("sdconf " + args.action, new,
                                      sha256(old), summary, diff,
                                      ctx.verifier())
        report_entry(entry, out)
    return commit


def tune_context(host: Host, cfg: Config, flavour: str):
    from .tune.commands import Context
    return Context(host, cfg.sd_conf, cfg.state_dir, flavour,
                   cfg.generations(), cfg.known_drives)


def _recovered_context(args: argparse.Namespace, host: Host, cfg: Config,
                       changes: bool = False):
    """The tune context, after finishing any transaction a crash left
    open: everything that reads or changes sd.conf starts with it.  A
    command that only reads goes on, with a warning, when the open
    transaction cannot be closed; one that changes sd.conf refuses."""
    from .tune.commands import recover_if_needed
    ctx = tune_context(host, cfg, _flavour(args, cfg))
    recover_if_needed(ctx, sys.stderr, changes)
    return ctx


def _run_audit(args: argparse.Namespace, host: Host, cfg: Config,
               out: TextIO) -> int:
    from .audit import cmd_audit
    ctx = _recovered_context(args, host, cfg)
    return cmd_audit(host, ctx.sd_conf, ctx.state_dir, ctx.flavour,
                     cfg.silence, out, sys.stderr, args.output == "json",
                     args.only_problems, ctx.known_drives,
                     cfg.space_matters())


def _run_tune(args: argparse.Namespace, host: Host, cfg: Config,
              out: TextIO) -> int:
    from .tune import commands as tc
    from .tune.plan import Options
    from .tune.verify import cmd_verify
    if args.command == "history":
        # Read-only whatever state the journal is in: it is the tool for
        # looking at an interrupted change, so it recovers nothing.
        ctx = tune_context(host, cfg, _flavour(args, cfg))
        return tc.cmd_history(ctx, out, sys.stderr, args.output == "json",
                              args.scripted, args.parsable)
    if args.command == "recover":
        ctx = tune_context(host, cfg, _flavour(args, cfg))
        return tc.cmd_recover(ctx, args.accept_current, out)
    changes = args.command in ("apply", "rollback")
    ctx = _recovered_context(args, host, cfg, changes)
    tty = sys.stdin.isatty() and out.isatty()
    if args.command in ("plan", "apply"):
        options = Options(args.allow_ashift_mismatch,
                          args.allow_no_nv_evidence)
        if args.command == "plan":
            return tc.cmd_plan(ctx, options, out, sys.stderr,
                               args.plan_file, args.output == "json")
        return tc.cmd_apply(ctx, args.plan_file, args.yes, tty, out,
                            options, sys.stderr)
    if args.command == "verify":
        return cmd_verify(host, ctx.sd_conf, ctx.flavour, out,
                          args.output == "json", args.scripted)
    if args.entry is None and not args.last:
        raise UsageError("rollback", "", "give a journal ID or --last")
    if args.entry is not None and args.last:
        raise UsageError("rollback", args.entry, "give a journal ID or "
                         "--last, not both")
    return tc.cmd_rollback(ctx, args.entry, args.last, args.yes, tty, out)


def _run_certify(args: argparse.Namespace, host: Host, cfg: Config,
                 out: TextIO) -> int:
    from .certify.command import cmd_certify, cmd_results
    state_dir = cfg.state_dir
    if args.command == "results":
        return cmd_results(host, state_dir, out, args.output == "json",
                           args.scripted)
    if args.command == "infer":
        from .certify.command import cmd_infer
        text = host.read_bytes(args.source).decode("utf-8", "replace")
        return cmd_infer(args.source, args.format, text, out,
                         args.output == "json", args.trust_flush_timing)
    return cmd_certify(host, state_dir, cfg.certify(), args.targets,
                       args.confirm, out, sys.stderr, args.output == "json",
                       args.trust_flush_timing, args.logical_block)


def _real_host(root: str, cfg: Config) -> Host:
    return RealHost(root=root, commands=commands_for(cfg),
                    libraries=dict(cfg.libraries))


def _needs_root(args: argparse.Namespace) -> bool:
    """Commands that change the system or drive its disks.  The launcher
    refuses them to an ordinary user too; this check does not depend on
    how the options were spelled."""
    return args.command in ("certify", "apply", "rollback", "trace",
                            "recover")


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
    """The command line; for `sdconf set|unset`, words may also follow
    --vid/--pid (`unset F --vid ATA --pid X rmw-type`), which argparse
    alone leaves over once it has taken the positionals."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if args.command == "sdconf" and args.action in ("set", "unset") \
                and not any(w.startswith("-") for w in extra):
            args.words = list(args.words) + extra
        else:
            parser.error("unrecognized arguments: %s" % " ".join(extra))
    return args


def _main(argv: Optional[List[str]], out: TextIO,
          host_factory: HostFactory, machine: Host) -> int:
    args = _parse(argv)
    host: Optional[Host] = None
    cfg: Optional[Config] = None
    try:
        try:
            _check_root_dir(args.root, machine)
            # The configuration is read before -R applies: it names the
            # commands and paths that the root then scopes.
            cfg = load_config(machine, args.config)
            host = host_factory(args.root, cfg)
            if _needs_root(args) and not host.is_root():
                raise RefusedError("run", args.command, "must be root")
            if isinstance(out, GuardedOutput):
                out.changing = args.command in _CHANGING or (
                    args.command == "sdconf" and
                    getattr(args, "write", False))
            code = _dispatch(args, host, cfg, out)
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


_CHANGING = ("apply", "rollback", "recover")


def _interrupted(args: argparse.Namespace, host: Optional[Host],
                 cfg: Optional[Config], signo: int) -> str:
    """One line: what was stopped and whether sd.conf is half changed."""
    what = "interrupted by %s" % ("SIGTERM" if signo == signal.SIGTERM
                                  else "SIGINT")
    if host is None or cfg is None or args.command not in _CHANGING + (
            "sdconf",):
        return "%s: %s" % (args.command, what)
    from .tune.commands import open_change
    try:
        # Ignore a second Ctrl-C while looking: the answer matters more.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        said = open_change(tune_context(host, cfg, _flavour(args, cfg)))
    except SdtuneError as e:
        said = "could not read the journal (%s): run 'sdtune history'" % e
    return "%s: %s; %s" % (args.command, what, said)


def _dispatch(args: argparse.Namespace, host: Host, cfg: Config,
              out: TextIO) -> int:
    if args.command == "sdconf":
        return _run_sdconf(args, host, cfg, out)
    if args.command == "audit":
        return _run_audit(args, host, cfg, out)
    if args.command in ("plan", "apply", "verify", "history", "rollback",
                        "recover"):
        return _run_tune(args, host, cfg, out)
    if args.command in ("certify", "results", "infer"):
        return _run_certify(args, host, cfg, out)
    if args.command == "trace":
        from .trace import cmd_trace
        return cmd_trace(host, args.script, args.disk, args.seconds,
                         out, args.output == "json", args.scripted,
                         args.parsable, sys.stderr)
    if args.command == "disks":
        # Imported here: the offline sd.conf tools need none of it.
        from .disks_cmd import cmd_disks
        return cmd_disks(host, out, sys.stderr, args.scripted,
                         args.parsable, args.output == "json")
    raise UsageError("run", args.command, "unknown command")
