# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for `make install` and `make package`: the installed layout and
modes, the launcher and the package working from the installed tree, and
an IPS manifest that lists exactly what install installed."""

import os
import re
import shutil
import stat
import subprocess
import sys

import pytest
from sdtune import __version__
from sdtune.cli import build_parser

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KSH = "/bin/ksh"
MAKE = shutil.which("gmake") or shutil.which("make") or "/usr/bin/make"


needs_ksh = pytest.mark.skipif(not os.access(KSH, os.X_OK),
                               reason="%s (ksh93) is not installed" % KSH)

SAMPLE_SD_CONF = (
    'sd-config-list =\n'
    '    "ATA     INTEL SSDSC2BA40", "throttle-min:2, throttle-max:32";\n')


def make(*args):
    # A `make check` above us must not hand its variables down.
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DESTDIR",
                        "PREFIX")}
    proc = subprocess.run([MAKE, "--no-print-directory", "-C", REPO, *args],
                          env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def install(dest, prefix="/usr"):
    make("install", "DESTDIR=%s" % dest, "PREFIX=%s" % prefix)
    return str(dest)


def tree(root):
    """{relative path: (kind, mode)} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else \
                "file" if stat.S_ISREG(st.st_mode) else "other"
            out[os.path.relpath(full, root)] = (kind,
                                                stat.S_IMODE(st.st_mode))
    return out


def expected_files(prefix="usr"):
    """What install must install, from the source tree."""
    lib = prefix + "/lib/sdtune"
    files = {prefix + "/sbin/sdtune": 0o555,
             lib + "/bin/sdio": 0o555,
             lib + "/conf/known-drives.tsv": 0o444,
             lib + "/conf/sdtune.conf": 0o444,
             prefix + "/share/man/man8/sdtune.8": 0o444,
             prefix + "/share/man/man5/sdtune.conf.5": 0o444}
    for dirpath, dirnames, filenames in os.walk(
            os.path.join(REPO, "plugin", "sdtune")):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, name),
                                      os.path.join(REPO, "plugin"))
                files[lib + "/plugin/" + rel] = 0o444
    for name in os.listdir(os.path.join(REPO, "dtrace")):
        if name.endswith(".d"):
            files[lib + "/dtrace/" + name] = 0o444
    return files


def subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions
               if a.__class__.__name__ == "_SubParsersAction")
    return list(sub.choices)


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory):
    """An install nothing has run from (running Python writes bytecode)."""
    return install(tmp_path_factory.mktemp("clean") / "proto")


@pytest.fixture(scope="module")
def run_tree(tmp_path_factory):
    return install(tmp_path_factory.mktemp("run") / "proto")


def run_installed(root, args, cwd, wrap=()):
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_PYTHON": sys.executable,
           "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    # The interpreter line is /usr/bin/ksh93, which Debian does not have.
    launcher = os.path.join(root, "usr", "sbin", "sdtune")
    # realpath: Debian's /bin/ksh is a link through /etc/alternatives.
    return subprocess.run([*wrap, os.path.realpath(KSH), launcher, *args],
                          env=env,
                          cwd=str(cwd), capture_output=True, text=True,
                          check=False)


def test_installs_exactly_the_expected_files_and_modes(clean_tree):
    got = tree(clean_tree)
    files = {p: m for p, (k, m) in got.items() if k == "file"}
    assert files == expected_files()
    assert not [p for p, (k, _) in got.items() if k == "other"]
    dirs = {p: m for p, (k, m) in got.items() if k == "dir"}
    assert set(dirs.values()) == {0o755}, dirs
    for path in files:          # every directory on the way, and no other
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            assert "/".join(parts[:i]) in dirs
    assert "usr/lib/sdtune/dtrace" in dirs


def test_no_bytecode_installed(clean_tree):
    for path in tree(clean_tree):
        assert "__pycache__" not in path and not path.endswith(".pyc"), path


def test_launcher_interpreter_rewritten(clean_tree):
    with open(os.path.join(REPO, "bin", "sdtune")) as f:
        source = f.read().splitlines(True)
    with open(os.path.join(clean_tree, "usr", "sbin", "sdtune")) as f:
        installed = f.read().splitlines(True)
    assert installed[0] == "#!/usr/bin/ksh93\n"
    assert installed[1:] == source[1:]


