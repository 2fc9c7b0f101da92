"""Finding, reading and parsing ``config.toml``."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from tui.config.config_build import build_config
from tui.config.config_model import Config
from tui.config.config_text import ConfigError, Source
from tui.config.table_reader import Table
from tui.engine.logs.sanitize import printable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

_LINE_COL = re.compile(r"line (\d+)")
_MAX_BYTES = 4 * 1024 * 1024


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/bringup/config.toml``, by default ``~/.config/bringup/config.toml``."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".config"
    return base / "bringup" / "config.toml"


def config_path(
    path: Path | None = None, env: Mapping[str, str] | None = None
) -> tuple[Path, bool]:
    """Which file to read, and whether it was asked for explicitly (then it must exist)."""
    env = os.environ if env is None else env
    if path is not None:
        return path, True
    if env.get("BRINGUP_CONFIG"):
        return Path(env["BRINGUP_CONFIG"]).expanduser(), True
    return default_config_path(env), False


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """The configuration from ``path``, ``$BRINGUP_CONFIG`` or the XDG config folder.

    A missing file that nobody asked for gives an empty ``Config``; anything wrong with a
    file raises ``ConfigError`` naming the file, the line and the key.
    """
    chosen, explicit = config_path(path, env)
    try:
        data = chosen.read_bytes()[: _MAX_BYTES + 1]
    except FileNotFoundError:
        if explicit:
            raise ConfigError(chosen, 0, "", "no such file") from None
        return Config()
    except OSError as exc:
        raise ConfigError(chosen, 0, "", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > _MAX_BYTES:
        raise ConfigError(chosen, 0, "", f"larger than {_MAX_BYTES // 1024 // 1024} MiB")
    return parse_config(data, chosen)


def _decode(data: bytes, file: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(file, line, "", "not valid UTF-8 text") from None


def parse_config(data: bytes | str, file: Path) -> Config:
    """Parse and validate configuration text as if it had been read from ``file``."""
    text = data if isinstance(data, str) else _decode(data, file)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _LINE_COL.search(str(exc))
        line = int(found.group(1)) if found else 0
        raise ConfigError(file, line, "", f"TOML syntax: {printable(str(exc), 120)}") from None
    except RecursionError:
        raise ConfigError(file, 0, "", "TOML syntax: values nested too deeply") from None
    source = Source(file, text)
    return build_config(Table(source, (), parsed), file.parent)
