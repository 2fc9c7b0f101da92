"""The benchmark pane's state: the phase, each level's progress and results, and what went wrong.

Handlers change it as the benchmark worker's messages arrive; the pane renders it. No Textual
import: the rules are tested without an app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.run_compare import CompareRow

MAX_ERRORS = 5


class BenchPhase(str, Enum):
    """Where the benchmark is."""

    IDLE = "idle"
    """Nothing has run; the server is not ready yet, or benchmarks are off."""
    ASKING = "asking"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(slots=True)
class LevelProgress:
    """One level (``c=4``, ``r=8``): requests finished and failed so far, then its figures,
    and the engine's own tool's figures of the same level when it ran."""

    label: str
    total: int | None
    done: int = 0
    failed: int = 0
    figures: LevelFigures | None = None
    official: LevelFigures | None = None

    @property
    def finished(self) -> bool:
        return self.figures is not None


@dataclass(slots=True)
class BenchState:
    """Everything the pane shows about the current (or last) benchmark."""

    phase: BenchPhase = BenchPhase.IDLE
    title: str = ""
    levels: list[LevelProgress] = field(default_factory=list)
    error: str = ""
    note: str = ""
    runs: int = 0
    """Benchmarks started since the app opened."""
    version: int = 0
    """Bumped on every change, so the pane redraws only when something changed."""
    selected: str | None = None
    """The level more trials would run (None: every level)."""
    verdict_base: str = ""
    """The earlier run the levels were tested against (empty: none had them)."""
    verdicts: tuple[CompareRow, ...] | None = None
    """Each figure of the levels against ``verdict_base``'s once more trials ran (None: not
    tested; empty: no earlier run had these levels)."""

    def _changed(self) -> None:
        self.version += 1

    def started(
        self, title: str, levels: Sequence[str], per_level: int | None, more: bool = False
    ) -> None:
        """A benchmark began; with ``more`` (more trials of ``levels``) the other levels'
        results stay where they were."""
        self.phase = BenchPhase.RUNNING
        self.title = title
        fresh = {level: LevelProgress(level, per_level) for level in levels}
        kept = [fresh.pop(lv.label, lv) for lv in self.levels] if more else []
        self.levels = kept + list(fresh.values())
        self.error = ""
        self.note = ""
        self.runs += 1
        self.verdict_base, self.verdicts = "", None
        if self.selected not in [lv.label for lv in self.levels]:
            self.selected = None
        self._changed()

    def asking(self) -> None:
        self.phase = BenchPhase.ASKING
        self._changed()

    def declined(self, note: str = "not benchmarked; b runs it") -> None:
        self.phase = BenchPhase.IDLE
        self.note = note
        self._changed()

    def level(self, label: str) -> LevelProgress | None:
        return next((lv for lv in self.levels if lv.label == label), None)

    def progressed(self, label: str, done: int, failed: int) -> None:
        found = self.level(label)
        if found is not None and not found.finished:
            found.done, found.failed = done, failed
            self._changed()

    def level_finished(self, label: str, figures: LevelFigures) -> None:
        found = self.level(label)
        if figures.source is not None:
            if found is None:
                found = LevelProgress(label, None)
                self.levels.append(found)
            found.official = figures
            self._changed()
            return
        if found is None:
            found = LevelProgress(label, None)
            self.levels.append(found)
        found.figures = figures
        found.done = _count(figures.completed, found.done)
        found.failed = _count(figures.failed, found.failed)
        if found.total is None:
            found.total = found.done + found.failed
        self._changed()

    def finished(self, note: str = "") -> None:
        self.phase = BenchPhase.DONE
        self.note = note
        self._changed()

    def failed(self, error: str) -> None:
        self.phase = BenchPhase.FAILED
        self.error = error
        self._changed()

    def select_next(self) -> None:
        """Choose the next finished level for more trials, then every level again."""
        labels = [lv.label for lv in self.levels if lv.figures is not None]
        if not labels:
            return
        at = labels.index(self.selected) + 1 if self.selected in labels else 0
        self.selected = labels[at] if at < len(labels) else None
        self._changed()

    def chosen(self) -> list[LevelFigures]:
        """The figures more trials would start from: the selected level's, or every level's."""
        return [
            lv.figures
            for lv in self.levels
            if lv.figures is not None and self.selected in (None, lv.label)
        ]

    def verdicts_read(self, baseline: str, rows: Sequence[CompareRow]) -> None:
        self.verdict_base, self.verdicts = baseline, tuple(rows)
        self._changed()

    @property
    def running(self) -> bool:
        return self.phase is BenchPhase.RUNNING

    @property
    def results(self) -> list[LevelFigures]:
        """The figures of every finished level, in order."""
        return [lv.figures for lv in self.levels if lv.figures is not None]

    @property
    def official(self) -> list[LevelFigures]:
        """The engine's own tool's figures, level by level."""
        return [lv.official for lv in self.levels if lv.official is not None]

    @property
    def failed_requests(self) -> int:
        return sum(level.failed for level in self.levels)

    @property
    def request_errors(self) -> list[str]:
        """Distinct errors of failed requests across the levels (at most ``MAX_ERRORS``)."""
        seen: list[str] = []
        for figures in self.results:
            seen.extend(error for error in figures.errors if error not in seen)
        return seen[:MAX_ERRORS]


def _count(value: int | None, default: int) -> int:
    return value if value is not None and value >= 0 else default
