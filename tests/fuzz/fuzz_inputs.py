# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Fuzz every importer and command-output parser: any text ends in a
result or an SdtuneError (ParseError is one) whose message reads like
sdtune's ("cannot ...", no Python exception text, no value of the input
echoed whole).  Never a crash, never a hang.

Targets, all pure (text in): parse_vdbench, parse_fio, detect_format,
classify and the whole `sdtune infer` path (cmd_infer into a string, its
--json output strict JSON); parse_iostat_en, parse_zpool_status,
parse_nvlist_dump, parse_zdb_cachefile, parse_zdb_label,
parse_zdb_ashifts, parse_diskinfo_chp, parse_sd_state, parse_inquiry,
parse_blkdev, parse_path_to_inst and the nvmeadm parsers
(parse_nvmeadm_list, parse_nvmeadm_identify_controller,
parse_nvmeadm_identify_namespace, parse_nvmeadm_cache).

Run by `make fuzz` and, with a small count, by the test suite
(tests/fuzz/test_fuzz_inputs.py).  Usage:

    python3 tests/fuzz/fuzz_inputs.py [COUNT] [--seed N] [--jobs N]
        [--target NAME ...] [--no-minimize]

COUNT inputs per target (100,000 by default: about 13 minutes for the 15
targets on 2 CPUs), split over the CPUs.  Inputs come from
hypothesis: the real outputs under tests/fixtures/ (globbed, so new
fixtures join by themselves) mutated the way files get damaged (bytes
flipped, lines lost, doubled or swapped, truncation, tabs and blanks
exchanged, numbers replaced by huge, negative, NaN, infinite or empty
ones, JSON members deleted or of another type, HTML tags, CRLF, a byte
order mark, NUL, bytes that are not UTF-8, decoded as the product decodes
them), splices of two files, generated text over an alphabet dense in
each format's syntax, and for fio generated JSON documents.

