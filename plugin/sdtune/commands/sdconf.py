"""`sdtune sdconf check|show|set|unset|diff`: the offline sd.conf tools;
set and unset on the sd.conf this system uses go through the same lock,
journal and update_drv as apply."""

import argparse
import json
from typing import Callable, List, Optional, TextIO

from ..errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, SdtuneError
from ..host import Host
from ..sdconf import actions
from ..sdconf.edit import unified_diff
from ..sdconf.lint import format_diagnostic, is_problem, lint
from ..sdconf.parser import ConfFile, parse
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
    args.key = actions.resolve_key(args.action, args.file, key, args.vid,
                                   args.pid)
    return words


def run(args: argparse.Namespace, env: Env) -> int:
    flavour = env.flavour(args)
    action, host, out = args.action, env.host, env.out
    if action == "check":
        return check(host, args.file, flavour, out, args.output == "json")
    if action == "show":
        return show(host, args.file, flavour, out, args.output == "json")
    if action == "diff":
        return diff(host, args.a, args.b, out)
    words = _split_key(args)
    commit = _live_commit(args, env) if args.write else None
    if action == "set":
        if not words:
            raise SdtuneError("set tunables in", args.file,
                              "no name=value given", EXIT_USAGE)
        return set_(host, args.file, args.key, words, flavour, args.write,
                    out, env.err, commit=commit,
                    any_length_key=args.any_length_key)
    return unset(host, args.file, args.key, words, flavour, args.write, out,
                 env.err, commit=commit)


def read_conf(host: Host, path: str) -> ConfFile:
    return parse(host.read_bytes(path).decode("latin-1"))


def check(host: Host, path: str, flavour: str, out: TextIO,
          as_json: bool = False) -> int:
    """`sdconf check`: what the kernel would warn about or ignore; exit 1
    on problems."""
    conf = read_conf(host, path)
    diags = lint(conf, flavour)
    if as_json:
        rows = []
        for d in diags:
            line, col = conf.line_col(d.offset)
            rows.append({"file": path, "line": line, "column": col,
                         "severity": d.severity, "code": d.code,
                         "message": d.message})
        json.dump({"diagnostics": rows}, out, indent=2)
        out.write("\n")
    else:
        for d in diags:
            out.write(format_diagnostic(conf, path, d) + "\n")
    return EXIT_PROBLEMS if any(is_problem(d) for d in diags) else EXIT_OK


def show(host: Host, path: str, flavour: str, out: TextIO,
         as_json: bool = False) -> int:
    """`sdconf show`: pairs, decoded tunables and what sd makes of them."""
    report = actions.show_report(read_conf(host, path), path, flavour)
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        out.write(actions.render_show(report))
    return EXIT_OK


# commit(path, old_bytes, new_bytes, summary_lines, diff_text) writes
# `new_bytes` in place of `old_bytes` (e.g. as a journalled transaction).
Commit = Callable[[str, bytes, bytes, List[str], str], None]


def set_(host: Host, path: str, key: str, settings: List[str],
         flavour: str, write: bool, out: TextIO, err: TextIO, *,
         any_length_key: bool = False,
         commit: Optional[Commit] = None) -> int:
    """`sdconf set`: tunables for KEY in the file at `path`; print the
    diff, and with `write` write it (through `commit` when given)."""
    old = host.read_bytes(path).decode("latin-1")
    edit = actions.set_edit(old, path, key, settings, flavour,
                            any_length_key)
    return _write(host, path, old, edit, write, out, err, commit)


def unset(host: Host, path: str, key: str, names: List[str], flavour: str,
          write: bool, out: TextIO, err: TextIO, *,
          commit: Optional[Commit] = None) -> int:
    """`sdconf unset`: remove tunables (no names: every pair) of KEY;
    exit 1 when there is nothing to remove."""
    old = host.read_bytes(path).decode("latin-1")
    edit = actions.unset_edit(old, path, key, names, flavour)
    return _write(host, path, old, edit, write, out, err, commit)


def _write(host: Host, path: str, old_text: str, edit: actions.Edit,
           write: bool, out: TextIO, err: TextIO,
           commit: Optional[Commit]) -> int:
    for note in edit.notes:
        err.write(note + "\n")
    if edit.new_text == old_text:
        out.write("%s: no change\n" % path)
        return EXIT_OK
    text = unified_diff(old_text, edit.new_text, path, path + " (new)")
    out.write(text)
    if write:
        new = edit.new_text.encode("latin-1")
        if commit is None:
            host.write_atomic(path, new)
        else:
            commit(path, old_text.encode("latin-1"), new, edit.summary, text)
        out.write("%s: written\n" % path)
    return EXIT_OK


def diff(host: Host, a: str, b: str, out: TextIO) -> int:
    """`sdconf diff`: text diff, then what changes in the sd-config-list,
    key by key; exit 1 when the files differ."""
    ta = host.read_bytes(a).decode("latin-1")
    tb = host.read_bytes(b).decode("latin-1")
    if ta == tb:
        return EXIT_OK
    out.write(unified_diff(ta, tb, a, b))
    lines = actions.list_changes(ta, tb)
    if lines:
        out.write("\nsd-config-list changes:\n")
        out.write("".join("  %s\n" % line for line in lines))
    return EXIT_PROBLEMS


def _live_commit(args: argparse.Namespace, env: Env):
    """For `sdconf set|unset --write` on the sd.conf this system uses: a
    commit that goes through the lock, the journal and update_drv like
    apply, so that no write to the live file escapes them.  None for any
    other file."""
    from ..tune.journal import sha256
    from .tune import report_entry
    site = env.tune_site(args)
    if not env.host.same_file(args.file, env.host.sys_path(site.sd_conf)):
        for copy in site.platform.copies.shadowed:
            if env.host.same_file(args.file, env.host.sys_path(copy)):
                env.err.write("sdtune: warning: %s is shadowed: the kernel "
                              "reads %s, so this edit changes nothing\n"
                              % (args.file, site.sd_conf))
        return None

    def commit(path: str, old: bytes, new: bytes, summary: List[str],
               diff: str) -> None:
        entry = site.transaction().run("sdconf " + args.action, new,
                                       sha256(old), summary, diff,
                                       site.verifier())
        report_entry(entry, env.out)
    return commit
