"""The `sdtune` command line: options, subcommands, exit codes.

Parses argv, builds the Host (RealHost under `-R ROOT`, with the command
allow-list from the configuration) and hands each subcommand to the
module that does the work.  Errors are printed the illumos way,
`sdtune: cannot <verb> '<object>': <reason>`, with the exit codes of
DESIGN.md: 0 success, 1 problems found, 2 usage, 3 refused, 4 failed.
"""

import argparse
import gc
import sys
from typing import Callable, List, Optional, TextIO

from .config import Config, commands_for, load_config
from .errors import EXIT_USAGE, SdtuneError
from .host import Host, RealHost
from .sdconf import tool
from .sdconf.tunables import FLAVOURS, TUNABLE_BY_NAME

HostFactory = Callable[[str, Config], Host]


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as `sdtune: ...`, exit 2."""

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
    plan.add_argument("-o", dest="plan_file", metavar="FILE",
                      help="also write the plan for `apply FILE`")
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
    history.add_argument("-o", dest="output", choices=("json",))
    rollback = sub.add_parser("rollback", help="restore the sd.conf of "
                              "before a journal entry, as a transaction")
    rollback.add_argument("entry", nargs="?", metavar="ID")
    rollback.add_argument("--last", action="store_true")
    rollback.add_argument("--yes", action="store_true")

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
    if getattr(args, "flavour", None):
        return args.flavour
    value = cfg.sections.get("sdconf", {}).get("flavour", "nexenta")
    if value not in FLAVOURS:
        raise SdtuneError("load config", cfg.where("sdconf", "flavour"),
                          "[sdconf] flavour = '%s': expected %s"
                          % (value, " or ".join(FLAVOURS)), EXIT_USAGE)
    return value


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
    if action == "set":
        if not words:
            raise SdtuneError("set tunables in", args.file,
                              "no name=value given", EXIT_USAGE)
        return tool.cmd_set(host, args.file, args.key, words, flavour,
                            args.write, out)
    return tool.cmd_unset(host, args.file, args.key, words, flavour,
                          args.write, out)


def tune_context(host: Host, cfg: Config, flavour: str):
    from .tune.commands import Context, parse_generations
    generations = parse_generations(
        cfg.sections.get("journal", {}).get("generations", "10"),
        cfg.where("journal", "generations"))
    return Context(host, cfg.paths.get("sd_conf", "/kernel/drv/sd.conf"),
                   cfg.paths.get("state_dir", "/var/sdtune"), flavour,
                   generations,
                   cfg.sections.get("data", {}).get("known_drives"))


def _recovered_context(args: argparse.Namespace, host: Host, cfg: Config):
    """The tune context, after finishing any transaction a crash left
    open: everything that reads or changes sd.conf starts with it."""
    from .tune.commands import recover_if_needed
    ctx = tune_context(host, cfg, _flavour(args, cfg))
    recover_if_needed(ctx, sys.stderr)
    return ctx


def _run_audit(args: argparse.Namespace, host: Host, cfg: Config,
               out: TextIO) -> int:
    from .audit import cmd_audit
    ctx = _recovered_context(args, host, cfg)
    space = cfg.sections.get("audit", {}).get("space_matters", "no")
    return cmd_audit(host, ctx.sd_conf, ctx.state_dir, ctx.flavour,
                     cfg.sections.get("silence", {}), out, sys.stderr,
                     args.output == "json", args.only_problems,
                     ctx.known_drives, space.lower() in ("yes", "true", "1"))


def _run_tune(args: argparse.Namespace, host: Host, cfg: Config,
              out: TextIO) -> int:
    from .tune import commands as tc
    from .tune.plan import Options
    from .tune.verify import cmd_verify
    ctx = _recovered_context(args, host, cfg)
    tty = sys.stdin.isatty() and out.isatty()
    if args.command in ("plan", "apply"):
        options = Options(args.allow_ashift_mismatch,
                          args.allow_no_nv_evidence)
        if args.command == "plan":
            return tc.cmd_plan(ctx, options, out, args.plan_file)
        return tc.cmd_apply(ctx, args.plan_file, args.yes, tty, out,
                            options)
    if args.command == "verify":
        return cmd_verify(host, ctx.sd_conf, ctx.flavour, out,
                          args.output == "json", args.scripted)
    if args.command == "history":
        return tc.cmd_history(ctx, out, args.output == "json",
                              args.scripted)
    if (args.entry is None) == (not args.last):
        raise SdtuneError("rollback", args.entry or "--last", "give a "
                          "journal ID or --last", EXIT_USAGE)
    return tc.cmd_rollback(ctx, args.entry, args.last, args.yes, tty, out)


def _run_certify(args: argparse.Namespace, host: Host, cfg: Config,
                 out: TextIO) -> int:
    from .certify.command import cmd_certify, cmd_results
    from .certify.plan import Timing
    state_dir = cfg.paths.get("state_dir", "/var/sdtune")
    if args.command == "results":
        return cmd_results(host, state_dir, out, args.output == "json",
                           args.scripted)
    if args.command == "infer":
        from .certify.command import cmd_infer
        text = host.read_bytes(args.source).decode("utf-8", "replace")
        return cmd_infer(args.source, args.format, text, out,
                         args.output == "json", args.trust_flush_timing)
    try:
        timing = Timing.from_config(cfg.sections.get("certify", {}))
    except ValueError as e:
        # The message starts "[certify] KEY = ...": name that key's file.
        key = str(e).split("]", 1)[-1].split("=", 1)[0].strip()
        raise SdtuneError("load config", cfg.where("certify", key), str(e),
                          EXIT_USAGE)
    return cmd_certify(host, state_dir, timing, args.targets, args.confirm,
                       out, sys.stderr, args.output == "json",
                       args.trust_flush_timing, args.logical_block)


def _real_host(root: str, cfg: Config) -> Host:
    return RealHost(root=root, commands=commands_for(cfg),
                    libraries=dict(cfg.libraries))


def main(argv: Optional[List[str]] = None, out: Optional[TextIO] = None,
         host_factory: HostFactory = _real_host) -> int:
    # One short run over acyclic data (a 10,000-pair sd.conf is some
    # 300,000 objects): the cyclic collector would only rescan it.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, out if out is not None else sys.stdout,
                     host_factory)
    finally:
        if gc_was_enabled:
            gc.enable()


def _main(argv: Optional[List[str]], out: TextIO,
          host_factory: HostFactory) -> int:
    args = build_parser().parse_args(argv)
    try:
        # The configuration is read before -R applies: it names the
        # commands and paths that the root then scopes.
        cfg = load_config(RealHost(), args.config)
        host = host_factory(args.root, cfg)
        if args.command == "sdconf":
            return _run_sdconf(args, host, cfg, out)
        if args.command == "audit":
            return _run_audit(args, host, cfg, out)
        if args.command in ("plan", "apply", "verify", "history",
                            "rollback"):
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
        raise SdtuneError("run", args.command, "unknown command", EXIT_USAGE)
    except SdtuneError as e:
        out.flush()
        sys.stderr.write("sdtune: %s\n" % e)
        return e.exit_code
