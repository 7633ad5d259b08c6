"""Check the seams statically.

* Host (DESIGN.md, seam 1): outside the plugin/sdtune/host/ package
  nothing imports subprocess, runs a shell, or writes, renames or removes
  files; nowhere is `shell=True` used.
* Output: only the command line (cli.py, __main__.py and the commands/
  package) prints; every other module returns what it has to say, so
  it takes no TextIO, never names sys.stdout or sys.stderr and never
  calls print().

Run as a script (exit 1 and a list of places on violation) or import
`violations()` from the tests.
"""

import ast
import os
import sys
from typing import List

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


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.join(here, "..", "plugin", "sdtune")
    found = violations(package)
    for line in found:
        print(line)
    if found:
        print("check_seams: %d violation(s) of the seams" % len(found))
        return 1
    print("check_seams: no I/O outside host/, no output outside the "
          "command line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
