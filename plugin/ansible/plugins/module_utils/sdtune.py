# -*- coding: utf-8 -*-
# Copyright (c) 2026, the sdtune authors
# CDDL-1.0 (see conf/LICENSE of sdtune)
"""The logic shared by the sdtune.illumos modules: build the argv of an
sdtune command, run it through a runner (AnsibleModule.run_command in
the modules, any callable in tests), read its one JSON document, and map
sdtune's documents to module results.

Everything here except run_json is a pure function of its arguments, so
that the tests need neither Ansible nor sdtune.  Runs on the target (or
on the controller with delegate_to and the `host` option), on Python 3.8
and later, with the standard library only.
"""

from __future__ import absolute_import, division, print_function

import json
import os
import stat

__metaclass__ = type

DEFAULT_SDTUNE = "/usr/sbin/sdtune"

# sdtune's own bound on an input it reads (host/base.py READ_LIMIT).
READ_LIMIT = 64 << 20

# The options every module takes, in AnsibleModule argument_spec form.
COMMON_ARGS = dict(
    sdtune=dict(type="path", default=DEFAULT_SDTUNE),
    root=dict(type="path"),
    config=dict(type="path"),
    host=dict(type="str"),
)

# sdtune's exit codes (DESIGN.md): 1 means "problems found" for audit and
# verify, which still print their document.
EXIT_PROBLEMS = 1

# `sdtune apply` override flags, by module option.
ALLOW_FLAGS = (
    ("allow_firmware_mismatch", "--allow-firmware-mismatch"),
    ("allow_ashift_mismatch", "--allow-ashift-mismatch"),
    ("allow_no_nv_evidence", "--allow-no-nv-evidence"),
)


class SdtuneFailure(Exception):
    """An sdtune command that failed, or printed no usable document:
    ``msg`` is sdtune's own error line (or says what was wrong with its
    output), the rest goes into fail_json."""

    def __init__(self, msg, rc=None, cmd=None, stdout="", stderr=""):
        Exception.__init__(self, msg)
        self.msg = msg
        self.rc = rc
        self.cmd = cmd
        self.stdout = stdout
        self.stderr = stderr

    def fail_args(self):
        """Keyword arguments for module.fail_json."""
        args = dict(msg=self.msg, stdout=self.stdout, stderr=self.stderr)
        if self.rc is not None:
            args["rc"] = self.rc
        if self.cmd is not None:
            args["cmd"] = self.cmd
        return args


# -- argv ---------------------------------------------------------------

def base_argv(params):
    """The launcher and the global options: [sdtune, --host DEST,
    -R ROOT, --config FILE] for the options that are set."""
    argv = [params.get("sdtune") or DEFAULT_SDTUNE]
    for option, flag in (("host", "--host"), ("root", "-R"),
                         ("config", "--config")):
        if params.get(option):
            argv += [flag, params[option]]
    return argv


def info_argvs(base):
    """The read-only commands of sdtune_info, by result name."""
    return [
        ("disks", base + ["disks", "-o", "json"]),
        ("verify", base + ["verify", "-o", "json"]),
        ("audit", base + ["audit", "-o", "json"]),
        ("results", base + ["results", "-o", "json"]),
    ]


def import_argv(base, src, remote, check_mode=False):
    """`results --import`: of the file src, or with ``remote`` (sdtune's
    --host, where the files sdtune names are the appliance's) of the
    standard input, to which the module gives the file it read here.
    In check mode, sdtune's dry run: it checks the file and says what it
    would store, and stores nothing.  src must be an absolute path: a
    value such as "--dry-run" would otherwise become an sdtune
    option."""
    if not isinstance(src, str) or not src.startswith("/"):
        raise SdtuneFailure("cannot import '%s': src must be an absolute "
                            "path" % (src,))
    argv = base + ["results", "--import", "-" if remote else src, "-o",
                   "json"]
    if check_mode:
        argv.append("--dry-run")
    return argv


def results_argv(base):
    return base + ["results", "-o", "json"]


