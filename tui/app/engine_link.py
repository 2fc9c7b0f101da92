"""What the app needs from the log engine, and the adapter over the real one.

The app feeds bytes and reads back three things: the latest Snapshot, the sanitized lines (with
their rank and whether each is a warning or an error) for the log view, and the verdict with any
disagreement between the signals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from tui.app.model import HealthKind, HealthReading
from tui.engine.feed import LogEngine, Update
from tui.engine.snapshot import Snapshot
from tui.engine.stages import Outcome, Verdict

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

    def new_run(self, reason: str) -> list[Line]:
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

    def _take(self, update: Update) -> list[Line]:
        self._snapshot = update.snapshot
        return [(line.rank, line.text, line.problem) for line in update.lines]

    def feed(self, data: bytes) -> list[Line]:
        return self._take(self.engine.feed(data))

    def finish(self) -> list[Line]:
        return self._take(self.engine.finish())

    def new_run(self, reason: str) -> list[Line]:
        return self._take(self.engine.mark_new_run(reason))

    def verdict(
        self, *, connected: bool, health: HealthReading, stalled: frozenset[str]
    ) -> tuple[Verdict, tuple[str, ...]]:
        return interim_verdict(self._snapshot, connected, health, stalled)


def interim_verdict(
    snapshot: Snapshot, connected: bool, health: HealthReading, stalled: frozenset[str]
) -> tuple[Verdict, tuple[str, ...]]:
    """READY needs the ready line, /health 200 and one generation; disagreements are named."""
    notes = []
    healthy = health.kind is HealthKind.OK
    if snapshot.ready_line_seen and health.kind in (HealthKind.STARTING, HealthKind.REFUSED):
        notes.append(f"the log says ready but {health.endpoint or 'the port'} is not answering 200")
    if healthy and not snapshot.ready_line_seen:
        notes.append("/health answers 200 but the log has no ready line yet")
    if snapshot.failure is not None and healthy:
        notes.append("the log shows a failure but /health still answers 200")
    if snapshot.failure is not None or snapshot.outcome is Outcome.FAILED:
        return Verdict.FAILED, tuple(notes)
    if snapshot.stopped:
        return Verdict.STOPPED, tuple(notes)
    if not connected and snapshot.lines == 0:
        return Verdict.CONNECTING, tuple(notes)
    if stalled:
        return Verdict.STALLED, tuple(notes)
    if snapshot.ready_line_seen and healthy and health.generation_ok:
        return Verdict.READY, tuple(notes)
    return Verdict.STARTING, tuple(notes)
