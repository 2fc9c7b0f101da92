"""Repeated trials of a level: each figure's mean with a 95 % confidence interval, and whether
two runs differ by more than their noise.

The interval is Student's t: ``mean ± t(0.975, n - 1) · s / √n`` with ``s`` the sample standard
deviation over the trials. Two runs are compared with Welch's t-test (unequal variances,
Welch–Satterthwaite degrees of freedom) at the 5 % level, two-sided; a difference is called better
or worse only when the test rejects equal means **and** it is larger than ``MIN_EFFECT`` (2 %) of
the baseline, so that a deterministic server whose trials barely vary is not called worse for a
fraction of a percent of machine noise. Everything else is "within noise", shown with the ±
half-width of the difference's 95 % interval. One trial has no spread: nothing is concluded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_EFFECT = 0.02
"""The smallest relative difference ever called better or worse."""

# Two-sided 95 % critical values of Student's t by degrees of freedom (1..30, then a few more).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_T975_LARGE = ((40, 2.021), (60, 2.000), (120, 1.980))
_T975_INF = 1.960


def t_critical(df: float) -> float:
    """``t(0.975, df)``, interpolated linearly between tabulated degrees of freedom."""
    if not df > 0:
        return math.inf
    if df <= 1:
        return _T975[0]
    points = [(float(i + 1), t) for i, t in enumerate(_T975)]
    points += [(float(d), t) for d, t in _T975_LARGE]
    for (d0, t0), (d1, t1) in itertools.pairwise(points):
        if df <= d1:
            return t0 + (t1 - t0) * (df - d0) / (d1 - d0)
    return _T975_INF


@dataclass(frozen=True, slots=True)
class TrialSpread:
    """One figure over ``n`` trials: mean, sample standard deviation and 95 % half-width."""

    n: int
    mean: float
    std: float | None
    ci95: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> TrialSpread | None:
        finite = [value for value in values if math.isfinite(value)]
        if not finite:
            return None
        n = len(finite)
        mean = math.fsum(finite) / n
        if n < 2:
            return cls(n, mean, None, None)
        std = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1))
        return cls(n, mean, std, t_critical(n - 1) * std / math.sqrt(n))


def pooled(a: TrialSpread, b: TrialSpread) -> TrialSpread:
    """The spread of ``a``'s and ``b``'s trials together, from their summaries alone.

    The sum of squared deviations of the union is ``(n_a - 1) s_a² + (n_b - 1) s_b² +
    n_a n_b / n · (mean_a - mean_b)²`` (a single trial contributes no deviation of its own).
    """
    n = a.n + b.n
    mean = (a.n * a.mean + b.n * b.mean) / n
    squares = sum((s.n - 1) * s.std**2 for s in (a, b) if s.std is not None)
    squares += a.n * b.n / n * (a.mean - b.mean) ** 2
    if n < 2:
        return TrialSpread(n, mean, None, None)
    std = math.sqrt(squares / (n - 1))
    return TrialSpread(n, mean, std, t_critical(n - 1) * std / math.sqrt(n))


@dataclass(frozen=True, slots=True)
class Difference:
    """``value`` against ``base``: relative change, its 95 % half-width and the verdict."""

    relative: float
    """(value - base) / |base|."""
    half_width: float | None
    """The 95 % half-width of the relative difference (None: a side has one trial)."""
    significant: bool


def welch(value: TrialSpread, base: TrialSpread) -> Difference:
    """Welch's t-test of ``value`` against ``base`` (relative to ``base``'s mean)."""
    scale = abs(base.mean) or 1.0
    relative = (value.mean - base.mean) / scale
    if value.std is None or base.std is None:
        return Difference(relative, None, False)
    a, b = value.std**2 / value.n, base.std**2 / base.n
    se = math.sqrt(a + b)
    if se == 0:
        return Difference(relative, 0.0, abs(relative) > MIN_EFFECT)
    df = (a + b) ** 2 / ((a * a / (value.n - 1)) + (b * b / (base.n - 1)))
    crit = t_critical(df)
    t_stat = (value.mean - base.mean) / se
    significant = abs(t_stat) > crit and abs(relative) > MIN_EFFECT
    return Difference(relative, crit * se / scale, significant)
