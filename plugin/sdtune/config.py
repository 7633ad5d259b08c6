"""Load sdtune.conf: the shipped defaults, then an operator's file on top.

The files are INI, read with configparser without interpolation.  A file
given with ``--config`` overrides the defaults key by key.  Command and
path values must be absolute, because sdtune runs nothing found through a
search path.  Every error names the file, the line and the key.  Files are
read through the host; this module runs no commands.
"""

import configparser
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from sdtune.errors import ConfigError, HostError
from sdtune.host import Host

# Sections whose every value is an absolute path.
_ABSOLUTE_SECTIONS = ("commands", "paths", "libraries")

_SECTION_RE = re.compile(r"\s*\[(?P<name>[^\]]+)\]")
_KEY_RE = re.compile(r"(?P<key>[^=:\s#;\[][^=:]*?)\s*[=:]")


@dataclass
class Config:
    """The merged configuration and the files it came from."""

    commands: Dict[str, str] = field(default_factory=dict)
    paths: Dict[str, str] = field(default_factory=dict)
    libraries: Dict[str, str] = field(default_factory=dict)
    # Every section, raw, for settings that have no typed field yet.
    sections: Dict[str, Dict[str, str]] = field(default_factory=dict)
    source_files: List[str] = field(default_factory=list)


def default_config_path() -> str:
    """The shipped sdtune.conf: in the tree or installed next to the
    package, else the system-wide copy."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.path.normpath(os.path.join(package_dir, "..", "..", "conf",
                                      "sdtune.conf")),
        "/etc/sdtune/sdtune.conf",
    ]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise ConfigError("load config", candidates[0],
                      "no default configuration (also looked for %s)"
                      % candidates[1])


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


def _read(host: Host, path: str) -> Dict[str, Dict[str, str]]:
    try:
        text = host.read_bytes(path).decode("utf-8")
    except HostError as e:
        raise ConfigError("load config", path, e.reason) from e
    except UnicodeDecodeError as e:
        raise ConfigError("load config", path,
                          "byte %d: not valid UTF-8" % e.start) from e
    parser = _parse(path, text)
    _validate(path, text, parser)
    return {name: dict(parser.items(name)) for name in parser.sections()}


def load_config(host: Host, override: Optional[str] = None) -> Config:
    """Defaults from default_config_path(), then ``override`` key by key."""
    files = [default_config_path()]
    if override is not None:
        files.append(override)
    sections: Dict[str, Dict[str, str]] = {}
    for path in files:
        for name, values in _read(host, path).items():
            sections.setdefault(name, {}).update(values)
    return Config(commands=dict(sections.get("commands", {})),
                  paths=dict(sections.get("paths", {})),
                  libraries=dict(sections.get("libraries", {})),
                  sections=sections, source_files=files)


def commands_for(cfg: Config) -> Dict[str, str]:
    """The command allow-list to hand to RealHost."""
    return dict(cfg.commands)
