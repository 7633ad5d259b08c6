"""`sdtune trace`: run one D script of dtrace/ and summarise what it saw.

Runs exactly one command through the host, `dtrace -s <script> <DEVNAME|all>
<SECONDS>`, where DEVNAME is an sd statname (sd3).  A cXtYdZ DISK is turned
into its statname from /etc/path_to_inst and the /dev/rdsk links
(inventory.devlinks.disk_names, files only, no command).

The scripts (dtrace/sdtune-{iosize,align,flush,qdepth}.d) stop themselves
after SECONDS with exit(0), so their END clause prints; it writes a line
`sdtune-agg NAME` before each printa() and `sdtune-end NS` last.  Between the
markers is libdtrace's own printa() output, in the formats of
usr/src/lib/libdtrace/common/dt_consume.c, which the pure parsers
parse_printa() and parse_quantize() read.
"""

import os
import re
import sys
from dataclasses import dataclass, field
from typing import (Any, Dict, Iterable, List, Optional, Sequence, TextIO,
                    Tuple)

from .errors import EXIT_OK, ParseError, SdtuneError, UsageError
from .host import CommandResult, Host
from .inventory.devlinks import disk_names
from .report import nicenum, render_table, to_json

# Script name → file in the dtrace/ directory.
SCRIPTS = {
    "iosize": "sdtune-iosize.d",
    "align": "sdtune-align.d",
    "flush": "sdtune-flush.d",
    "qdepth": "sdtune-qdepth.d",
}

# dtrace needs time beyond the traced seconds: compiling the script and
# enabling probes (fbt on a large kernel takes a few seconds), then the
# END clause's printing.  Only a hung dtrace runs into this.
TIMEOUT_MARGIN_S = 30
MAX_SECONDS = 86400

SECTOR_BYTES = 4096

# The aggregations each script prints, in order (see its header comment).
SECTIONS = {
    "iosize": ("size", "bytes"),
    "align": ("writes", "sub4k", "misaligned", "rmw"),
    "flush": ("calls", "sent", "lat", "latsum", "latmax"),
    "qdepth": ("depth", "ios", "depthsum", "deepest"),
}

_STATNAME = re.compile(r"^sd[0-9]+$")
_DISK = re.compile(r"^(?:/dev/r?dsk/)?(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)"
                   r"(?:[sp][0-9]+)?$")

# dt_print_quanthdr(): "\n%16s %41s %-9s\n" with "value", the 40-column
# "------------- Distribution -------------" and "count".
_HEADER = re.compile(r"^ +value +-+ Distribution -+ +count *$")
# One row: "%16lld " (lquantize/llquantize: "%16s " of "< N" or ">= N"),
# the bar ("|@@@ ", or bars left of "|" for negative values), then
# " %-9lld".  The bar may hold UTF-8 blocks with -x encoding=utf8.
_ROW = re.compile(r"^ *(-?[0-9]+|< -?[0-9]+|>= -?[0-9]+) "
                  r"([^|0-9]*\|[^|0-9]*) (-?[0-9]+) *$")
_MARK = "sdtune-agg "
_END = re.compile(r"^sdtune-end ([0-9]+)$")


# -- the generic printa() parsers ---------------------------------------------

@dataclass(frozen=True)
class Bucket:
    """One printed row of a quantize()/lquantize() distribution."""

    value: int          # the row's label: the bucket's lower bound
    count: int
    bound: str = ""     # "<" or ">=" for lquantize's outer rows


@dataclass(frozen=True)
class Distribution:
    """One entry of a quantize()/lquantize() aggregation: keys and rows."""

    keys: Tuple[str, ...]
    buckets: Tuple[Bucket, ...]

    @property
    def total(self) -> int:
        return sum(b.count for b in self.buckets)


def _bucket(m: "re.Match[str]") -> Bucket:
    label = m.group(1)
    count = int(m.group(3))
    if label.startswith(">="):
        return Bucket(int(label[2:]), count, ">=")
    if label.startswith("<"):
        return Bucket(int(label[1:]), count, "<")
    return Bucket(int(label), count)


