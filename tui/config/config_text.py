"""The text of a configuration file, and errors that point into it.

``tomllib`` reports where a syntax error is but not where a key is, so ``KeyLines`` scans the
source once and remembers on which line each table header and each key assignment appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from tui.engine.logs.sanitize import printable

KeyPath = tuple[str, ...]

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_KEY = re.compile(rf"\s*({_BARE}|{_BASIC}|{_LITERAL})\s*")
QUOTE_LIMIT = 80
"""How many characters of a key, a value or a library's message an error quotes."""


def dotted(path: Sequence[str | int]) -> str:
    """``("profiles", "gpu", "hosts", 0)`` as ``profiles.gpu.hosts[0]``, quoting odd keys."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        key = part if re.fullmatch(_BARE, part) else '"' + part.replace('"', '\\"') + '"'
        text += f".{key}" if text else key
    return printable(text, QUOTE_LIMIT)


class ConfigError(Exception):
    """Invalid configuration. ``str()`` is ``"{file}:{line}: {dotted.key}: {problem}"``."""

    def __init__(self, file: Path | str, line: int, key: str, problem: str) -> None:
        self.file = str(file)
        self.line = line
        self.key = key
        self.problem = problem
        where = f"{self.file}:{line}" if line > 0 else self.file
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")


class ConfigErrors(ConfigError):
    """Every problem found in one file, in the order of their lines; ``str()`` gives one per
    line. ``file``, ``line``, ``key`` and ``problem`` are those of the first."""

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        self.errors = tuple(sorted(errors, key=lambda error: error.line))
        first = self.errors[0]
        super().__init__(first.file, first.line, first.key, first.problem)
        self.args = ("\n".join(str(error) for error in self.errors),)


def _unquote(token: str) -> str:
    if token.startswith("'"):
        return token[1:-1]
    if token.startswith('"'):
        body = token[1:-1]
        return re.sub(r"\\(.)", r"\1", body) if "\\" in body else body
    return token


def _split_keys(text: str) -> tuple[KeyPath, str] | None:
    """Leading dotted key of ``text`` and what follows it, or None when there is none."""
    keys: list[str] = []
    rest = text
    while True:
        match = _KEY.match(rest)
        if match is None:
            return None
        keys.append(_unquote(match.group(1)))
        rest = rest[match.end() :]
        if not rest.startswith("."):
            return tuple(keys), rest
        rest = rest[1:]


class KeyLines:
    """Line numbers of the table headers and keys in a TOML text (1-based)."""

    def __init__(self, text: str) -> None:
        self._lines: dict[KeyPath, int] = {}
        for number, path in self._scan(text):
            self._lines.setdefault(path, number)

    def _scan(self, text: str) -> Iterator[tuple[int, KeyPath]]:
        table: KeyPath = ()
        in_multiline = False
        for number, line in enumerate(text.splitlines(), start=1):
            quotes = line.count('"""') + line.count("'''")
            if in_multiline:
                in_multiline = quotes % 2 == 0
                continue
            in_multiline = quotes % 2 == 1
            stripped = line.lstrip()
            if stripped.startswith("["):
                header = _split_keys(stripped.lstrip("["))
                if header is not None and header[1].lstrip().startswith("]"):
                    table = header[0]
                    yield number, table
                continue
            assigned = _split_keys(line)
            if assigned is not None and assigned[1].startswith("="):
                yield number, table + assigned[0]

    def line_of(self, path: Sequence[str | int]) -> int:
        """Line of ``path`` or of its nearest enclosing key or table; 0 when none is known."""
        keys = tuple(part for part in path if isinstance(part, str))
        for end in range(len(keys), 0, -1):
            found = self._lines.get(keys[:end])
            if found is not None:
                return found
        return 0


class Source:
    """A configuration file's name and text, for building errors that point into it, and the
    errors found so far (the whole file is checked before any is raised)."""

    def __init__(self, file: Path | str, text: str) -> None:
        self.file = file
        self.lines = KeyLines(text)
        self.errors: list[ConfigError] = []

    def error(self, path: Sequence[str | int], problem: str) -> ConfigError:
        return ConfigError(self.file, self.lines.line_of(path), dotted(path), problem)

    def report(self, error: ConfigError) -> None:
        """Keep ``error`` for the end of the check (once, however often it is found)."""
        if all(str(error) != str(seen) for seen in self.errors):
            self.errors.append(error)

    def raise_errors(self) -> None:
        """Raise ``ConfigErrors`` with everything reported, if anything was."""
        if self.errors:
            raise ConfigErrors(self.errors)
