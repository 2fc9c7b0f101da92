"""Per-level progress of ``bringup bench`` on stderr, with Rich, only when it is a terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from tui.engine.bench.bench_math import RequestRecord
from tui.engine.bench.bench_stream import Prompt
from tui.engine.bench.load_plan import LoadLevel
from tui.io.bench.bench_client import BenchClient, LevelReport, Workload


class CountingClient(BenchClient):
    """The benchmark client, advancing one progress bar per level and trial."""

    def __init__(self, base_url: str, workload: Workload, bars: Progress | None) -> None:
        super().__init__(base_url, workload)
        self.bars = bars
        self.task: TaskID | None = None

    async def run_level(self, level: LoadLevel | int) -> LevelReport:
        if self.bars is not None:
            shown = level if isinstance(level, LoadLevel) else LoadLevel(level)
            total = len(self.workload.prompts_of(shown)) * max(self.workload.trials, 1)
            self.task = self.bars.add_task(shown.label, total=total)
        return await super().run_level(level)

    async def send(self, prompt: Prompt, output_len: int | None = None) -> RequestRecord:
        record = await super().send(prompt, output_len)
        if self.bars is not None and self.task is not None and output_len is None:
            self.bars.advance(self.task)
        return record


class BenchProgress:
    """Makes the client; shows bars only on a terminal."""

    def __init__(self, bars: Progress | None) -> None:
        self.bars = bars

    def client(self, base_url: str, workload: Workload) -> CountingClient:
        return CountingClient(base_url, workload, self.bars)


@contextlib.contextmanager
def progress_for(workload: Workload) -> Iterator[BenchProgress]:
    """Bars on stderr when it is a terminal; nothing at all when it is piped."""
    if not sys.stderr.isatty():
        yield BenchProgress(None)
        return
    bars = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        console=Console(stderr=True), transient=False,
    )  # fmt: skip
    with bars:
        yield BenchProgress(bars)
