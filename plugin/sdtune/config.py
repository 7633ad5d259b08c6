# This file and its contents are supplied under the terms of the
# Common Development and Distribution License ("CDDL"), version 1.0.
# You may only use this file in accordance with the terms of version
# 1.0 of the CDDL.  A copy of the CDDL is in conf/LICENSE.
#
# Copyright 2026 the sdtune authors.

"""Load sdtune.conf in three layers, each overriding the one before key
by key:

 1. the shipped defaults, read-only, next to the package
    (<package>/../../conf/sdtune.conf: conf/sdtune.conf in the tree,
    /usr/lib/sdtune/conf/sdtune.conf installed), replaced on upgrade;
    in a source tree the engine is the tree's own plugin/engine/sdio
    (source_tree_engine);
 2. the system's local settings, SYSTEM_CONFIG, when that file exists:
    only the keys the operator changes, so keys added by a later version
    still arrive from the defaults;
 3. a file given with ``--config``.

The files are INI, read with configparser without interpolation.  Command
and path values must be absolute, because sdtune runs nothing found
through a search path.  Every error names the file, the line and the key.
Files are read through the host; this module runs no commands.
"""

import configparser
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Tuple

from sdtune import layout
from sdtune.errors import ConfigError, HostError
from sdtune.host import Host

if TYPE_CHECKING:
    from sdtune.certify.workload import CertifySettings

# The system's local settings: an absolute path on this machine, never
# resolved under -R (it configures the sdtune installed here).  load_config
# takes it as a parameter so that tests can leave it out.
SYSTEM_CONFIG = "/etc/sdtune/sdtune.conf"

# Sections whose every value is an absolute path.
_ABSOLUTE_SECTIONS = ("commands", "paths", "libraries", "data", "platform")

_SECTION_RE = re.compile(r"\s*\[(?P<name>[^\]]+)\]")
_KEY_RE = re.compile(r"(?P<key>[^=:\s#;\[][^=:]*?)\s*[=:]")


@dataclass(frozen=True)
class Signing:
    """[signing] (Config.signing): paths on the appliance, before -R."""

    key: Optional[str]
    identity: Optional[str]
    allowed_signers: Optional[str]


@dataclass(frozen=True)
class PowerCutSettings:
    """[powercut] (Config.powercut): the witness's directory on this
    machine, the two time bounds of a check in seconds, and the engine's
    pace of flushes in milliseconds."""

    witness_dir: str
    seconds: int
    wait: int
    flush_every_ms: int
    notice_ms: int


def _state_home(environ: Mapping[str, str]) -> Optional[str]:
    """The witness's default directory: under $XDG_STATE_HOME, else
    under $HOME/.local/state; None when neither is an absolute path."""
    state = environ.get("XDG_STATE_HOME", "")
    if state.startswith("/"):
        return os.path.join(state, "sdtune", "witness")
    home = environ.get("HOME", "")
    if home.startswith("/"):
        return os.path.join(home, ".local", "state", "sdtune", "witness")
    return None


