"""What the serving panel shows: the latest figures, their recent history for the sparklines,
the alarms that hold, or why there are no figures."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tui.engine.bench.level_figures import ServingStats
from tui.engine.bench.serving_level import TimedFigures, serving_stats
from tui.engine.metrics.alarms import ServingAlarm
from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.rank_figures import RankFigures
from tui.io.metrics.metrics_scrape import MetricsMissing, MetricsScraped

HISTORY = 90
"""Intervals kept for the sparklines (three minutes at two seconds)."""
KEPT = 1800
"""Intervals kept for the benchmark's records (an hour at two seconds)."""


@dataclass(slots=True)
class ServingState:
    """The serving view's state; ``version`` moves with every change."""

    figures: ServingFigures | None = None
    ranks: tuple[RankFigures, ...] = ()
    """Each engine's figures at the last scrape, when the labels tell engines apart."""
    history: deque[ServingFigures] = field(default_factory=lambda: deque(maxlen=HISTORY))
    alarms: tuple[ServingAlarm, ...] = ()
    missing: str | None = None
    absent: bool = False
    engine: str | None = None
    idle_every: float | None = None
    """The seconds between scrapes while they are spaced out for an idle server, else None."""
    version: int = 0
    timed: deque[TimedFigures] = field(default_factory=lambda: deque(maxlen=KEPT))
    """Every interval's figures with the time its scrape ended."""
    _series: dict[str, list[float]] = field(default_factory=dict)
    """Each sparkline's values since ``version`` last moved (a line is laid out for several
    widths, each asking for them)."""

    def read(self, report: MetricsScraped) -> None:
        self.figures = report.figures.short
        self.ranks = report.figures.ranks
        if report.figures.interval.seconds > 0:
            self.history.append(report.figures.interval)
            self.timed.append((report.at, report.figures.interval))
        self.alarms = report.active
        self.missing, self.absent = None, False
        self.engine = report.engine
        self.idle_every = report.interval if report.idle else None
        self._moved()

    def stopped(self) -> None:
        """The server left READY: nothing is shown until it serves again (the benchmark's
        intervals are kept)."""
        self.figures, self.alarms, self.missing, self.absent = None, (), None, False
        self.ranks, self.idle_every = (), None
        self.history.clear()
        self._moved()

    def missed(self, report: MetricsMissing) -> None:
        self.missing, self.absent = report.reason, report.absent
        self.idle_every = None
        self._moved()

    def _moved(self) -> None:
        self.version += 1
        self._series.clear()

    def during(self, start: float, end: float) -> ServingStats | None:
        """The figures of the intervals between two monotonic times, for a benchmark level."""
        return serving_stats(self.timed, start, end)

    def series(self, name: str) -> list[float]:
        """The history of one figure (``tok_s``), gaps left out."""
        known = self._series.get(name)
        if known is None:
            values = (getattr(figures, name) for figures in self.history)
            known = self._series[name] = [value for value in values if value is not None]
        return known
