"""Whether a log line looks like a warning or an error (the log view's errors-only filter)."""

from __future__ import annotations

import re

_WORDS = re.compile(
    r"(?:Error|Exception|Warning)\b|\b(?:ERROR|CRITICAL|WARNING|Traceback|[Ff]ailed)\b"
)
_HINTS = ("rror", "RROR", "xception", "arning", "ARNING", "RITICAL", "raceback", "ailed")
"""A piece of every word ``_WORDS`` finds: a line with none of them needs no regex at all."""


def looks_bad(line: str) -> bool:
    """True when ``line`` holds a level word (``ERROR``, ``WARNING``, ``CRITICAL``), the name of
    an exception or warning class (``RuntimeError``, ``UserWarning``), ``Traceback`` or
    ``failed`` as a word of its own."""
    for hint in _HINTS:
        if hint in line:
            return _WORDS.search(line) is not None
    return False
