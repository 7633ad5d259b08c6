# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune certify`, `sdtune infer` and `sdtune results`: their
arguments, and everything they print (certify/certifier.py does the
work)."""

import argparse
import stat as statmod
import sys
import threading
from typing import (TYPE_CHECKING, BinaryIO, Dict, List, NamedTuple,
                    Optional, TextIO, Tuple)

from ..errors import EXIT_OK, SdtuneError, UsageError
from ..tables import change_json, render_table, text_or_dash, to_json
from .. import __version__
from .base import Env, json_output

if TYPE_CHECKING:
    from ..config import Signing
    from ..records.crosscheck import Suspect
    from ..records.record import CertRecord
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
        results.add_argument("which", nargs="*", metavar="DISK|KEY|SERIAL",
                             help="show these drives' records in full, "
                             "with text charts of what was measured")
        results.add_argument("-H", dest="scripted", action="store_true")
        json_output(results)
        travel = results.add_mutually_exclusive_group()
        travel.add_argument("--export", metavar="FILE",
                            help="write the records to FILE (a new file; "
                            "'-' for standard output) for `results "
                            "--import` on another appliance")
        travel.add_argument("--import", dest="import_file", metavar="FILE",
                            help="store the records of an export made on "
                            "another appliance ('-' for standard input)")
        results.add_argument("--key", metavar="KEY",
                             help="with --export: only the records of KEY "
                             "(24 characters, as in sd.conf)")
        results.add_argument("--dry-run", action="store_true",
                             help="with --import: say what would be "
                             "stored, store nothing")


def run(args: argparse.Namespace, env: Env) -> int:
    as_json = args.output == "json"
    if args.command == "results":
        return cmd_results(env.host, env.cfg.state_dir, ResultsRequest(
            as_json, args.scripted, args.export, args.key, args.import_file,
            args.dry_run, env.cfg.signing(), tuple(args.which)), env.out,
            env.err)
    if args.command == "infer":
        text = read_input(env.host, "infer from", args.source) \
            .decode("utf-8", "replace")
        return cmd_infer(args.source, args.format, text, env.out, as_json,
                         args.trust_flush_timing, env.err)
    return cmd_certify(env.host, env.cfg.state_dir, env.cfg.certify(),
                       CertifyRequest(args.targets, args.confirm, as_json,
                                      args.trust_flush_timing,
                                      args.logical_block, args.jobs),
                       env.out, env.err)


# ---------------------------------------------------------------- certify

class CertifyRequest(NamedTuple):
    """One `sdtune certify`: the targets and the consent for each, and
    how to measure and print."""

    targets: List[str]
    confirm: List[str]
    as_json: bool = False
    trust_timing: bool = False
    logical_block: Optional[int] = None
    jobs: Optional[int] = None


def cmd_certify(host: "Host", state_dir: str, timing: "CertifySettings",
                request: CertifyRequest, out: TextIO, err: TextIO) -> int:
    """Measure every target, ``jobs`` at a time (all by default), and
    print the verdicts in the order given.  A drive that fails does not
    stop the others: its error is said after the verdicts, and the exit
    status is the first failure's."""
    targets, confirm, as_json, trust_timing, logical_block, jobs = request
    from ..certify.certifier import (certify_origin, prepare,
                                     render_verdict, result_json,
                                     store_record, targets_locked)
    from ..certify.charts import record_charts
    from ..certify.shelf import Shelf
    from .shelfview import ShelfView
    if jobs is not None and jobs < 1:
        raise UsageError("certify", "--jobs %d" % jobs,
                         "must be at least 1")
    resolved = prepare(host, state_dir, targets, confirm, logical_block)
    # Held from before the first write to the last record: another
    # certify of one of these targets is refused, not interleaved.
    with targets_locked(host, state_dir, resolved):
        tty = hasattr(err, "isatty") and err.isatty()

        origins: List[dict] = []
        origin_lock = threading.Lock()

        def store(drive: "DriveState") -> None:
            assert drive.record is not None
            with origin_lock:
                # Asked once, when the first drive is done: an engine that
                # answers --version late must not delay any measurement.
                if not origins:
                    origins.append(certify_origin(host))
            drive.record.origin = origins[0]
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
            # On a terminal the verdict is followed by its text charts
            # (as `results DISK` shows them); a pipe or a log gets the
            # verdict alone, as before.
            charts = hasattr(out, "isatty") and out.isatty()
            for rec in done:
                out.write(render_verdict(rec))
                if charts:
                    out.write("".join("%s\n" % line
                                      for line in record_charts(rec)))
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
    from ..records import storage
    from ..records.crosscheck import cross_check
    keys = {r.key for r in done if r.key}
    if not keys:
        return []
    stored, _ = storage.load_checked(host, state_dir)
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
    unit (records/crosscheck.py), why; else no reasons."""

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
    ("TARGET", lambda r, p: _target_cell(r.record)),
]


def _target_cell(rec: "CertRecord") -> str:
    """The target; an imported record's as HOST:TARGET, since it names
    a device or file of the appliance it was certified on."""
    target = text_or_dash(rec.target)
    host = rec.origin_host
    return target if host is None else "%s:%s" % (host, target)


def result_rows(recs: List["CertRecord"], suspects: List["Suspect"]
                ) -> List[ResultRow]:
    """The rows of ``recs``: a suspect's reasons go with the latest
    record of its unit, the one the cross-check compared (an older
    record of the same unit was not)."""
    from ..records.group import latest_by_serial
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


class ResultsRequest(NamedTuple):
    """One `sdtune results`: the list (as JSON, or -H), an export (of
    one key) or an import (or its dry run)."""

    as_json: bool = False
    scripted: bool = False
    export: Optional[str] = None
    key: Optional[str] = None
    import_file: Optional[str] = None
    dry_run: bool = False
    signing: Optional["Signing"] = None
    # Drives (target, key, serial or model) whose records to show in
    # full, with charts; none: the list.
    which: Tuple[str, ...] = ()


def cmd_results(host: "Host", state_dir: str, request: ResultsRequest,
                out: TextIO, err: Optional[TextIO] = None,
                stdin: Optional[BinaryIO] = None) -> int:
    """The stored records, the units that stand out among those of
    their key flagged as suspect; a file that is not a record is named
    in a warning on ``err`` (default stderr) and left out.  With
    ``export``, the records (of ``key``) written to that file instead;
    with ``import_file``, the records of an export (``stdin`` for "-")
    stored here."""
    from ..records import storage
    from ..records.crosscheck import cross_check
    as_json, scripted, export, key, import_file, dry_run, signing, which = \
        request
    warn = err or sys.stderr
    if which and (scripted or export is not None or
                  import_file is not None):
        raise UsageError("use", which[0], "a drive's records are shown "
                         "in full, not with -H, --export or --import")
    if key is not None and export is None:
        raise UsageError("use", "--key %s" % key, "applies to --export "
                         "only")
    if dry_run and import_file is None:
        raise UsageError("use", "--dry-run", "applies to --import "
                         "only")
    if scripted and (export is not None or import_file is not None):
        raise UsageError("use", "-H", "applies to the list of records, "
                         "not to --export or --import")
    if import_file is not None:
        return import_records(host, state_dir, request, out, warn, stdin)
    recs, problems = storage.load_checked(host, state_dir)
    for problem in problems:
        warn.write("sdtune: warning: %s\n" % problem)
    if export is not None:
        return export_records(host, recs, export, key, out, warn, as_json,
                              signing)
    suspects = cross_check(recs)
    if which:
        from ..records.group import named_or_refused
        recs = named_or_refused(recs, which, "show the records of")
    rows = result_rows(recs, suspects)
    if as_json:
        # Each file as stored, keys this version does not know included.
        out.write(to_json({"results": [
            dict(row.record.as_stored(), suspect=list(row.suspect))
            for row in rows]}))
    elif which:
        from ..certify.certifier import render_verdict
        from ..certify.charts import record_charts
        for row in rows:
            out.write(render_verdict(row.record))
            out.write("".join("%s\n" % line
                              for line in record_charts(row.record)))
            out.write("".join("  suspect: %s\n" % reason
                              for reason in row.suspect))
            out.write("\n")
    else:
        out.write(render_table(RESULT_COLUMNS, rows, scripted))
        if not scripted:
            # -H output is one record a line for scripts: NOTE says it.
            out.write(suspect_lines(suspects))
    return EXIT_OK


def export_records(host: "Host", recs: List["CertRecord"], path: str,
                   key: Optional[str], out: TextIO, err: TextIO,
                   as_json: bool = False,
                   signing: Optional["Signing"] = None) -> int:
    """Write the records of drives (of ``key``) as an export document to
    ``path`` (a new file; "-": ``out``), signed when [signing] names a
    key, and say what was written."""
    from ..certify import travel
    if key is not None:
        why = travel.check_key(key)
        if why:
            raise UsageError("export records of", key, why)
    chosen = [r for r in recs if travel.exportable(r) and
              (key is None or r.key == key)]
    left = [r for r in recs if not travel.exportable(r)]
    if left:
        err.write("sdtune: note: not exported: %d record%s of file "
                  "targets (they name no drive)\n"
                  % (len(left), "" if len(left) == 1 else "s"))
    if key is not None and not chosen:
        err.write('sdtune: warning: no stored record of key "%s": the '
                  "export holds no record\n" % key)
    now = host.now()
    by = {"host": travel.node_name(host),
          "platform": travel.platform_name(host),
          "sdtune_version": __version__, "time": now,
          "time_iso": travel.time_iso(now)}
    if by["host"] is None:
        err.write("sdtune: warning: 'uname -n' gave no node name: the "
                  "export names no host\n")
    try:
        doc = travel.build_export(chosen, by)
    except travel.BadExport as e:
        raise SdtuneError("export", path, e.why) from None
    signed_by = None
    if signing is not None and signing.key:
        signed_by = signing.identity or by["host"]
        if not signed_by:
            raise SdtuneError("sign the export with", signing.key,
                              "no [signing] identity and no node name")
        travel.sign_export(host, doc, host.sys_path(signing.key),
                           signed_by)
    data = travel.render_export(doc)
    if path == "-":
        out.write(data.decode("ascii"))
        return EXIT_OK
    # A new file only, like `plan --save`: nothing already there is
    # replaced.
    host.create_new(path, data, mode=0o644)
    if as_json:
        out.write(to_json({"file": path, "sha256": doc["sha256"],
                           "signed_by": signed_by,
                           "exported": [{"key": r.key, "serial": r.serial,
                                         "firmware": r.firmware}
                                        for r in chosen]}))
    else:
        out.write("exported %d record%s to %s (sha256 %s, %s)\n"
                  % (len(chosen), "" if len(chosen) == 1 else "s", path,
                     doc["sha256"], "signed by %s" % signed_by
                     if signed_by else "unsigned"))
    return EXIT_OK


def read_input(host: "Host", verb: str, path: str) -> bytes:
    """The bytes of the input file ``path``, read through the host: a
    regular file only, so that a FIFO or a device cannot make sdtune
    wait for ever (SdtuneError "cannot VERB 'PATH'", exit 4).  stat
    first, then read: a file replaced by a FIFO in between does not
    block the read either (the hosts' read_bytes opens non-blocking), it
    reads as empty, which is not an input."""
    try:
        st = host.stat(path)
    except SdtuneError as e:
        raise SdtuneError("read", path, e.reason, e.exit_code) from None
    if not statmod.S_ISREG(st.st_mode):
        raise SdtuneError(verb, path, "not a regular file (%s)" % (
            "a directory" if statmod.S_ISDIR(st.st_mode) else
            "a FIFO" if statmod.S_ISFIFO(st.st_mode) else
            "a device" if statmod.S_ISCHR(st.st_mode) or
            statmod.S_ISBLK(st.st_mode) else "a socket or other special "
            "file"))
    return host.read_bytes(path)


def _import_line(step, dry_run: bool = False) -> str:
    """One line of the import's text, its travelling text (serial,
    host, reason) escaped as the tables escape cells."""
    from ..tables import escape_cell
    return escape_cell(_import_text(step, dry_run))


def _import_text(step, dry_run: bool = False) -> str:
    rec = step.entry.record
    ident = 'record %d "%s" serial %s firmware %s' % (
        step.entry.index, rec.key if rec.key is not None else
        rec.driver or "-", text_or_dash(rec.unit_serial),
        text_or_dash(rec.firmware))
    if step.action == "skipped":
        return "skipped    %s: %s" % (ident, step.reason)
    how = " (already imported)" if step.action == "unchanged" else ""
    action = "to import" if dry_run and step.action == "imported" else \
        step.action
    return "%-10s %s from %s%s" % (action, ident,
                                   step.from_host or "-", how)


def import_records(host: "Host", state_dir: str, request: ResultsRequest,
                   out: TextIO, err: TextIO,
                   stdin: Optional[BinaryIO] = None) -> int:
    """Store the records of the export in ``import_file`` ("-":
    ``stdin``, default standard input): the whole document is checked
    first, its signature verified against the trusted signers of
    [signing], and a refusal stores nothing (SdtuneError, exit 4).  A
    dry run checks the same and says what would be stored."""
    path, as_json, dry_run = request.import_file, request.as_json, \
        request.dry_run
    assert path is not None
    allowed_signers = request.signing.allowed_signers \
        if request.signing else None
    from ..certify import travel
    from ..host.base import READ_LIMIT
    from ..tables import escape_cell
    if path == "-":
        src = stdin
        if src is None:
            if sys.stdin is None:
                raise SdtuneError("import", path, "standard input is "
                                  "closed")
            src = sys.stdin.buffer
        try:
            data = src.read(READ_LIMIT + 1)
        except (OSError, ValueError) as e:
            raise SdtuneError("import", path, "cannot read standard "
                              "input: %s" % (getattr(e, "strerror", None)
                                             or e)) from e
        if len(data) > READ_LIMIT:
            raise SdtuneError("import", path, "larger than %d MiB: not an "
                              "export" % (READ_LIMIT >> 20))
    else:
        data = read_input(host, "import", path)
    try:
        result = travel.import_file(host, state_dir, path, data,
                                    store=not dry_run,
                                    allowed_signers=allowed_signers)
    except SdtuneError as e:
        # A refusal names the record by its key and serial, which came
        # with the file: escaped as the tables escape them.
        e.reason = escape_cell(e.reason)
        raise
    for problem in result.warnings:
        err.write("sdtune: warning: %s\n" % problem)
    new, same, skipped = (result.of("imported"), result.of("unchanged"),
                          result.of("skipped"))
    if as_json:
        out.write(to_json(change_json(
            result.changed and not dry_run, dry_run=dry_run,
            files=result.files(), signed_by=result.signed_by,
            imported=[travel.entry_json(s) for s in new],
            unchanged=[travel.entry_json(s) for s in same],
            skipped=[travel.entry_json(s) for s in skipped])))
        return EXIT_OK
    for step in result.steps:
        out.write(_import_line(step, dry_run) + "\n")
    out.write("signed by %s\n" % result.signed_by if result.signed_by
              else "unsigned: never evidence of a non-volatile cache\n")
    summary = "%s: %d imported, %d unchanged, %d skipped" % (
        path, len(new), len(same), len(skipped))
    if dry_run:
        summary += ": dry run, nothing stored"
    elif not result.changed:
        summary += ": nothing changed"
    out.write(summary + "\n")
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
