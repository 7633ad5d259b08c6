# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Exception types and exit codes shared by every part of sdtune.

Errors read like illumos tools: ``cannot <verb> '<object>': <reason>``.  The
command line prefixes ``sdtune: `` and exits with the error's ``exit_code``.
This module runs no commands and touches no files.
"""

from typing import Optional

EXIT_OK = 0
EXIT_PROBLEMS = 1   # audit or verify found something the operator must see
EXIT_USAGE = 2
EXIT_REFUSED = 3    # the operation would have been unsafe, nothing was done
EXIT_FAILED = 4
# Stopped by a signal: 128 + its number, as a shell reports it.
EXIT_SIGINT = 130   # Ctrl-C
EXIT_SIGTERM = 143


class SdtuneError(Exception):
    """An operation that could not be done, with what, on what, and why."""

    default_exit_code = EXIT_FAILED

    def __init__(self, verb: str, obj: str, reason: str,
                 exit_code: Optional[int] = None) -> None:
        self.verb = verb
        self.obj = obj
        self.reason = reason
        self.exit_code = (self.default_exit_code if exit_code is None
                          else exit_code)
        super().__init__(verb, obj, reason)

    def __str__(self) -> str:
        return "cannot %s '%s': %s" % (self.verb, self.obj, self.reason)


class UsageError(SdtuneError):
    """The command line asked for something that makes no sense."""

    default_exit_code = EXIT_USAGE


class RefusedError(SdtuneError):
    """The operation is possible but unsafe; the operator must change it."""

    default_exit_code = EXIT_REFUSED


class HostError(SdtuneError):
    """A command, file or lock operation on the host failed (see host.py)."""

    default_exit_code = EXIT_FAILED


class LockedError(HostError):
    """Another sdtune holds the lock: a refusal, nothing was done."""

    default_exit_code = EXIT_REFUSED


class ConfigError(SdtuneError):
    """The configuration file cannot be read or holds a bad value."""

    default_exit_code = EXIT_USAGE


class ParseError(SdtuneError):
    """A command printed output that does not have the format we rely on.

    Parsers raise this instead of guessing, because a guessed value could
    lead to a wrong sd.conf entry.
    """

    default_exit_code = EXIT_FAILED

    def __init__(self, command: str, field: str, reason: str,
                 exit_code: Optional[int] = None) -> None:
        self.command = command
        self.field = field
        super().__init__("parse", command, reason, exit_code)
        # Keep args in constructor order so the error survives pickling.
        self.args = (command, field, reason)

    def __str__(self) -> str:
        return "cannot parse '%s' output: missing or bad field '%s': %s" % (
            self.command, self.field, self.reason)