def _check_rows(buckets: Sequence[Bucket], command: str, lineno: int) -> None:
    """Rows come in increasing order, "<" only first, ">=" only last:
    anything else is not one distribution."""
    for i, b in enumerate(buckets):
        if (b.bound == "<" and i != 0) or \
                (b.bound == ">=" and i != len(buckets) - 1):
            raise ParseError(command, "distribution row", "line %d: '%s %d' "
                             "row in the middle of a distribution"
                             % (lineno, b.bound, b.value))
        if i and b.bound == "" and buckets[i - 1].bound == "" and \
                b.value <= buckets[i - 1].value:
            raise ParseError(command, "distribution row", "line %d: bucket "
                             "%d after %d: rows out of order"
                             % (lineno, b.value, buckets[i - 1].value))


def parse_quantize(text: str, command: str = "dtrace") -> List[Distribution]:
    """Every quantize()/lquantize() entry printed by printa(), in order.

    Sample (printa(@size) of @size[statname, dir] = quantize(bytes): the
    key line holds each key as "  %-50s", the rows are "%16lld |<bar>
    %-9lld", zero rows are trimmed except one before and one after the
    data, and an entry ends with an empty line):

          sd3                                                 W
                   value  ------------- Distribution ------------- count
                    2048 |                                         0
                    4096 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@         1724
                    8192 |@@@@@@                                   310
                   16384 |@@                                       98
                   32768 |                                         0

    (the key line ends where the header's leading newline starts; an
    entry without keys has an empty line there).  Keys are split at
    blanks, so they must not contain any: statnames and R/W do not.
    """
    lines = text.splitlines()
    found: List[Distribution] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        keys: Tuple[str, ...] = ()
        if not _HEADER.match(line):
            if i + 1 >= len(lines) or not _HEADER.match(lines[i + 1]):
                raise ParseError(command, "distribution header",
                                 "line %d: %r is not followed by a "
                                 "distribution (output cut short?)"
                                 % (i + 1, line.strip()[:60]))
            keys = tuple(line.split())
            i += 1
        start = i + 1
        i += 1
        buckets: List[Bucket] = []
        while i < len(lines) and lines[i].strip():
            m = _ROW.match(lines[i])
            if not m:
                raise ParseError(command, "distribution row",
                                 "line %d: unreadable row %r"
                                 % (i + 1, lines[i].strip()[:60]))
            buckets.append(_bucket(m))
            i += 1
        if not buckets:
            raise ParseError(command, "distribution row", "line %d: "
                             "distribution without rows (output cut short?)"
                             % start)
        _check_rows(buckets, command, start)
        found.append(Distribution(keys, tuple(buckets)))
    return found


