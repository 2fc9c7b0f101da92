"""What the app needs from the log engine, and the adapter over the real one.

The app feeds bytes and reads back three things: the latest Snapshot, the sanitized lines (with
their rank and whether each is a warning or an error) for the log view, and the verdict with any
disagreement between the signals.
"""

from __future__ import annotations

from typing import Protocol

from tui.app.model import HealthReading
from tui.engine.snapshot import Snapshot
from tui.engine.stages import Verdict

Line = tuple[str | None, str, bool]


class EngineLink(Protocol):
    """The engine as the app sees it."""

    @property
    def snapshot(self) -> Snapshot: ...

    def feed(self, data: bytes) -> list[Line]:
        """Parse a chunk; return its complete lines as (rank, sanitized text, is_problem)."""
        ...

    def finish(self) -> list[Line]:
        """The stream ended: parse a trailing partial line."""
        ...

    def verdict(
        self, *, connected: bool, health: HealthReading, stalled: frozenset[str]
    ) -> tuple[Verdict, tuple[str, ...]]:
        """The server verdict and one sentence per disagreement between the signals."""
        ...
