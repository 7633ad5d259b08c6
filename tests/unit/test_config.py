# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Tests for sdtune.config: the three layers (shipped defaults, the
system's local settings, --config), each overriding the one before key by
key, and errors that name the file, the line and the key.

Every test names the system layer itself (a temporary path or None), so
that an /etc/sdtune/sdtune.conf on the machine running the tests is never
read."""

import inspect
import os

import pytest

import sdtune.config
from sdtune.config import (SYSTEM_CONFIG, Config, commands_for,
                           default_config_path, load_config)
from sdtune.errors import EXIT_USAGE, ConfigError
from sdtune.host import RealHost

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINE_MARKER = os.path.join(REPO, "plugin", "engine", "sdio.c")


class RecordingHost(RealHost):
    """Remembers which files config asked the host to read, and which it
    asked about."""

    def __init__(self):
        super().__init__()
        self.read = []
        self.asked = []

    def read_bytes(self, path):
        self.read.append(path)
        return super().read_bytes(path)

    def exists(self, path):
        self.asked.append(path)
        return super().exists(path)


def load(host, override=None, system=None):
    """load_config without the machine's own /etc/sdtune/sdtune.conf."""
    return load_config(host, override, system_config=system)


def write(tmp_path, text, name="x.conf"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_default_path_is_in_tree():
    assert default_config_path() == os.path.join(REPO, "conf", "sdtune.conf")


def test_installed_package_uses_the_installed_engine(tmp_path):
    """An installed copy of the package (no engine sources beside it)
    keeps the shipped sdio path; a source tree names its own engine."""
    import shutil
    import subprocess
    import sys
    lib = tmp_path / "lib" / "sdtune"
    shutil.copytree(os.path.join(REPO, "plugin", "sdtune"),
                    str(lib / "plugin" / "sdtune"))
    shutil.copytree(os.path.join(REPO, "conf"), str(lib / "conf"))
    probe = ("import sdtune.config as c, sdtune.host as h; "
             "print(c.source_tree_engine(h.RealHost()))")
    out = subprocess.run([sys.executable, "-c", probe], check=True,
                         env={"PYTHONPATH": str(lib / "plugin")},
                         capture_output=True, text=True).stdout
    assert out == "None\n"
    assert sdtune.config.source_tree_engine(RealHost()) == os.path.join(
        REPO, "plugin", "engine", "sdio")


def test_system_layer_is_etc_by_default():
    """The CLI calls load_config(host, override): the system layer is then
    /etc/sdtune/sdtune.conf, an absolute path on this machine."""
    assert SYSTEM_CONFIG == "/etc/sdtune/sdtune.conf"
    default = inspect.signature(load_config).parameters["system_config"]
    assert default.default == SYSTEM_CONFIG


def test_defaults_load():
    host = RecordingHost()
    cfg = load(host)
    assert isinstance(cfg, Config)
    assert cfg.commands == {
        "mdb": "/usr/bin/mdb",
        "diskinfo": "/usr/bin/diskinfo",
        "iostat": "/usr/bin/iostat",
        "zpool": "/usr/sbin/zpool",
        "zdb": "/usr/sbin/zdb",
        "update_drv": "/usr/sbin/update_drv",
        "devfsadm": "/usr/sbin/devfsadm",
        "dtrace": "/usr/sbin/dtrace",
        # Run from the source tree: the tree's engine.
        "sdio": os.path.join(REPO, "plugin", "engine", "sdio"),
        "bootadm": "/sbin/bootadm",
        "beadm": "/usr/sbin/beadm",
        "bootparams": "/usr/bin/bootparams",
        "kstat": "/usr/bin/kstat",
        "uname": "/usr/bin/uname",
        "nvmeadm": "/usr/sbin/nvmeadm",
        # Signs exports and verifies imports (results --export/--import).
        "ssh-keygen": "/usr/bin/ssh-keygen",
    }
    assert cfg.paths == {"sd_conf": "/kernel/drv/sd.conf",
                         "state_dir": "/var/sdtune"}
    assert cfg.sections["sdconf"] == {"flavour": "auto"}
    assert cfg.sections["journal"] == {"generations": "10"}
    assert cfg.source_files == [default_config_path()]
    assert host.read == [default_config_path()]
    assert commands_for(cfg) == cfg.commands
    assert commands_for(cfg) is not cfg.commands


def test_override_replaces_single_keys(tmp_path):
    override = write(tmp_path, "[commands]\n"
                               "mdb = /opt/sim/bin/mdb   # simulator\n"
                               "newtool = /opt/sim/bin/newtool\n"
                               "[paths]\n"
                               "state_dir = /tmp/state\n"
                               "[thresholds]\n"
                               "flush_ms = 5\n")
    host = RecordingHost()
    cfg = load(host, override)
    assert cfg.commands["mdb"] == "/opt/sim/bin/mdb"
    assert cfg.commands["newtool"] == "/opt/sim/bin/newtool"
    assert cfg.commands["zpool"] == "/usr/sbin/zpool"
    assert cfg.paths == {"sd_conf": "/kernel/drv/sd.conf",
                         "state_dir": "/tmp/state"}
    assert cfg.sections["thresholds"] == {"flush_ms": "5"}
    assert cfg.sections["sdconf"] == {"flavour": "auto"}
    assert cfg.source_files == [default_config_path(), override]
    assert host.read == cfg.source_files


def test_relative_command_names_file_line_and_key(tmp_path):
    path = write(tmp_path, "[commands]\n# the debugger\nmdb = mdb\n")
    with pytest.raises(ConfigError) as info:
        load(RealHost(), path)
    assert str(info.value) == (
        "cannot load config '%s': line 3: [commands] mdb = 'mdb': "
        "not an absolute path" % path)
    assert info.value.exit_code == EXIT_USAGE


def test_relative_path_and_unknown_command(tmp_path):
    path = write(tmp_path, "[paths]\nsd_conf = /kernel/drv/sd.conf\n\n"
                           "state_dir = var/sdtune\n")
    with pytest.raises(ConfigError, match=r"line 4: \[paths\] state_dir = "
                                          r"'var/sdtune': not an absolute"):
        load(RealHost(), path)
    path = write(tmp_path, "[journal]\ngenerations = 3\n[commands]\n"
                           "Future = ./future\n", "y.conf")
    with pytest.raises(ConfigError, match=r"line 4: \[commands\] future = "
                                          r"'./future'"):
        load(RealHost(), path)


def test_empty_command_value_refused(tmp_path):
    path = write(tmp_path, "[commands]\nmdb =\n")
    with pytest.raises(ConfigError, match=r"line 2: \[commands\] mdb = '': "):
        load(RealHost(), path)


@pytest.mark.parametrize("text, reason", [
    ("mdb = /usr/bin/mdb\n",
     "line 1: 'mdb = /usr/bin/mdb' is outside any [section]"),
    ("[commands]\nmdb = /a\nzdb = /b\nmdb = /c\n",
     "line 4: [commands] mdb: duplicate key"),
    ("[paths]\n[commands]\n[paths]\n",
     "line 3: [paths]: duplicate section"),
    ("[commands]\nmdb = /a\nthis line has no equals sign\n",
     "line 3: cannot parse 'this line has no equals sign'"),
    ("[DEFAULT]\nx = /y\n[commands]\n",
     "line 1: [DEFAULT] is not supported"),
])
def test_syntax_errors_name_the_line(tmp_path, text, reason):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(RealHost(), path)
    assert str(info.value) == "cannot load config '%s': %s" % (path, reason)


def test_missing_override_file(tmp_path):
    path = str(tmp_path / "nope.conf")
    with pytest.raises(ConfigError) as info:
        load(RealHost(), path)
    assert str(info.value) == (
        "cannot load config '%s': No such file or directory" % path)


def test_override_not_utf8(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_bytes(b"[commands]\nmdb = /usr/bin/\xff\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load(RealHost(), str(path))


def test_relative_known_drives_refused(tmp_path):
    path = write(tmp_path, "[data]\nknown_drives = known-drives.tsv\n")
    with pytest.raises(ConfigError) as info:
        load(RealHost(), path)
    assert str(info.value) == (
        "cannot load config '%s': line 2: [data] known_drives = "
        "'known-drives.tsv': not an absolute path" % path)
    path = write(tmp_path, "[data]\nknown_drives = /var/tmp/drives.tsv\n",
                 "ok.conf")
    cfg = load(RealHost(), path)
    assert cfg.sections["data"] == {"known_drives": "/var/tmp/drives.tsv"}


# -- the three layers --------------------------------------------------

def test_layers_in_order(tmp_path):
    """Defaults, then the system file, then --config, each key by key."""
    system = write(tmp_path, "[commands]\n"
                             "mdb = /opt/site/bin/mdb\n"
                             "zdb = /opt/site/bin/zdb\n"
                             "[journal]\n"
                             "generations = 30\n", "system.conf")
    override = write(tmp_path, "[commands]\n"
                               "zdb = /opt/lab/bin/zdb\n"
                               "[sdconf]\n"
                               "flavour = upstream\n", "lab.conf")
    host = RecordingHost()
    cfg = load(host, override, system)
    assert cfg.source_files == [default_config_path(), system, override]
    assert host.read == cfg.source_files
    assert cfg.commands["mdb"] == "/opt/site/bin/mdb"        # system
    assert cfg.commands["zdb"] == "/opt/lab/bin/zdb"         # --config
    assert cfg.commands["zpool"] == "/usr/sbin/zpool"        # defaults
    assert cfg.sections["journal"] == {"generations": "30"}
    assert cfg.sections["sdconf"] == {"flavour": "upstream"}
    assert cfg.sections["certify"]["step_max_s"] == "4"


def test_system_layer_without_override(tmp_path):
    system = write(tmp_path, "[paths]\nstate_dir = /var/site\n",
                   "system.conf")
    cfg = load(RealHost(), None, system)
    assert cfg.source_files == [default_config_path(), system]
    assert cfg.paths == {"sd_conf": "/kernel/drv/sd.conf",
                         "state_dir": "/var/site"}


def test_absent_system_file_is_fine(tmp_path):
    """No /etc/sdtune/sdtune.conf: the defaults alone, and the host was
    only asked whether it exists."""
    system = str(tmp_path / "etc" / "sdtune" / "sdtune.conf")
    host = RecordingHost()
    cfg = load(host, None, system)
    assert cfg.source_files == [default_config_path()]
    assert host.asked == [system, ENGINE_MARKER]
    assert host.read == [default_config_path()]
    assert cfg.commands["mdb"] == "/usr/bin/mdb"


def test_no_system_layer_asks_nothing():
    host = RecordingHost()
    cfg = load(host)
    # Only whether this is a source tree (for its engine).
    assert host.asked == [ENGINE_MARKER]
    assert cfg.source_files == [default_config_path()]


def test_system_layer_checked_through_the_host(tmp_path):
    """Whether the system file exists is the host's answer, not
    os.path's: a host that says no is believed."""
    system = write(tmp_path, "[commands]\nmdb = /opt/site/bin/mdb\n",
                   "system.conf")

    class NoSystemFile(RecordingHost):
        def exists(self, path):
            super().exists(path)
            return False

    host = NoSystemFile()
    cfg = load(host, None, system)
    assert host.asked == [system, ENGINE_MARKER]
    assert cfg.source_files == [default_config_path()]
    assert cfg.commands["mdb"] == "/usr/bin/mdb"
    # A host that says there is no source tree: the shipped engine path.
    assert cfg.commands["sdio"] == "/usr/lib/sdtune/bin/sdio"


def test_error_names_the_system_file_and_line(tmp_path):
    system = write(tmp_path, "# site settings\n[commands]\n"
                             "mdb = /opt/site/bin/mdb\nzdb = zdb\n",
                   "system.conf")
    override = write(tmp_path, "[commands]\nzdb = /opt/lab/bin/zdb\n",
                     "lab.conf")
    with pytest.raises(ConfigError) as info:
        load(RealHost(), override, system)
    assert str(info.value) == (
        "cannot load config '%s': line 4: [commands] zdb = 'zdb': "
        "not an absolute path" % system)
    assert info.value.exit_code == EXIT_USAGE


def test_error_names_the_override_file_and_line(tmp_path):
    system = write(tmp_path, "[paths]\nstate_dir = /var/site\n",
                   "system.conf")
    override = write(tmp_path, "[paths]\n\nstate_dir = lab\n", "lab.conf")
    with pytest.raises(ConfigError) as info:
        load(RealHost(), override, system)
    assert str(info.value) == (
        "cannot load config '%s': line 3: [paths] state_dir = 'lab': "
        "not an absolute path" % override)


def test_unreadable_system_file(tmp_path):
    """A system path that exists but cannot be read is an error, not a
    layer silently left out."""
    system = tmp_path / "sdtune.conf"
    system.mkdir()
    with pytest.raises(ConfigError) as info:
        load(RealHost(), None, str(system))
    assert str(info.value).startswith(
        "cannot load config '%s': " % system)


def test_missing_defaults_name_their_path(tmp_path):
    """Without the shipped defaults nothing is loaded, even when the
    system file exists: it only holds the keys it changes."""
    missing = str(tmp_path / "lib" / "sdtune" / "conf" / "sdtune.conf")
    system = write(tmp_path, "[paths]\nstate_dir = /var/site\n",
                   "system.conf")
    with pytest.raises(ConfigError) as info:
        load_config(RealHost(), None, system, defaults=missing)
    assert str(info.value) == (
        "cannot load config '%s': No such file or directory" % missing)
    assert info.value.exit_code == EXIT_USAGE


def test_defaults_are_not_looked_for_elsewhere(tmp_path):
    """The defaults come from one place only: a defaults file that is
    missing is not replaced by the system file or any other."""
    missing = str(tmp_path / "nope.conf")
    host = RecordingHost()
    with pytest.raises(ConfigError):
        load_config(host, None, None, defaults=missing)
    assert host.read == [missing]


def test_value_errors_name_the_layer_the_value_came_from(tmp_path,
                                                         capsys):
    """A bad [certify] value set in --config is reported against that
    file, not against the shipped defaults (and vice versa)."""
    from sdtune.cli import main
    bad = tmp_path / "bad.conf"
    bad.write_text("[certify]\ninterval_s = fast\n")
    target = tmp_path / "f"
    target.write_bytes(b"")
    rc = main(["--config", str(bad), "certify", str(target), "--confirm",
               str(target)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "cannot load config '%s'" % bad in err
    assert "interval_s = 'fast'" in err


def test_command_line_reads_configuration_through_its_host(tmp_path,
                                                           capsys):
    """The CLI reads every configuration layer and checks -R through the
    host it is given, never one of its own."""
    from sdtune.cli import main
    lab = write(tmp_path, "[sdconf]\nflavour = upstream\n", "lab.conf")
    sd_conf = write(tmp_path, 'sd-config-list = "ATA     X", '
                    '"physical-block-size:4096";\n', "sd.conf")
    host = RecordingHost()
    rc = main(["-R", str(tmp_path), "--config", lab, "sdconf", "check",
               sd_conf], machine=host)
    assert rc == 0, capsys.readouterr().err
    assert host.read[0] == default_config_path()
    assert host.read[-1] == lab


@pytest.mark.parametrize("text, use, message", [
    ("[sdconf]\n# the kernel rules\nflavour = solaris\n",
     lambda cfg: cfg.flavour(),
     "line 3: [sdconf] flavour = 'solaris': expected nexenta, upstream or "
     "auto"),
    ("[journal]\ngenerations = 0\n", lambda cfg: cfg.generations(),
     "line 2: [journal] generations = '0': expected a whole number >= 1"),
    ("[journal]\ngenerations = many\n", lambda cfg: cfg.generations(),
     "line 2: [journal] generations = 'many': expected a whole number "
     ">= 1"),
    ("[certify]\n\nslice_s = quick\n", lambda cfg: cfg.certify(),
     "line 3: [certify] slice_s = 'quick': not a float"),
    ("[certify]\nmin_rounds = 1\n", lambda cfg: cfg.certify(),
     "line 2: [certify] min_rounds must be at least 2 and max_rounds at "
     "least min_rounds"),
])
def test_settings_errors_name_the_file_and_line(tmp_path, text, use,
                                                message):
    lab = write(tmp_path, text, "lab.conf")
    cfg = load(RealHost(), lab)
    with pytest.raises(ConfigError) as info:
        use(cfg)
    assert str(info.value) == "cannot load config '%s': %s" % (lab, message)
    assert info.value.exit_code == EXIT_USAGE


def test_settings_read_from_the_layers():
    cfg = load(RealHost())
    assert (cfg.sd_conf, cfg.state_dir) == ("/kernel/drv/sd.conf",
                                            "/var/sdtune")
    assert cfg.flavour() == "auto" and cfg.generations() == 10
    assert cfg.space_matters() is False and cfg.known_drives is None
    assert cfg.certify().max_rounds == 128
