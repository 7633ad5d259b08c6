# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The protocol of `sdio serve`, the engine's file and command server that
SshHost talks to over one SSH session (plugin/engine/serve_*.c have the
other side): the framing, and the shape of every answer.  Pure: bytes
in, bytes out.

A message is a header line and N fields, each a decimal length line and
then exactly that many raw bytes.  A request's header is ``OP N``; an
answer's is ``ok N SEQ`` or ``err N SEQ``, where SEQ is the number of
the request it answers (the engine counts them from 1, hello first), so
that a lost, extra or repeated answer is seen at once instead of being
taken for the answer to the next request.  Requests are answered in
order, so several may be sent before the first answer is read (one
round trip for many).

One op is answered in more than one message (protocol 3):
``stream [path, timeout_ms, has_stdin, stdin, args...]`` runs a command
as ``run`` does, but sends each piece of its standard output as the
engine reads it (at most 64 KiB), flushed at once, as ``part 1 SEQ``
whose one field is those bytes, SEQ the stream request's number; then
the one ``ok`` or ``err`` that ends every request, run's, whose stdout
field is empty (the output went in parts, uncapped; stderr is capped as
run's).  No other op's answer comes in parts (read_stream).

The constants below are the engine's too: tests/engine/test_wire_constants.py
holds serve.h and serve_dispatch.c to them, and to ANSWERS' list of operations.
"""

import io
import math
import re
from typing import (BinaryIO, Callable, Dict, List, NamedTuple, Optional,
                    Sequence, Tuple, Union)

PROTOCOL = b"3"
MAX_FIELDS = 1000000
# The largest field either side sends: a file read up to READ_LIMIT (64
# MiB), or a command's output up to the same cap, with room to spare.
MAX_FIELD = 80 << 20
MAX_HEADER = 64         # bytes of a header line, without its newline
MAX_LEN_LINE = 24       # bytes of a field's length line, without it
_MAX_DIGITS = 12
MAX_SEQ = 10 ** _MAX_DIGITS - 1   # the engine's request count wraps to 1
_WORD = re.compile(rb"^[a-z][a-z_]*$")

Field = Union[bytes, str, int]


class WireError(Exception):
    """The other side broke the framing, or the stream ended inside a
    message (``eof`` when it ended before one began)."""

    def __init__(self, what: str, eof: bool = False,
                 old: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.eof = eof
        # An answer of protocol 1, whose headers name no request.
        self.old = old


def _bytes(value: Field) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool):
        return b"1" if value else b"0"
    if isinstance(value, int):
        return str(value).encode("ascii")
    return value.encode("utf-8", "surrogateescape")


def encode(word: str, fields: Sequence[Field]) -> bytes:
    """One message."""
    parts = [b"%s %d\n" % (word.encode("ascii"), len(fields))]
    for value in fields:
        data = _bytes(value)
        parts.append(b"%d\n" % len(data))
        parts.append(data)
    return b"".join(parts)


def _line(stream: BinaryIO, at_start: bool) -> bytes:
    line = stream.readline(MAX_HEADER + 1)
    if not line:
        raise WireError("the stream ended", eof=at_start)
    if not line.endswith(b"\n"):
        raise WireError("a header or length line is cut or too long")
    return line[:-1]


def _number(text: bytes, limit: int, what: str) -> int:
    if not text.isdigit() or len(text) > _MAX_DIGITS:
        raise WireError("%s is not a number" % what)
    value = int(text)
    if value > limit:
        raise WireError("%s %d is over the limit of %d"
                        % (what, value, limit))
    return value


def read_message(stream: BinaryIO) -> Tuple[str, List[bytes]]:
    """The next request: (word, fields).  WireError when the stream does
    not hold one."""
    word, count, seq = _header(stream)
    if seq is not None:
        raise WireError("a request header carries a third word")
    return word, _fields(stream, count)


class Answer(NamedTuple):
    """An answer as it came: ``ok`` or ``err``, the number of the
    request it answers, and its fields."""
    word: str
    seq: int
    fields: List[bytes]


def read_answer(stream: BinaryIO) -> Answer:
    """The next answer, or part of one (``part``: a stream's output).
    WireError when the stream does not hold one, or when its header
    carries no request number (``old``: an engine of protocol 1)."""
    word, count, seq = _header(stream)
    if word not in ("ok", "err", "part"):
        raise WireError("an answer is neither ok, err nor part")
    if seq is None:
        raise WireError("an answer names no request", old=True)
    return Answer(word, seq, _fields(stream, count))


def encode_answer(word: str, seq: int, fields: Sequence[Field]) -> bytes:
    """One answer, as the engine sends it (for tests and fakes)."""
    head = encode(word, fields)
    nl = head.index(b"\n")
    return head[:nl] + b" %d" % seq + head[nl:]


def _header(stream: BinaryIO) -> Tuple[str, int, Union[int, None]]:
    header = _line(stream, True)
    word, _, rest = header.partition(b" ")
    if not _WORD.match(word):
        raise WireError("a header does not start with a word")
    count, sep, seq = rest.partition(b" ")
    n = _number(count, MAX_FIELDS, "the field count")
    number = _number(seq, MAX_SEQ, "the request number") if sep else None
    return word.decode("ascii", "replace"), n, number


def _fields(stream: BinaryIO, n: int) -> List[bytes]:
    fields = []
    for _ in range(n):
        size = _number(_line(stream, False), MAX_FIELD, "a field length")
        data = stream.read(size)
        if data is None or len(data) != size:
            raise WireError("the stream ended inside a field")
        fields.append(data)
    return fields


def text(field: bytes) -> str:
    """A field as text (paths and names are bytes on illumos; the
    undecodable ones survive the round trip)."""
    return field.decode("utf-8", "surrogateescape")


def number(field: bytes) -> int:
    """A decimal field, possibly negative."""
    body = field[1:] if field.startswith(b"-") else field
    if not body.isdigit() or len(body) > 20:
        raise WireError("a number field is not a number")
    return int(field)


# -- the shape of every answer --------------------------------------------

Kind = Callable[[bytes], object]


def _integer(low: int, high: int) -> Kind:
    def kind(field: bytes) -> int:
        value = number(field)
        if not low <= value <= high:
            raise WireError("a number field is out of its range")
        return value
    return kind


def _flag(field: bytes) -> bool:
    if field not in (b"0", b"1"):
        raise WireError("a yes/no field is neither 0 nor 1")
    return field == b"1"


def _raw(field: bytes) -> bytes:
    return field


def _nothing(field: bytes) -> bytes:
    if field:
        raise WireError("a field that must be empty holds %d bytes"
                        % len(field))
    return field


_U32 = _integer(0, (1 << 32) - 1)
_U64 = _integer(0, (1 << 64) - 1)
_I64 = _integer(-(1 << 63), (1 << 63) - 1)
_STAT = (_U32, _U64, _U64, _U64, _U32, _U32, _integer(0, (1 << 63) - 1),
         _I64, _I64, _I64)


def REPEAT(field: bytes) -> object:
    """Not a kind: the mark that the kinds before it repeat."""
    raise AssertionError("REPEAT is a mark, not a kind")


# The fields of each operation's ok answer, one kind each (serve_dispatch.c's
# table of ops says the same in words).  A shape ending in REPEAT is that
# group of kinds any number of times, each group whole.
ANSWERS: Dict[str, Tuple[Kind, ...]] = {
    "hello": (_raw, _U32, text, _integer(1, (1 << 63) - 1), text, text),
    "read": (_raw,),
    "stat": _STAT,
    "lstat": _STAT,
    "listdir": (text, REPEAT),
    "readlink": (text,),
    "readlinks": (text, text, REPEAT),
    "samefile": (_flag,),
    "access": (_flag,),
    "can_run": (_flag,),
    "create": (),
    "replace": (),
    "check_replaceable": (),
    "mkdirs": (),
    "remove": (),
    "rmdir": (),
    "lock": (),
    "unlock": (),
    "run": (_integer(-1, 255), _integer(0, 255), _raw, _raw, _U64),
    # run's, its stdout always empty (the output came in parts).
    "stream": (_integer(-1, 255), _integer(0, 255), _nothing, _raw, _U64),
    # Any number: the clock's range is the journal's (is_time), checked
    # by the one who reads it, in words about the clock.
    "now": (_integer(-10 ** 20, 10 ** 20),),
    "bye": (),
}


def answer_values(op: str, answer: Answer) -> List[object]:
    """The fields of an answer to OP, each as its kind (int, bool, str or
    bytes); an err answer's as text, its code first.  WireError when the
    answer does not have the shape the protocol gives OP's answers."""
    fields = answer.fields
    if answer.word == "err":
        if not fields or not _WORD.match(fields[0]):
            raise WireError("an err answer names no error code")
        return [text(f) for f in fields]
    if op == "hello" and (not fields or fields[0] != PROTOCOL):
        raise WireError("the engine speaks another protocol version",
                        old=True)
    shape = ANSWERS[op]
    if shape and shape[-1] is REPEAT:
        kinds = shape[:-1]
        if len(fields) % len(kinds):
            raise WireError("%d fields are not whole groups of %d"
                            % (len(fields), len(kinds)))
    else:
        kinds = shape
        if len(fields) != len(kinds):
            raise WireError("%d fields where %d belong"
                            % (len(fields), len(kinds)))
    return [kinds[i % len(kinds)](f) for i, f in enumerate(fields)]


def next_answer(stream: BinaryIO, op: str, seq: int,
                on_part: Optional[Callable[[bytes], None]] = None
                ) -> Answer:
    """The answer to request number SEQ, an OP, read from stream, with
    its values checked (answer_values): WireError when the stream holds
    anything else, an answer to another request included.  The parts
    before a stream's answer go to on_part, in order (skipped without
    one); a part of any other op's answer is a WireError."""
    while True:
        answer = read_answer(stream)
        if answer.seq != seq:
            raise WireError("it answers request %d, not %d: the stream is "
                            "out of step" % (answer.seq, seq))
        if answer.word != "part":
            break
        if op != "stream":
            raise WireError("an answer to %s comes in parts: only a "
                            "stream's does" % op)
        if len(answer.fields) != 1:
            raise WireError("a part of %d fields, not 1"
                            % len(answer.fields))
        if on_part is not None:
            on_part(answer.fields[0])
    return Answer(answer.word, answer.seq, answer_values(op, answer))


def read_stream(stream: BinaryIO, seq: int,
                on_part: Callable[[bytes], None]) -> Answer:
    """The answers to stream request number SEQ: each part's bytes
    handed to on_part as it is read, then the final answer, checked as
    next_answer checks it (run's shape, its stdout empty).  WireError
    for a part with other than one field, or of another request.  What
    on_part raises goes through unchanged, the rest unread."""
    return next_answer(stream, "stream", seq, on_part)


def parse_answers(data: bytes, ops: Sequence[str],
                  first: int = 1) -> List[Answer]:
    """The answers in data to the requests OPS, numbered from FIRST, and
    nothing after them (pure: the reading SshHost does on its pipe)."""
    stream = io.BytesIO(data)
    answers = [next_answer(stream, op, first + i)
               for i, op in enumerate(ops)]
    if stream.read(1):
        raise WireError("more follows the last answer")
    return answers


# The times sdtune journals: seconds since 1970, below 1e11 (the year
# 5138).  The answer to `now` is held to it where it arrives, so that no
# entry is written with a time the journal's reader refuses.
TIME_LIMIT_S = 1e11


def is_time(seconds: float) -> bool:
    """Whether seconds since 1970 is a time the journal holds."""
    return math.isfinite(seconds) and 0 <= seconds < TIME_LIMIT_S
