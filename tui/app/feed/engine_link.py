"""What the app needs from the log engine, and the adapter over the real one.

The app feeds bytes and reads back three things: the latest Snapshot, the sanitized lines (with
their rank and whether each is a warning or an error) for the log view, and the verdict with any
disagreement between the signals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.log_engine import LogEngine, Update
from tui.engine.logs.log_line import LogLine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.timing.estimate import Expectations


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

    def judge(
        self, signals: Signals, expectations: Expectations, now: float, policy: StallPolicy
    ) -> Judgement:
        """The judge's verdict over this snapshot and the signals (``tui.engine.judge``)."""
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

    def judge(
        self, signals: Signals, expectations: Expectations, now: float, policy: StallPolicy
    ) -> Judgement:
        return judge(self._snapshot, signals, expectations, now, policy)
