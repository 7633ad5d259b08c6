"""`python3 -m sdtune`: run the command line and exit with its status."""

import signal
import sys

from .cli import main

# Behave like any other command in a pipeline: when the reader goes away
# (`sdtune ... | head`), die of SIGPIPE quietly instead of a traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
sys.exit(main())
