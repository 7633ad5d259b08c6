# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""`sdtune trace`: run one D script of dtrace/ and summarise what it saw.

The scripts (dtrace/sdtune-{iosize,align,flush,qdepth}.d) stop themselves
after SECONDS with exit(0), so their END clause prints; it writes a line
`sdtune-agg NAME` before each printa() and `sdtune-end NS` last.  Between
the markers is libdtrace's own printa() output.

One job per module, each importing only those listed before it:

    parse      pure parsers of the DTrace output: markers, printa() values,
               quantize()/lquantize() distributions
    summarise  pure per-script summaries: one record per device, and its
               JSON shape
    cells      pure text of a table cell, for people or parsable (-p)
    scripts    the record of each D script (name, file, sections,
               summariser, table rows and columns), in one table
    result     a run's summary (TraceResult) from a script's whole output
    run        finding the script, running dtrace through the host, and
               the table (query_trace, render_trace)

The command line is commands/trace.py.
"""
