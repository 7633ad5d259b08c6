"""`sdtune certify`, `sdtune infer` and `sdtune results`: their
arguments, and everything they print (certify/certifier.py does the
work)."""

import argparse
import sys
from typing import (TYPE_CHECKING, Dict, List, NamedTuple, Optional,
                    TextIO, Tuple)

from ..errors import EXIT_OK, UsageError
from ..report import render_table, text_or_dash, to_json
from .base import Env, json_output

if TYPE_CHECKING:
    from ..certify.crosscheck import Suspect
    from ..certify.records import CertRecord
    from ..certify.shelf import DriveState, ShelfOutcome
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
        cert.add_argument("--jobs", type=int, metavar="N",
                          help="measure at most N drives at a time "
                          "(default: all the targets)")
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
                       as_json, args.trust_flush_timing, args.logical_block,
                       args.jobs)


# ---------------------------------------------------------------- certify

def cmd_certify(host: "Host", state_dir: str, timing: "CertifySettings",
                targets: List[str], confirm: List[str], out: TextIO,
                err: TextIO, as_json: bool = False,
                trust_timing: bool = False,
                logical_block: Optional[int] = None,
                jobs: Optional[int] = None) -> int:
    """Measure every target, ``jobs`` at a time (all by default), and
    print the verdicts in the order given.  A drive that fails does not
    stop the others: its error is said after the verdicts, and the exit
    status is the first failure's."""
    from ..certify.certifier import (prepare, render_verdict, result_json,
                                     store_record)
    from ..certify.shelf import Shelf
    from .shelfview import ShelfView
    if jobs is not None and jobs < 1:
        raise UsageError("certify", "--jobs %d" % jobs,
                         "must be at least 1")
    resolved = prepare(host, state_dir, targets, confirm, logical_block)
    tty = hasattr(err, "isatty") and err.isatty()

    def store(drive: "DriveState") -> None:
        assert drive.record is not None
        store_record(host, state_dir, drive.target, drive.record)

    view: Optional[ShelfView] = None
    shelf = Shelf(host, resolved, timing, trust_timing, logical_block,
                  jobs or len(resolved),
                  update=lambda d: view.update(d) if view else None,
                  finished=store)
    view = ShelfView(err, tty, host.monotonic_ns, shelf.drives)
    try:
        outcome = shelf.run()
    except BaseException:
        # Ctrl-C, SIGTERM: every engine is already killed by PID.
        view.close()
        err.write("sdtune: certify: %s\n" % stopped_summary(shelf.drives))
        raise
    view.close()
    done = [d.record for d in outcome.drives if d.record is not None]
    if as_json:
        out.write(to_json({"results": [result_json(r) for r in done]}))
    else:
        for rec in done:
            out.write(render_verdict(rec))
    notes = bottleneck_lines(outcome)
    notes += _suspects_of_run(host, state_dir, done)
    for line in notes:
        if as_json:
            err.write("sdtune: note: %s\n" % line)
        else:
            out.write("%s\n" % line)
    failed = [d.error for d in outcome.drives if d.error is not None]
    for e in failed[1:]:
        err.write("sdtune: %s\n" % e)
    if failed:
        # The first failure is the command's: the CLI says it last.
        raise failed[0]
    return EXIT_OK


def stopped_summary(drives: List["DriveState"]) -> str:
    """Which drives finished (their records are stored) and which were
    stopped (no record), after Ctrl-C or SIGTERM."""
    done = [d.target.arg for d in drives if d.record is not None and
            d.error is None]
    rest = [d.target.arg for d in drives if d.record is None or
            d.error is not None]
    return "finished: %s; stopped, no record: %s" % (
        ", ".join(done) or "none", ", ".join(rest) or "none")


def bottleneck_lines(outcome: "ShelfOutcome") -> List[str]:
    """What the host did to the measurements: the drives that cost more
    per I/O in the crowd than alone, then one line per pass that
    measured phases again because of it."""
    slowed = [(d.target.arg, r) for d in outcome.drives for r in d.slowed]
    if not slowed:
        return []
    drives = sorted({target for target, _ in slowed})
    low = min(r.slowdown for _, r in slowed)
    high = max(r.slowdown for _, r in slowed)
    lines = ["host bottleneck: %d of %d drives cost %s as much per I/O "
             "beside the others as alone (noise allows %.2fx): %s" % (
                 len(drives), len(outcome.drives),
                 "%.2fx" % low if low == high else
                 "%.2fx to %.2fx" % (low, high),
                 min(r.limit for _, r in slowed), ", ".join(drives))]
    for jobs, reruns in outcome.passes:
        by_phase: Dict[str, List[str]] = {}
        for target, rerun in reruns:
            by_phase.setdefault(rerun.phase, []).append(target)
        lines.append("host bottleneck: measured again %s: %s" % (
            "one drive at a time" if jobs == 1 else "%d at a time" % jobs,
            "; ".join("%s phase of %s" % (phase, ", ".join(targets))
                      for phase, targets in by_phase.items())))
    if not outcome.passes:
        lines.append("host bottleneck: every verdict it touched is one "
                     "load cannot make (confident sector and cache "
                     "verdicts): nothing measured again")
    return lines


