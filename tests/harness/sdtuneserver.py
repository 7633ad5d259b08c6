# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""The product's interpreter, started once: bin/sdtune's Python as a fork
server (forkserver.py) for the end-to-end tests.

A run of bin/sdtune costs about 100 ms of CPU before sdtune does
anything: the interpreter's start and the package's imports.  The
end-to-end tests run it about 800 times.  This server is that same
Python, started with the launcher's flags (-I -S -B) and the launcher's
environment (LC_ALL=C), with every module of the package imported; each
run is then a fork of it.

    Appliance.sdtune()  bin/sdtune ...   (the launcher, unchanged)
      -> exec $SDTUNE_PYTHON -I -S -B -c BOOTSTRAP PLUGINDIR ARG...
         SDTUNE_PYTHON = python(): a script that execs
         cmdclient SOCKET PYTHON -I -S -B -c BOOTSTRAP PLUGINDIR ARG...

The worker takes the client's descriptors, directory, umask and
environment, builds sys.stdin, stdout and stderr as Python's start does,
sets sys.argv and sys.path as `-c` would, and runs the launcher's
bootstrap; then it ends as Python ends (threads joined, atexit, streams
flushed; SystemExit's code, 1 after a traceback, SIGINT itself after an
uncaught KeyboardInterrupt).  A request this server cannot run exactly
so (other flags, another package directory, another locale) is given
back: the client execs the real Python.  What is not the same: the hash
seed (one per server, not per run) and the modules already in
sys.modules.  The launcher's tests and the interpreter's own start are
tested with a real Python each (tests/shell/test_launcher.py,
tests/e2e/test_sdconf_launcher.py, the ssh, fault and demo runs), and
test_sdtuneserver.py holds a run through this server to a run without
it, byte for byte.

SDTUNE_SIM_SDTUNESERVER=0 in the environment turns it off.
"""

import atexit
import importlib
import importlib.machinery
import os
import pkgutil
import shlex
import signal
import sys
import types
from typing import List

if __name__ == "__main__":
    # Run by path under -I -S, where tests/ is not importable and no
    # directory of the tests goes on the path: forkserver is loaded from
    # its file.
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "forkserver", os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "forkserver.py"))
    forkserver = importlib.util.module_from_spec(_spec)
    sys.modules["forkserver"] = forkserver
    _spec.loader.exec_module(forkserver)
else:
    from . import forkserver

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLUGIN = os.path.join(REPO, "plugin")
# What bin/sdtune passes before its bootstrap, and the locale it sets.
FLAGS = ["-I", "-S", "-B", "-c"]
LOCALE = "C"


# ---------------------------------------------------------------- serving

def preload(plugindir: str) -> None:
    """Import every module of the package (not __main__, which runs);
    a module that cannot be imported stops the server from starting."""
    def failed(name: str) -> None:
        raise ImportError("cannot import %s" % name)
    sys.path.insert(0, plugindir)
    try:
        package = importlib.import_module("sdtune")
        for info in pkgutil.walk_packages(package.__path__, "sdtune.",
                                          onerror=failed):
            if info.name != "sdtune.__main__":
                importlib.import_module(info.name)
    finally:
        sys.path.remove(plugindir)


class Interpreter:
    """What this Python was at its start, for each worker to start
    from: the package it loaded and its sys.path."""

    def __init__(self, plugindir: str) -> None:
        self.plugindir = os.path.realpath(plugindir)
        self.path = list(sys.path)

    def accept(self, request: forkserver.Request) -> bool:
        args = request.args
        return args[:len(FLAGS)] == FLAGS and \
            len(args) > len(FLAGS) + 1 and \
            os.path.realpath(args[len(FLAGS) + 1]) == self.plugindir and \
            request.env.get("LC_ALL") == LOCALE

    def work(self, request: forkserver.Request) -> None:
        """The worker: `python -I -S -B -c BOOTSTRAP ARG...`.  Never
        returns."""
        forkserver.take_request(request)
        forkserver.python_stdio()
        code = request.args[len(FLAGS)]
        sys.argv = ["-c"] + request.args[len(FLAGS) + 1:]
        sys.path[:] = self.path
        # The __main__ of `python -c`: its loader the built-in one, no
        # spec, no package, an empty __annotations__.
        main = types.ModuleType("__main__")
        main.__dict__.update(__loader__=importlib.machinery.BuiltinImporter,
                             __spec__=None, __package__=None,
                             __annotations__={})
        sys.modules["__main__"] = main
        status, interrupted = 0, False
        try:
            exec(compile(code, "<string>", "exec"), main.__dict__)
        except SystemExit as e:
            status = exit_status(e)
        except KeyboardInterrupt:
            print_exception()
            interrupted = True
        except BaseException:
            print_exception()
            status = 1
        os._exit(finish(status, interrupted))


def print_exception() -> None:
    """The traceback Python prints, without this module's frame."""
    kind, value, tb = sys.exc_info()
    tb = tb.tb_next if tb is not None else None
    sys.excepthook(kind, value.with_traceback(tb), tb)


def exit_status(e: SystemExit) -> int:
    """What Python exits with for SystemExit(code)."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    sys.stderr.write("%s\n" % e.code)
    return 1


def finish(status: int, interrupted: bool) -> int:
    """What Python does after the program, before it exits: wait for
    its threads, run atexit, flush the streams (120 when stdout cannot
    be flushed); after an uncaught KeyboardInterrupt, die of SIGINT."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        status = 120
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    return status


# ---------------------------------------------------------------- starting

_WRAPPER = "python"


def python() -> str:
    """The Python for bin/sdtune (SDTUNE_PYTHON): this process's server,
    started on first use, or this Python itself when it is turned off
    (SDTUNE_SIM_SDTUNESERVER=0) or cannot start."""
    server = _SERVER.get()
    return sys.executable if server is None else \
        os.path.join(server.dir, _WRAPPER)


def _start(real: str) -> forkserver.Server:
    server = forkserver.Server(
        [real] + FLAGS[:-1] + [os.path.abspath(__file__), PLUGIN],
        cwd="/", env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                      "LC_ALL": LOCALE})
    # The launcher checks that its Python is an executable file: one
    # word, so a script around the client.
    wrapper = os.path.join(server.dir, _WRAPPER)
    text = server.script(real, []) or "#!/bin/sh\nexec %s \"$@\"\n" % \
        " ".join(shlex.quote(w) for w in server.runner(real))
    with open(wrapper, "w") as f:
        f.write(text)
    os.chmod(wrapper, 0o755)
    return server


_SERVER = forkserver.PerProcess("SDTUNE_SIM_SDTUNESERVER",
                                lambda: _start(sys.executable))


def main(argv: List[str]) -> None:
    plugindir, socket_path = argv
    preload(plugindir)
    interpreter = Interpreter(plugindir)
    forkserver.serve(socket_path, interpreter.accept, interpreter.work)


if __name__ == "__main__":
    main(sys.argv[1:])