def parse_printa(text: str,
                 command: str = "dtrace") -> Dict[Tuple[str, ...], int]:
    """Keys → value of one printa() of a count()/sum()/max()/min()/avg()
    aggregation.

    Sample (printa(@writes) of @writes[statname] = count(): a leading
    empty line, then per entry each key as "  %-50s" and the value as
    " %16lld"):

        <empty line>
          sd3                                                          18211
          sd4                                                            312

    An aggregation that never fired prints only the empty line: {}.
    """
    values: Dict[Tuple[str, ...], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        try:
            value = int(words[-1])
        except ValueError:
            raise ParseError(command, "aggregation value", "line %d: %r "
                             "does not end with a number"
                             % (n, line.strip()[:60])) from None
        keys = tuple(words[:-1])
        if keys in values:
            raise ParseError(command, "aggregation key", "line %d: key %s "
                             "printed twice" % (n, " ".join(keys)))
        values[keys] = value
    return values


def split_sections(text: str,
                   command: str = "dtrace") -> Tuple[Dict[str, str], int]:
    """The text after each `sdtune-agg NAME` marker, and the nanoseconds of
    the closing `sdtune-end NS` line.

    Sample (the END clause of sdtune-align.d):

        sdtune-agg writes

          sd3                                                          18211
        sdtune-agg sub4k
        ...
        sdtune-end 10000412377

    Whatever dtrace prints after the end line is ignored.
    """
    sections: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(_MARK):
            name = line[len(_MARK):].strip()
            if not name or name in sections:
                raise ParseError(command, "sdtune-agg", "line %d: bad or "
                                 "repeated marker %r" % (n, line[:60]))
            sections[name] = []
            current = name
            continue
        if line.startswith("sdtune-end"):
            m = _END.match(line.strip())
            if not m:
                raise ParseError(command, "sdtune-end", "line %d: %r"
                                 % (n, line[:60]))
            return ({k: "\n".join(v) + "\n" for k, v in sections.items()},
                    int(m.group(1)))
        if current is None:
            if line.strip():
                raise ParseError(command, "sdtune-agg", "line %d: %r before "
                                 "the first aggregation" % (n, line[:60]))
            continue
        sections[current].append(line)
    raise ParseError(command, "sdtune-end", "missing: the output stops "
                     "before the script's END clause finished (dtrace was "
                     "stopped early or its output was cut)")


# -- arithmetic on distributions ----------------------------------------------

def _is_quantize_value(v: int) -> bool:
    a = abs(v)
    return a == 0 or a & (a - 1) == 0


def _check_quantize(d: Distribution, command: str, agg: str) -> None:
    for b in d.buckets:
        if b.bound or not _is_quantize_value(b.value):
            raise ParseError(command, agg, "bucket %s%d of %s is not a "
                             "quantize() bucket" % (b.bound, b.value,
                                                    " ".join(d.keys)))


def _ranges(d: Distribution, step: Optional[int]) -> List[Tuple[int, int]]:
    """Smallest and largest integer each bucket holds: quantize() (step
    None) bucket v > 0 holds [v, 2v), lquantize() bucket v holds
    [v, v + step)."""
    out = []
    for b in d.buckets:
        v = b.value
        if b.bound == "<":
            out.append((v - 1, v - 1))
        elif b.bound == ">=":
            out.append((v, v))
        elif step is not None:
            out.append((v, v + step - 1))
        elif v > 0:
            out.append((v, 2 * v - 1))
        elif v < 0:
            out.append((2 * v + 1, v))
        else:
            out.append((0, 0))
    return out


def lquantize_step(d: Distribution) -> int:
    """The step of an lquantize() distribution, from adjacent rows (1 when
    it cannot be told, as with a single row)."""
    plain = [b.value for b in d.buckets if not b.bound]
    steps = {b - a for a, b in zip(plain, plain[1:])}
    return min(steps) if steps else 1


def percentile(d: Distribution, q: float,
               step: Optional[int] = None) -> Optional[float]:
    """Estimate the q-quantile (0 < q <= 1) of the values behind a
    distribution, interpolating linearly inside the bucket that holds it:
    exact for lquantize() with step 1, within a factor of two for
    quantize()."""
    total = sum(b.count for b in d.buckets if b.count > 0)
    if total <= 0:
        return None
    rank = q * total
    cum = 0
    for (lo, hi), b in zip(_ranges(d, step), d.buckets):
        if b.count <= 0:
            continue
        if cum + b.count >= rank:
            return lo + (rank - cum) / b.count * (hi - lo)
        cum += b.count
    return float(_ranges(d, step)[-1][1])


# -- per-script summaries -----------------------------------------------------

def _pct(part: int, whole: int) -> Optional[float]:
    return None if whole <= 0 else round(100.0 * part / whole, 2)


def _round(value: Optional[float], digits: int = 0) -> Any:
    if value is None:
        return None
    return int(round(value)) if digits == 0 else round(value, digits)


@dataclass
class SizeStats:
    """I/O sizes of one device and direction."""

    ios: int
    bytes: int
    below_4k: int
    histogram: List[Tuple[int, int]]    # (bucket bytes, count), non-zero

    def to_json(self) -> Dict[str, Any]:
        return {"ios": self.ios, "bytes": self.bytes,
                "mean_bytes": _round(self.bytes / self.ios
                                     if self.ios else None),
                "below_4k_ios": self.below_4k,
                "below_4k_pct": _pct(self.below_4k, self.ios),
                "histogram": [{"bucket_bytes": v, "count": c}
                              for v, c in self.histogram]}


@dataclass
class IosizeDevice:
    device: str
    read: Optional[SizeStats] = None
    write: Optional[SizeStats] = None

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device,
                "read": self.read.to_json() if self.read else None,
                "write": self.write.to_json() if self.write else None}


