"""Confidence intervals and Welch's t-test against hand-computed values."""

from __future__ import annotations

import math

import pytest

from tui.engine.bench.level_fields import level_from_fields
from tui.engine.bench.trial_figures import with_more_trials
from tui.engine.bench.trial_stats import TrialSpread, pooled, t_critical, welch


def test_t_table_and_interpolation() -> None:
    assert t_critical(1) == 12.706
    assert t_critical(30) == 2.042
    assert t_critical(35) == pytest.approx((2.042 + 2.021) / 2)
    assert t_critical(10_000) == 1.960


def test_interval_is_student_t_over_the_trials() -> None:
    spread = TrialSpread.of([10.0, 12.0, 14.0])
    assert spread is not None
    assert spread.mean == 12.0
    assert spread.std == pytest.approx(2.0)
    assert spread.ci95 == pytest.approx(4.303 * 2.0 / math.sqrt(3))
    single = TrialSpread.of([5.0])
    assert single is not None
    assert single.ci95 is None
    assert TrialSpread.of([]) is None


def test_welch_calls_only_what_is_outside_the_noise() -> None:
    base = TrialSpread.of([100.0, 101.0, 99.0])
    same = TrialSpread.of([100.5, 99.5, 101.5])
    slower = TrialSpread.of([90.0, 91.0, 89.0])
    assert base is not None
    assert same is not None
    assert slower is not None
    assert not welch(same, base).significant
    found = welch(slower, base)
    assert found.significant
    assert found.relative == pytest.approx(-0.10)
    assert found.half_width is not None
    assert 0 < found.half_width < 0.05
    # Significant but smaller than the 2 % floor: within noise.
    tight = TrialSpread.of([100.0, 100.01, 99.99])
    nudged = TrialSpread.of([101.0, 101.01, 100.99])
    assert tight is not None
    assert nudged is not None
    assert not welch(nudged, tight).significant
    one = TrialSpread.of([50.0])
    assert one is not None
    assert welch(one, base).half_width is None


def test_pooled_spreads_equal_the_spread_of_all_the_trials() -> None:
    first, later = [100.0], [104.0, 98.0, 101.0]
    every = TrialSpread.of(first + later)
    a, b = TrialSpread.of(first), TrialSpread.of(later)
    assert a is not None
    assert b is not None
    assert every is not None
    both = pooled(a, b)
    assert both.n == 4
    assert both.mean == pytest.approx(every.mean)
    assert both.std == pytest.approx(every.std)
    assert both.ci95 == pytest.approx(every.ci95)


def test_more_trials_pool_the_figures_and_add_the_requests() -> None:
    earlier = level_from_fields({"output_throughput": 100.0, "completed": 3, "failed": 1})
    fields = {"output_throughput": 101.0, "completed": 9, "failed": 0,
              "trials": {"output_throughput": {"n": 3, "mean": 101.0, "std": 3.0,
                                               "ci95": 7.45}}}  # fmt: skip
    merged = with_more_trials(earlier, level_from_fields(fields))
    spread = merged.spread("output_throughput")
    assert spread is not None
    assert spread.n == 4
    assert spread.mean == pytest.approx(100.75)
    assert (merged.completed, merged.failed) == (12, 1)
