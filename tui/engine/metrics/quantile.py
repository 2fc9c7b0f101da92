"""Differences of counters and histograms between two readings, restarts included, and a
quantile of a histogram as Prometheus' ``histogram_quantile`` computes it."""

from __future__ import annotations

import math

from tui.engine.metrics.reading import Buckets


def increase(before: float, after: float) -> float:
    """How much a counter grew; a counter that went down was reset (the server restarted),
    so all of its new value is growth."""
    return after - before if after >= before else after


def bucket_increase(before: Buckets, after: Buckets) -> Buckets:
    """Observations per bound added between two readings; a reset histogram (fewer
    observations than before, or other bounds) counts all of its new ones."""
    earlier = dict(before)
    if set(earlier) != {bound for bound, _ in after} or after[-1][1] < before[-1][1]:
        return after
    return tuple((bound, max(count - earlier[bound], 0.0)) for bound, count in after)


def add_buckets(left: Buckets, right: Buckets) -> Buckets:
    """Two increases over consecutive intervals, added (bounds as in ``right`` when they
    differ)."""
    if not left:
        return right
    earlier = dict(left)
    if set(earlier) != {bound for bound, _ in right}:
        return right
    return tuple((bound, count + earlier[bound]) for bound, count in right)


def quantile(q: float, buckets: Buckets) -> float | None:
    """The ``q`` quantile (0..1) of a cumulative histogram, interpolated linearly inside its
    bucket; None without observations. A rank in the infinite bucket gives the highest finite
    bound, as ``histogram_quantile`` does."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank and count > below:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = (bound if math.isfinite(bound) else lower), count
    return lower
