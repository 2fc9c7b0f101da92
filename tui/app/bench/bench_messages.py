"""Messages the benchmark pane's worker posts to the pane. Each names something that already
happened."""

from __future__ import annotations

from textual.message import Message

from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.run_compare import CompareRow


class BenchEvent(Message):
    """Something happened to the running benchmark (the pane handles these)."""


class BenchStarted(BenchEvent):
    """A benchmark started: its title, levels (by label) and requests per level (None when
    unknown)."""

    def __init__(
        self, title: str, levels: tuple[str, ...], per_level: int | None, more: bool = False
    ) -> None:
        super().__init__()
        self.title = title
        self.levels = levels
        self.per_level = per_level
        self.more = more
        """More trials of these levels: the other levels' results stay."""


class BenchProgressed(BenchEvent):
    """A measured request finished; only the latest count of a level matters."""

    def __init__(self, level: str, done: int, failed: int) -> None:
        super().__init__()
        self.level = level
        self.done = done
        self.failed = failed

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BenchProgressed) and message.level == self.level


class BenchLevelFinished(BenchEvent):
    """A level ended with these figures (the engine's own tool's when ``figures.source``)."""

    def __init__(self, level: str, figures: LevelFigures) -> None:
        super().__init__()
        self.level = level
        self.figures = figures


class BenchFinished(BenchEvent):
    """Every level ended; ``note`` says where the results were kept (or why they were not)."""

    def __init__(self, note: str) -> None:
        super().__init__()
        self.note = note


class BenchFailed(BenchEvent):
    """The benchmark could not go on; finished levels were kept."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class BenchTrialsAdded(BenchEvent):
    """More trials ended (after their levels' messages): time to test them against a run."""

    def __init__(self, run_id: int | None) -> None:
        super().__init__()
        self.run_id = run_id


class BenchVerdictsRead(BenchEvent):
    """The levels of the last benchmark were tested against an earlier run's (Welch's t-test);
    ``baseline`` names that run, empty when no earlier run had these levels."""

    def __init__(self, baseline: str, rows: tuple[CompareRow, ...]) -> None:
        super().__init__()
        self.baseline = baseline
        self.rows = rows
