"""Runs side by side: start-up time, accept length, throughput and TTFT, with deltas.

A run is one start-up with the benchmark levels recorded against it. When a run was
benchmarked more than once (``b`` again), each concurrency level shows its newest result. Each
figure of each run is compared with the baseline run's: the delta is relative (``+12.5%``) and
judged better or worse by the figure's direction (more tokens per second is better, a longer
start-up is worse).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from tui.engine.bench.level_figures import AcceptBasis, LevelFigures


class Change(int, Enum):
    """How a figure compares with the baseline's."""

    WORSE = -1
    SAME = 0
    BETTER = 1


@dataclass(frozen=True, slots=True)
class RunColumn:
    """One run as the comparison shows it."""

    run_id: int
    label: str
    recorded_at: float
    startup_seconds: float | None
    levels: Mapping[int, LevelFigures] = field(default_factory=dict)
    """Per concurrency, the newest stored figures of that level."""
    launch: str = ""
    """The launch fingerprint as one line (engine, model, drafter, parallelism, host)."""


Figure = Callable[[RunColumn], float | None]
"""Reads one figure of a run (None when the run does not have it)."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One figure of one run: its text, its delta against the baseline and the judgement."""

    text: str
    delta: str = ""
    judgement: Change = Change.SAME


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One figure across every run."""

    name: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class BenchLevel:
    """A stored benchmark level, as the store gives it back."""

    run_id: int | None
    concurrency: int
    recorded_at: float
    figures: LevelFigures


def newest_levels(levels: Iterable[BenchLevel]) -> dict[int, dict[int, LevelFigures]]:
    """Per run, per concurrency, the newest level's figures (levels without a run are left
    out)."""
    newest: dict[tuple[int, int], BenchLevel] = {}
    for level in levels:
        if level.run_id is None:
            continue
        key = (level.run_id, level.concurrency)
        held = newest.get(key)
        if held is None or level.recorded_at >= held.recorded_at:
            newest[key] = level
    runs: dict[int, dict[int, LevelFigures]] = {}
    for (run_id, concurrency), level in sorted(newest.items()):
        runs.setdefault(run_id, {})[concurrency] = level.figures
    return runs


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _server_differenced(level: LevelFigures) -> float | None:
    accepts = level.accepts
    if accepts is None or accepts.server_accept_basis is AcceptBasis.LIFETIME:
        return None
    return accepts.server_accept_length


def run_accept_length(column: RunColumn) -> float | None:
    """The client's accept length at the run's lowest concurrency that has one, else the
    server's differenced figure."""
    readers: tuple[Callable[[LevelFigures], float | None], ...] = (
        lambda level: level.accept_length, _server_differenced,
    )  # fmt: skip
    for read in readers:
        for concurrency in sorted(column.levels):
            value = _finite(read(column.levels[concurrency]))
            if value is not None:
                return value
    return None


def run_serving_accept_length(column: RunColumn) -> float | None:
    """The mean accept length the engine's ``/metrics`` showed during the run's lowest
    concurrency level that has one."""
    for concurrency in sorted(column.levels):
        serving = column.levels[concurrency].serving
        value = None if serving is None else _finite(serving.accept_length.mean)
        if value is not None:
            return value
    return None


def _level_figure(read: Callable[[LevelFigures], float | None], concurrency: int) -> Figure:
    def figure(column: RunColumn) -> float | None:
        level = column.levels.get(concurrency)
        return None if level is None else _finite(read(level))

    return figure


@dataclass(frozen=True, slots=True)
class Metric:
    """A figure to compare: how to read it, how to print it, and which direction is better."""

    name: str
    read: Figure
    digits: int
    higher_is_better: bool


def metrics_for(columns: Sequence[RunColumn]) -> list[Metric]:
    """Start-up, accept length, then tok/s and median TTFT at every concurrency any run has."""
    found: list[Metric] = [
        Metric("start-up (s)", lambda c: c.startup_seconds, 1, False),
        Metric("accept length", run_accept_length, 2, True),
    ]
    if any(run_serving_accept_length(column) is not None for column in columns):
        found.append(Metric("accept /metrics", run_serving_accept_length, 2, True))
    levels = sorted({concurrency for column in columns for concurrency in column.levels})
    for concurrency in levels:
        found.append(
            Metric(f"tok/s @c={concurrency}",
                   _level_figure(lambda level: level.output_throughput, concurrency), 1, True)
        )  # fmt: skip
        found.append(
            Metric(f"TTFT ms @c={concurrency}",
                   _level_figure(lambda level: level.ttft_ms.median, concurrency), 1, False)
        )  # fmt: skip
    return found


def delta(value: float, base: float, higher_is_better: bool) -> tuple[str, Change]:
    """``+12.5%`` and whether that is better; an absolute difference when the base is zero."""
    if value == base:
        return "±0%", Change.SAME
    text = f"{value - base:+.2f}" if base == 0 else f"{(value - base) / abs(base) * 100:+.1f}%"
    better = (value > base) == higher_is_better
    return text, Change.BETTER if better else Change.WORSE


def _cell(value: float | None, base: float | None, metric: Metric, is_base: bool) -> Cell:
    if value is None:
        return Cell("-")
    text = f"{value:.{metric.digits}f}"
    if is_base:
        return Cell(text, "baseline")
    if base is None:
        return Cell(text)
    change, judgement = delta(value, base, metric.higher_is_better)
    return Cell(text, change, judgement)


def compare_rows(columns: Sequence[RunColumn], baseline: int) -> list[CompareRow]:
    """One row per figure; ``baseline`` is the index of the run the others are compared with."""
    if not columns:
        return []
    baseline = min(max(baseline, 0), len(columns) - 1)
    rows = []
    for metric in metrics_for(columns):
        values = [metric.read(column) for column in columns]
        base = values[baseline]
        cells = tuple(
            _cell(value, base, metric, index == baseline) for index, value in enumerate(values)
        )
        rows.append(CompareRow(metric.name, cells))
    return rows