@dataclass
class AlignDevice:
    device: str
    writes: int
    sub_4k: int
    misaligned: int
    rmw: int

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "writes": self.writes,
                "sub_4k_writes": self.sub_4k,
                "sub_4k_pct": _pct(self.sub_4k, self.writes),
                "misaligned_writes": self.misaligned,
                "misaligned_pct": _pct(self.misaligned, self.writes),
                "rmw_writes": self.rmw,
                "rmw_pct": _pct(self.rmw, self.writes)}


@dataclass
class FlushDevice:
    device: str
    calls: int
    sent: int
    completed: int                  # flushes whose latency was measured
    latency_sum_ns: int
    max_ns: Optional[int]
    p50_ns: Optional[float]
    p99_ns: Optional[float]
    histogram: List[Tuple[int, int]]

    @property
    def suppressed(self) -> int:
        return max(self.calls - self.sent, 0)

    @property
    def mean_ns(self) -> Optional[float]:
        return (self.latency_sum_ns / self.completed if self.completed
                else None)

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "calls": self.calls,
                "sent": self.sent, "suppressed": self.suppressed,
                "completed": self.completed,
                "mean_ns": _round(self.mean_ns),
                "p50_ns": _round(self.p50_ns), "p99_ns": _round(self.p99_ns),
                "max_ns": self.max_ns,
                "histogram": [{"bucket_ns": v, "count": c}
                              for v, c in self.histogram]}


@dataclass
class QdepthDevice:
    device: str
    ios: int
    depth_sum: int
    deepest: Optional[int]
    p50: Optional[float]
    p99: Optional[float]
    histogram: List[Tuple[int, int]]

    @property
    def mean(self) -> Optional[float]:
        return self.depth_sum / self.ios if self.ios else None

    def to_json(self) -> Dict[str, Any]:
        return {"device": self.device, "ios": self.ios,
                "mean_outstanding": _round(self.mean, 2),
                "max_outstanding": self.deepest,
                "p50_outstanding": _round(self.p50, 2),
                "p99_outstanding": _round(self.p99, 2),
                "histogram": [{"outstanding": v, "count": c}
                              for v, c in self.histogram]}


def _device_order(name: str) -> Tuple[str, int, str]:
    """sd2 before sd10."""
    m = re.match(r"^(.*?)([0-9]+)$", name)
    return (m.group(1), int(m.group(2)), "") if m else (name, -1, name)


def _one_key(values: Dict[Tuple[str, ...], int], command: str,
             agg: str) -> Dict[str, int]:
    out = {}
    for keys, value in values.items():
        if len(keys) != 1:
            raise ParseError(command, agg, "expected one key (a device), "
                             "got %r" % (keys,))
        out[keys[0]] = value
    return out


def _one_key_dists(dists: Iterable[Distribution], command: str,
                   agg: str) -> Dict[str, Distribution]:
    out = {}
    for d in dists:
        if len(d.keys) != 1:
            raise ParseError(command, agg, "expected one key (a device), "
                             "got %r" % (d.keys,))
        out[d.keys[0]] = d
    return out


def _nonzero(d: Distribution) -> List[Tuple[int, int]]:
    return [(b.value, b.count) for b in d.buckets if b.count]


def summarise_iosize(sections: Dict[str, str],
                     command: str) -> List[IosizeDevice]:
    sums = parse_printa(sections["bytes"], command)
    devices: Dict[str, IosizeDevice] = {}
    for d in parse_quantize(sections["size"], command):
        if len(d.keys) != 2 or d.keys[1] not in ("R", "W"):
            raise ParseError(command, "size", "expected keys DEVICE R|W, "
                             "got %r" % (d.keys,))
        _check_quantize(d, command, "size")
        if d.keys not in sums:
            raise ParseError(command, "bytes", "no entry for %s"
                             % " ".join(d.keys))
        stats = SizeStats(d.total, sums[d.keys],
                          sum(b.count for b in d.buckets
                              if b.value < SECTOR_BYTES), _nonzero(d))
        dev = devices.setdefault(d.keys[0], IosizeDevice(d.keys[0]))
        if d.keys[1] == "R":
            dev.read = stats
        else:
            dev.write = stats
    return [devices[k] for k in sorted(devices, key=_device_order)]


