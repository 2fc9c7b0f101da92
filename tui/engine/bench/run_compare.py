"""Runs side by side: start-up time, accept length, throughput and TTFT, with deltas.

A run is one start-up with the benchmark levels recorded against it. Levels are lined up by
their load (``level_key``): closed-loop levels by concurrency, open-loop levels by request rate.
When a run was benchmarked more than once (``b`` again), each level shows its newest result. Each
figure of each run is compared with the baseline run's: the delta is relative (``+12.5%``).

A benchmark figure is called better or worse only when it is outside the noise: both levels
were measured over two or more trials and Welch's t-test rejects equal means at the 5 % level
with a difference above 2 % (``trial_stats``); each value shows its own 95 % interval
(``125.0 ±1.2``). Otherwise it reads ``within noise ±x%``, or, with a single trial on
either side, ``+x% (1 trial)`` unjudged, and the cell is marked inconclusive so that the view
can offer more trials. The start-up time, one figure per run, is judged by its direction alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from tui.engine.bench.level_figures import AcceptBasis, LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.trial_stats import TrialSpread, welch


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
    levels: Mapping[LevelKey, LevelFigures] = field(default_factory=dict)
    """Per level (concurrency, or request rate), the newest stored figures of that level."""
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
    inconclusive: bool = False
    """More trials could settle it (a side has one trial, or the test did not reject)."""
    interval: str = ""
    """The 95 % half-width of a judged difference (``±1.2%``)."""


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

    @property
    def key(self) -> LevelKey:
        rate = self.figures.request_rate
        if rate is None:
            return LevelKey.closed(self.concurrency)
        return LevelKey(True, rate, self.concurrency)


def _rank(level: BenchLevel) -> tuple[bool, float]:
    """The built-in client's result wins over an engine tool's of the same level (the tool's
    figures are shown beside ours, not compared), then the newest."""
    return level.figures.source is None, level.recorded_at


def newest_levels(levels: Iterable[BenchLevel]) -> dict[int, dict[LevelKey, LevelFigures]]:
    """Per run, per level (concurrency or request rate), the newest level's figures (levels
    without a run are left out)."""
    newest: dict[tuple[int, LevelKey], BenchLevel] = {}
    for level in levels:
        if level.run_id is None:
            continue
        slot = (level.run_id, level.key)
        held = newest.get(slot)
        if held is None or _rank(level) >= _rank(held):
            newest[slot] = level
    runs: dict[int, dict[LevelKey, LevelFigures]] = {}
    for (run_id, key), level in sorted(newest.items()):
        runs.setdefault(run_id, {})[key] = level.figures
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
        for key in sorted(column.levels):
            value = _finite(read(column.levels[key]))
            if value is not None:
                return value
    return None


def run_serving_accept_length(column: RunColumn) -> float | None:
    """The mean accept length the engine's ``/metrics`` showed during the run's lowest
    concurrency level that has one."""
    for key in sorted(column.levels):
        serving = column.levels[key].serving
        value = None if serving is None else _finite(serving.accept_length.mean)
        if value is not None:
            return value
    return None


def _level_figure(read: Callable[[LevelFigures], float | None], key: LevelKey) -> Figure:
    def figure(column: RunColumn) -> float | None:
        level = column.levels.get(key)
        return None if level is None else _finite(read(level))

    return figure


Spread = Callable[[RunColumn], TrialSpread | None]
"""Reads a figure's spread over the trials (None: one trial, or not a benchmark figure)."""


def _level_spread(name: str, key: LevelKey) -> Spread:
    def spread(column: RunColumn) -> TrialSpread | None:
        level = column.levels.get(key)
        return None if level is None else level.spread(name)

    return spread


def _accept_spread(column: RunColumn) -> TrialSpread | None:
    for key in sorted(column.levels):
        found = column.levels[key].spread("accept_length")
        if found is not None:
            return found
    return None


@dataclass(frozen=True, slots=True)
class Metric:
    """A figure to compare: how to read it, how to print it, and which direction is better."""

    name: str
    read: Figure
    digits: int
    higher_is_better: bool
    spread: Spread | None = None
    """Set for benchmark figures: they are judged against their trials' noise."""


