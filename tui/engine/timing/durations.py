"""Durations as people write them in configuration and on the command line.

``parse_duration`` accepts a number of seconds (``90``, ``2.5``, ``"90"``) or a string of one or
more ``<number><unit>`` parts with units ``ms``, ``s``, ``m``, ``h`` and ``d``: ``"90s"``,
``"15m"``, ``"1h"``, ``"1h30m"``. ``format_duration`` writes seconds back in that form.
"""

from __future__ import annotations

import math
import re

_UNITS: dict[str, float] = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?|\.\d+")
_LONGEST = 100 * 365 * 86400.0


class DurationError(ValueError):
    """A value that is not a duration; the message says what was expected."""


def parse_duration(value: object) -> float:
    """Seconds in ``value``: a non-negative number, or a string such as ``"90s"`` or ``"1h30m"``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DurationError(f"expected a duration such as 90, '90s', '15m' or '1h', got {value!r}")
    seconds = _from_number(value) if not isinstance(value, str) else _from_text(value)
    if not math.isfinite(seconds) or seconds < 0 or seconds > _LONGEST:
        raise DurationError(f"duration out of range: {value!r}")
    return seconds


def _from_number(value: int | float) -> float:
    if isinstance(value, int) and abs(value) > _LONGEST:
        raise DurationError(f"duration out of range: {value!r}")
    return float(value)


def _from_text(text: str) -> float:
    compact = text.strip().lower().replace(" ", "")
    if _NUMBER.fullmatch(compact):
        return float(compact)
    total = 0.0
    position = 0
    for match in _PART.finditer(compact):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position == 0 or position != len(compact):
        raise DurationError(
            f"not a duration: {text[:40]!r} (use seconds or a number with ms, s, m, h or d)"
        )
    return total


def format_duration(seconds: float) -> str:
    """Short form of ``seconds``: ``"45s"``, ``"1m30s"``, ``"10m"``, ``"2h5m"``."""
    if seconds < 0 or not math.isfinite(seconds):
        raise DurationError(f"cannot format {seconds!r} as a duration")
    if seconds < 10 and seconds != int(seconds):
        return f"{seconds:.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(hours, "h"), (minutes, "m"), (secs, "s")]
    text = "".join(f"{amount}{unit}" for amount, unit in parts if amount)
    return text or "0s"