def summarise_align(sections: Dict[str, str],
                    command: str) -> List[AlignDevice]:
    counts = {name: _one_key(parse_printa(sections[name], command), command,
                             name)
              for name in SECTIONS["align"]}
    return [AlignDevice(dev, writes, counts["sub4k"].get(dev, 0),
                        counts["misaligned"].get(dev, 0),
                        counts["rmw"].get(dev, 0))
            for dev, writes in sorted(counts["writes"].items(),
                                      key=lambda kv: _device_order(kv[0]))]


def summarise_flush(sections: Dict[str, str],
                    command: str) -> List[FlushDevice]:
    calls = _one_key(parse_printa(sections["calls"], command), command,
                     "calls")
    sent = _one_key(parse_printa(sections["sent"], command), command, "sent")
    lat = _one_key_dists(parse_quantize(sections["lat"], command), command,
                         "lat")
    latsum = _one_key(parse_printa(sections["latsum"], command), command,
                      "latsum")
    latmax = _one_key(parse_printa(sections["latmax"], command), command,
                      "latmax")
    out = []
    for dev in sorted(set(calls) | set(sent) | set(lat),
                      key=_device_order):
        d = lat.get(dev)
        if d is not None:
            _check_quantize(d, command, "lat")
        out.append(FlushDevice(
            dev, calls.get(dev, 0), sent.get(dev, 0),
            d.total if d else 0, latsum.get(dev, 0), latmax.get(dev),
            percentile(d, 0.50) if d else None,
            percentile(d, 0.99) if d else None,
            _nonzero(d) if d else []))
    return out


def summarise_qdepth(sections: Dict[str, str],
                     command: str) -> List[QdepthDevice]:
    depth = _one_key_dists(parse_quantize(sections["depth"], command),
                           command, "depth")
    ios = _one_key(parse_printa(sections["ios"], command), command, "ios")
    dsum = _one_key(parse_printa(sections["depthsum"], command), command,
                    "depthsum")
    deepest = _one_key(parse_printa(sections["deepest"], command), command,
                       "deepest")
    out = []
    for dev in sorted(set(ios) | set(depth), key=_device_order):
        d = depth.get(dev)
        step = lquantize_step(d) if d else 1
        out.append(QdepthDevice(
            dev, ios.get(dev, 0), dsum.get(dev, 0), deepest.get(dev),
            percentile(d, 0.50, step) if d else None,
            percentile(d, 0.99, step) if d else None,
            _nonzero(d) if d else []))
    return out


_SUMMARISE = {
    "iosize": summarise_iosize,
    "align": summarise_align,
    "flush": summarise_flush,
    "qdepth": summarise_qdepth,
}


@dataclass
class TraceResult:
    """One script's summary: per device, plus what dtrace warned about."""

    name: str
    seconds: int
    elapsed_ns: int
    devices: List[Any]
    warnings: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"trace": self.name, "seconds": self.seconds,
                "elapsed_ns": self.elapsed_ns,
                "devices": [d.to_json() for d in self.devices],
                "warnings": list(self.warnings)}


def parse_trace(name: str, text: str, seconds: int = 0,
                command: Optional[str] = None) -> TraceResult:
    """The summary of one script's output (see split_sections())."""
    if name not in SCRIPTS:
        raise UsageError("trace", name, _known())
    command = command or "dtrace -s %s" % SCRIPTS[name]
    sections, elapsed = split_sections(text, command)
    for agg in SECTIONS[name]:
        if agg not in sections:
            raise ParseError(command, "sdtune-agg %s" % agg, "missing")
    return TraceResult(name, seconds, elapsed,
                       _SUMMARISE[name](sections, command))


# -- running dtrace -----------------------------------------------------------

def _known() -> str:
    return "unknown script: expected %s" % ", ".join(SCRIPTS)


