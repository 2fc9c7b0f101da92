"""Messages the benchmark pane's worker posts to the pane. Each names something that already
happened."""

from __future__ import annotations

from textual.message import Message

from tui.engine.bench.level_figures import LevelFigures


class BenchEvent(Message):
    """Something happened to the running benchmark (the pane handles these)."""


class BenchStarted(BenchEvent):
    """A benchmark started: its title, levels and requests per level (None when unknown)."""

    def __init__(self, title: str, levels: tuple[int, ...], per_level: int | None) -> None:
        super().__init__()
        self.title = title
        self.levels = levels
        self.per_level = per_level


class BenchProgressed(BenchEvent):
    """A measured request finished; only the latest count of a level matters."""

    def __init__(self, concurrency: int, done: int, failed: int) -> None:
        super().__init__()
        self.concurrency = concurrency
        self.done = done
        self.failed = failed

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BenchProgressed) and message.concurrency == self.concurrency


class BenchLevelFinished(BenchEvent):
    """A concurrency level ended with these figures."""

    def __init__(self, concurrency: int, figures: LevelFigures) -> None:
        super().__init__()
        self.concurrency = concurrency
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