def _suspects_of_run(host: "Host", state_dir: str,
                     done: List["CertRecord"]) -> List[str]:
    """The suspect units among the drives just measured, compared with
    every stored record of their models."""
    from ..certify import records
    from ..certify.crosscheck import cross_check
    keys = {r.key for r in done if r.key}
    if not keys:
        return []
    stored, _ = records.load_checked(host, state_dir)
    serials = {(r.key, r.unit_serial) for r in done}
    suspects = [s for s in cross_check([r for r in stored if r.key in keys])
                if (s.key, s.serial) in serials]
    text = suspect_lines(suspects)
    return text.splitlines() if text else []


# ---------------------------------------------------------------- results

def _key_cell(key: Optional[str], parsable: bool) -> str:
    # A file target has no drive key (null): "-" like any unknown field.
    if key is None:
        return "-"
    return key if parsable else '"%s"' % key


def _confidence_cell(value: Optional[float]) -> str:
    return "-" if value is None else "%.2f" % value


class ResultRow(NamedTuple):
    """One stored record and, when it is the latest record of a suspect
    unit (certify/crosscheck.py), why; else no reasons."""

    record: "CertRecord"
    suspect: Tuple[str, ...] = ()


# Rows hold records that passed records.load_checked; a field a stored
# file leaves out has its default (None or ""), shown as "-".
RESULT_COLUMNS = [
    ("KEY", lambda r, p: _key_cell(r.record.key, p)),
    ("SERIAL", lambda r, p: text_or_dash(r.record.serial)),
    ("FIRMWARE", lambda r, p: text_or_dash(r.record.firmware)),
    ("NATIVE", lambda r, p: text_or_dash(r.record.native_sector_bytes)),
    ("CONF", lambda r, p: _confidence_cell(r.record.sector_confidence)),
    ("CACHE", lambda r, p: text_or_dash(r.record.cache)),
    ("WHEN", lambda r, p: text_or_dash(r.record.time_iso)),
    ("NOTE", lambda r, p: "suspect" if r.suspect else "-"),
    ("TARGET", lambda r, p: text_or_dash(r.record.target)),
]


def result_rows(recs: List["CertRecord"], suspects: List["Suspect"]
                ) -> List[ResultRow]:
    """The rows of ``recs``: a suspect's reasons go with the latest
    record of its unit, the one the cross-check compared (an older
    record of the same unit was not)."""
    from ..tune.members import latest_by_serial
    reasons = {(s.key, s.serial): s.reasons for s in suspects}
    compared = {id(r): reasons.get((key, r.unit_serial), ())
                for key, latest in latest_by_serial(recs).items()
                for r in latest}
    return [ResultRow(r, compared.get(id(r), ())) for r in recs]


def suspect_lines(suspects: List["Suspect"]) -> str:
    """One line per suspect unit, for after the results of `results`
    and of a shelf's `certify`; "" when there is none."""
    return "".join('suspect unit %s (key "%s"): %s\n' % (
        s.serial, s.key, "; ".join(s.reasons)) for s in suspects)


def cmd_results(host: "Host", state_dir: str, out: TextIO,
                as_json: bool = False, scripted: bool = False,
                err: Optional[TextIO] = None) -> int:
    """The stored records, the units that stand out among those of
    their key flagged as suspect; a file that is not a record is named
    in a warning on ``err`` (default stderr) and left out."""
    from ..certify import records
    from ..certify.crosscheck import cross_check
    recs, problems = records.load_checked(host, state_dir)
    for problem in problems:
        (err or sys.stderr).write("sdtune: warning: %s\n" % problem)
    suspects = cross_check(recs)
    rows = result_rows(recs, suspects)
    if as_json:
        # Each file as stored, keys this version does not know included.
        out.write(to_json({"results": [
            dict(row.record.as_stored(), suspect=list(row.suspect))
            for row in rows]}))
    else:
        out.write(render_table(RESULT_COLUMNS, rows, scripted))
        if not scripted:
            # -H output is one record a line for scripts: NOTE says it.
            out.write(suspect_lines(suspects))
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
