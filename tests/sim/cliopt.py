# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""getopt(3C) as the illumos tools see it, for the fake commands.

Options may be grouped (``-Hp``), an option argument may be attached or
the next word, ``--`` ends the options and the first operand ends them
too.  Errors are reported the way libc does it unless the option string
starts with ``:``.  Runs no commands.
"""

from typing import List, Optional, Tuple


class GetoptError(Exception):
    """An unknown option or a missing argument."""

    def __init__(self, message: str, opt: str) -> None:
        super().__init__(message)
        self.message = message
        self.opt = opt


def getopt(prog: str, args: List[str],
           optstring: str) -> Tuple[List[Tuple[str, Optional[str]]],
                                    List[str]]:
    """(options, operands); GetoptError carries libc's message (empty
    for a leading ``:`` in ``optstring``) and the offending letter."""
    quiet = optstring.startswith(":")
    spec = optstring.lstrip(":")
    opts: List[Tuple[str, Optional[str]]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return opts, args[i + 1:]
        if not a.startswith("-") or a == "-":
            return opts, args[i:]
        j = 1
        while j < len(a):
            c = a[j]
            k = spec.find(c)
            if c == ":" or k < 0:
                raise GetoptError("" if quiet else
                                  "%s: illegal option -- %s\n" % (prog, c), c)
            if k + 1 < len(spec) and spec[k + 1] == ":":
                if j + 1 < len(a):
                    opts.append((c, a[j + 1:]))
                else:
                    i += 1
                    if i >= len(args):
                        raise GetoptError(
                            "" if quiet else "%s: option requires an "
                            "argument -- %s\n" % (prog, c), c)
                    opts.append((c, args[i]))
                break
            opts.append((c, None))
            j += 1
        i += 1
    return opts, []
