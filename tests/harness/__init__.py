"""What the tests run things with, that is neither the product nor the
simulated appliance (the oracle, tests/sim): the fork servers that save
a Python start per process (forkserver.py, cmdclient.c), and the
product's own interpreter started once (sdtuneserver.py)."""