def history_argv(base):
    return base + ["history", "-o", "json"]


def apply_argv(base, params, check_mode):
    """`apply -o json`, with --yes unless in check mode (then sdtune
    makes a dry run), and the override flags that are true."""
    argv = base + ["apply", "-o", "json"]
    if not check_mode:
        argv.append("--yes")
    for option, flag in ALLOW_FLAGS:
        if params.get(option):
            argv.append(flag)
    return argv


def read_export(src):
    """The bytes of the export file src (a regular file of at most
    READ_LIMIT bytes), or SdtuneFailure.  Opened without blocking, so
    that a FIFO cannot hang the task, and checked with fstat before a
    byte is read; a device such as /dev/zero is refused the same
    way."""
    try:
        fd = os.open(src, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOCTTY", 0))
    except (IOError, OSError) as e:
        raise SdtuneFailure("cannot read '%s': %s"
                            % (src, e.strerror or "cannot be read"))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SdtuneFailure("cannot import '%s': not a regular file"
                                % src)
        chunks, size = [], 0
        while size <= READ_LIMIT:
            chunk = os.read(fd, min(1 << 20, READ_LIMIT + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (IOError, OSError) as e:
        raise SdtuneFailure("cannot read '%s': %s"
                            % (src, e.strerror or "cannot be read"))
    finally:
        os.close(fd)
    if size > READ_LIMIT:
        raise SdtuneFailure("cannot import '%s': larger than %d MiB: not "
                            "an export" % (src, READ_LIMIT >> 20))
    return b"".join(chunks)


def check_journal_entry(journal_entry):
    """journal_entry as given: None, digits (an entry id) or "last"
    (the newest finished entry, as when it is not given); anything else,
    such as "--yes", is refused (SdtuneFailure) before it can become an
    sdtune option."""
    if journal_entry is None or journal_entry in ("", "last"):
        return None
    text = str(journal_entry)
    if not text.isdigit():
        raise SdtuneFailure("journal_entry '%s': an entry id (digits, as "
                            "in sdtune history) or last" % text)
    return text


def rollback_argv(base, entry_id, check_mode):
    if not str(entry_id).isdigit():
        raise SdtuneFailure("cannot roll back '%s': not a journal entry "
                            "id" % (entry_id,))
    argv = base + ["rollback", entry_id, "-o", "json"]
    if not check_mode:
        argv.append("--yes")
    return argv


# -- output -------------------------------------------------------------

def _is_remark(line):
    return (line.startswith("sdtune: warning: ")
            or line.startswith("sdtune: note: "))


def warnings_of(stderr):
    """sdtune's warnings and notes (``sdtune: warning: ...``), without
    the prefix, for module.warn."""
    out = []
    for line in (stderr or "").splitlines():
        if _is_remark(line):
            out.append(line[len("sdtune: "):])
    return out


def error_line(stderr, rc, argv):
    """sdtune's own error line: the last line of stderr that is neither a
    warning nor a note ("sdtune: cannot apply 'plan': ..."); when it
    printed none, a line that says so with the exit code."""
    lines = [line for line in (stderr or "").splitlines()
             if line.strip() and not _is_remark(line)]
    if lines:
        return lines[-1]
    return "cannot run '%s': exit %s without a message" % (argv[0], rc)


def parse_document(stdout, argv):
    """The one JSON object an sdtune command prints under -o json."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise SdtuneFailure("cannot read the output of '%s': not a JSON "
                            "object" % " ".join(argv), cmd=argv,
                            stdout=stdout)
    return doc


def run_json(run, argv, ok_codes=(0,), data=None):
    """Run ``argv`` with ``run`` ((argv list, stdin text or None) ->
    (rc, stdout, stderr)), return (rc, document, warnings).  An exit code
    outside ``ok_codes`` raises SdtuneFailure with sdtune's error line."""
    rc, stdout, stderr = run(argv, data)
    if rc not in ok_codes:
        raise SdtuneFailure(error_line(stderr, rc, argv), rc=rc, cmd=argv,
                            stdout=stdout, stderr=stderr)
    try:
        doc = parse_document(stdout, argv)
    except SdtuneFailure as e:
        e.rc, e.stderr = rc, stderr
        raise
    return rc, doc, warnings_of(stderr)


def _list(doc, key, argv):
    value = doc.get(key)
    if not isinstance(value, list):
        raise SdtuneFailure("cannot read the output of '%s': no '%s' list"
                            % (" ".join(argv), key), cmd=argv)
    return value


# -- sdtune_info ----------------------------------------------------------

def info_result(docs, argvs):
    """The facts of sdtune_info from the documents of info_argvs, by the
    same names."""
    argv = dict(argvs)
    return dict(
        changed=False,
        disks=_list(docs["disks"], "disks", argv["disks"]),
        verify=_list(docs["verify"], "disks", argv["verify"]),
        findings=_list(docs["audit"], "findings", argv["audit"]),
        records=_list(docs["results"], "results", argv["results"]),
    )


# -- sdtune_records -------------------------------------------------------

def records_result(doc, check_mode=False):
    """Module result of `results --import FILE [--dry-run] -o json`.  In
    check mode sdtune made a dry run (changed false): the module reports
    what a real import would, which changes exactly when a record would
    be stored.  sdtune's "skipped" is returned as "skipped_records": a
    true "skipped" in a task result means to Ansible that the task was
    skipped."""
    imported = list(doc.get("imported") or [])
    return dict(changed=bool(imported) if check_mode
                else bool(doc.get("changed")),
                imported=imported,
                unchanged=list(doc.get("unchanged") or []),
                skipped_records=list(doc.get("skipped") or []))


# -- sdtune_tune ----------------------------------------------------------

def tune_result(doc, check_mode, diff_mode):
    """Module result of an apply or rollback change document.  In check
    mode sdtune made a dry run (changed false): the module reports what
    a real run would, which changes exactly when there is a diff."""
    diff_text = doc.get("diff") or ""
    changed = bool(diff_text) if check_mode else bool(doc.get("changed"))
    result = dict(changed=changed,
                  reboot_required=bool(doc.get("reboot_required")),
                  journal_entry=doc.get("journal_entry"),
                  result=doc.get("result"),
                  dry_run=bool(doc.get("dry_run")),
                  files=list(doc.get("files") or []))
    if "rolled_back" in doc:
        result["rolled_back"] = doc["rolled_back"]
    if diff_mode and diff_text:
        result["diff"] = dict(prepared=diff_text)
    return result


FINISHED = ("done", "recovered")


def rollback_target(entries, journal_entry):
    """Which journal entry `state: rolled_back` rolls back, from the
    entries of `history -o json`: (entry id, None), or (None, why not)
    when there is nothing to do.

    Idempotent where `rollback --last` is not (it would undo its own
    rollback on the next run): without ``journal_entry`` the newest
    finished entry is rolled back unless it is itself a rollback; with
    one, nothing is done when a finished rollback of it exists.  An id
    given as digits matches the journal's zero-padded ids."""
    journal_entry = check_journal_entry(journal_entry)
    finished = [e for e in entries
                if isinstance(e, dict) and e.get("state") in FINISHED]
    if journal_entry is None:
        if not finished:
            return None, "the journal has no finished change"
        last = finished[-1]
        if last.get("rollback_of"):
            return None, ("the last change, %s, is a rollback of %s"
                          % (last.get("id"), last.get("rollback_of")))
        return last.get("id"), None
    wanted = str(journal_entry)
    if wanted.isdigit() and len(wanted) <= 6:
        wanted = "%06d" % int(wanted)
    for e in finished:
        if e.get("rollback_of") == wanted:
            return None, ("entry %s was rolled back by %s"
                          % (wanted, e.get("id")))
    # Unknown ids go to sdtune, whose error names them.
    return wanted, None


def unchanged_rollback(why):
    """The result of a rollback with nothing to do."""
    return dict(changed=False, reboot_required=False, journal_entry=None,
                result=None, dry_run=False, files=[], msg=why)
