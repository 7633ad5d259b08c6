# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Check the seams statically.

* Host (DESIGN.md, seam 1): outside the plugin/sdtune/host/ package
  nothing imports subprocess, runs a shell, or writes, renames or removes
  files; nowhere is `shell=True` used.
* Output: only the command line (cli.py, __main__.py and the commands/
  package) prints; every other module returns what it has to say, so
  it takes no TextIO, never names sys.stdout or sys.stderr and never
  calls print().
* Layers: imports run one way (DESIGN.md), counting those inside a
  function: no package imports one above it (LAYERS), and no modules
  import each other in a circle, but for the circles KNOWN_CIRCLES
  lists, each of which must still exist (the list only shrinks).

Run as a script (exit 1 and a list of places on violation) or import
`violations()` from the tests.
"""

import ast
import os
import sys
from typing import Dict, List, Set

SEAM_PACKAGE = "host"
FORBIDDEN_MODULES = {"subprocess", "shutil", "pty", "tempfile"}
FORBIDDEN_OS = {"system", "popen", "open", "write", "rename", "replace",
                "remove", "unlink", "rmdir", "mkdir", "makedirs", "link",
                "symlink", "truncate", "ftruncate", "chmod", "chown",
                "fchmod", "fchown", "utime", "mkfifo", "mknod", "fork",
                "kill", "dup2"}
FORBIDDEN_OS_PREFIXES = ("exec", "spawn", "posix_spawn")
WRITE_METHODS = {"write_text", "write_bytes", "touch", "unlink", "rename",
                 "replace", "mkdir", "rmdir", "symlink_to", "chmod"}


# The modules that may write to the operator's streams.
OUTPUT_MODULES = {"cli.py", "__main__.py"}
OUTPUT_PACKAGE = "commands"


def _str_replace(call: ast.Call) -> bool:
    """str.replace(old, new[, count]) takes two or three arguments; the
    file-moving Path.replace(target) takes one."""
    return call.func.attr == "replace" and len(call.args) >= 2


def _output_violations(tree: ast.AST, bad) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and \
                isinstance(node.value, ast.Name) and \
                node.value.id == "sys" and node.attr in ("stdout", "stderr"):
            bad(node, "names sys.%s (only commands/ and cli.py print)"
                % node.attr)
        elif isinstance(node, ast.Name) and node.id == "TextIO":
            bad(node, "takes a TextIO (only commands/ and cli.py print)")
        elif isinstance(node, ast.Call) and \
                isinstance(node.func, ast.Name) and node.func.id == "print":
            bad(node, "calls print() (only commands/ and cli.py print)")


def _check_file(path: str, is_seam: bool,
                may_print: bool = True) -> List[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []

    def bad(node, what):
        out.append("%s:%d: %s" % (path, node.lineno, what))

    if not may_print:
        _output_violations(tree, bad)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "shell":
            if not (isinstance(node.value, ast.Constant)
                    and node.value.value is False):
                bad(node.value, "shell= other than False")
        if is_seam:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    bad(node, "imports %s" % alias.name)
        elif isinstance(node, ast.ImportFrom):
            mod = (node.module or "").split(".")[0]
            if mod in FORBIDDEN_MODULES:
                bad(node, "imports from %s" % node.module)
            if mod == "os":
                for alias in node.names:
                    if alias.name in FORBIDDEN_OS:
                        bad(node, "imports os.%s" % alias.name)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and \
                    isinstance(func.value, ast.Name) and \
                    func.value.id == "os" and \
                    (func.attr in FORBIDDEN_OS or
                     func.attr.startswith(FORBIDDEN_OS_PREFIXES)):
                bad(node, "calls os.%s" % func.attr)
            elif isinstance(func, ast.Attribute) and \
                    func.attr in WRITE_METHODS and not _str_replace(node):
                bad(node, "calls .%s()" % func.attr)
            elif isinstance(func, ast.Name) and func.id == "open":
                bad(node, "calls open() (read through the host)")
    return out


def violations(package_dir: str) -> List[str]:
    found = []
    for top, _, files in os.walk(package_dir):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(top, name)
                rel = os.path.relpath(path, package_dir)
                seam = rel.split(os.sep)[0] == SEAM_PACKAGE
                may_print = seam or rel in OUTPUT_MODULES or \
                    rel.split(os.sep)[0] == OUTPUT_PACKAGE
                found += _check_file(path, seam, may_print)
    return found


# Package -> the packages (or top-level modules) of plugin/sdtune it
# must never import: certification records are below certification and
# tuning, and certification below tuning; the driver.conf reader and
# writer is below every driver's rules (sd's, nvme's) and what uses them.
# The report draws from records (and certify's text) only: nothing below
# the commands imports it.
LAYERS = {
    "records": ("certify", "drivers", "tune", "audit", "report",
                "commands", "cli"),
    "certify": ("drivers", "tune", "audit", "report", "commands", "cli"),
    "drivers": ("tune", "audit", "report", "commands", "cli"),
    "report": ("tune", "audit", "commands", "cli"),
    "driverconf": ("sdconf", "nvmeconf", "drivers", "tune", "certify",
                   "audit", "commands", "cli"),
}
# Circles of the tree as it is; a circle not listed here is a violation,
# and so is one listed here that no longer exists.  Empty since the
# driver interface (issue 28): keep it so.
KNOWN_CIRCLES: List[Set[str]] = []


def _modules(package_dir: str) -> Dict[str, str]:
    """Module name (sdtune.x.y) -> path, for every module of the
    package."""
    parent = os.path.dirname(os.path.abspath(package_dir))
    top = os.path.basename(os.path.abspath(package_dir))
    mods = {}
    for here, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(here, name)
                words = os.path.relpath(path[:-3], parent).split(os.sep)
                words[0] = top
                if words[-1] == "__init__":
                    words.pop()
                mods[".".join(words)] = path
    return mods


def import_graph(package_dir: str) -> Dict[str, Set[str]]:
    """Module -> the modules of the package it imports, anywhere in its
    text (a function-level import is an import)."""
    mods = _modules(package_dir)
    graph: Dict[str, Set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_package = path.endswith("__init__.py")
        here = mod.split(".") if is_package else mod.split(".")[:-1]
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level \
                    else []
                module = ".".join(base + ([node.module] if node.module
                                          else []))
                for a in node.names:
                    sub = module + "." + a.name
                    targets.append(sub if sub in mods else module)
            for t in targets:
                if t in mods and t != mod:
                    graph[mod].add(t)
    return graph


def _circles(graph: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected components of more than one module
    (Tarjan's algorithm, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[Set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def layer_violations(package_dir: str, layers=None,
                     known_circles=None) -> List[str]:
    layers = LAYERS if layers is None else layers
    known = KNOWN_CIRCLES if known_circles is None else known_circles
    graph = import_graph(package_dir)
    found = []
    for mod in sorted(graph):
        words = mod.split(".")
        below = layers.get(words[1], ()) if len(words) > 1 else ()
        for target in sorted(graph[mod]):
            other = target.split(".")
            if len(other) > 1 and other[1] in below:
                found.append("%s imports %s: %s/ is below %s" % (
                    mod, target, words[1], other[1]))
    circles = _circles(graph)
    for circle in circles:
        if circle not in known:
            found.append("import circle: %s" % ", ".join(sorted(circle)))
    for circle in known:
        if circle not in circles:
            found.append("the circle %s is gone: remove it from "
                         "KNOWN_CIRCLES" % ", ".join(sorted(circle)))
    return found


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.join(here, "..", "plugin", "sdtune")
    found = violations(package) + layer_violations(package)
    for line in found:
        print(line)
    if found:
        print("check_seams: %d violation(s) of the seams" % len(found))
        return 1
    print("check_seams: no I/O outside host/, no output outside the "
          "command line, imports one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
