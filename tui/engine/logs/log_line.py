"""The one shape of a log line on its way from the engine to the log view."""

from __future__ import annotations

from typing import NamedTuple


class LogLine(NamedTuple):
    """A complete, sanitized line: its rank (if known), its text, whether it looks bad, and
    ``seq``, its place among every line the log view's ring received (from 1; 0 until the ring
    numbers it)."""

    rank: str | None
    text: str
    problem: bool
    seq: int = 0