One line per target counts inputs, results, refusals and failures.  Each
distinct failure (the exception type and the product line raising it,
or what is wrong with the message) is then printed with its smallest
input, cut down further by deleting lines and characters while the same
failure persists, and its traceback.  Exit status 1 on any failure.
"""

import argparse
import contextlib
import glob
import io
import json
import math
import multiprocessing
import os
import random
import re
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.join(HERE, "..", "..", "plugin")
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))
PACKAGE = os.path.normpath(os.path.join(PLUGIN, "sdtune")) + os.sep
sys.path.insert(0, PLUGIN)

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa
from hypothesis import strategies as st  # noqa: E402

from sdtune.commands.certify import cmd_infer  # noqa: E402
from sdtune.certify.importers import (FIO, VDBENCH, classify,  # noqa
                                      detect_format, parse_fio,
                                      parse_vdbench)
from sdtune.certify.reports import Interval, StepResult  # noqa: E402
from sdtune.errors import SdtuneError  # noqa: E402
from sdtune.host import wire  # noqa: E402
from sdtune.host.ssh import parse_answer  # noqa: E402
from sdtune.platform.detect import Identity, identify  # noqa: E402
from sdtune.inventory.devlinks import parse_path_to_inst  # noqa: E402
from sdtune.inventory.diskinfo import parse_diskinfo_chp  # noqa: E402
from sdtune.inventory.iostat import parse_iostat_en  # noqa: E402
from sdtune.inventory.mdb import (parse_blkdev, parse_inquiry,  # noqa
                                  parse_sd_state)
from sdtune.inventory.nvmeadm import (  # noqa: E402
    parse_nvmeadm_cache, parse_nvmeadm_identify_controller,
    parse_nvmeadm_identify_namespace, parse_nvmeadm_list)
from sdtune.inventory.zdb import (parse_nvlist_dump,  # noqa: E402
                                  parse_zdb_ashifts, parse_zdb_cachefile,
                                  parse_zdb_label)
from sdtune.inventory.zpool import parse_zpool_status  # noqa: E402

# Python's own words: an error message holding one of these leaked an
# exception that the code did not expect.
TELLTALES = ("object has no attribute", "invalid literal", "could not "
             "convert", "index out of range", "unsupported operand",
             "NoneType", "KeyError", "Traceback", "not subscriptable",
             "referenced before assignment", "Expecting value",
             "codec can't")
# A parser that takes this long on one input hangs (or is quadratic on a
# damaged file): a failure too.
HANG_SECONDS = 20
# An error message names at most a dozen runs, each cut short: longer, it
# echoes a value of the input whole (the mutations plant 5000 characters).
MAX_MESSAGE = 5000
# Inputs per hypothesis run: small enough to share the targets evenly
# between the processes.
CHUNK = 2500
# Calls the minimizer may spend on one failure.
MINIMIZE_BUDGET = 3000


# ---------------------------------------------------------------- seeds

def _decode(data: bytes) -> str:
    """Bytes as the product reads command output and files: UTF-8, and a
    replacement character for anything else (host.py, devlinks.py)."""
    return data.decode("utf-8", "replace")


def _corpus(*patterns: str) -> List[str]:
    """The text of every fixture matching the patterns, relative to
    tests/fixtures (** descends), READMEs and indexes left out."""
    paths = set()
    for pattern in patterns:
        for path in glob.glob(os.path.join(FIXTURES, pattern),
                              recursive=True):
            name = os.path.basename(path)
            if os.path.isfile(path) and name not in ("README.md",
                                                     "INDEX.md"):
                paths.add(path)
    texts = []
    for path in sorted(paths):
        with open(path, "rb") as f:
            texts.append(_decode(f.read()))
    return texts


# Formats the fixtures hold no example of yet, from the facts the
# parsers document.
DISKINFO_CHP = (
    "SCSI\tc0t55CD2E404C0D8D0Ed0\tINTEL\tSSDSC2BA400G3\tBTTV5095012Z400HGN"
    "\t400088457216\t??-S\t0,1\n"
    "SCSI\tc0t5000CCA0496E6F8Dd0\tHGST\tHUS724040ALS640\tPN1334PBJXW4MS"
    "\t4000787030016\t----\t0,2\n"
    "USB\tc2t0d0\t-\t-\t-\t-\t--R-\t-\n")
PATH_TO_INST = (
    "#\n#\tCaution! This file contains critical kernel state\n#\n"
    '"/fw" 0 "acpinex"\n'
    '"/scsi_vhci" 0 "scsi_vhci"\n'
    '"/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"\n'
    '"/scsi_vhci/disk@g55cd2e404c0d8d0e" 3 "sd"\n'
    '"/pci@0,0/pci15ad,1976@10/sd@0,0" 1 "sd"\n'
    '"/pci@0,0/pci8086,2829@d/disk@0,0" 2 "sd"\n'
    '"/pci@0,0/pci8086,2829@d" 0 "ahci"\n')
# `zdb -l` of a mirror member of a feature-flags pool: four labels, the
# last one unreadable.
_ZDB_LABEL_BODY = (
    "    version: 5000\n    name: 'tank'\n    state: 0\n    txg: 1234\n"
    "    pool_guid: 11891920664759662147\n    hostid: 9405301\n"
    "    hostname: 'omnios'\n    top_guid: 15601091898902222674\n"
    "    guid: 4405012396563853530\n    vdev_children: 2\n"
    "    vdev_tree:\n        type: 'mirror'\n        id: 0\n"
    "        guid: 15601091898902222674\n        metaslab_array: 256\n"
    "        metaslab_shift: 33\n        ashift: 12\n"
    "        asize: 4000771620864\n        is_log: 0\n"
    "        create_txg: 4\n        children[0]:\n"
    "            type: 'disk'\n            id: 0\n"
    "            guid: 4405012396563853530\n"
    "            path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0'\n"
    "            devid: 'id1,sd@n5000cca0496e6f8d/a'\n"
    "            whole_disk: 1\n            create_txg: 4\n"
    "        children[1]:\n            type: 'disk'\n            id: 1\n"
    "            guid: 9013211760044392017\n"
    "            path: '/dev/dsk/c0t5000CCA0496E7A11d0s0'\n"
    "            whole_disk: 1\n            create_txg: 4\n"
    "    features_for_read:\n        com.delphix:hole_birth\n"
    "        com.delphix:embedded_data\n")
_ZDB_BANNER = "-" * 36 + "\n"
ZDB_LABELS = "".join(
    _ZDB_BANNER + "LABEL %d\n" % n + _ZDB_BANNER + _ZDB_LABEL_BODY
    for n in range(3)) + _ZDB_BANNER + "LABEL 3\n" + _ZDB_BANNER + \
    "failed to unpack label 3\n"
INQUIRY_ELEMENTS = (
    "inq_vid = [ 'A', 'T', 'A', ' ', ' ', ' ', ' ', ' ' ]\n"
    "inq_pid = [ 'S', 'A', 'M', 'S', 'U', 'N', 'G', ' ', 'M', 'Z', '7', "
    "'L', 'M', '4', '8', '0' ]\n"
    "inq_revision = [ '4', '0', '3', 'Q' ]\n"
    "inq_vid = [ 'H', 'G', 'S', 'T', 0x20, 0x20, '\\t', '\\0' ]\n"
    'inq_pid = [ "HUS724040ALS640 " ]\n'
    "inq_revision = [ 'A', '5', 0, ... ]\n")


# ------------------------------------------------------------ mutations

NUMBER = re.compile(r"[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
NUMBERS = [
    "99999999999999999999999999999", "1" + "0" * 400, "-1", "-0", "0",
    "NaN", "nan", "inf", "-Infinity", "Infinity", "1e400", "-1e400",
    "1e-400", "0.5", "4096.0", "", "0x10", "1,000", "1_000", "\u00b2",
    "\u0661\u0662", "\uff11\uff12", "4k", " ", "null", "1.5e3",
    str(2 ** 63), str(2 ** 64), ".", "-", "+1", "00012", "4294967296",
    "0.0000001", "12abc", "9" * 5000]
# Characters that split lines for str.splitlines(), control characters,
# digits that are not ASCII, a byte order mark and a replacement char.
ODD_CHARS = ("\x00", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1e", "\x85",
             "\u2028", "\ufeff", "\ufffd", "\u00b2", "\u0663", "\uff13",
             "\u00e9", "\u4e2d", "\t", " ", "\n", "\x7f", "\x1b[0m")
HTML = ("<pre>", "</pre>", "<b>", "</b>", '<A HREF="logfile.html">',
        "</A>", "<br>", "&lt;", "&amp;", "<title>x</title>", "<!-- c -->",
        "<td>", "</td></tr>", "<p>")
HOSTILE_JSON = [None, True, False, 0, -1, 1.5, 10 ** 400, 1e308,
                float("nan"), float("inf"), -float("inf"), "", "x", "4k",
                "1e400", "NaN", "-1", [], {}, [1], {"mean": 1}, "\u00b2",
                "9" * 5000, "fio-3." + "9" * 5000]


def _lines(text: str) -> List[str]:
    return text.splitlines(True) or [""]


def _numbers(rnd: random.Random, text: str, long: bool = False) -> str:
    """A number replaced by a hostile one, or (long) made longer than
    Python turns into an int (4300 digits)."""
    pos = rnd.randint(0, len(text))
    m = NUMBER.search(text, pos) or NUMBER.search(text)
    if not m:
        return text
    new = m.group(0) + "9" * 5000 if long else rnd.choice(NUMBERS)
    return text[:m.start()] + new + text[m.end():]


def _json_span(text: str) -> Optional[Tuple[Any, int, int]]:
    """(document, start, end) of the first JSON object that starts a
    line, as fio prints it among its notes."""
    offset = 0
    for line in text.splitlines(True):
        start = offset + len(line) - len(line.lstrip("\ufeff \t"))
        offset += len(line)
        if text.startswith("{", start):
            try:
                doc, end = json.JSONDecoder().raw_decode(text, start)
            except (ValueError, RecursionError):
                return None
            return doc, start, end
    return None


def _json_slots(doc: Any) -> List[Tuple[Any, Any]]:
    """Every (container, key or index) of a JSON document."""
    out: List[Tuple[Any, Any]] = []
    todo = [doc]
    while todo:
        node = todo.pop()
        items = (node.items() if isinstance(node, dict) else
                 enumerate(node) if isinstance(node, list) else ())
        for key, value in items:
            out.append((node, key))
            todo.append(value)
    return out


# What the fio importer reads: mutations favour these members.
FIO_KEYS = frozenset((
    "jobs", "global options", "jobname", "job options", "write", "read",
    "sync", "mixed", "total_ios", "error", "iops", "runtime", "bs",
    "blocksize", "iodepth", "numjobs", "fsync", "fdatasync", "rw",
    "readwrite", "offset", "lat_ns", "lat", "clat_ns", "clat", "mean",
    "stddev", "fio version", "groupid", "ioengine", "direct"))


def _json_edit(rnd: random.Random, text: str) -> str:
    found = _json_span(text)
    if found is None:
        return text
    doc, start, end = found
    slots = _json_slots(doc)
    if not slots:
        return text
    if rnd.random() < 0.5:
        known = [s for s in slots if s[1] in FIO_KEYS]
        slots = known or slots
    node, key = slots[rnd.randint(0, len(slots) - 1)]
    how = rnd.choice(["delete", "type", "string", "wrap"])
    if how == "delete":
        del node[key]
    elif how == "type":
        node[key] = rnd.choice(HOSTILE_JSON)
    elif how == "string":
        node[key] = json.dumps(node[key])
    else:
        node[key] = [node[key]]
    indent = rnd.choice([None, 2, "\t"])
    return text[:start] + json.dumps(doc, indent=indent) + text[end:]


def _bytes_edit(rnd: random.Random, text: str) -> str:
    data = bytearray(text.encode("utf-8"))
    at = rnd.randint(0, len(data))
    how = rnd.choice(["flip", "insert", "utf8-cut"])
    if how == "flip" and at < len(data):
        data[at] ^= 1 << rnd.randint(0, 7)
    elif how == "insert":
        data[at:at] = bytes(rnd.randrange(256)
                            for _ in range(rnd.randint(1, 4)))
    else:
        # The start of a multi-byte sequence with its end lost.
        data[at:at] = b"\xe2\x80"
    return _decode(bytes(data))


def _field_edit(rnd: random.Random, text: str) -> str:
    """One field of a line (split at ';', TAB or blanks, as the line is
    laid out) deleted, doubled or replaced by a hostile value."""
    lines = _lines(text)
    i = rnd.randint(0, len(lines) - 1)
    body = lines[i].rstrip("\r\n")
    end = lines[i][len(body):]
    sep = ";" if ";" in body else "\t" if "\t" in body else " "
    fields = body.split(sep)
    j = rnd.randint(0, len(fields) - 1)
    how = rnd.choice(["delete", "double", "replace"])
    if how == "delete":
        del fields[j]
    elif how == "double":
        fields.insert(j, fields[j])
    else:
        fields[j] = rnd.choice(NUMBERS + list(ODD_CHARS))
    lines[i] = sep.join(fields) + end
    return "".join(lines)


def _mutate(rnd: random.Random, text: str) -> str:
    op = rnd.choice(MUTATIONS)
    if op == "bytes":
        return _bytes_edit(rnd, text)
    if op == "truncate":
        return text[:rnd.randint(0, len(text))]
    if op in ("number", "long-number"):
        return _numbers(rnd, text, op == "long-number")
    if op == "json":
        return _json_edit(rnd, text)
    if op in ("line-delete", "line-dup", "line-swap", "line-edit"):
        lines = _lines(text)
        i = rnd.randint(0, len(lines) - 1)
        if op == "line-delete":
            del lines[i:i + rnd.randint(1, 3)]
        elif op == "line-dup":
            lines[i:i] = lines[i:i + 1] * rnd.randint(1, 3)
        elif op == "line-swap":
            j = rnd.randint(0, len(lines) - 1)
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = rnd.choice(["", "\n", " \n", "\t\n",
                                   lines[i].rstrip("\r\n"),
                                   lines[i].strip() + "\n"])
        return "".join(lines)
    if op == "field":
        return _field_edit(rnd, text)
    if op == "tabs":
        how = rnd.choice(["tab-to-spaces", "spaces-to-tab", "collapse",
                          "indent"])
        if how == "tab-to-spaces":
            return text.replace("\t", " " * rnd.randint(1, 8))
        if how == "spaces-to-tab":
            return re.sub("  +", "\t", text)
        if how == "collapse":
            return re.sub("[ \t]+", " ", text)
        return "".join(rnd.choice(["  ", "\t", "> "]) + line
                       for line in _lines(text))
    if op == "newlines":
        how = rnd.choice(["crlf", "cr", "none-at-end", "mixed"])
        if how == "crlf":
            return text.replace("\n", "\r\n")
        if how == "cr":
            return text.replace("\n", "\r")
        if how == "none-at-end":
            return text.rstrip("\n")
        i = rnd.randint(0, len(text))
        return text[:i] + text[i:].replace("\n", "\r\n", 1)
    if op == "bom":
        return "\ufeff" + text
    if op == "bulk":
        # Past Python's limits (recursion, digits of an int) and long
        # runs for a regular expression to backtrack over.
        i = rnd.randint(0, len(text))
        chunk = rnd.choice(["[", "{\"a\":", "9", "\n", " ", "\t", "a",
                            "0.", "-"]) * rnd.choice([5000, 20000])
        return text[:i] + chunk + text[i:]
    i = rnd.randint(0, len(text))
    if op == "html":
        chunk = rnd.choice(HTML)
    elif op == "odd-char":
        chunk = rnd.choice(ODD_CHARS)
    else:
        # "delete": a few characters gone.
        return text[:i] + text[i + rnd.randint(1, 8):]
    return text[:i] + chunk + text[i:]


MUTATIONS = ["bytes", "truncate", "number", "number", "number",
             "long-number", "json",
             "json", "field", "field", "line-delete", "line-dup",
             "line-swap", "line-edit", "tabs", "newlines", "bom", "bulk",
             "html", "odd-char", "delete"]


# ----------------------------------------------------------- generators

@dataclass
class Format:
    """What a kind of input looks like: its real examples, its tokens
    (whole lines and syntax), and its own generator if it has one."""

    seeds: List[str]
    tokens: List[str]
    extra: Optional[st.SearchStrategy] = None
    alphabet: str = ""

    def strategy(self, others: List[str]) -> st.SearchStrategy:
        chars = sorted(set("".join(self.tokens) + self.alphabet
                           + "".join(ODD_CHARS)))

        def mutated(args) -> str:
            text, ops, rnd = args
            for _ in range(ops):
                text = _mutate(rnd, text)
            return text

        def spliced(args) -> str:
            a, b, rnd = args
            return a[:rnd.randint(0, len(a))] + b[rnd.randint(0, len(b)):]

        # Hypothesis picks the file and how many mutations; the
        # mutations themselves come from a random.Random it seeds, one
        # draw instead of a dozen: twice the inputs per second.
        rnd = st.randoms(use_true_random=True)
        # Mostly one or two mutations: the file stays close enough to
        # its format to reach the checks of each field.
        mutations = st.tuples(st.sampled_from(self.seeds),
                              st.sampled_from([0, 1, 1, 1, 2, 2, 3, 4, 6]),
                              rnd).map(mutated)
        splices = st.tuples(st.sampled_from(self.seeds),
                            st.sampled_from(self.seeds + others),
                            rnd).map(spliced)
        tokens = self.tokens

        def soup(args) -> str:
            n, rnd = args
            return "".join(rnd.choice(tokens) for _ in range(n))

        soups = st.tuples(st.integers(0, 40), rnd).map(soup)
        parts = [mutations, mutations, mutations, splices,
                 st.text(st.sampled_from(chars), max_size=200), soups]
        if self.extra is not None:
            parts.append(self.extra)
        return st.one_of(parts)


def _fio_json() -> st.SearchStrategy:
    """fio JSON documents, members plausible or hostile, so that the
    importer is driven past the JSON into each field's checks."""
    hostile = st.sampled_from(HOSTILE_JSON)
    num = st.one_of(st.integers(0, 10 ** 7), st.floats(0, 1e7),
                    st.sampled_from([1, 1000, 500.5, 2e6, 0, 10000]),
                    hostile, st.sampled_from(NUMBERS))
    lat = st.fixed_dictionaries({}, optional={
        "min": num, "max": num, "mean": num, "stddev": num,
        "N": num}) | hostile
    section = st.fixed_dictionaries({}, optional={
        "total_ios": num, "iops": num, "runtime": num, "io_bytes": num,
        "lat_ns": lat, "clat_ns": lat, "slat_ns": lat, "lat": lat,
        "clat": lat}) | hostile
    options = st.dictionaries(
        st.sampled_from(["bs", "blocksize", "iodepth", "numjobs", "fsync",
                         "fdatasync", "sync", "rw", "readwrite", "offset",
                         "direct", "ioengine", "name"]),
        st.sampled_from(["4k", "512", "4096", "1m", "4k,8k", ",4k", "1",
                         "0", "32", "randwrite", "write", "read", "sync",
                         "dsync", "none", "10%", "1e400", "-1", "", "4.5k",
                         "99999999999999999999999", "\u00b2"]) | hostile,
        max_size=6) | hostile
    job = st.fixed_dictionaries({}, optional={
        "jobname": st.sampled_from(["w", "", " ", "job", "\u00e9"]) | hostile,
        "groupid": num, "error": num, "job options": options,
        "write": section, "read": section, "sync": section,
        "mixed": section})
    doc = st.fixed_dictionaries(
        {"jobs": st.lists(job, max_size=4) | hostile},
        optional={"fio version": st.just("fio-3.33"),
                  "global options": options})
    return st.builds(
        lambda head, d, indent, tail: head + json.dumps(d, indent=indent)
        + tail,
        st.sampled_from(["", "\ufeff", "  ", "note: both iodepth >= 1 and "
                         "synchronous I/O engine are selected\n"]),
        doc, st.sampled_from([None, 2, 4, "\t"]),
        st.sampled_from(["", "\n", "\nfio: terminating on signal 2\n",
                         "\nw: (groupid=0, jobs=1): err= 0\n"]))


