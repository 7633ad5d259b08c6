"""The framing of `sdio serve`, the engine's file and command server that
SshHost talks to over one SSH session (plugin/engine/serve.c has the
other side).  Pure: bytes in, bytes out.

A message is a header line ``WORD N`` (the operation in a request, ``ok``
or ``err`` in a response; N the number of fields) and N fields, each a
decimal length line and then exactly that many raw bytes.  Requests are
answered in order, so several may be sent before the first answer is
read (one round trip for many).
"""

import re
from typing import BinaryIO, List, Sequence, Tuple, Union

PROTOCOL = b"1"
MAX_FIELDS = 1000000
# The largest field either side sends: a file read up to READ_LIMIT (64
# MiB), or a command's output up to the same cap, with room to spare.
MAX_FIELD = 80 << 20
_MAX_DIGITS = 12
_WORD = re.compile(rb"^[a-z][a-z_]*$")

Field = Union[bytes, str, int]


class WireError(Exception):
    """The other side broke the framing, or the stream ended inside a
    message (``eof`` when it ended before one began)."""

    def __init__(self, what: str, eof: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.eof = eof


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
    line = stream.readline(64)
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
    """The next message: (word, fields).  WireError when the stream does
    not hold one."""
    header = _line(stream, True)
    word, _, count = header.partition(b" ")
    if not _WORD.match(word):
        raise WireError("a header does not start with a word")
    n = _number(count, MAX_FIELDS, "the field count")
    fields = []
    for _ in range(n):
        size = _number(_line(stream, False), MAX_FIELD, "a field length")
        data = stream.read(size)
        if data is None or len(data) != size:
            raise WireError("the stream ended inside a field")
        fields.append(data)
    return word.decode("ascii", "replace"), fields


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