@dataclass
class Config:
    """The merged configuration and the files it came from."""

    commands: Dict[str, str] = field(default_factory=dict)
    paths: Dict[str, str] = field(default_factory=dict)
    libraries: Dict[str, str] = field(default_factory=dict)
    # Every section, raw, for settings that have no typed field yet.
    sections: Dict[str, Dict[str, str]] = field(default_factory=dict)
    source_files: List[str] = field(default_factory=list)
    # (section, key) -> the file whose value won, and its line there,
    # for error messages.
    origin: Dict[Tuple[str, str], str] = field(default_factory=dict)
    lines: Dict[Tuple[str, str], int] = field(default_factory=dict)

    def where(self, section: str, key: str) -> str:
        """The file the value of [section] key came from."""
        return self.origin.get((section, key), self.source_files[0]
                               if self.source_files else "sdtune.conf")

    def error(self, section: str, key: str, reason: str) -> ConfigError:
        """A usage error naming the file and line of [section] key."""
        return ConfigError("load config", self.where(section, key), "%s%s"
                           % (_where(self.lines.get((section, key), 0)),
                              reason))

    # The settings, each interpreted here and only when a command needs
    # it: a bad value stops the commands that use it, not every command.

    @property
    def sd_conf(self) -> str:
        return self.paths.get("sd_conf", "/kernel/drv/sd.conf")

    @property
    def state_dir(self) -> str:
        return self.paths.get("state_dir", "/var/sdtune")

    @property
    def known_drives(self) -> Optional[str]:
        return self.sections.get("data", {}).get("known_drives")

    @property
    def boot_media(self) -> Optional[str]:
        """[platform] boot_media: where SmartOS's boot media is mounted,
        when sdtune cannot find it (a USB key elsewhere than /mnt/usbkey,
        or one of several boot pools)."""
        return self.sections.get("platform", {}).get("boot_media") or None

    @property
    def silence(self) -> Dict[str, str]:
        return dict(self.sections.get("silence", {}))

    def flavour(self) -> str:
        """[sdconf] flavour: the kernel rules to model, or "auto" (the
        default): those of the platform detected (commands/base.py)."""
        from sdtune.sdconf.tunables import FLAVOURS
        value = self.sections.get("sdconf", {}).get("flavour", "auto")
        if value not in FLAVOURS + ("auto",):
            raise self.error("sdconf", "flavour", "[sdconf] flavour = '%s':"
                             " expected %s or auto" % (value,
                                                       ", ".join(FLAVOURS)))
        return value

    def generations(self) -> int:
        """[journal] generations: saved sd.conf copies kept, >= 1."""
        value = self.sections.get("journal", {}).get("generations", "10")
        if not value.isdigit() or int(value) < 1 or len(value) > 9:
            raise self.error("journal", "generations", "[journal] "
                             "generations = '%s': expected a whole number "
                             ">= 1" % value)
        return int(value)

    def space_matters(self) -> bool:
        """[audit] space_matters: yes, true or 1 (any case)."""
        value = self.sections.get("audit", {}).get("space_matters", "no")
        return value.lower() in ("yes", "true", "1")

    def ssh(self) -> Tuple[str, List[str]]:
        """[ssh] ssh (an absolute path) and options (words, split as a
        shell would, without running one): how `--host` reaches an
        appliance."""
        import shlex
        section = self.sections.get("ssh", {})
        path = section.get("ssh", "/usr/bin/ssh")
        if not path.startswith("/"):
            raise self.error("ssh", "ssh", "[ssh] ssh = '%s': expected an "
                             "absolute path" % path)
        try:
            options = shlex.split(section.get("options", ""), comments=False)
        except ValueError:
            raise self.error("ssh", "options", "[ssh] options: an "
                             "unbalanced quote") from None
        return path, options

    def signing(self) -> "Signing":
        """[signing]: how `results --export` signs an export and
        `results --import` verifies one (OpenSSH's `ssh-keygen -Y`,
        namespace sdtune-records).  ``key``: the private key that signs
        exports (empty: exports are unsigned); ``identity``: the signer's
        name written into an export, as the importers' allowed-signers
        file knows it (empty: the node name); ``allowed_signers``: the
        signers this appliance trusts (ssh-keygen(1) ALLOWED SIGNERS).
        Both files are resolved under -R ROOT, like [paths]."""
        section = self.sections.get("signing", {})
        for name in ("key", "allowed_signers"):
            value = section.get(name, "")
            if value and not value.startswith("/"):
                raise self.error("signing", name, "[signing] %s = '%s': "
                                 "expected an absolute path" % (name, value))
        identity = section.get("identity", "").strip()
        if identity and not re.match(r"^[!-~]{1,256}\Z", identity):
            raise self.error("signing", "identity", "[signing] identity = "
                             "'%s': expected printable text without blanks"
                             % identity)
        return Signing(section.get("key", "") or None, identity or None,
                       section.get("allowed_signers", "") or None)

    def powercut(self, environ: Mapping[str, str]) -> "PowerCutSettings":
        """[powercut]: witness_dir, where this machine keeps the logs of
        its power-cut checks (an absolute path here, never under -R;
        empty: $XDG_STATE_HOME/sdtune/witness or
        $HOME/.local/state/sdtune/witness, from ``environ``); seconds,
        how long the engine writes waiting for the cut (10 to 86400,
        default 600); wait, how long sdtune then waits for the
        appliance to come back (0 to 86400 seconds, default 1800);
        flush_every_ms, about how long the engine writes between two
        flushes (0 to 60000, default 2000); notice_ms, how long it waits
        after announcing a flush before it issues it (0 to 60000,
        default 500)."""
        section = self.sections.get("powercut", {})
        directory = section.get("witness_dir", "")
        if directory and not directory.startswith("/"):
            raise self.error("powercut", "witness_dir", "[powercut] "
                             "witness_dir = '%s': expected an absolute "
                             "path" % directory)
        if not directory:
            directory = _state_home(environ)
            if directory is None:
                raise self.error("powercut", "witness_dir", "neither "
                                 "XDG_STATE_HOME nor HOME names a "
                                 "directory: set [powercut] witness_dir")
        numbers = []
        for name, default, low, high, unit in (
                ("seconds", "600", 10, 86400, "seconds"),
                ("wait", "1800", 0, 86400, "seconds"),
                ("flush_every_ms", "2000", 0, 60000, "milliseconds"),
                ("notice_ms", "500", 0, 60000, "milliseconds")):
            value = section.get(name, default)
            if not value.isdigit() or len(value) > 6 or \
                    not low <= int(value) <= high:
                raise self.error("powercut", name, "[powercut] %s = '%s': "
                                 "expected a whole number of %s from %d "
                                 "to %d" % (name, value, unit, low, high))
            numbers.append(int(value))
        return PowerCutSettings(directory, *numbers)

    def certify(self) -> "CertifySettings":
        """[certify]: how certification measures."""
        from sdtune.certify.workload import CertifySettings, SettingError
        try:
            return CertifySettings.from_config(
                self.sections.get("certify", {}))
        except SettingError as e:
            raise self.error("certify", e.key, str(e)) from None


