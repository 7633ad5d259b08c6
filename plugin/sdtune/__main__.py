"""`python3 -m sdtune`: run the command line and exit with its status."""

import sys

from .cli import run_command_line

# SIGPIPE stays ignored (Python's default): a helper command that exits
# without reading its input is that command failing, not sdtune dying;
# a reader of sdtune's own output that goes away is handled as a failed
# standard output (cli.GuardedOutput).
sys.exit(run_command_line())