def metrics_for(columns: Sequence[RunColumn]) -> list[Metric]:
    """Start-up, accept length, then tok/s, median TTFT and TPOT at every level any run has
    (closed-loop levels by concurrency, then open-loop levels by request rate)."""
    found: list[Metric] = [
        Metric("start-up (s)", lambda c: c.startup_seconds, 1, False),
        Metric("accept length", run_accept_length, 2, True, _accept_spread),
    ]
    if any(run_serving_accept_length(column) is not None for column in columns):
        found.append(Metric("accept /metrics", run_serving_accept_length, 2, True))
    levels = sorted({key for column in columns for key in column.levels})
    for key in levels:
        found.extend(level_metrics(key))
    return found


def level_metrics(key: LevelKey) -> list[Metric]:
    """Output tok/s, median TTFT and median TPOT of one level."""
    at = key.label
    return [
        Metric(f"tok/s @{at}", _level_figure(lambda level: level.output_throughput, key), 1,
               True, _level_spread("output_throughput", key)),
        Metric(f"TTFT ms @{at}", _level_figure(lambda level: level.ttft_ms.median, key), 1,
               False, _level_spread("median_ttft_ms", key)),
        Metric(f"TPOT ms @{at}", _level_figure(lambda level: level.tpot_ms.median, key), 2,
               False, _level_spread("median_tpot_ms", key)),
    ]  # fmt: skip


def delta(value: float, base: float, higher_is_better: bool) -> tuple[str, Change]:
    """``+12.5%`` and whether that is better; an absolute difference when the base is zero."""
    if value == base:
        return "±0%", Change.SAME
    text = f"{value - base:+.2f}" if base == 0 else f"{(value - base) / abs(base) * 100:+.1f}%"
    better = (value > base) == higher_is_better
    return text, Change.BETTER if better else Change.WORSE


Measured = tuple[float | None, TrialSpread | None]


def noise_delta(
    value: TrialSpread | None, base: TrialSpread | None, plain: float, plain_base: float,
    higher_is_better: bool,
) -> Cell:  # fmt: skip
    """The delta of a benchmark figure against its noise (the cell's text left empty)."""
    if value is None or base is None or value.ci95 is None or base.ci95 is None:
        text, _ = delta(plain, plain_base, higher_is_better)
        return Cell("", f"{text} (1 trial)", Change.SAME, True)
    found = welch(value, base)
    spread = f"±{(found.half_width or 0.0) * 100:.1f}%"
    if not found.significant:
        return Cell("", f"within noise {spread}", Change.SAME, True)
    better = (found.relative > 0) == higher_is_better
    text, _ = delta(value.mean, base.mean, higher_is_better)
    return Cell("", text, Change.BETTER if better else Change.WORSE, False, spread)


def _cell(measured: Measured, base: Measured, metric: Metric, is_base: bool) -> Cell:
    value, spread = measured
    if value is None:
        return Cell("-")
    text = f"{value:.{metric.digits}f}"
    if is_base:
        return Cell(text, "baseline")
    if base[0] is None:
        return Cell(text)
    if metric.spread is None:
        change, judgement = delta(value, base[0], metric.higher_is_better)
        return Cell(text, change, judgement)
    found = noise_delta(spread, base[1], value, base[0], metric.higher_is_better)
    return replace(found, text=text)


def compare_rows(
    columns: Sequence[RunColumn], baseline: int, metrics: Sequence[Metric] | None = None
) -> list[CompareRow]:
    """One row per figure; ``baseline`` is the index of the run the others are compared with."""
    if not columns:
        return []
    baseline = min(max(baseline, 0), len(columns) - 1)
    rows = []
    for metric in metrics_for(columns) if metrics is None else metrics:
        spread = metric.spread
        found: list[Measured] = [
            (metric.read(column), None if spread is None else spread(column)) for column in columns
        ]
        base = found[baseline]
        cells = tuple(
            _cell(measured, base, metric, index == baseline) for index, measured in enumerate(found)
        )
        rows.append(CompareRow(metric.name, cells))
    return rows


def inconclusive(rows: Sequence[CompareRow]) -> bool:
    """Whether some benchmark figure could not be told apart from the noise."""
    return any(cell.inconclusive for row in rows for cell in row.cells)
