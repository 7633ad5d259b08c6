# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""A stand-in for the pip bootstrap script ansible-test downloads from
ci-files.testing.ansible.com (get-pip-<version>.py) into the virtual
environment of a sanity test: that host is not a package registry and
this machine does not reach it.  The same job with what is here: pip
from Python's own ensurepip, then `pip install` of the arguments
ansible-test gives (its pinned pip), from the package registry.

ensurepip points PIP_CONFIG_FILE at /dev/null while it runs, which
would hide the machine's pip configuration (its certificate authority,
its index) from the install that follows: it is put back first.
"""

import ensurepip
import os
import subprocess
import sys

# Options of get-pip.py that `pip install` does not take.
GET_PIP_ONLY = ("--no-setuptools", "--no-wheel")


def main() -> int:
    saved = os.environ.get("PIP_CONFIG_FILE")
    ensurepip.bootstrap(upgrade=True)
    if saved is None:
        os.environ.pop("PIP_CONFIG_FILE", None)
    else:
        os.environ["PIP_CONFIG_FILE"] = saved
    args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
    return subprocess.call([sys.executable, "-m", "pip", "install"] + args)


if __name__ == "__main__":
    sys.exit(main())
