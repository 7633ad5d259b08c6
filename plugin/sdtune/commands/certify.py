"""`sdtune certify`, `sdtune infer` and `sdtune results`: their
arguments, and everything they print (certify/certifier.py does the
work)."""

import argparse
import sys
from typing import TYPE_CHECKING, List, Optional, TextIO

from ..errors import EXIT_OK, SdtuneError
from ..report import render_table, text_or_dash, to_json
from .base import Env, json_output

if TYPE_CHECKING:
    from ..certify.records import CertRecord
    from ..certify.runner import Progress
    from ..certify.workload import CertifySettings
    from ..host import Host

COMMANDS = ("certify", "infer", "results")


def add_parser(sub, name: str) -> None:
    if name == "certify":
        cert = sub.add_parser("certify", help="measure SSDs (destroys "
                              "their data) and decide native sector size, "
                              "cache and queue depth")
        cert.add_argument("targets", nargs="+", metavar="DISK|PATH")
        cert.add_argument("--confirm", nargs="+", action="extend",
                          default=[], metavar="DISK|PATH", required=True,
                          help="repeat every target: its data will be lost")
        json_output(cert)
        cert.add_argument("--trust-flush-timing", action="store_true",
                          help="allow cache-nonvolatile from flush timing "
                          "alone, without the drive's NV_SUP evidence")
        cert.add_argument("--logical-block", type=int, metavar="BYTES",
                          help="logical block size of a file target")
    elif name == "infer":
        infer = sub.add_parser("infer", help="the certify verdict from "
                               "existing vdbench or fio output, without I/O")
        infer.add_argument("--from", dest="source", required=True,
                           metavar="FILE")
        infer.add_argument("--format", choices=("vdbench", "fio"))
        json_output(infer)
        infer.add_argument("--trust-flush-timing", action="store_true")
    else:
        results = sub.add_parser("results",
                                 help="stored certification records")
        results.add_argument("-H", dest="scripted", action="store_true")
        json_output(results)


def run(args: argparse.Namespace, env: Env) -> int:
    as_json = args.output == "json"
    if args.command == "results":
        return cmd_results(env.host, env.cfg.state_dir, env.out, as_json,
                           args.scripted, env.err)
    if args.command == "infer":
        text = env.host.read_bytes(args.source).decode("utf-8", "replace")
        return cmd_infer(args.source, args.format, text, env.out, as_json,
                         args.trust_flush_timing, env.err)
    return cmd_certify(env.host, env.cfg.state_dir, env.cfg.certify(),
                       args.targets, args.confirm, env.out, env.err,
                       as_json, args.trust_flush_timing, args.logical_block)


# ---------------------------------------------------------------- certify

def cmd_certify(host: "Host", state_dir: str, timing: "CertifySettings",
                targets: List[str], confirm: List[str], out: TextIO,
                err: TextIO, as_json: bool = False,
                trust_timing: bool = False,
                logical_block: Optional[int] = None) -> int:
    from ..certify.certifier import (certify_one, prepare, render_verdict,
                                     result_json, store_record)
    resolved = prepare(host, state_dir, targets, confirm, logical_block)
    tty = hasattr(err, "isatty") and err.isatty()
    done: List["CertRecord"] = []
    try:
        for target in resolved:
            progress = _progress_line(host, err, target.arg, tty)
            rec = certify_one(host, target, timing, trust_timing,
                              logical_block, progress)
            if tty:
                err.write("\n")
            done.append(rec)
            if not as_json:
                out.write(render_verdict(rec))
            store_record(host, state_dir, target, rec)
    except SdtuneError:
        # The measured targets' data is gone either way: their verdicts
        # are shown before the error.
        if as_json and done:
            out.write(to_json({"results": [result_json(r) for r in done]}))
        raise
    if as_json:
        out.write(to_json({"results": [result_json(r) for r in done]}))
    return EXIT_OK


def _progress_line(host: "Host", err: TextIO, arg: str, tty: bool
                   ) -> "Progress":
    """The callback that keeps one line on a terminal's stderr up to
    date while ``arg`` is measured; silent elsewhere (a log file would
    fill with carriage returns)."""
    started = host.monotonic_ns()

    def progress(phase: str, what: str, value: float,
                 conf: Optional[float]) -> None:
        if tty:
            err.write("\r%-24s %-6s %-18s %6.1f s %s" % (
                arg[-24:], phase, what,
                (host.monotonic_ns() - started) / 1e9,
                "confidence %.2f" % conf if conf is not None
                else "%9.0f IOPS" % value))
            err.flush()
    return progress


# ---------------------------------------------------------------- results

def _key_cell(key: Optional[str], parsable: bool) -> str:
    # A file target has no drive key (null): "-" like any unknown field.
    if key is None:
        return "-"
    return key if parsable else '"%s"' % key


def _confidence_cell(value: Optional[float]) -> str:
    return "-" if value is None else "%.2f" % value


# Rows are records that passed records.load_checked; a field a stored
# file leaves out has its default (None or ""), shown as "-".
RESULT_COLUMNS = [
    ("KEY", lambda r, p: _key_cell(r.key, p)),
    ("SERIAL", lambda r, p: text_or_dash(r.serial)),
    ("FIRMWARE", lambda r, p: text_or_dash(r.firmware)),
    ("NATIVE", lambda r, p: text_or_dash(r.native_sector_bytes)),
    ("CONF", lambda r, p: _confidence_cell(r.sector_confidence)),
    ("CACHE", lambda r, p: text_or_dash(r.cache)),
    ("WHEN", lambda r, p: text_or_dash(r.time_iso)),
    ("TARGET", lambda r, p: text_or_dash(r.target)),
]


def cmd_results(host: "Host", state_dir: str, out: TextIO,
                as_json: bool = False, scripted: bool = False,
                err: Optional[TextIO] = None) -> int:
    """The stored records; a file that is not one is named in a warning
    on ``err`` (default stderr) and left out."""
    from ..certify import records
    recs, problems = records.load_checked(host, state_dir)
    for problem in problems:
        (err or sys.stderr).write("sdtune: warning: %s\n" % problem)
    if as_json:
        # Each file as stored, keys this version does not know included.
        out.write(to_json({"results": [r.as_stored() for r in recs]}))
    else:
        out.write(render_table(RESULT_COLUMNS, recs, scripted))
    return EXIT_OK


# ------------------------------------------------------------------ infer

def cmd_infer(path: str, fmt: Optional[str], text: str, out: TextIO,
              as_json: bool = False, trust_timing: bool = False,
              err: Optional[TextIO] = None) -> int:
    """The certify verdicts from existing vdbench or fio output.  An input
    that is not a measurement is an error naming the file and the field
    (exit 4, as for any output sdtune cannot parse), never a verdict.
    Runs that cannot be used are named on ``err`` (default stderr) and
    in the record's evidence."""
    from ..certify.certifier import (import_benchmark, infer_record,
                                     render_verdict, result_json)
    imported = import_benchmark(path, text, fmt)
    warn = err or sys.stderr
    for line in imported.unused:
        warn.write("sdtune: warning: '%s': not used: %s %s\n"
                   % (path, imported.format, line))
    for line in imported.notes:
        warn.write("sdtune: note: '%s': %s %s\n"
                   % (path, imported.format, line))
    rec = infer_record(path, imported, trust_timing)
    if as_json:
        out.write(to_json(result_json(rec)))
    else:
        out.write(render_verdict(rec))
    return EXIT_OK