def script_dir() -> str:
    """dtrace/ next to the package: <tree>/plugin/sdtune/../../dtrace, and
    the same relative place when installed, <prefix>/lib/sdtune/plugin/
    sdtune → <prefix>/lib/sdtune/dtrace."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(package_dir, "..", "..", "dtrace"))


def script_path(name: str) -> str:
    if name not in SCRIPTS:
        raise UsageError("trace", name, _known())
    path = os.path.join(script_dir(), SCRIPTS[name])
    if not os.path.isfile(path):
        raise SdtuneError("trace", name, "script %s is missing (incomplete "
                          "installation)" % path)
    return path


def resolve_device(host: Host, disk: Optional[str]) -> str:
    """The statname a script filters on: "all", sdN as given, or the sd
    instance of a cXtYdZ name (with or without /dev/rdsk/ and slice)."""
    if disk is None or disk == "all":
        return "all"
    if _STATNAME.match(disk):
        return disk
    m = _DISK.match(disk)
    if not m:
        raise UsageError("trace", disk, "not a disk name: expected cXtYdZ "
                         "or an sd instance such as sd3")
    for instance, name in sorted(disk_names(host).items()):
        if name == m.group(1):
            return "sd%d" % instance
    raise UsageError("trace", disk, "no sd instance has this name (see "
                     "'sdtune disks')")


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _dtrace_failed(name: str, script: str, result: CommandResult) -> None:
    """Raise the error a failed dtrace run means, in the operator's terms."""
    msg = _first_error(result.stderr)
    low = result.stderr.lower()
    if "requires additional privileges" in low:
        raise SdtuneError("trace", name, "DTrace requires additional "
                          "privileges: run sdtune as root, or with the "
                          "dtrace_kernel privilege (%s)" % msg)
    m = re.search(r"probe description (\S+) does not match any probes",
                  result.stderr)
    if m:
        raise SdtuneError("trace", name, "probe %s does not match any "
                          "probes on this kernel: the sd module is not "
                          "loaded or its functions differ from those %s "
                          "was written for (see its header)"
                          % (m.group(1), os.path.basename(script)))
    if "failed to compile" in low:
        raise SdtuneError("trace", name, "dtrace could not compile %s: %s"
                          % (os.path.basename(script), msg))
    raise SdtuneError("trace", name, "dtrace exited with status %d%s"
                      % (result.returncode, ": " + msg if msg else ""))


def _warnings(stderr: str) -> List[str]:
    """dtrace's complaints that make the numbers incomplete: drops and
    probe errors."""
    return [line.strip() for line in stderr.splitlines()
            if "drop" in line or "error" in line.lower()]


def query_trace(host: Host, name: str, disk: Optional[str] = None,
                seconds: int = 10) -> TraceResult:
    """Run `dtrace -s SCRIPT DEVNAME|all SECONDS` and summarise it."""
    script = script_path(name)
    if isinstance(seconds, bool) or not isinstance(seconds, int) or \
            not 1 <= seconds <= MAX_SECONDS:
        raise UsageError("trace", name, "seconds must be a whole number "
                         "from 1 to %d" % MAX_SECONDS)
    device = resolve_device(host, disk)
    if not host.can_run("dtrace"):
        raise SdtuneError("run", "dtrace", "DTrace is not available: the "
                          "[commands] dtrace path of sdtune.conf is missing "
                          "or not executable")
    args = ["-s", script, device, str(seconds)]
    result = host.run("dtrace", args, timeout_s=seconds + TIMEOUT_MARGIN_S)
    if result.returncode != 0:
        _dtrace_failed(name, script, result)
    trace = parse_trace(name, result.stdout, seconds,
                        "dtrace -s %s" % os.path.basename(script))
    trace.warnings = _warnings(result.stderr)
    return trace


# -- the command --------------------------------------------------------------

def _pct_text(part: int, whole: int, parsable: bool) -> str:
    value = _pct(part, whole)
    if value is None:
        return "-"
    return "%.2f" % value if parsable else "%.1f%%" % value


def _ns_text(value: Optional[float], parsable: bool) -> str:
    if value is None:
        return "-"
    if parsable:
        return str(int(round(value)))
    if value < 1e3:
        return "%dns" % value
    if value < 1e6:
        return "%.1fus" % (value / 1e3)
    if value < 1e9:
        return "%.2fms" % (value / 1e6)
    return "%.2fs" % (value / 1e9)


def _num_text(value: Optional[float], parsable: bool) -> str:
    if value is None:
        return "-"
    return ("%.4g" if parsable else "%.1f") % value