VDBENCH_TOKENS = [
    "17:44:05.001 ", "Starting RD=rd1; I/O rate: Uncontrolled MAX; "
    "elapsed=10; For loops: xfersize=4k threads=1\n",
    "Starting RD=", "; For loops: ", "xfersize=", "threads=", "threads=1.0",
    "(512,40,4k,60)", "Dec 02, 2020  interval        i/o   MB/sec   bytes"
    "   read     resp     read    write     resp     resp queue  cpu%  cpu%"
    "\n", "                             rate  1024**2     i/o    pct     "
    "time     resp     resp      max   stddev depth sys+u   sys\n",
    "interval", "intervals", "rate", "i/o", "resp", "time", "bytes",
    "pct", "queue depth", "17:46:25.060         1     500.00     0.24     "
    "512   0.00    2.000    0.000    2.000    12.34    0.123   1.0   2.1"
    "   1.0\n", " avg_2-4 ", "     1 ", "500.00", "0.00", "512", "4096",
    "4k", "1e400", "nan", "-1", "0", "\n", " ", "\t", "<pre>", "</pre>",
    ";", "=", "Vdbench execution completed successfully.\n",
    "         tod               timestamp Run Interval reqrate rate MB/sec "
    "bytes/io read% resp resp_max resp_std xfersize threads rdpct "
    "queue_depth\n", "18:11:35.001 2019-03-08-18:11:35-ICT rd1 1 MAX "
    "500.0 0.24 512 0.0 2.000 12.34 0.123 512 1 0 1.0\n", "tod", "Run",
    "Interval", "reqrate", "MB/sec", "bytes/io", "read%", "xfersize",
    "rdpct", "queue_depth", "format_for_rd1", "fsd=fsd1"]