def default_config_path() -> str:
    """The shipped defaults next to the package: conf/sdtune.conf in the
    tree, <prefix>/lib/sdtune/conf/sdtune.conf installed.  Never another
    place, so that no stray copy elsewhere can take their place."""
    return layout.conf_file("sdtune.conf")


def source_tree_engine(host: Host) -> Optional[str]:
    """The sdio built in the source tree this package runs from, or None
    when sdtune is installed.  A checkout then measures with the engine
    built beside it, not with an installed one of another version:
    `make` builds it."""
    if host.exists(layout.tree_engine_marker()):
        return layout.tree_engine()
    return None


def _line_of(text: str, section: str, key: Optional[str] = None) -> int:
    """Line number (1-based) of ``key`` in ``[section]``, or of the section
    header when ``key`` is None; 0 if not found."""
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        if line[:1].isspace() and current is not None:
            continue  # continuation of a multi-line value
        m = _SECTION_RE.match(line)
        if m:
            current = m.group("name").strip()
            if key is None and current == section:
                return number
            continue
        m = _KEY_RE.match(line)
        if (key is not None and m and current == section
                and m.group("key").strip().lower() == key):
            return number
    return 0


def _where(line: int) -> str:
    return "line %d: " % line if line else ""


def _parse(path: str, text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(
        interpolation=None, strict=True, inline_comment_prefixes=("#",))
    try:
        parser.read_string(text, source=path)
    except configparser.MissingSectionHeaderError as e:
        raise ConfigError("load config", path, "line %d: '%s' is outside any "
                          "[section]" % (e.lineno, e.line.strip())) from e
    except configparser.DuplicateOptionError as e:
        raise ConfigError("load config", path, "%s[%s] %s: duplicate key" % (
            _where(e.lineno or 0), e.section, e.option)) from e
    except configparser.DuplicateSectionError as e:
        raise ConfigError("load config", path, "%s[%s]: duplicate section" % (
            _where(e.lineno or 0), e.section)) from e
    except configparser.ParsingError as e:
        # configparser keeps only repr() of the line; show the line itself.
        lineno = e.errors[0][0]
        line = text.splitlines()[lineno - 1].strip()
        raise ConfigError("load config", path, "line %d: cannot parse '%s'"
                          % (lineno, line)) from e
    except configparser.Error as e:
        raise ConfigError("load config", path, e.message) from e
    if parser.defaults():
        # [DEFAULT] would silently add its keys to [commands] and [paths].
        raise ConfigError("load config", path, "%s[%s] is not supported" % (
            _where(_line_of(text, parser.default_section)),
            parser.default_section))
    return parser


def _validate(path: str, text: str,
              parser: configparser.ConfigParser) -> None:
    for section in _ABSOLUTE_SECTIONS:
        if not parser.has_section(section):
            continue
        for key, value in parser.items(section):
            if not os.path.isabs(value):
                raise ConfigError("load config", path,
                                  "%s[%s] %s = '%s': not an absolute path" % (
                                      _where(_line_of(text, section, key)),
                                      section, key, value))


def _read(host: Host, path: str
          ) -> Tuple[Dict[str, Dict[str, str]], Dict[Tuple[str, str], int]]:
    """The file's sections, and the line of each (section, key)."""
    try:
        text = host.read_bytes(path).decode("utf-8")
    except HostError as e:
        raise ConfigError("load config", path, e.reason) from e
    except UnicodeDecodeError as e:
        raise ConfigError("load config", path,
                          "byte %d: not valid UTF-8" % e.start) from e
    parser = _parse(path, text)
    _validate(path, text, parser)
    sections = {name: dict(parser.items(name))
                for name in parser.sections()}
    lines = {(name, key): _line_of(text, name, key)
             for name, values in sections.items() for key in values}
    return sections, lines


def load_config(host: Host, override: Optional[str] = None,
                system_config: Optional[str] = SYSTEM_CONFIG,
                defaults: Optional[str] = None) -> Config:
    """The shipped defaults (``defaults``, for tests: default_config_path
    otherwise), then ``system_config`` if it exists (None: no such
    layer), then ``override``, each key by key.  A missing defaults or
    override file is an error naming it."""
    files = [defaults or default_config_path()]
    if system_config is not None and host.exists(system_config):
        files.append(system_config)
    if override is not None:
        files.append(override)
    sections: Dict[str, Dict[str, str]] = {}
    origin: Dict[Tuple[str, str], str] = {}
    lines: Dict[Tuple[str, str], int] = {}
    for index, path in enumerate(files):
        read, where = _read(host, path)
        lines.update(where)
        for name, values in read.items():
            sections.setdefault(name, {}).update(values)
            origin.update({(name, key): path for key in values})
        engine = source_tree_engine(host) if index == 0 else None
        if engine is not None:
            # Layer 1 in a source tree: the tree's engine, unless a local
            # setting or --config names another.
            sections.setdefault("commands", {})["sdio"] = engine
            origin[("commands", "sdio")] = path
    return Config(commands=dict(sections.get("commands", {})),
                  paths=dict(sections.get("paths", {})),
                  libraries=dict(sections.get("libraries", {})),
                  sections=sections, source_files=files, origin=origin,
                  lines=lines)


def commands_for(cfg: Config) -> Dict[str, str]:
    """The command allow-list to hand to RealHost."""
    return dict(cfg.commands)