def _size_label(value: int) -> str:
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return "%d%s" % (value >> shift, unit)
    return str(value)


def _histogram_text(hist: List[Tuple[int, int]], label=str) -> str:
    return " ".join("%s:%d" % (label(v), c) for v, c in hist) or "-"


_IOSIZE_COLUMNS = [
    ("DEVICE", lambda r, p: r[0]),
    ("DIR", lambda r, p: r[1]),
    ("IOS", lambda r, p: str(r[2].ios)),
    ("AVG", lambda r, p: "-" if not r[2].ios else
     str(r[2].bytes // r[2].ios) if p else nicenum(r[2].bytes // r[2].ios)),
    ("<4K", lambda r, p: _pct_text(r[2].below_4k, r[2].ios, p)),
    ("HISTOGRAM", lambda r, p: _histogram_text(
        r[2].histogram, str if p else _size_label)),
]

_ALIGN_COLUMNS = [
    ("DEVICE", lambda r, p: r.device),
    ("WRITES", lambda r, p: str(r.writes)),
    ("SUB4K", lambda r, p: str(r.sub_4k)),
    ("SUB4K%", lambda r, p: _pct_text(r.sub_4k, r.writes, p)),
    ("MISALIGNED", lambda r, p: str(r.misaligned)),
    ("MISALIGNED%", lambda r, p: _pct_text(r.misaligned, r.writes, p)),
    ("RMW", lambda r, p: str(r.rmw)),
    ("RMW%", lambda r, p: _pct_text(r.rmw, r.writes, p)),
]

_FLUSH_COLUMNS = [
    ("DEVICE", lambda r, p: r.device),
    ("CALLS", lambda r, p: str(r.calls)),
    ("SENT", lambda r, p: str(r.sent)),
    ("SUPPRESSED", lambda r, p: str(r.suppressed)),
    ("MEAN", lambda r, p: _ns_text(r.mean_ns, p)),
    ("P50", lambda r, p: _ns_text(r.p50_ns, p)),
    ("P99", lambda r, p: _ns_text(r.p99_ns, p)),
    ("MAX", lambda r, p: _ns_text(r.max_ns, p)),
]

_QDEPTH_COLUMNS = [
    ("DEVICE", lambda r, p: r.device),
    ("IOS", lambda r, p: str(r.ios)),
    ("MEAN", lambda r, p: _num_text(r.mean, p)),
    ("P50", lambda r, p: _num_text(r.p50, p)),
    ("P99", lambda r, p: _num_text(r.p99, p)),
    ("MAX", lambda r, p: "-" if r.deepest is None else str(r.deepest)),
]


def render_trace(trace: TraceResult, scripted: bool = False,
                 parsable: bool = False) -> str:
    """The summary as a table (one row per device, per direction for
    iosize)."""
    if trace.name == "iosize":
        rows = []
        for dev in trace.devices:
            for label, stats in (("R", dev.read), ("W", dev.write)):
                if stats is not None:
                    rows.append((dev.device, label, stats))
        return render_table(_IOSIZE_COLUMNS, rows, scripted, parsable)
    columns = {"align": _ALIGN_COLUMNS, "flush": _FLUSH_COLUMNS,
               "qdepth": _QDEPTH_COLUMNS}[trace.name]
    return render_table(columns, trace.devices, scripted, parsable)


def cmd_trace(host: Host, name: str, disk: Optional[str], seconds: int,
              out: TextIO, as_json: bool, scripted: bool = False,
              parsable: bool = False, err: Optional[TextIO] = None) -> int:
    """`sdtune trace NAME [-d DISK] [-t SECONDS] [-H] [-p] [-o json]`."""
    err = sys.stderr if err is None else err
    trace = query_trace(host, name, disk, seconds)
    for warning in trace.warnings:
        err.write("sdtune: warning: %s\n" % warning)
    if not trace.devices:
        err.write("sdtune: trace %s: no activity on %s in %d s\n"
                  % (name, "sd disks" if disk is None else disk, seconds))
    if as_json:
        out.write(to_json(trace.to_json()))
    else:
        out.write(render_trace(trace, scripted, parsable))
    return EXIT_OK