FIO_TOKENS = [
    "{", "}", "[", "]", ",", ":", '"jobs"', '"write"', '"job options"',
    '"global options"', '"bs"', '"4k"', '"iodepth"', '"fsync"',
    '"lat_ns"', '"clat_ns"', '"mean"', '"stddev"', '"iops"', '"runtime"',
    '"total_ios"', '"sync"', '"rw"', '"randwrite"', '"lat"', "null",
    "true", "1e400", "-1", "0", "NaN", "Infinity", '"1e400"', "\n", " ",
    '"jobname"', '"fio version"', '"fio-3.33"', "note: x\n", "1000",
    "2000000.5", "3;fio-3.33;w;0;0;", "5;fio-3.33;w;0;0;", ";", "0.000000",
    "1.000000%=0;", "w: (g=0): rw=write, bs=(R) 4096B-4096B, (W) "
    "4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1\n",
    "rw=randwrite", "ioengine=libaio", "iodepth=", "(g=", "...\n"]
IOSTAT_TOKENS = [
    "c1t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: 0 \n",
    "Vendor: ATA      Product: SAMSUNG MZ7LM480 Revision: 403Q Serial No: "
    "S2UJNX0J101234 \n", "Size: 480.10GB <480103981056 bytes>\n",
    "Media Error: 0 Device Not Ready: 0 No Device: 0 Recoverable: 0 \n",
    "Illegal Request: 0 Predictive Failure Analysis: 0 \n",
    "sd0 ", "Soft Errors: ", "Hard Errors: ", "Transport Errors: ",
    "Vendor: ", "Product: ", "Revision: ", "Serial No: ", "Size: ",
    "Media Error: ", "Device Not Ready: ", "No Device: ", "Recoverable: ",
    "Illegal Request: ", "Predictive Failure Analysis: ", "0", "1",
    "\u00b2", "GB", "<", " bytes>", "0.00GB <0 bytes>", "\n", " ", "\t"]
ZPOOL_TOKENS = [
    "  pool: tank\n", " state: ONLINE\n", "  scan: none requested\n",
    "config:\n", "\n", "\tNAME        STATE     READ WRITE CKSUM\n",
    "\ttank        ONLINE       0     0     0\n",
    "\t  mirror-0  ONLINE       0     0     0\n",
    "\t  raidz2-1  DEGRADED     0     0     0\n",
    "\t    c0t5000CCA0496E6F8Dd0  ONLINE       0     0     0\n",
    "\t    c1t0d0s0  FAULTED      0     0     0  too many errors\n",
    "\tlogs\n", "\tspares\n", "\tcache\n", "\tspecial\n", "\tdedup\n",
    "\t  c1d0p1  AVAIL\n", "errors: No known data errors\n",
    "no pools available", "\t", "  ", " ", "tank", "c2t0d0"]
NVLIST_TOKENS = [
    "tank:\n", "    version: 5000\n", "    name: 'tank'\n",
    "    vdev_tree:\n", "        type: 'root'\n", "        children[0]:\n",
    "            type: 'mirror'\n", "            ashift: 12\n",
    "            is_log: 1\n", "            children[1]:\n",
    "                type: 'disk'\n",
    "                path: '/dev/dsk/c0t5000CCA0496E6F8Dd0s0'\n",
    "MOS Configuration:\n", "    com.delphix:has_per_vdev_zaps\n",
    "    ", ":", ": ", "children[", "]", "ashift: \u00b2\n",
    "children[x]:\n", "children[99999999999999999999]:\n", "'", "\n", " ",
    _ZDB_BANNER, "LABEL 0\n", "LABEL 1\n", "LABEL ", "\u00b2",
    "failed to unpack label 2\n", "failed to read label 1\n",
    "    version: 28\n", "    id: 0\n", "    ashift: 9\n",
    "                ashift: 9\n", "ashift: ", "bloody$ zdb | grep ashift\n",
    "    features_for_read:\n", "        com.delphix:hole_birth\n"]
