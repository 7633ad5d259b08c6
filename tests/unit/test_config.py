"""Tests for sdtune.config: shipped defaults, key-by-key overrides, and
errors that name the file, the line and the key."""

import os

import pytest

from sdtune.config import (Config, commands_for, default_config_path,
                           load_config)
from sdtune.errors import EXIT_USAGE, ConfigError
from sdtune.host import RealHost

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class RecordingHost(RealHost):
    """Remembers which files config asked the host to read."""

    def __init__(self):
        super().__init__()
        self.read = []

    def read_bytes(self, path):
        self.read.append(path)
        return super().read_bytes(path)


def write(tmp_path, text, name="x.conf"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_default_path_is_in_tree():
    assert default_config_path() == os.path.join(REPO, "conf", "sdtune.conf")


def test_defaults_load():
    host = RecordingHost()
    cfg = load_config(host)
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
        "sdio": "/usr/lib/sdtune/bin/sdio",
    }
    assert cfg.paths == {"sd_conf": "/kernel/drv/sd.conf",
                         "state_dir": "/var/sdtune"}
    assert cfg.sections["sdconf"] == {"flavour": "nexenta"}
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
    cfg = load_config(host, override)
    assert cfg.commands["mdb"] == "/opt/sim/bin/mdb"
    assert cfg.commands["newtool"] == "/opt/sim/bin/newtool"
    assert cfg.commands["zpool"] == "/usr/sbin/zpool"
    assert cfg.paths == {"sd_conf": "/kernel/drv/sd.conf",
                         "state_dir": "/tmp/state"}
    assert cfg.sections["thresholds"] == {"flush_ms": "5"}
    assert cfg.sections["sdconf"] == {"flavour": "nexenta"}
    assert cfg.source_files == [default_config_path(), override]
    assert host.read == cfg.source_files


def test_relative_command_names_file_line_and_key(tmp_path):
    path = write(tmp_path, "[commands]\n# the debugger\nmdb = mdb\n")
    with pytest.raises(ConfigError) as info:
        load_config(RealHost(), path)
    assert str(info.value) == (
        "cannot load config '%s': line 3: [commands] mdb = 'mdb': "
        "not an absolute path" % path)
    assert info.value.exit_code == EXIT_USAGE


def test_relative_path_and_unknown_command(tmp_path):
    path = write(tmp_path, "[paths]\nsd_conf = /kernel/drv/sd.conf\n\n"
                           "state_dir = var/sdtune\n")
    with pytest.raises(ConfigError, match=r"line 4: \[paths\] state_dir = "
                                          r"'var/sdtune': not an absolute"):
        load_config(RealHost(), path)
    path = write(tmp_path, "[journal]\ngenerations = 3\n[commands]\n"
                           "Future = ./future\n", "y.conf")
    with pytest.raises(ConfigError, match=r"line 4: \[commands\] future = "
                                          r"'./future'"):
        load_config(RealHost(), path)


def test_empty_command_value_refused(tmp_path):
    path = write(tmp_path, "[commands]\nmdb =\n")
    with pytest.raises(ConfigError, match=r"line 2: \[commands\] mdb = '': "):
        load_config(RealHost(), path)


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
        load_config(RealHost(), path)
    assert str(info.value) == "cannot load config '%s': %s" % (path, reason)


def test_missing_override_file(tmp_path):
    path = str(tmp_path / "nope.conf")
    with pytest.raises(ConfigError) as info:
        load_config(RealHost(), path)
    assert str(info.value) == (
        "cannot load config '%s': No such file or directory" % path)


def test_override_not_utf8(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_bytes(b"[commands]\nmdb = /usr/bin/\xff\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_config(RealHost(), str(path))
