"""A level's ``/metrics`` figures: the intervals inside the level, their mean and p99, the flat
fields they are saved as, and the comparison's row."""

from __future__ import annotations

import pytest

from tui.engine.bench.level_fields import level_fields, level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.bench.level_key import LevelKey
from tui.engine.bench.run_compare import RunColumn, metrics_for, run_serving_accept_length
from tui.engine.bench.serving_level import serving_stats
from tui.engine.metrics.figures import ServingFigures


def _interval(accept: float, tok_s: float) -> ServingFigures:
    return ServingFigures(0.0, 2.0, tok_s=tok_s, accept_length=accept, running=4, ttft_p99=0.2)


TIMED = [(float(at), _interval(1.0 + at / 10, 100.0 * at)) for at in range(2, 22, 2)]


def test_the_intervals_whose_middle_is_inside_the_level_are_summed_up() -> None:
    stats = serving_stats(TIMED, 5.0, 12.0)
    assert stats is not None
    assert stats.scrapes == 4  # ends at 6, 8, 10 and 12 s: middles 5, 7, 9, 11 s
    assert stats.accept_length.mean == pytest.approx(1.9)
    assert stats.tok_s.p99 == pytest.approx(1200 - 200 * 0.03)
    assert stats.running.mean == 4
    assert stats.ttft_p99_ms.mean == pytest.approx(200.0)
    assert stats.kv_usage.mean is None
    assert serving_stats(TIMED, 100.0, 110.0) is None


def test_the_figures_are_saved_and_read_back_and_compared() -> None:
    serving = serving_stats(TIMED, 0.0, 30.0)
    level = LevelFigures(concurrency=4, accept_length=2.9, serving=serving)
    fields = level_fields(level)
    assert fields["metrics_scrapes"] == 10
    assert fields["metrics_accept_length_mean"] == pytest.approx(2.1)
    assert "metrics_kv_usage_p99" in fields
    assert level_from_fields(fields) == level
    assert "metrics_scrapes" not in level_fields(LevelFigures(concurrency=1))
    with_metrics = RunColumn(1, "run 1", 0.0, None, {LevelKey.closed(4): level})
    without = RunColumn(2, "run 2", 0.0, None, {LevelKey.closed(4): LevelFigures(concurrency=4)})
    assert run_serving_accept_length(with_metrics) == pytest.approx(2.1)
    names = [metric.name for metric in metrics_for([with_metrics, without])]
    assert names[:3] == ["start-up (s)", "accept length", "accept /metrics"]
    assert "accept /metrics" not in [m.name for m in metrics_for([without])]