DISKINFO_TOKENS = [
    "SCSI", "USB", "NVME", "-", "c0t55CD2E404C0D8D0Ed0", "c2t0d0", "INTEL",
    "SSDSC2BA400G3", "400088457216", "??-S", "----", "--R-", "FL??",
    "0,1", "\t", "\n", "-1", "1e400", "", "\u00b2", "TYPE\tDISK\tVID\n",
    DISKINFO_CHP.splitlines(True)[0]]
SD_STATE_TOKENS = [
    "walk_addr = fffffe0bc4b1e9c0\n", "32 entries in sd_state table\n",
    "un 0: fffffe0bd8a76000\n", "un 1: 0\n", "un 99999: ff\n",
    "--------------\n", "{\n", "}\n", "---\n",
    "    un_tgt_blocksize = 0x200\n", "    un_phy_blocksize = 0x1000\n",
    "    un_saved_throttle = 0x20\n", "    un_saved_throttle = 0xffff\n",
    "    un_min_throttle = 0x8\n", "    un_f_disksort_disabled = 0\n",
    "    un_f_suppress_cache_flush = 0x1\n",
    "    un_sd = 0xfffffe0bd8731d40\n",
    "    un_f_sdconf_phy_blocksize = 0\n", "    un_throttle = -1\n",
    "Processed 2 UN softstate entries\n", "---------------------------\n",
    "0x", "-", "\u00b2", "\n", " ", "un "]
INQUIRY_TOKENS = [
    'inq_vid = [ "ATA     " ]\n', 'inq_pid = [ "INTEL SSDSC2BA40" ]\n',
    'inq_revision = [ "0270" ]\n', "inq_vid = [ ", "inq_pid = [ ",
    "inq_revision = [ ", " ]\n", "'A'", "'\\t'", "'\\0'", "'\\x'", "'\\'",
    "'\\u12'", "'\\N{x}'", "'\\\u00e9'", "0x20", "0x", "0", "...", ", ",
    '"', "'", "\n", "\u00e9", "\ufffd"]
NVMEADM_TOKENS = [
    "nvme0: model: Samsung SSD 970 EVO 1TB, serial: S467NX0K612345A, "
    "FW rev: 2B2QEXE7, NVMe v1.3\n",
    "  nvme0/1 (c3t0025385971B0F5A2d0): Size = 953869 MB, Capacity = "
    "953869 MB, Used = 120044 MB\n",
    "  nvme0/2: Size = 0 MB, Capacity = 0 MB, Used = 0 MB\n",
    "nvme0: Identify Controller\n", "nvme0/1: Identify Namespace\n",
    "nvme0: Get Features\n", "  Volatile Write Cache\n",
    "    Volatile Write Cache:                   enabled\n",
    "      Present:                              yes\n",
    "    Model:                                  X\n",
    "    Number of LBA Formats:                  2\n",
    "    Formatted LBA Size\n",
    "      LBA Format:                           0\n", "    LBA Format 0\n",
    "      Metadata Size:                        0 bytes\n",
    "      LBA Data Size:                        512 bytes\n",
    "      Relative Performance:                 Best\n",
    "  nvme1/2 (unattached): Size = 1 GB, Capacity = 1 GB, Used = 0 B\n",
    "  nvme1/4 (inactive)\n", ", Capacity = 1831420 MB",
    ", Unallocated = 1024 MB", "931.51 GB", "0 B", "1.75 TB",
    "    Volatile Write Cache:                   not present\n",
    ": ", "  ", "nvme", "/", "MB", "bytes", "\n", "\r\n", "\ufffd", "0x"]
BLKDEV_TOKENS = [
    "d_dip->devi_instance = 0t0\n", "d_blkshift = 0t9\n",
    "d_pblkshift = 0t12\n", "d_pblkshift = 0x1f\n", "0t", "0x", "-1",
    " = ", "\n", "\ufffd"]
PATH_TO_INST_TOKENS = [
    '"/scsi_vhci/disk@g5000cca0496e6f8d" 0 "sd"\n', '"/fw" 0 "acpinex"\n',
    "#comment\n", '"', "/pci@0,0/pci8086,2829@d/disk@0,0", " ", "0",
    "99999999999999999999", "\u00b2", '"sd"', "\n", "\t", "-1"]
PLATFORM_TOKENS = [
    "Open Storage Appliance v3.1.6\n", "Open Storage Appliance 4.0.3-FP2\n",
    "NexentaOS_134f", "NexentaOS_4:0123456789", "NexentaStor_5.3.0.20",
    "NexentaCore", "illumian", "  OmniOS v11 r151046l\n", "omnios-r151046",
    "OpenIndiana Hipster 2024.04 (powered by illumos)\n", "oi_151a9",
    "SmartOS 20240101T000000Z x86_64\n", "joyent_20240101T000000Z",
    "illumos-1234abcd", "Tribblix m20\n", "Copyright", "\n", " ", "_",
]
WIRE_TOKENS = ["ok ", "err ", "part ", " 1\n", "\n", " ", "0", "-1",
               "99999999999999999999", "errno", "protocol", "denied"]


_FORMATS: Dict[str, Format] = {}


def _formats() -> Dict[str, Format]:
    """The formats, the fixtures read once per process."""
    if not _FORMATS:
        _FORMATS.update(_read_formats())
    return _FORMATS


def _read_formats() -> Dict[str, Format]:
    vdbench = Format(_corpus("realworld/vdbench/**/*", "bench/**/*vdbench*",
                             "vdbench/**/*"),
                     VDBENCH_TOKENS, alphabet="0123456789.:")
    fio = Format(_corpus("realworld/fio-json/**/*", "fio/**/*"),
                 FIO_TOKENS, extra=_fio_json(), alphabet="0123456789.e-")
    inventory = "inventory/**/"
    return {
        "vdbench": vdbench, "fio": fio,
        "benchmark": Format(vdbench.seeds + fio.seeds,
                            VDBENCH_TOKENS + FIO_TOKENS, extra=_fio_json()),
        "iostat": Format(_corpus("realworld/iostat-En/**/*",
                                 "realworld/other/*iostat*",
                                 inventory + "*iostat*"), IOSTAT_TOKENS),
        "zpool": Format(_corpus("realworld/zpool-status/**/*",
                                inventory + "*zpool*"), ZPOOL_TOKENS),
        "zdb": Format(_corpus("realworld/zdb/**/*", inventory + "*zdb*")
                      + [ZDB_LABELS], NVLIST_TOKENS),
        "diskinfo": Format(_corpus("realworld/diskinfo/**/*",
                                   inventory + "*diskinfo*")
                           + [DISKINFO_CHP], DISKINFO_TOKENS),
        "sd_state": Format(_corpus(inventory + "*sd_state*"),
                           SD_STATE_TOKENS, alphabet="0123456789abcdefx"),
        "inquiry": Format(_corpus(inventory + "*inquiry*")
                          + [INQUIRY_ELEMENTS], INQUIRY_TOKENS),
        "nvmeadm": Format(_corpus(inventory + "*nvmeadm*"), NVMEADM_TOKENS),
        # Get Features output alone: among every nvmeadm fixture too few
        # inputs grow from it for the cache reader to read any.
        "nvme_features": Format(_corpus(inventory + "*get-features*"),
                                NVMEADM_TOKENS),
        "blkdev": Format(_corpus(inventory + "*blkdev*"), BLKDEV_TOKENS,
                         alphabet="0123456789abcdefxt"),
        "path_to_inst": Format(_corpus(inventory + "*path_to_inst*")
                               + [PATH_TO_INST], PATH_TO_INST_TOKENS),
        "platform": Format(_corpus("platform/*"), PLATFORM_TOKENS),
        "wire": Format(_wire_seeds(), WIRE_TOKENS,
                       alphabet="0123456789-"),
    }


