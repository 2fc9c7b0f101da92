"""Robust summaries of a handful of durations: median, p10 and p95 without the outliers.

Start-up histories are short (three to twenty runs) and dirty: one run waited for a cold disk
cache, another was restarted by hand. A plain p95 of five values is the maximum, so one bad run
would widen every estimate. Values far from the median (more than ``OUTLIER_Z`` robust standard
deviations, estimated from the median absolute deviation) are set aside first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

OUTLIER_Z = 3.5
# The robust scale never drops below this share of the median, so that identical past runs do
# not turn a 2 % difference into an "outlier".
MIN_RELATIVE_SCALE = 0.05
_MAD_TO_SIGMA = 1.4826


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of sorted values, linearly interpolated."""
    if not ordered:
        raise ValueError("percentile of no values")
    position = (len(ordered) - 1) * min(max(q, 0.0), 100.0) / 100.0
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def without_outliers(values: Iterable[float]) -> list[float]:
    """The values (sorted) minus those far from the median; three or fewer are all kept."""
    ordered = sorted(v for v in values if math.isfinite(v))
    if len(ordered) <= 3:
        return ordered
    middle = percentile(ordered, 50)
    deviations = sorted(abs(v - middle) for v in ordered)
    scale = max(_MAD_TO_SIGMA * percentile(deviations, 50), MIN_RELATIVE_SCALE * abs(middle))
    if scale <= 0:
        return ordered
    return [v for v in ordered if abs(v - middle) <= OUTLIER_Z * scale]


@dataclass(frozen=True, slots=True)
class Spread:
    """A duration in seconds as a usual value and a plausible range (p10 to p95)."""

    low: float
    median: float
    high: float

    @classmethod
    def of(cls, values: Iterable[float]) -> Spread:
        """Median, p10 and p95 of ``values`` after dropping outliers (``ValueError`` if empty)."""
        kept = without_outliers(values)
        if not kept:
            raise ValueError("no finite values to summarise")
        return cls(percentile(kept, 10), percentile(kept, 50), percentile(kept, 95))

    @classmethod
    def exactly(cls, seconds: float) -> Spread:
        return cls(seconds, seconds, seconds)

    def scaled(self, factor: float) -> Spread:
        return Spread(self.low * factor, self.median * factor, self.high * factor)

    def __add__(self, other: Spread) -> Spread:
        return Spread(self.low + other.low, self.median + other.median, self.high + other.high)

    @property
    def label(self) -> str:
        """``"6-8 min"``, ``"about 7 min"`` or ``"40-55 s"``: what a person wants to read."""
        return range_label(self.low, self.high)


def range_label(low: float, high: float) -> str:
    """A rounded range of seconds: in 5 s steps below 90 s, in whole minutes above."""
    low, high = max(low, 0.0), max(high, low, 0.0)
    if high < 90:
        lo, hi = 5 * math.floor(low / 5), max(5 * math.ceil(high / 5), 5)
        return f"about {hi} s" if hi - lo <= 5 else f"{lo}-{hi} s"
    lo, hi = math.floor(low / 60), math.ceil(high / 60)
    if high - low < 60:
        return f"about {max(round((low + high) / 120), 1)} min"
    return f"{lo}-{hi} min"
