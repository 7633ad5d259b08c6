# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Pictures of certification records, from records only: svg.py (a
small stdlib SVG plotter), charts.py (the charts of a record and of a
model's units) and html.py (the self-contained HTML page of `sdtune
report`).  The text charts of a terminal are certify/charts.py; both
take their numbers from records/series.py."""