def _steps(seeds: List[str]) -> st.SearchStrategy:
    """Lists of imported runs for classify: the runs of the real files,
    and made-up ones over the values the importers produce."""
    real: List[StepResult] = []
    for text in seeds:
        for parse in (parse_fio, parse_vdbench):
            try:
                real += parse(text)
            except SdtuneError:
                pass

    def made(rnd: random.Random) -> StepResult:
        return StepResult(
            name=rnd.choice(["fio w", "vdbench rd1", "x"]),
            bs=rnd.choice([512, 4096, 8192, 520, 1, 1 << 30]),
            qd=rnd.choice([1, 2, 4, 8, 32, 1 << 20]),
            offset=rnd.choice([0, 512, 1, 4095]),
            flush=rnd.choice(["none", "each"]),
            pattern=rnd.choice(["seq", "rand"]),
            intervals=rnd.choice([[], [Interval(0, 0.0, 0.0)],
                                  [Interval(1, 1.0, 1.0)] * 3,
                                  [Interval(10 ** 6, 1e9, 3.6e12)]]),
            iops=rnd.uniform(0, 1e9), lat_mean_ns=rnd.uniform(0, 3.6e12),
            ios=rnd.randint(0, 10 ** 15), flush_timed=rnd.random() < 0.8)

    def steps(args) -> List[StepResult]:
        n, share_real, rnd = args
        return [rnd.choice(real) if real and rnd.random() < share_real
                else made(rnd) for _ in range(n)]

    # As for the mutations, one hypothesis draw seeds the runs: a dozen
    # runs of a dozen fields each would be slow to draw one by one.
    return st.tuples(st.integers(0, 12), st.sampled_from([0.0, 0.5, 1.0]),
                     st.randoms(use_true_random=True)).map(steps)


# -------------------------------------------------------------- targets

class BadOutput(Exception):
    """A call returned, but what it returned breaks its contract."""


def _strict_json(text: str) -> None:
    def reject(word: str) -> None:
        raise BadOutput("--json output holds %s, which is not JSON" % word)
    try:
        json.loads(text, parse_constant=reject)
    except ValueError as e:
        raise BadOutput("--json output is not JSON: %s" % e) from None


def infer_call(infer: Callable[..., Any] = cmd_infer
               ) -> Callable[[Tuple[str, Optional[str], bool, bool]], Any]:
    """The cmd_infer target's call, around ``infer`` (cmd_infer, or in
    the harness's own tests a stand-in that misbehaves on purpose)."""
    def call(value: Tuple[str, Optional[str], bool, bool]) -> Any:
        text, fmt, as_json, trust_timing = value
        out = io.StringIO()
        # The runs it leaves out are named on stderr: not for the console.
        with contextlib.redirect_stderr(io.StringIO()):
            status = infer("results.txt", fmt, text, out, as_json,
                           trust_timing)
        if not isinstance(status, int):
            raise BadOutput("cmd_infer returned %r, not an exit status"
                            % (status,))
        if as_json:
            _strict_json(out.getvalue())
        return status
    return call


def _detect(text: str) -> str:
    fmt = detect_format(text)
    if fmt not in (FIO, VDBENCH):
        raise BadOutput("detect_format returned %r" % (fmt,))
    return fmt


def _classify(steps: List[StepResult]) -> Any:
    sector, pair, qd = classify(steps)
    ids = {id(s) for s in steps}
    chosen = sector + qd + list(pair or ())
    if not all(id(s) in ids for s in chosen) or \
            (pair is not None and len(pair) != 2):
        raise BadOutput("classify returned runs it was not given")
    return sector, pair, qd


def _identify(text: str) -> Any:
    """Release detection (issue 27): the text as /etc/release, its first
    line as `uname -v`, each alone and both together; total."""
    first = text.split("\n", 1)[0]
    out = []
    for release, uname_v in ((text, None), (None, first), (text, first),
                             (first, text)):
        found = identify(release, uname_v)
        if not isinstance(found, Identity) or not found.name or \
                not isinstance(found.name, str):
            raise BadOutput("identify returned %r" % (found,))
        out.append(found.name)
    return out


# Valid answers of every op, the seeds the wire target mutates (the
# shapes of host/wire.py ANSWERS).
WIRE_FIELDS = {
    "hello": [wire.PROTOCOL, b"0", b"root", b"4242", b"/", b""],
    "read": [b"contents\n"], "readlink": [b"../target"],
    "stat": [b"33188", b"12", b"2049", b"1", b"0", b"0", b"9",
             b"1700000000000000000", b"1700000000000000000",
             b"1700000000000000000"],
    "listdir": [b"a", b"b"], "readlinks": [b"l1", b"t1", b"l2", b"t2"],
    "samefile": [b"1"], "can_run": [b"0"], "lock": [],
    "run": [b"0", b"0", b"out", b"err", b"1234"],
    "now": [b"1700000000123456789"],
}
WIRE_OPS = sorted(wire.ANSWERS)


def _wire_seeds() -> List[str]:
    seeds = [wire.encode_answer("ok", 1, fields).decode("latin-1")
             for fields in WIRE_FIELDS.values()]
    seeds.append(wire.encode_answer("err", 1, [b"errno", b"2", b"ENOENT"])
                 .decode("latin-1"))
    # A stream's answer: parts, then run's with its stdout empty.
    seeds.append((wire.encode_answer("part", 1, [b"w 1 0\n"]) +
                  wire.encode_answer("part", 1, [b"f 1\n"]) +
                  wire.encode_answer("ok", 1, [b"0", b"0", b"", b"err",
                                               b"1234"])).decode("latin-1"))
    return seeds


def _parse_answer(text: str) -> Any:
    """The client's reading of one engine answer (issue 27), as every op
    in turn: a value, or a HostError (an SdtuneError), nothing else."""
    data = text.encode("latin-1", "replace")
    out, refused = [], None
    for op in WIRE_OPS:
        try:
            out.append(parse_answer(data, op))
        except SdtuneError as e:
            out.append(None)
            refused = e
    if refused is not None and not any(v is not None for v in out):
        raise refused       # no op reads it: a refusal
    return out