def test_shipped_config_unchanged_for_usr(clean_tree):
    with open(os.path.join(REPO, "conf", "sdtune.conf")) as f:
        source = f.read()
    with open(os.path.join(clean_tree, "usr", "lib", "sdtune", "conf",
                           "sdtune.conf")) as f:
        assert f.read() == source
    assert "sdio = /usr/lib/sdtune/bin/sdio\n" in source


def test_nothing_in_etc(clean_tree):
    """The local settings, /etc/sdtune/sdtune.conf, are the operator's:
    install delivers only the read-only defaults."""
    assert not os.path.exists(os.path.join(clean_tree, "etc"))


def test_other_prefix(tmp_path):
    root = install(tmp_path / "proto", prefix="/opt/sdtune")
    files = {p: m for p, (k, m) in tree(root).items() if k == "file"}
    assert files == expected_files("opt/sdtune")
    with open(os.path.join(root, "opt", "sdtune", "lib", "sdtune", "conf",
                           "sdtune.conf")) as f:
        text = f.read()
    assert "sdio = /opt/sdtune/lib/sdtune/bin/sdio\n" in text
    assert "/usr/lib/sdtune/bin/sdio" not in text


def test_install_engine_installs_the_engine_alone(tmp_path):
    """What an appliance without Python 3 needs for `sdtune --host`: the
    engine at the path the shipped [commands] sdio names, and that it
    serves, and the D scripts beside it."""
    root = str(tmp_path / "proto")
    make("install-engine", "DESTDIR=%s" % root, "PREFIX=/usr")
    make("install-engine", "DESTDIR=%s" % root, "PREFIX=/usr")  # again
    scripts = {"usr/lib/sdtune/dtrace/" + name: ("file", 0o444)
               for name in os.listdir(os.path.join(REPO, "dtrace"))
               if name.endswith(".d")}
    assert len(scripts) == 4
    assert tree(root) == dict({
        "usr": ("dir", 0o755), "usr/lib": ("dir", 0o755),
        "usr/lib/sdtune": ("dir", 0o755),
        "usr/lib/sdtune/bin": ("dir", 0o755),
        "usr/lib/sdtune/dtrace": ("dir", 0o755),
        "usr/lib/sdtune/bin/sdio": ("file", 0o555)}, **scripts)
    proc = subprocess.run([os.path.join(root, "usr/lib/sdtune/bin/sdio"),
                           "serve", "--root", "/"], input=b"hello 0\n",
                          capture_output=True, timeout=30)
    # "ok 6" and the answer's fields (a request id may follow the count).
    assert proc.returncode == 0 and re.match(rb"ok 6[ \n]", proc.stdout)


def test_reinstall_over_read_only_files(tmp_path):
    root = install(tmp_path / "proto")
    install(tmp_path / "proto")
    assert tree(root)["usr/sbin/sdtune"] == ("file", 0o555)


