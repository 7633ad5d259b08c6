"""`sdtune sdconf check|show|set|unset|diff`: the offline sd.conf tools;
set and unset on the sd.conf this system uses go through the same lock,
journal and update_drv as apply."""

import argparse
from typing import List

from ..errors import EXIT_USAGE, SdtuneError
from ..sdconf import tool
from ..sdconf.tunables import FLAVOURS, TUNABLE_BY_NAME
from .base import Env, json_output

COMMANDS = ("sdconf",)


def _key_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vid", help="INQUIRY vendor id (padded for you)")
    p.add_argument("--pid", help="INQUIRY product id (padded for you)")
    p.add_argument("--write", action="store_true",
                   help="write the file (default: print the diff only)")


def add_parser(sub, name: str) -> None:
    sdconf = sub.add_parser("sdconf", help="offline sd.conf tools")
    sdconf.add_argument("--flavour", choices=FLAVOURS,
                        help="kernel rules to model (default from config)")
    ssub = sdconf.add_subparsers(dest="action", metavar="action",
                                 parser_class=type(sdconf))
    ssub.required = True
    p = ssub.add_parser("check", help="report what the kernel would warn "
                        "about or ignore; exit 1 on problems")
    p.add_argument("file")
    json_output(p)
    p = ssub.add_parser("show", help="pairs, decoded tunables and what "
                        "sd makes of them")
    p.add_argument("file")
    json_output(p)
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


def extra_words(args: argparse.Namespace, extra: List[str]) -> bool:
    """`unset F --vid ATA --pid X rmw-type`: words may also follow
    --vid/--pid, which argparse alone leaves over once it has taken the
    positionals.  Takes them and says so, or says no."""
    if args.action in ("set", "unset") and \
            not any(w.startswith("-") for w in extra):
        args.words = list(args.words) + extra
        return True
    return False


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


def run(args: argparse.Namespace, env: Env) -> int:
    flavour = env.flavour(args)
    action, host, out = args.action, env.host, env.out
    if action == "check":
        return tool.cmd_check(host, args.file, flavour, out,
                              args.output == "json")
    if action == "show":
        return tool.cmd_show(host, args.file, flavour, out,
                             args.output == "json")
    if action == "diff":
        return tool.cmd_diff(host, args.a, args.b, out)
    words = _split_key(args)
    commit = _live_commit(args, env) if args.write else None
    if action == "set":
        if not words:
            raise SdtuneError("set tunables in", args.file,
                              "no name=value given", EXIT_USAGE)
        return tool.cmd_set(host, args.file, args.key, words, flavour,
                            args.write, out, commit=commit,
                            any_length_key=args.any_length_key)
    return tool.cmd_unset(host, args.file, args.key, words, flavour,
                          args.write, out, commit=commit)


def _live_commit(args: argparse.Namespace, env: Env):
    """For `sdconf set|unset --write` on the sd.conf this system uses: a
    commit that goes through the lock, the journal and update_drv like
    apply, so that no write to the live file escapes them.  None for any
    other file."""
    from ..tune.commands import report_entry
    from ..tune.journal import sha256
    ctx = env.tune_context(args)
    if not env.host.same_file(args.file, env.host.sys_path(ctx.sd_conf)):
        return None

    def commit(path: str, old: bytes, new: bytes, summary: List[str],
               diff: str) -> None:
        entry = ctx.transaction().run("sdconf " + args.action, new,
                                      sha256(old), summary, diff,
                                      ctx.verifier())
        report_entry(entry, env.out)
    return commit