@dataclass
class Target:
    name: str
    call: Callable[[Any], Any]
    fmt: str                    # the Format its inputs are drawn from
    text_of: Callable[[Any], str] = lambda v: v
    with_text: Callable[[Any, str], Any] = lambda v, text: text


def _with_infer_text(value, text):
    return (text,) + tuple(value[1:])


TARGETS = [
    Target("parse_vdbench", parse_vdbench, "vdbench"),
    Target("parse_fio", parse_fio, "fio"),
    Target("detect_format", _detect, "benchmark"),
    Target("classify", _classify, "steps", text_of=lambda v: "",
           with_text=lambda v, text: v),
    Target("cmd_infer", infer_call(), "infer", text_of=lambda v: v[0],
           with_text=_with_infer_text),
    Target("parse_iostat_en", parse_iostat_en, "iostat"),
    Target("parse_zpool_status", parse_zpool_status, "zpool"),
    Target("parse_nvlist_dump", parse_nvlist_dump, "zdb"),
    Target("parse_zdb_cachefile", parse_zdb_cachefile, "zdb"),
    Target("parse_zdb_label", parse_zdb_label, "zdb"),
    Target("parse_zdb_ashifts", parse_zdb_ashifts, "zdb"),
    Target("parse_diskinfo_chp", parse_diskinfo_chp, "diskinfo"),
    Target("parse_sd_state", parse_sd_state, "sd_state"),
    Target("parse_inquiry", parse_inquiry, "inquiry"),
    Target("parse_blkdev", parse_blkdev, "blkdev"),
    Target("parse_nvmeadm_list", parse_nvmeadm_list, "nvmeadm"),
    Target("parse_nvmeadm_identify_controller",
           parse_nvmeadm_identify_controller, "nvmeadm"),
    Target("parse_nvmeadm_identify_namespace",
           parse_nvmeadm_identify_namespace, "nvmeadm"),
    Target("parse_nvmeadm_cache", parse_nvmeadm_cache, "nvme_features"),
    Target("parse_path_to_inst", parse_path_to_inst, "path_to_inst"),
    Target("identify_platform", _identify, "platform"),
    Target("ssh_parse_answer", _parse_answer, "wire"),
]
BY_NAME = {t.name: t for t in TARGETS}


def _strategy(target: Target) -> st.SearchStrategy:
    formats = _formats()
    if target.fmt == "steps":
        return _steps(formats["benchmark"].seeds)
    if target.fmt == "infer":
        text = formats["benchmark"].strategy([])
        return st.tuples(text, st.sampled_from([None, None, FIO, VDBENCH]),
                         st.booleans(), st.booleans())
    others = [t for name, f in formats.items() if name != target.fmt
              for t in f.seeds]
    return formats[target.fmt].strategy(others)


# ------------------------------------------------------------- checking

class Hang(BaseException):
    """Raised by the alarm inside a call that does not end; not an
    Exception, so that no `except Exception` in the product takes it."""


def _alarm(signum, frame):
    raise Hang()


def _where(tb) -> str:
    """The innermost line of the product (else of anything) that the
    traceback passes through: where the failure comes from."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames
            if os.path.normpath(f.filename).startswith(PACKAGE)]
    last = ours[-1] if ours else frames[-1] if frames else None
    if last is None:
        return "?"
    path = os.path.normpath(last.filename)
    where = "%s:%d" % (os.path.relpath(path, os.path.dirname(PACKAGE[:-1]))
                       if ours else os.path.basename(path), last.lineno)
    # Python 3.11 knows the column: two calls on one line are two bugs.
    column = getattr(last, "colno", None)
    return where if column is None else "%s:%d" % (where, column)


def _message_fault(message: str, text: str) -> Optional[str]:
    """What is wrong with an error message, or None.  Words the input
    itself holds may be quoted back: they are not Python's."""
    if not message.startswith("cannot "):
        return "message does not start with 'cannot '"
    if len(message) > MAX_MESSAGE:
        return "message longer than %d characters" % MAX_MESSAGE
    for word in TELLTALES:
        if word in message and word not in text:
            return "message holds Python text %r" % word
    return None


def check(target: Target, value: Any, hang_s: float = HANG_SECONDS
          ) -> Tuple[str, Optional[dict]]:
    """("result" | "refusal" | "failure", failure details or None); a
    call that takes more than ``hang_s`` seconds is a failure."""
    text = target.text_of(value)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, hang_s)
    try:
        target.call(value)
    except SdtuneError as e:
        message = str(e)
        fault = _message_fault(message, text)
        if fault is None:
            return "refusal", None
        return "failure", {"kind": fault, "where": _where(e.__traceback__),
                           "detail": message,
                           "traceback": traceback.format_exc()}
    except Hang:
        return "failure", {"kind": "no answer in %g s" % hang_s,
                           "where": "", "detail": "",
                           "traceback": traceback.format_exc()}
    except BadOutput as e:
        return "failure", {"kind": "bad result", "where": "",
                           "detail": str(e)[:300], "traceback": ""}
    except (Exception, SystemExit) as e:  # noqa: B902 - any other is a bug
        return "failure", {"kind": type(e).__name__,
                           "where": _where(e.__traceback__),
                           "detail": str(e)[:300],
                           "traceback": traceback.format_exc()}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return "result", None


