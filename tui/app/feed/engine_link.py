"""What the app needs from the log engine, and the adapter over the real one.

The app feeds bytes and reads back three things: the latest Snapshot, the sanitized lines (with
their rank and whether each is a warning or an error) for the log view, and the verdict with any
disagreement between the signals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from tui.app.monitor.view_model import HealthKind, HealthReading
from tui.engine.judge.verdict import HealthState, decide_verdict
from tui.engine.logs.log_engine import LogEngine, Update
from tui.engine.logs.log_line import LogLine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict


class EngineLink(Protocol):
    """The engine as the app sees it."""

    @property
    def snapshot(self) -> Snapshot: ...

    def feed(self, data: bytes) -> Sequence[LogLine]:
        """Parse a chunk; return its complete lines (rank, sanitized text, is_problem)."""
        ...

    def finish(self) -> Sequence[LogLine]:
        """The stream ended: parse a trailing partial line."""
        ...

    def new_run(self, reason: str) -> Sequence[LogLine]:
        """The file was replaced or truncated: what follows is a new run."""
        ...

    def verdict(
        self, *, connected: bool, health: HealthReading, stalled: frozenset[str]
    ) -> tuple[Verdict, tuple[str, ...]]:
        """The server verdict and one sentence per disagreement between the signals."""
        ...


class EngineAdapter:
    """The real engine (``LogEngine`` keeping lines for the log view) behind ``EngineLink``."""

    def __init__(
        self, engine: str = "auto", clock: Callable[[], float] = time.monotonic, node: int = 0
    ) -> None:
        self.engine = LogEngine(engine, clock, node, keep_lines=True)
        self._snapshot = self.engine.snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def _take(self, update: Update) -> Sequence[LogLine]:
        self._snapshot = update.snapshot
        return update.lines

    def feed(self, data: bytes) -> Sequence[LogLine]:
        return self._take(self.engine.feed(data))

    def finish(self) -> Sequence[LogLine]:
        return self._take(self.engine.finish())

    def new_run(self, reason: str) -> Sequence[LogLine]:
        return self._take(self.engine.mark_new_run(reason))

    def verdict(
        self, *, connected: bool, health: HealthReading, stalled: frozenset[str]
    ) -> tuple[Verdict, tuple[str, ...]]:
        return verdict_for(self._snapshot, connected, health, stalled)


_HEALTH_STATES = {
    HealthKind.UNKNOWN: HealthState.UNKNOWN,
    HealthKind.REFUSED: HealthState.REFUSED,
    HealthKind.STARTING: HealthState.UNAVAILABLE,
    HealthKind.ERROR: HealthState.UNAVAILABLE,
    HealthKind.OK: HealthState.OK,
}


def verdict_for(
    snapshot: Snapshot, connected: bool, health: HealthReading, stalled: frozenset[str]
) -> tuple[Verdict, tuple[str, ...]]:
    """The engine's verdict over the log, the link, ``/health`` and the test generation."""
    report = decide_verdict(
        snapshot,
        connected=connected,
        health=_HEALTH_STATES[health.kind],
        generation_ok=health.generation_ok,
        stalled_ranks=tuple(sorted(stalled)),
    )
    return report.verdict, report.disagreements
