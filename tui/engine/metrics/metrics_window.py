"""The readings of the last minutes, and the figures over the windows the view shows.

``SHORT_S`` (10 s) is what the server does now, ``LONG_S`` (5 min) what it has done lately.
Each new reading also yields the figures of the interval since the one before, kept for the
sparklines and the alarms. The window remembers the last reading that was not steady after the
one before it (a counter or histogram reset, appeared or went away; see
:func:`~tui.engine.metrics.figures.steady`); a window that starts after it is computed from its
first and last readings' counters and histograms.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass

from tui.engine.metrics.figures import ServingFigures, steady, window_figures
from tui.engine.metrics.rank_figures import RankFigures, rank_figures
from tui.engine.metrics.reading import MetricReading

SHORT_S = 10.0
LONG_S = 300.0
HISTORY = 150
"""Intervals kept for the sparklines (five minutes at the default two seconds)."""
LONG_EVERY_S = 30.0
"""The long window's figures are computed again at most this often (they move slowly, and
cost a pass over every reading kept)."""


@dataclass(frozen=True, slots=True)
class WindowedFigures:
    """The figures of the last interval, the short window and the long one."""

    interval: ServingFigures
    short: ServingFigures
    long: ServingFigures
    ranks: tuple[RankFigures, ...] = ()
    """Each engine's or rank's figures at this reading, when the labels tell them apart."""


class MetricsWindow:
    """Readings in arrival order, the oldest dropped once older than the long window."""

    def __init__(self, long_s: float = LONG_S, history: int = HISTORY) -> None:
        self._long_s = long_s
        self._readings: deque[MetricReading] = deque()
        self.intervals: deque[ServingFigures] = deque(maxlen=history)
        """The figures of each interval between two readings, oldest first."""
        self._long: tuple[float, ServingFigures] | None = None
        self._unsteady_at = -math.inf
        """When the last reading was taken that was not steady after the one before it."""

    @property
    def latest(self) -> MetricReading | None:
        return self._readings[-1] if self._readings else None

    def add(self, reading: MetricReading) -> WindowedFigures:
        """Take a reading (clocks that went back start the window again) and return the
        figures it makes."""
        if self._readings and reading.at <= self._readings[-1].at:
            self._readings.clear()
            self._long = None
        if self._readings and not steady(self._readings[-1], reading):
            self._unsteady_at = reading.at
        self._readings.append(reading)
        while len(self._readings) > 2 and self._readings[1].at <= reading.at - self._long_s:
            self._readings.popleft()
        pair = list(itertools.islice(self._readings, max(len(self._readings) - 2, 0), None))
        interval = window_figures(pair, 0.0)
        before = pair[0].groups if len(pair) > 1 else None
        ranks = rank_figures(before, reading.groups, interval.seconds)
        if len(self._readings) > 1:
            self.intervals.append(interval)
        if self._long is None or reading.at - self._long[0] >= LONG_EVERY_S:
            self._long = (reading.at, self.over(self._long_s))
        return WindowedFigures(interval, self.over(SHORT_S), self._long[1], ranks)

    def over(self, window_s: float) -> ServingFigures:
        """The figures of the last ``window_s`` seconds: from the last reading taken at or
        before the window's start (the oldest one kept when none is) to the newest."""
        readings = self._readings
        if not readings:
            return ServingFigures(window_s, 0.0)
        start = readings[-1].at - window_s
        first = 0
        for back, reading in enumerate(reversed(readings)):
            if reading.at <= start:
                first = len(readings) - 1 - back
                break
        kept = list(itertools.islice(readings, first, None))
        return window_figures(kept, window_s, self._unsteady_at <= kept[0].at)