def _shape(message: str) -> str:
    """A message with the quoted input and the numbers taken out: the
    same bug says the same shape whatever the input."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", message)
    return re.sub(r"[0-9]+", "N", message)[:80]


def _signature(failure: dict) -> str:
    """What tells one bug from another: the kind of failure, where it is
    raised, and (for Python's exceptions) the shape of their message."""
    kind = failure["kind"]
    if kind.startswith("message"):
        return "%s at %s" % (kind, failure["where"])
    if kind == "bad result":
        return "%s: %s" % (kind, _shape(failure["detail"]))
    return "%s at %s: %s" % (kind, failure["where"],
                             _shape(failure["detail"]))


def _size(target: Target, value: Any) -> int:
    return len(value) if target.fmt == "steps" else \
        len(target.text_of(value))


@dataclass
class Outcome:
    """What one target's run found."""

    inputs: int = 0
    results: int = 0
    refusals: int = 0
    failures: int = 0
    # signature -> {"count", "value", "failure"}; the smallest input kept
    distinct: Dict[str, dict] = field(default_factory=dict)

    def add(self, other: "Outcome") -> None:
        self.inputs += other.inputs
        self.results += other.results
        self.refusals += other.refusals
        self.failures += other.failures
        for sig, item in other.distinct.items():
            self.note(sig, item["value"], item["failure"], item["count"],
                      item["size"])

    def note(self, sig: str, value: Any, failure: dict, count: int,
             size: int) -> None:
        have = self.distinct.get(sig)
        if have is None:
            self.distinct[sig] = {"count": count, "value": value,
                                  "failure": failure, "size": size}
            return
        have["count"] += count
        if size < have["size"]:
            have.update(value=value, failure=failure, size=size)


def run(target: Union[str, Target], count: int, seed_value: int
        ) -> Outcome:
    """count inputs of one target (by name, or a Target of the harness's
    own tests), generated from seed_value."""
    if isinstance(target, str):
        target = BY_NAME[target]
    outcome = Outcome()

    @seed(seed_value)
    @settings(max_examples=count, deadline=None, database=None,
              phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(_strategy(target))
    def fuzz(value):
        if outcome.inputs >= count:
            return
        verdict, failure = check(target, value)
        outcome.inputs += 1
        if verdict == "result":
            outcome.results += 1
        elif verdict == "refusal":
            outcome.refusals += 1
        else:
            outcome.failures += 1
            outcome.note(_signature(failure), value, failure, 1,
                         _size(target, value))

    # Hypothesis may stop early when it sees only repeats; then again
    # with the next seed until the count is reached.
    for attempt in range(20):
        before = outcome.inputs
        fuzz()
        if outcome.inputs >= count or outcome.inputs == before:
            break
        seed_value += 1 << 20
    return outcome


# ------------------------------------------------------------ minimizing

def _ddmin(units: list, fails: Callable[[list], bool],
           budget: List[int]) -> list:
    """Delete ever smaller chunks while the failure persists."""
    n = 2
    while len(units) >= 2 and budget[0] > 0:
        size = math.ceil(len(units) / n)
        for start in range(0, len(units), size):
            candidate = units[:start] + units[start + size:]
            budget[0] -= 1
            if fails(candidate):
                units = candidate
                n = max(n - 1, 2)
                break
            if budget[0] <= 0:
                return units
        else:
            if n >= len(units):
                break
            n = min(n * 2, len(units))
    return units


def minimize(target_name: str, sig: str, value: Any) -> Any:
    """The value cut down (lines, then characters; runs for classify)
    while it fails with the same signature."""
    target = BY_NAME[target_name]
    if "no answer" in sig:
        return value
    budget = [MINIMIZE_BUDGET]

    def same(candidate: Any) -> bool:
        verdict, failure = check(target, candidate)
        return verdict == "failure" and _signature(failure) == sig

    if target.fmt == "steps":
        return _ddmin(list(value), same, budget)
    text = target.text_of(value)
    lines = _ddmin(text.splitlines(True),
                   lambda ls: same(target.with_text(value, "".join(ls))),
                   budget)
    chars = _ddmin(list("".join(lines)),
                   lambda cs: same(target.with_text(value, "".join(cs))),
                   budget)
    return target.with_text(value, "".join(chars))


def _show(target: Target, value: Any) -> str:
    if target.fmt == "steps":
        return "[%s]" % ", ".join(
            "StepResult(bs=%d, qd=%d, offset=%d, flush=%r, flush_timed=%r)"
            % (s.bs, s.qd, s.offset, s.flush, s.flush_timed) for s in value)
    # A long run of one character (a number of 5000 digits) as its
    # count, so that the line stays readable.
    text = re.sub(r"(.)\1{39,}", lambda m: "<%r x %d>" % (
        m.group(1), len(m.group(0))), repr(target.text_of(value)))
    if len(text) > 2000:
        text = text[:2000] + "... (%d characters)" % len(text)
    if target.fmt == "infer":
        return "%s, fmt=%r, as_json=%r, trust_timing=%r" % (
            text, value[1], value[2], value[3])
    return text


# ------------------------------------------------------------------ main

def _worker(args):
    name, count, seed_value = args
    return name, run(name, count, seed_value)


def _minimize_worker(args):
    """(target, signature, smallest input, its failure)."""
    name, sig, value = args
    value = minimize(name, sig, value)
    verdict, failure = check(BY_NAME[name], value)
    return name, sig, value, failure


def _cut(line: str) -> str:
    """A line of the report, a message that runs on cut short."""
    if len(line) <= 600:
        return line
    return line[:600] + "... (%d characters)" % len(line)


Minimal = Dict[Tuple[str, str], Tuple[Any, dict]]


def report(outcomes: Dict[str, Outcome], minimal: Minimal,
           targets: Optional[Dict[str, Target]] = None) -> List[str]:
    """The failure lines: one block per distinct failure (``targets``:
    the targets by name, BY_NAME unless the harness's tests give theirs).
    """
    lines = []
    for name, outcome in outcomes.items():
        target = (targets or BY_NAME)[name]
        for sig, item in sorted(outcome.distinct.items()):
            value, failure = minimal.get((name, sig), (item["value"],
                                                       item["failure"]))
            if failure is None:         # gone when run again: a hang
                value, failure = item["value"], item["failure"]
            lines.append("FAIL %s: %s (%d inputs)" % (name, sig,
                                                      item["count"]))
            if failure["detail"]:
                lines.append("  says: %s" % _cut(failure["detail"]))
            lines.append("  minimal input: %s" % _show(target, value))
            if failure["traceback"]:
                lines.extend("  " + _cut(line) for line in
                             failure["traceback"].rstrip().splitlines())
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int, nargs="?", default=100000,
                    help="inputs per target")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--target", action="append", choices=sorted(BY_NAME),
                    help="only this target (repeatable)")
    ap.add_argument("--no-minimize", action="store_true")
    a = ap.parse_args()
    names = a.target or [t.name for t in TARGETS]
    tasks = []
    for index, name in enumerate(names):
        chunks = max(1, math.ceil(a.count / CHUNK))
        for c in range(chunks):
            n = a.count // chunks + (1 if c < a.count % chunks else 0)
            if n:
                tasks.append((name, n, a.seed + 7919 * index + c))
    t0 = time.monotonic()
    outcomes = {name: Outcome() for name in names}
    jobs = max(1, min(a.jobs, len(tasks)))
    with multiprocessing.Pool(jobs) as pool:
        for name, outcome in pool.imap_unordered(_worker, tasks):
            outcomes[name].add(outcome)
        todo = [(name, sig, item["value"])
                for name, outcome in outcomes.items()
                for sig, item in outcome.distinct.items()]
        minimal: Minimal = {}
        if not a.no_minimize:
            for name, sig, value, failure in pool.imap_unordered(
                    _minimize_worker, todo):
                minimal[(name, sig)] = (value, failure)
    elapsed = time.monotonic() - t0
    bad = False
    for name in names:
        o = outcomes[name]
        print("fuzz %s: %d inputs (seed %d, %d jobs): %d results, %d "
              "refusals, %d failures (%d distinct)"
              % (name, o.inputs, a.seed, jobs, o.results, o.refusals,
                 o.failures, len(o.distinct)))
        bad = bad or o.failures > 0 or o.inputs < a.count
    for line in report(outcomes, minimal):
        print(line)
    print("fuzz inputs: %d targets in %.0f s" % (len(names), elapsed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
