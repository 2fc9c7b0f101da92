"""The engine's ``/metrics`` figures during one benchmark level, summed up for its record: the
scrape intervals whose middle falls inside the level, and the mean and p99 of each figure."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from tui.engine.bench.level_figures import ServingStats, Stats
from tui.engine.metrics.figures import ServingFigures

TimedFigures = tuple[float, ServingFigures]
"""An interval's figures with the time its scrape ended."""


def _p99(values: Sequence[float]) -> float:
    """Linear interpolation between the closest ranks (NumPy's default)."""
    ordered = sorted(values)
    rank = 0.99 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _stats(
    intervals: Sequence[ServingFigures], read: Callable[[ServingFigures], float | None]
) -> Stats:
    values = [value for value in map(read, intervals) if value is not None]
    if not values:
        return Stats()
    return Stats(mean=sum(values) / len(values), p99=_p99(values))


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000.0


def serving_stats(timed: Sequence[TimedFigures], start: float, end: float) -> ServingStats | None:
    """The summary of the intervals in ``[start, end]`` (None when no scrape fell in it)."""
    inside = [figures for at, figures in timed if start <= at - figures.seconds / 2 <= end]
    if not inside:
        return None
    return ServingStats(
        scrapes=len(inside),
        tok_s=_stats(inside, lambda f: f.tok_s),
        accept_length=_stats(inside, lambda f: f.accept_length),
        running=_stats(inside, lambda f: f.running),
        queued=_stats(inside, lambda f: f.queued),
        kv_usage=_stats(inside, lambda f: f.kv_usage),
        ttft_p99_ms=_stats(inside, lambda f: _ms(f.ttft_p99)),
        itl_p99_ms=_stats(inside, lambda f: _ms(f.itl_p99)),
    )
