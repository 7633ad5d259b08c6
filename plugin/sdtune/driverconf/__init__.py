# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The kernel's driver.conf reader and writer, shared by every driver's
rules.

lexer (kobj_lex), parser (driver.conf statements, lossless), checks
(what the kernel warns about in any driver.conf: byte-order mark,
typographic quotes, integers), strtol (ddi_strtol() and ddi_strtoul(),
as drivers read numbers out of property strings) and edit (lossless
splices: quoting, appending an entry to a list property, removing one).
Nothing here knows a driver: sd's rules are sdconf/, nvme's nvmeconf/,
and both sit on this package.
"""
