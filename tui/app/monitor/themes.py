"""Shipped theme files: discovery, validation and conversion to Textual themes.

A theme file is TOML with a ``name``, an optional ``dark`` flag, a ``[colors]`` table of Textual's
base colours and a ``[variables]`` table of bringup's semantic colours (``rank-ready``,
``verdict-failed``...). Stylesheets only ever refer to these semantic variables.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

DEFAULT_THEME = "bringup-dark"
FALLBACK_THEME = "textual-dark"

# Semantic colours every stylesheet may use, with a fallback when a theme does not set them.
SEMANTIC_DEFAULTS: dict[str, str] = {
    "stage-waiting": "ansi_bright_black",
    "stage-loading": "ansi_blue",
    "stage-graph": "ansi_magenta",
    "rank-ready": "ansi_green",
    "rank-failed": "ansi_red",
    "rank-stalled": "ansi_yellow",
    "health-ok": "ansi_green",
    "health-starting": "ansi_yellow",
    "health-down": "ansi_red",
    "verdict-connecting": "ansi_bright_black",
    "verdict-starting": "ansi_blue",
    "verdict-ready": "ansi_green",
    "verdict-degraded": "ansi_bright_yellow",
    "verdict-failed": "ansi_red",
    "verdict-stalled": "ansi_yellow",
    "verdict-stopped": "ansi_bright_black",
    "progress-done": "ansi_blue",
    "progress-track": "ansi_bright_black",
}

_BASE_COLORS = (
    "primary", "secondary", "accent", "foreground", "background", "surface", "panel",
    "boost", "success", "warning", "error",
)  # fmt: skip
_TOP_LEVEL = {"name", "dark", "colors", "variables"}


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class LoadedThemes:
    """The themes that loaded and one message per file that did not."""

    themes: tuple[Theme, ...]
    errors: tuple[str, ...]


def themes_dir() -> Path | None:
    """Where shipped themes live: inside an installed package, or beside it in a checkout."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "_themes", package.parent / "themes"):
        if candidate.is_dir():
            return candidate
    return None


def load_themes(directory: Path | None = None) -> LoadedThemes:
    """Load every ``*.toml`` in ``directory`` (default: the shipped themes)."""
    folder = directory if directory is not None else themes_dir()
    if folder is None:
        return LoadedThemes((), ("no themes directory was found",))
    results = [_try_load(path) for path in sorted(folder.glob("*.toml"))]
    themes = tuple(result for result in results if isinstance(result, Theme))
    errors = tuple(result for result in results if isinstance(result, str))
    return LoadedThemes(themes, errors)


def _try_load(path: Path) -> Theme | str:
    try:
        return load_theme_file(path)
    except ThemeFileError as error:
        return str(error)


def load_theme_file(path: Path) -> Theme:
    """Parse and validate one theme file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ThemeFileError(f"{path}: {error}") from error
    return theme_from_mapping(data, str(path))


def theme_from_mapping(data: Mapping[str, Any], origin: str) -> Theme:
    """Build a Theme from parsed TOML, naming ``origin`` and the field in every error."""
    unknown = sorted(set(data) - _TOP_LEVEL)
    if unknown:
        raise ThemeFileError(f"{origin}: unknown key {unknown[0]!r}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{origin}: 'name' must be a non-empty string")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{origin}: 'dark' must be true or false")
    colors = _colour_table(data.get("colors", {}), origin, "colors", _BASE_COLORS)
    if "primary" not in colors:
        raise ThemeFileError(f"{origin}: colors.primary is required")
    variables = _colour_table(data.get("variables", {}), origin, "variables", SEMANTIC_DEFAULTS)
    get = colors.get
    return Theme(
        name=name,
        primary=colors["primary"],
        secondary=get("secondary"),
        warning=get("warning"),
        error=get("error"),
        success=get("success"),
        accent=get("accent"),
        foreground=get("foreground"),
        background=get("background"),
        surface=get("surface"),
        panel=get("panel"),
        boost=get("boost"),
        dark=dark,
        variables=variables,
    )


def _colour_table(
    table: object, origin: str, section: str, allowed: Mapping[str, str] | tuple[str, ...]
) -> dict[str, str]:
    if not isinstance(table, Mapping):
        raise ThemeFileError(f"{origin}: [{section}] must be a table")
    result: dict[str, str] = {}
    for key, value in table.items():
        field = f"{section}.{key}"
        if key not in allowed:
            raise ThemeFileError(f"{origin}: unknown field {field}")
        if not isinstance(value, str):
            raise ThemeFileError(f"{origin}: {field} must be a colour string")
        try:
            Color.parse(value)
        except ColorParseError as error:
            raise ThemeFileError(f"{origin}: {field}: {error}") from error
        result[str(key)] = value
    return result
