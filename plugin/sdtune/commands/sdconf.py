# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune sdconf check|show|set|unset|diff`: the offline sd.conf tools;
set and unset on the sd.conf this system uses go through the same lock,
journal and update_drv as apply.  check, show, set and unset read an
nvme.conf (by its name, or --driver nvme) by the nvme driver's rules,
its models in place of sd's keys (nvmeconf/actions.py)."""

import argparse
import json
from dataclasses import dataclass
from typing import Callable, List, Optional, TextIO

from ..driverconf.checks import format_diagnostic, is_problem
from ..driverconf.edit import Edit, NothingToUnset, unified_diff
from ..driverconf.parser import ConfFile, parse
from ..drivers import DEFAULT, DRIVERS, for_file
from ..errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, SdtuneError
from ..host import Host
from ..tables import change_json, to_json
from ..sdconf import actions
from ..sdconf.tunables import FLAVOURS
from .base import Env, json_output

COMMANDS = ("sdconf",)


def _driver_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--driver", choices=("sd", "nvme"),
                   help="whose rules: sd (sd-config-list) or nvme "
                   "(nvme-config-list); default from the file's name, "
                   "nvme for nvme.conf, else sd")


def _key_args(p: argparse.ArgumentParser) -> None:
    _driver_arg(p)
    p.add_argument("--vid", help="INQUIRY vendor id (padded for you)")
    p.add_argument("--pid", help="INQUIRY product id (padded for you)")
    p.add_argument("--write", action="store_true",
                   help="write the file (default: print the diff only)")
    json_output(p)


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
    _driver_arg(p)
    json_output(p)
    p = ssub.add_parser("show", help="pairs, decoded tunables and what "
                        "sd makes of them (nvme.conf: triplets, and what "
                        "nvme makes of them)")
    p.add_argument("file")
    _driver_arg(p)
    json_output(p)
    p = ssub.add_parser("set", help="set tunables for a key (nvme.conf: "
                        "for a model)")
    p.add_argument("file")
    p.add_argument("words", nargs="+", metavar="KEY|name=value",
                   help="KEY (unless --vid/--pid; the model in nvme.conf) "
                   "then name=value ...")
    _key_args(p)
    p.add_argument("--any-length-key", action="store_true",
                   help="write a KEY that is not vendor (8) + product (16) "
                   "characters, e.g. a vendor-only or wildcard key")
    p = ssub.add_parser("unset", help="remove tunables, or every pair, "
                        "for a key (nvme.conf: every triplet, for a "
                        "model)")
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


def driver_of(args: argparse.Namespace, path: str) -> str:
    """The rules a file is read by: --driver, else those of the driver
    whose .conf has the file's name (nvme for nvme.conf), else sd."""
    if args.driver:
        return args.driver
    return for_file(path).name


def _split_key(args: argparse.Namespace) -> List[str]:
    """Separate KEY from the rest of the words unless --vid/--pid give it
    (nvme.conf: the model is the first word)."""
    args.key, words = DRIVERS[args.driver].split_key(
        args.action, args.file, list(args.words), args.vid, args.pid)
    return words


def run(args: argparse.Namespace, env: Env) -> int:
    flavour = env.flavour(args)
    action, host, out = args.action, env.host, env.out
    if action != "diff":
        # Also picks the live site's file (nvme.conf or sd.conf).
        args.driver = driver_of(args, args.file)
    if action == "check":
        return check(host, args.file, flavour, out, args.output == "json",
                     args.driver)
    if action == "show":
        return show(host, args.file, flavour, out, args.output == "json",
                    args.driver)
    if action == "diff":
        return diff(host, args.a, args.b, out)
    words = _split_key(args)
    as_json = args.output == "json"
    if action == "set" and not words:
        raise SdtuneError("set tunables in", args.file,
                          "no name=value given", EXIT_USAGE)
    # The live sd.conf's site: for the transaction of --write and, under
    # -o json, for what a dry run would write and need.
    site = _live_site(args, env) if args.write or as_json else None
    commit = _live_commit(site, args.action, env, as_json) \
        if site is not None and args.write else None
    preview = _live_preview(site) if site is not None and as_json else None
    request = EditRequest(args.file, args.key, words, flavour, args.driver,
                          args.write, as_json, commit, preview,
                          getattr(args, "any_length_key", False))
    verb = set_ if action == "set" else unset
    return verb(host, request, out, env.err)


def read_conf(host: Host, path: str) -> ConfFile:
    return parse(host.read_bytes(path).decode("latin-1"))


def check(host: Host, path: str, flavour: str, out: TextIO,
          as_json: bool = False, driver: Optional[str] = None) -> int:
    """`sdconf check`: what the kernel would warn about or ignore; exit 1
    on problems.  nvme.conf (by `driver`, else by the file's name) is
    checked against the nvme driver's rules (nvmeconf/lint.py)."""
    conf = read_conf(host, path)
    rules = DRIVERS[driver] if driver else for_file(path)
    diags = rules.lint(conf, flavour)
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
         as_json: bool = False, driver: str = "sd") -> int:
    """`sdconf show`: pairs, decoded tunables and what sd makes of them;
    for nvme.conf (`driver` nvme) the driver-wide settings and the
    triplets, and what nvme makes of them."""
    conf = read_conf(host, path)
    rules = DRIVERS[driver]
    report = rules.show_report(conf, path, flavour)
    text = rules.render_show(report)
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        out.write(text)
    return EXIT_OK


# commit(path, old_bytes, new_bytes, summary_lines, diff_text) writes
# `new_bytes` in place of `old_bytes` (e.g. as a journalled transaction)
# and returns the journal entry, or None when nothing was journalled.
Commit = Callable[[str, bytes, bytes, List[str], str], object]
# preview(old_bytes, new_bytes, diff_text): the change document of a dry
# run on the live sd.conf (the files its transaction would write).
Preview = Callable[[bytes, bytes, str], dict]


