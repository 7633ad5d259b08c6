# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune report [DISK|KEY|SERIAL ...] [-o FILE]`: one self-contained
HTML page of the stored certification records (report/html.py), written
atomically through the host to FILE, by default <state_dir>/report.html
under the root, or to standard output for `-o -`."""

import argparse
from typing import TYPE_CHECKING, List, Optional, Sequence, TextIO

from .. import __version__
from ..errors import EXIT_OK, EXIT_PROBLEMS, SdtuneError
from .base import Env

if TYPE_CHECKING:
    from ..host import Host

REPORT_NAME = "report.html"


def add_parser(sub, name: str) -> None:
    p = sub.add_parser("report", help="an HTML page with charts of the "
                       "stored certification records")
    p.add_argument("which", nargs="*", metavar="DISK|KEY|SERIAL",
                   help="only these drives' records (a target, key, "
                   "serial or model); default: every stored record")
    p.add_argument("-o", dest="output", metavar="FILE",
                   help="write the page to FILE ('-' for standard "
                   "output); default: report.html in the state "
                   "directory")


def run(args: argparse.Namespace, env: Env) -> int:
    from ..tune.prove import load_proofs
    # The proof after apply: what the last `sdtune prove` of every disk
    # found, kept in the state directory (none: the section says how to
    # get one).
    proofs, problem = load_proofs(env.host, env.cfg.state_dir)
    if problem:
        env.err.write("sdtune: warning: %s\n" % problem)
    return cmd_report(env.host, env.cfg.state_dir, args.which, args.output,
                      env.out, env.err, proofs)


def cmd_report(host: "Host", state_dir: str, which: Sequence[str],
               output: Optional[str], out: TextIO, err: TextIO,
               proofs: Optional[List[dict]] = None) -> int:
    """Render the records (those ``which`` names, else all; the latest
    of each unit) and write the page; say where.  ``proofs`` is the
    proof-after-apply section's rows, when the caller has them."""
    from ..certify.travel import node_name, time_iso
    from ..records import storage
    from ..records.crosscheck import cross_check
    from ..records.group import latest, named_or_refused
    from ..report.html import Meta, render
    recs, problems = storage.load_checked(host, state_dir)
    for problem in problems:
        err.write("sdtune: warning: %s\n" % problem)
    # Suspects are found among every stored record, as `results` finds
    # them: naming one drive must not hide that it stands out.
    suspects = cross_check(recs)
    if which:
        recs = named_or_refused(recs, which, "report on")
    path = output or host.sys_path(state_dir.rstrip("/") + "/" +
                                   REPORT_NAME)
    if not recs:
        raise SdtuneError("write report", path, "no certification record "
                          "is stored (sdtune certify makes them)",
                          EXIT_PROBLEMS)
    chosen = latest(recs)
    page = render(chosen, suspects, Meta(time_iso(host.now()), __version__,
                                         node_name(host)), proofs)
    data = page.encode("utf-8")
    if output == "-":
        out.write(page)
        return EXIT_OK
    try:
        if output is None:
            host.mkdirs(host.sys_path(state_dir))
        # All or nothing: a reader (or a failed write) never sees half a
        # page, and an earlier report stays whole until the new one is.
        host.write_atomic(path, data, mode=0o644)
    except SdtuneError as e:
        raise SdtuneError("write report", path, e.reason,
                          e.exit_code) from None
    out.write("report of %d record%s written to %s (%d bytes)\n" % (
        len(chosen), "" if len(chosen) == 1 else "s", path, len(data)))
    return EXIT_OK
