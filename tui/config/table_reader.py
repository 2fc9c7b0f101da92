"""Typed access to one TOML table, with errors that name the file, line and dotted key.

Every accessor marks its key as read; ``finish()`` then rejects whatever key was not read, so a
misspelt key is an error (with the nearest known key as a suggestion) instead of a silently
ignored setting. A bad value is reported to the ``Source`` and its default used, so one check of
the file finds every problem in it; ``Source.raise_errors()`` raises them together.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import ParamSpec, TypeVar

from tui.config.config_text import QUOTE_LIMIT, ConfigError, Source
from tui.engine.logs.sanitize import printable
from tui.engine.timing.durations import DurationError, parse_duration

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_MISSING = object()


def _escaped(char: str) -> str:
    """A control character named by its code (``\\x1b``), so the message says which it was."""
    return f"\\x{ord(char):02x}"


def did_you_mean(word: str, known: Collection[str]) -> str:
    """`` (did you mean 'launch'?)`` for the known word nearest ``word``, or nothing."""
    close = difflib.get_close_matches(word, sorted(known), n=1)
    return f" (did you mean {printable(repr(close[0]), QUOTE_LIMIT)}?)" if close else ""


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return names.get(type(value), type(value).__name__)


class Table:
    """One TOML table at ``path`` inside ``source``."""

    def __init__(self, source: Source, path: tuple[str, ...], data: dict[str, object]) -> None:
        self.source = source
        self.path = path
        self.data = data
        self._read: set[str] = set()

    def error(self, key: str | None, problem: str, *index: int) -> ConfigError:
        where: list[str | int] = [*self.path, key] if key is not None else [*self.path]
        return self.source.error([*where, *index], problem)

    def names(self) -> list[str]:
        return list(self.data)

    def _get(self, key: str) -> object:
        self._read.add(key)
        return self.data.get(key, _MISSING)

    def has(self, key: str) -> bool:
        """Whether ``key`` is set; it counts as known either way (for ``finish``)."""
        return self._get(key) is not _MISSING

    def report(self, error: ConfigError) -> None:
        self.source.report(error)

    def guard(self, default: T, build: Callable[P, R], /, *args: P.args, **kw: P.kwargs) -> R | T:
        """``build(...)``, or ``default`` once the error it raised is reported."""
        try:
            return build(*args, **kw)
        except ConfigError as exc:
            self.report(exc)
            return default

    def finish(self) -> None:
        """Report every key of this table that no accessor asked for."""
        for key in self.data:
            if key not in self._read:
                self.report(self.error(key, "unknown key" + did_you_mean(key, self._read)))

    def table(self, key: str) -> Table:
        value = self._get(key)
        if value is _MISSING:
            value = {}
        if not isinstance(value, dict):
            self.report(self.error(key, f"expected a table, got {_kind(value)}"))
            value = {}
        return Table(self.source, (*self.path, key), value)

    def text(self, key: str, default: T) -> str | T:
        value = self._get(key)
        if value is _MISSING:
            return default
        return self.guard(default, self.check_text, key, value)

    def check_text(self, key: str, value: object, *index: int) -> str:
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {_kind(value)}", *index)
        bad = _UNSAFE.search(value)
        if bad is not None:
            problem = f"control character {_escaped(bad.group())} is not allowed"
            raise self.error(key, problem, *index)
        return value

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        value = self.text(key, default)
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            got = printable(repr(value), QUOTE_LIMIT)
            self.report(self.error(key, f"must be one of {allowed}, got {got}"))
            return default
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self._get(key)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            self.report(self.error(key, f"expected true or false, got {_kind(value)}"))
            return default
        return value

    def integer(self, key: str, default: T, low: int, high: int) -> int | T:
        value = self._get(key)
        if value is _MISSING:
            return default
        return self.guard(default, self.check_integer, key, value, low, high)

    def check_integer(self, key: str, value: object, low: int, high: int, *index: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {_kind(value)}", *index)
        if not low <= value <= high:
            raise self.error(key, f"must be between {low} and {high}, got {value}", *index)
        return value

    def number(self, key: str, default: float, low: float, high: float) -> float:
        value = self._get(key)
        if value is _MISSING:
            return default
        return self.guard(default, self._check_number, key, value, low, high)

    def _check_number(self, key: str, value: object, low: float, high: float) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"expected a number, got {_kind(value)}")
        if not low <= value <= high:
            raise self.error(key, f"must be between {low:g} and {high:g}, got {value!r}")
        return float(value)

    def duration(self, key: str, default: float, positive: bool = False) -> float:
        value = self._get(key)
        if value is _MISSING:
            return default
        return self.guard(default, self._check_duration, key, value, positive)

    def _check_duration(self, key: str, value: object, positive: bool) -> float:
        try:
            seconds = parse_duration(value)
        except DurationError as exc:
            raise self.error(key, printable(str(exc), 120)) from None
        if positive and seconds == 0:
            raise self.error(key, "must be longer than zero")
        return seconds

    def items(self, key: str, default: Sequence[T], check: Callable[[object, int], T]) -> list[T]:
        """The array at ``key`` with ``check(item, index)`` applied to each item."""
        value = self._get(key)
        if value is _MISSING:
            return list(default)
        if not isinstance(value, list):
            self.report(self.error(key, f"expected an array, got {_kind(value)}"))
            return list(default)
        checked = [self.guard(None, check, item, index) for index, item in enumerate(value)]
        return [item for item in checked if item is not None]  # a bad item is reported

    def path_value(self, key: str, base: Path) -> Path | None:
        """A local path: ``~`` expanded, relative paths taken from the configuration's folder."""
        value = self.text(key, None)
        if value is None:
            return None
        return self.guard(None, self._check_path, key, value, base)

    def _check_path(self, key: str, value: str, base: Path) -> Path:
        if not value:
            raise self.error(key, "must not be empty")
        try:
            path = Path(value).expanduser()
        except RuntimeError:
            raise self.error(key, "cannot expand '~' in this path") from None
        return path if path.is_absolute() else base / path
