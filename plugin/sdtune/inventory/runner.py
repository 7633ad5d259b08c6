"""Run one inventory command through the host and return its output,
turning a failure into a ParseError that names the command and field."""

from typing import Optional, Sequence

from ..errors import ParseError
from ..host import Host


def output_of(host: Host, name: str, args: Sequence[str], field: str,
              stdin: Optional[bytes] = None) -> str:
    """stdout of `name args`; ParseError when it exits non-zero or says
    nothing on stdout but something on stderr."""
    label = " ".join([name, *args])
    result = host.run(name, args, stdin=stdin)
    if result.returncode != 0 or (not result.stdout and result.stderr):
        reason = result.stderr.strip()[:200] or \
            "exit status %d" % result.returncode
        raise ParseError(label, field, reason)
    return result.stdout
