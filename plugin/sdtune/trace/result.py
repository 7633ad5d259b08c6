# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""One run's summary (TraceResult) and parse_trace(), which reads a D
script's whole output into it with the script's record.  Pure.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..errors import ParseError
from .parse import split_sections
from .scripts import find_script


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
    """The summary of one script's output (see parse.split_sections()).
    Errors name `command`, by default the script's `dtrace -s FILE`."""
    script = find_script(name)
    command = command or script.command
    sections, elapsed = split_sections(text, command)
    for agg in script.sections:
        if agg not in sections:
            raise ParseError(command, "sdtune-agg %s" % agg, "missing")
    return TraceResult(name, seconds, elapsed,
                       script.summarise(sections, command))