@dataclass
class EditRequest:
    """One `sdconf set` or `unset`: the file, the key (nvme.conf: the
    model), the name=value settings or the names, the rules, and how to
    write: `write` the file (through `commit` when given), or only show
    the diff; `as_json` prints the change document instead (with
    `preview` for what a dry run on the live file would write)."""

    path: str
    key: str
    words: List[str]
    flavour: str
    driver: str = DEFAULT.name
    write: bool = False
    as_json: bool = False
    commit: Optional[Commit] = None
    preview: Optional[Preview] = None
    any_length_key: bool = False


def set_(host: Host, request: EditRequest, out: TextIO, err: TextIO) -> int:
    """`sdconf set`: tunables for KEY (nvme.conf: the model) in the
    file; print the diff, and with `write` write it (_write)."""
    old = host.read_bytes(request.path).decode("latin-1")
    edit = DRIVERS[request.driver].set_edit(
        old, request.path, request.key, request.words, request.flavour,
        request.any_length_key)
    return _write(host, request, old, edit, out, err)


def unset(host: Host, request: EditRequest, out: TextIO, err: TextIO
          ) -> int:
    """`sdconf unset`: remove tunables (no names: every pair; nvme.conf:
    every triplet of the model) of KEY; exit 1 when there is nothing to
    remove, except under `as_json`, where that is "nothing to do":
    changed false, exit 0 (a note on `err` says what was not there)."""
    old = host.read_bytes(request.path).decode("latin-1")
    try:
        edit = DRIVERS[request.driver].unset_edit(
            old, request.path, request.key, request.words, request.flavour)
    except SdtuneError as e:
        if not request.as_json or not isinstance(e.__cause__,
                                                 NothingToUnset):
            raise
        err.write("sdtune: note: %s: %s\n" % (request.path, e.reason))
        out.write(to_json(change_json(False, dry_run=not request.write,
                                      file=request.path, key=request.key)))
        return EXIT_OK
    return _write(host, request, old, edit, out, err)


def _write(host: Host, request: EditRequest, old_text: str, edit: Edit,
           out: TextIO, err: TextIO) -> int:
    """Show the edit (a diff, or under `as_json` the change document with
    the extra keys "file" and "key") and with `write` make it."""
    path, key, write = request.path, request.key, request.write
    for note in edit.notes:
        err.write(note + "\n")
    if edit.new_text == old_text:
        if request.as_json:
            out.write(to_json(change_json(False, dry_run=not write,
                                          file=path, key=key)))
        else:
            out.write("%s: no change\n" % path)
        return EXIT_OK
    text = unified_diff(old_text, edit.new_text, path, path + " (new)")
    old, new = old_text.encode("latin-1"), edit.new_text.encode("latin-1")
    if not request.as_json:
        out.write(text)
    entry = None
    if write:
        if request.commit is None:
            host.write_atomic(path, new)
        else:
            entry = request.commit(path, old, new, edit.summary, text)
        if not request.as_json:
            out.write("%s: written\n" % path)
    if not request.as_json:
        return EXIT_OK
    if entry is not None:
        from ..tune.changes import entry_json
        doc = entry_json(entry, file=path, key=key)
    elif not write and request.preview is not None:
        doc = request.preview(old, new, text)
        doc.update(file=path, key=key)
    else:
        # A file the kernel does not read: no journal, no reboot.
        from ..tune.journal import sha256
        doc = change_json(write, dry_run=not write, diff=text, files=[{
            "path": path, "role": "%s copy" % DRIVERS[request.driver]
            .conf_name, "before_sha256": sha256(old),
            "after_sha256": sha256(new)}], file=path, key=key)
    out.write(to_json(doc))
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


def _live_site(args: argparse.Namespace, env: Env):
    """The tune site when `args.file` is the sd.conf this system uses,
    else None (warning when the file is a shadowed copy)."""
    site = env.tune_site(args)
    if not env.host.same_file(args.file, env.host.sys_path(site.conf_path)):
        for copy in site.platform.copies.shadowed:
            if env.host.same_file(args.file, env.host.sys_path(copy)):
                env.err.write("sdtune: warning: %s is shadowed: the kernel "
                              "reads %s, so this edit changes nothing\n"
                              % (args.file, site.conf_path))
        return None
    return site


def _live_commit(site, action: str, env: Env, as_json: bool = False):
    """For `sdconf set|unset --write` on the sd.conf this system uses
    (`site`): a commit that goes through the lock, the journal and
    update_drv like apply, so that no write to the live file escapes
    them; it reports the entry (text) and returns it."""
    from ..tune.journal import sha256
    from .tune import report_entry

    def commit(path: str, old: bytes, new: bytes, summary: List[str],
               diff: str):
        entry = site.transaction().run("sdconf " + action, new,
                                       sha256(old), summary, diff,
                                       site.verifier())
        if as_json:
            for note in entry.notes:
                env.err.write("sdtune: note: %s\n" % note)
        else:
            report_entry(entry, env.out)
        return entry
    return commit


def _live_preview(site) -> Preview:
    """For `sdconf set|unset -o json` without --write on the live
    sd.conf: what its transaction would write, and whether the change
    would need a reboot, as apply's dry run says them."""
    from ..inventory.disks import take_inventory
    from ..tune.changes import dry_run_json

    def preview(old: bytes, new: bytes, diff: str) -> dict:
        how = site.platform.persistence(old, new)
        return dry_run_json(how, diff, new,
                            take_inventory(site.host).disks, site.flavour,
                            driver=site.driver)
    return preview
