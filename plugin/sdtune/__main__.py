"""`python3 -m sdtune`: run the command line and exit with its status."""

import os
import sys

from .cli import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The reader (e.g. `| head`) went away: not an error of ours.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 0
sys.exit(status)