@needs_ksh
def test_installed_help_lists_every_subcommand(run_tree, tmp_path):
    proc = run_installed(run_tree, ["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "usage: sdtune" in proc.stdout
    listed = re.findall(r"^    (\S+)", proc.stdout, re.M)
    assert listed == subcommands()


@needs_ksh
def test_installed_sdconf_check(run_tree, tmp_path):
    """The package, run from the installed tree, finds its shipped
    defaults by itself, in <prefix>/lib/sdtune/conf/sdtune.conf next to
    the package (it also reads the machine's /etc/sdtune/sdtune.conf if
    there is one: none on a build machine)."""
    sample = tmp_path / "sd.conf"
    sample.write_text(SAMPLE_SD_CONF)
    proc = run_installed(run_tree, ["sdconf", "check", str(sample)],
                         tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    bad = tmp_path / "bad.conf"
    bad.write_text('sd-config-list = "ATA     INTEL SSDSC2BA40", '
                   '"throttle-max:4";\n')
    proc = run_installed(run_tree, ["sdconf", "check", str(bad)], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith(str(bad) + ":1:")


@needs_ksh
def test_running_writes_no_bytecode(run_tree, tmp_path):
    """python -B: running the installed package leaves no __pycache__ in
    the read-only tree, which an uninstall would leave behind."""
    proc = run_installed(run_tree, ["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    sample = tmp_path / "sd.conf"
    sample.write_text(SAMPLE_SD_CONF)
    proc = run_installed(run_tree, ["sdconf", "check", str(sample)],
                         tmp_path)
    assert proc.returncode == 0, proc.stderr
    for path in tree(run_tree):
        assert "__pycache__" not in path and not path.endswith(".pyc"), path


def _can_unshare():
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return False
    return subprocess.run([unshare, "-m", "true"], capture_output=True,
                          check=False).returncode == 0


def _with_etc(etc):
    """Run with ``etc`` bind-mounted on /etc in a private mount namespace,
    so that the installed tree reads etc/sdtune/sdtune.conf as
    /etc/sdtune/sdtune.conf and the real /etc is never touched."""
    return (shutil.which("unshare"), "-m", "/bin/sh", "-c",
            'mount --bind "$0" /etc && exec "$@"', str(etc))


@needs_ksh
@pytest.mark.skipif(not _can_unshare(),
                    reason="needs root and unshare -m for a private /etc")
def test_installed_applies_etc_over_defaults(run_tree, tmp_path):
    """An /etc/sdtune/sdtune.conf holding one key is applied on top of
    the shipped defaults: every other key still comes from them, and an
    error in it names /etc/sdtune/sdtune.conf and the line."""
    etc = tmp_path / "etc"
    (etc / "sdtune").mkdir(parents=True)
    local = etc / "sdtune" / "sdtune.conf"
    sample = tmp_path / "sd.conf"
    sample.write_text('sd-config-list = "ATA     INTEL SSDSC2BA40", '
                      '"slow-io-threshold:0";\n')
    # The defaults model NexentaStor, where slow-io-threshold exists.
    local.write_text("# local settings\n")
    proc = run_installed(run_tree, ["sdconf", "check", str(sample)],
                         tmp_path, wrap=_with_etc(etc))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    local.write_text("[sdconf]\nflavour = upstream\n")
    proc = run_installed(run_tree, ["sdconf", "check", str(sample)],
                         tmp_path, wrap=_with_etc(etc))
    assert proc.returncode == 1, proc.stderr
    assert "exists only on NexentaStor" in proc.stdout
    # --config goes on top of /etc.
    lab = tmp_path / "lab.conf"
    lab.write_text("[sdconf]\nflavour = nexenta\n")
    proc = run_installed(run_tree, ["--config", str(lab), "sdconf", "check",
                                    str(sample)],
                         tmp_path, wrap=_with_etc(etc))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    local.write_text("[sdconf]\nflavour = upstream\n[commands]\nmdb = mdb\n")
    proc = run_installed(run_tree, ["sdconf", "check", str(sample)],
                         tmp_path, wrap=_with_etc(etc))
    assert proc.returncode == 2
    assert proc.stderr == (
        "sdtune: cannot load config '/etc/sdtune/sdtune.conf': line 4: "
        "[commands] mdb = 'mdb': not an absolute path\n")


# -- make package ------------------------------------------------------

def manifest_actions(path):
    """(name, payload, {attr: value}) of every action, continuations
    joined; values here never contain blanks except quoted ones."""
    with open(path) as f:
        text = f.read().replace("\\\n", "")
    actions = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words, buf, quote = [], "", None
        for c in line:
            if quote:
                if c == quote:
                    quote = None
                else:
                    buf += c
            elif c in "\"'":
                quote = c
            elif c.isspace():
                if buf:
                    words.append(buf)
                buf = ""
            else:
                buf += c
        if buf:
            words.append(buf)
        payload = words[1] if len(words) > 1 and "=" not in words[1] \
            else None
        attrs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        actions.append((words[0], payload, attrs))
    return actions


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    base = tmp_path_factory.mktemp("package")
    proto = base / "proto"
    manifest = base / "sdtune.p5m"
    make("package", "DESTDIR=%s" % proto, "PKG_MANIFEST=%s" % manifest)
    return str(proto), str(manifest)


def test_manifest_lists_exactly_the_installed_tree(package):
    proto, manifest = package
    acts = manifest_actions(manifest)
    listed = {}
    for name, _, attrs in acts:
        if name in ("dir", "file"):
            assert attrs["path"] not in listed, attrs["path"]
            listed[attrs["path"]] = (name, int(attrs["mode"], 8))
            assert attrs["owner"] == "root"
            top = attrs["path"].split("/")[0]
            assert top != "etc", attrs["path"]
            if name == "file":
                assert attrs["group"] == "bin"
                assert "preserve" not in attrs, attrs["path"]
        assert name not in ("link", "hardlink")
    assert listed == tree(proto)            # both ways, with modes
    files = {p: m for p, (k, m) in listed.items() if k == "file"}
    assert files == expected_files()


def test_manifest_header(package):
    _, manifest = package
    acts = manifest_actions(manifest)
    sets = {a["name"]: a["value"] for n, _, a in acts if n == "set"}
    assert sets["pkg.fmri"] == "pkg:/system/storage/sdtune@" + __version__
    assert sets["variant.opensolaris.zone"] == "global"
    assert sets["variant.arch"] in ("i386", "sparc")
    assert sets["pkg.summary"] and sets["pkg.description"]
    assert sets["info.classification"].startswith(
        "org.opensolaris.category.2008:")
    lic = [(p, a) for n, p, a in acts if n == "license"]
    assert lic == [("conf/LICENSE", {"license": "CDDL-1.0"})]
    assert os.path.isfile(os.path.join(REPO, "conf", "LICENSE"))
    deps = [a for n, _, a in acts if n == "depend"]
    assert all(d["type"] == "require" for d in deps)
    assert any(d["fmri"].startswith("pkg:/runtime/python") for d in deps)
    assert {"pkg:/shell/ksh93"} <= {d["fmri"] for d in deps}


def test_manifest_in_pkgfmt_order(package):
    """set actions first (pkg.fmri, then pkg.summary, pkg.description),
    then dir/file actions by path, license, depend; attributes key first,
    then owner, group, mode; lines continued at 80 columns."""
    _, manifest = package
    acts = manifest_actions(manifest)
    order = {"set": 1, "dir": 2, "file": 2, "license": 4, "depend": 5}
    kinds = [order[n] for n, _, _ in acts]
    assert kinds == sorted(kinds)
    assert [a["name"] for n, _, a in acts if n == "set"][:3] == \
        ["pkg.fmri", "pkg.summary", "pkg.description"]
    paths = [a["path"] for n, _, a in acts if n in ("dir", "file")]
    assert paths == sorted(paths)
    with open(manifest) as f:
        text = f.read()
    for line in text.replace("\\\n", "").splitlines():
        if line.startswith(("dir ", "file ")):
            names = [w.split("=")[0] for w in line.split()[1:]]
            assert names[:4] == ["path", "owner", "group", "mode"], line
            assert names[4:] == [], line
        if line.startswith("dir"):
            assert line.startswith("dir  path="), line
    for line in text.splitlines():
        # pkgfmt measures a dir line before widening "dir " to "dir  ".
        assert len(line) <= (81 if line.startswith("dir  ") else 80), line


def test_manifest_script_refuses_bytecode_and_root(tmp_path):
    proto = tmp_path / "proto"
    (proto / "usr" / "__pycache__").mkdir(parents=True)
    script = os.path.join(REPO, "conf", "make_manifest.py")
    header = os.path.join(REPO, "conf", "sdtune.p5m")
    args = [sys.executable, script, "-D", "PKGVERS=1", "-D", "ARCH=i386",
            "-D", "PYTHON_PKG=pkg:/runtime/python-3", header]
    proc = subprocess.run(args + [str(proto)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 1
    assert "compiled Python" in proc.stderr
    proc = subprocess.run(args + ["/"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1
    assert "system root" in proc.stderr
    proc = subprocess.run([sys.executable, script, "-D", "PKGVERS=1",
                           header, str(proto)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "$(ARCH) is not defined" in proc.stderr


def test_manifest_script_refuses_writable_files(tmp_path):
    """Everything the package delivers is read-only: the operator's own
    settings are not part of it."""
    proto = tmp_path / "proto"
    (proto / "etc" / "sdtune").mkdir(parents=True)
    conf = proto / "etc" / "sdtune" / "sdtune.conf"
    conf.write_text("[sdconf]\n")
    for d in (proto / "etc", proto / "etc" / "sdtune"):
        d.chmod(0o755)
    conf.chmod(0o644)
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "conf", "make_manifest.py"),
         "-D", "PKGVERS=1", "-D", "ARCH=i386",
         "-D", "PYTHON_PKG=pkg:/runtime/python-3",
         os.path.join(REPO, "conf", "sdtune.p5m"), str(proto)],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "etc/sdtune/sdtune.conf: mode 0644" in proc.stderr


# -- per platform (issue 27) ---------------------------------------------

# What survives a reboot of a SmartOS global zone: / is a ramdisk, /usr
# a read-only image; /opt and /var are datasets of the zones pool.
SMARTOS_PERSISTENT = ("opt/", "var/")
ENGINE = "/opt/sdtune/lib/sdtune/bin/sdio"


def platform_root(path):
    """An empty system root laid out like a SmartOS global zone: /usr
    read-only, /etc and / the ramdisk's, /opt and /var persistent."""
    for d in ("usr/bin", "usr/lib", "etc", "opt", "var"):
        (path / d).mkdir(parents=True)
    for d in ("usr/bin", "usr/lib", "usr"):
        (path / d).chmod(0o555)
    return path


def test_smartos_global_zone_install_lives_in_opt(tmp_path):
    """PREFIX=/opt/sdtune: every file on persistent storage, nothing in
    the read-only /usr or the ramdisk's /etc; the launcher runs the
    pkgsrc tools' python and the shipped defaults name the engine in
    /opt."""
    root = platform_root(tmp_path / "gz")
    before = tree(root)
    make("install", "DESTDIR=%s" % root, "PREFIX=/opt/sdtune",
         "RUNTIME_PYTHON=/opt/tools/bin/python3.11")
    after = tree(root)
    assert {p: after[p] for p in before} == before
    added = sorted(set(after) - set(before))
    assert added and all(p.startswith(SMARTOS_PERSISTENT) for p in added)
    files = {p: m for p, (k, m) in after.items() if k == "file"}
    assert files == expected_files("opt/sdtune")
    with open(root / "opt/sdtune/sbin/sdtune") as f:
        launcher = f.read()
    assert launcher.startswith("#!/usr/bin/ksh93\n")
    assert "\npython=${SDTUNE_PYTHON:-/opt/tools/bin/python3.11}\n" in \
        launcher
    assert "/usr/bin/python3}" not in launcher
    with open(root / "opt/sdtune/lib/sdtune/conf/sdtune.conf") as f:
        assert "\nsdio = %s\n" % ENGINE in f.read()


@needs_ksh
def test_installed_launcher_runs_the_python_it_was_given(tmp_path):
    root = install(tmp_path / "proto", prefix="/opt/sdtune")
    launcher = os.path.join(root, "opt", "sdtune", "sbin", "sdtune")
    env = {"PATH": "/usr/bin:/bin", "SDTUNE_ZONENAME_CMD": "/nonexistent"}
    make("install", "DESTDIR=%s" % root, "PREFIX=/opt/sdtune",
         "RUNTIME_PYTHON=/opt/tools/bin/python3.11")
    proc = subprocess.run([os.path.realpath(KSH), launcher, "--help"],
                          env=env, capture_output=True, text=True,
                          check=False)
    assert (proc.returncode, proc.stderr) == (
        4, "sdtune: cannot run '/opt/tools/bin/python3.11': not found\n")
    make("install", "DESTDIR=%s" % root, "PREFIX=/opt/sdtune",
         "RUNTIME_PYTHON=%s" % sys.executable)
    proc = subprocess.run([os.path.realpath(KSH), launcher, "--help"],
                          env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "usage: sdtune" in proc.stdout


@pytest.mark.parametrize("value", ["python3", ""])
def test_runtime_python_must_be_absolute(tmp_path, value):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run([MAKE, "--no-print-directory", "-C", REPO,
                           "install", "DESTDIR=%s" % (tmp_path / "p"),
                           "RUNTIME_PYTHON=%s" % value], env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "is not an absolute path" in proc.stderr
    assert not (tmp_path / "p" / "usr" / "sbin" / "sdtune").exists()


def engine_tree(prefix):
    """What install-engine installs under PREFIX (relative, with modes)."""
    top = prefix.strip("/").split("/")
    out = {"/".join(top[:i]): ("dir", 0o755) for i in range(1, len(top) + 1)}
    lib = "/".join(top) + "/lib/sdtune"
    for d in ("/lib", "/lib/sdtune", "/lib/sdtune/bin",
              "/lib/sdtune/dtrace"):
        out["/".join(top) + d] = ("dir", 0o755)
    out[lib + "/bin/sdio"] = ("file", 0o555)
    for name in os.listdir(os.path.join(REPO, "dtrace")):
        if name.endswith(".d"):
            out[lib + "/dtrace/" + name] = ("file", 0o444)
    return out


def readme_engine_steps():
    """The README's install-engine command lines and whether it tells
    the operator the controller's [commands] sdio line: the paths these
    tests check are the ones the install steps give."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    lines = [line for line in text.splitlines()
             if "install-engine" in line and "gmake" in line]
    return lines, bool(re.search(r"^ *sdio = %s$" % re.escape(ENGINE),
                                 text, re.M))


def ssh_host(dest, cfg):
    """The host `sdtune --host DEST` makes from the controller's config."""
    from sdtune.config import commands_for
    from sdtune.host.ssh import SshHost
    ssh, options = cfg.ssh()
    return SshHost(dest, "/", commands_for(cfg), ssh, options)


def controller(tmp_path, clean_tree, engine):
    """The config of a controller installed with PREFIX=/usr (its
    shipped defaults), with a --config naming the appliance's engine."""
    from sdtune.config import load_config
    from sdtune.host import RealHost
    override = tmp_path / "appliance.conf"
    override.write_text("[commands]\nsdio = %s\n" % engine)
    return load_config(RealHost("/"), str(override), system_config=None,
                       defaults=os.path.join(clean_tree, "usr", "lib",
                                             "sdtune", "conf",
                                             "sdtune.conf"))


@pytest.mark.parametrize("platform", ["smartos", "nexentastor-3",
                                      "nexentastor-4", "nexentastor-5"])
def test_engine_only_appliance_and_the_controllers_config(
        tmp_path, clean_tree, platform):
    """The SmartOS global zone and NexentaStor (no Python 3, no
    compiler): the engine is built elsewhere into a DESTDIR and copied to
    /opt/sdtune (a dataset of its own on NexentaStor); the controller
    reaches it only where its [commands] sdio names it."""
    steps, names_engine = readme_engine_steps()
    assert steps and names_engine
    for line in steps:
        assert "PREFIX=/opt/sdtune" in line and "PREFIX=/usr" not in line
    root = tmp_path / platform
    make("install-engine", "DESTDIR=%s" % root, "PREFIX=/opt/sdtune")
    assert tree(str(root)) == engine_tree("/opt/sdtune")
    remote = ssh_host("root@nas1", controller(tmp_path, clean_tree, ENGINE))
    assert remote.argv()[-2:] == ["root@nas1", ENGINE + " serve --root /"]
    # The controller's shipped defaults alone name its own engine's path,
    # /usr/lib/sdtune/bin/sdio: the [commands] sdio line is what the
    # install steps tell the operator to add.
    with open(os.path.join(clean_tree, "usr", "lib", "sdtune", "conf",
                           "sdtune.conf")) as f:
        assert "\nsdio = /usr/lib/sdtune/bin/sdio\n" in f.read()


@pytest.mark.skipif(not _can_unshare(),
                    reason="needs root and unshare -m for a private /opt")
def test_engine_in_opt_serves_the_controller_over_ssh(tmp_path, clean_tree):
    """The appliance end of `sdtune --host`: an ssh whose remote side
    runs the command in a mount namespace where the DESTDIR's opt is
    /opt, as on the appliance; the session starts with the engine the
    config names, and finds the D scripts beside it."""
    assert readme_engine_steps()[1]
    root = tmp_path / "appliance"
    make("install-engine", "DESTDIR=%s" % root, "PREFIX=/opt/sdtune")
    ssh = tmp_path / "ssh"
    ssh.write_text(
        "#!/bin/sh\n"
        "# the last argument is the remote command line\n"
        "for last; do :; done\n"
        "exec %s -m /bin/sh -c 'mount --bind \"$0\" /opt && "
        "exec /bin/sh -c \"$1\"' '%s' \"$last\"\n"
        % (shutil.which("unshare"), root / "opt"))
    ssh.chmod(0o755)
    cfg = controller(tmp_path, clean_tree, ENGINE)
    cfg.sections.setdefault("ssh", {})["ssh"] = str(ssh)
    remote = ssh_host("root@nas1", cfg)
    try:
        assert remote.is_root() == (os.geteuid() == 0)
        assert remote.dtrace_dir() == "/opt/sdtune/lib/sdtune/dtrace"
        assert remote.is_dir("/opt/sdtune/lib/sdtune/dtrace")
    finally:
        remote.close()
