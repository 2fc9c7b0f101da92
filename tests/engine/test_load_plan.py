"""Levels, prompt counts and open-loop arrivals as vLLM draws them."""

from __future__ import annotations

import itertools
import math
import statistics

from tui.engine.bench.load_plan import LoadLevel, arrival_times, default_prompts, levels_of


def test_prompts_default_to_five_per_slot_and_at_least_sixteen() -> None:
    assert default_prompts(LoadLevel(1)) == 16
    assert default_prompts(LoadLevel(16)) == 80
    assert default_prompts(LoadLevel(0, 8.0)) == 80
    assert default_prompts(LoadLevel(0, 0.5)) == 16
    assert default_prompts(LoadLevel(32, math.inf)) == 160


def test_poisson_arrivals_have_the_rate_as_their_mean() -> None:
    times = arrival_times(4000, LoadLevel(0, 8.0, 1.0), seed=3)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert times[0] == 0.0
    assert abs(statistics.fmean(gaps) - 1 / 8) < 0.01
    # Exponential gaps: the standard deviation equals the mean.
    assert abs(statistics.pstdev(gaps) / statistics.fmean(gaps) - 1.0) < 0.1


def test_burstiness_changes_the_spread_not_the_mean() -> None:
    even = arrival_times(4000, LoadLevel(0, 4.0, 4.0), seed=1)
    gaps = [b - a for a, b in itertools.pairwise(even)]
    assert abs(statistics.fmean(gaps) - 0.25) < 0.02
    # Gamma of shape k: coefficient of variation 1 / sqrt(k).
    assert abs(statistics.pstdev(gaps) / statistics.fmean(gaps) - 0.5) < 0.05


def test_closed_loop_and_infinite_rates_send_at_once() -> None:
    assert arrival_times(3, LoadLevel(4), 0) == [0.0, 0.0, 0.0]
    assert arrival_times(3, LoadLevel(0, math.inf), 0) == [0.0, 0.0, 0.0]
    assert arrival_times(5, LoadLevel(0, 2.0), 7) == arrival_times(5, LoadLevel(0, 2.0), 7)


def test_levels_and_labels() -> None:
    assert [lv.label for lv in levels_of((1, 4), (), 1.0, None)] == ["c=1", "c=4"]
    open_loop = levels_of((1,), (2.0, math.inf), 1.0, 16)
    assert [lv.label for lv in open_loop] == ["r=2 c<=16", "r=inf c<=16"]
    assert open_loop[0].slots == 16
    assert levels_of((), (2.0,), 1.0, None)[0].slots is None
