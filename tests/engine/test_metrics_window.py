"""The long window from its first and last readings while they are steady: the same figures as
adding up every interval, and every interval added up again while a restart is inside it."""

from __future__ import annotations

from tui.engine.metrics.figures import ServingFigures, steady, window_figures
from tui.engine.metrics.metrics_window import LONG_S, MetricsWindow
from tui.engine.metrics.reading import MetricReading

BOUNDS = (0.01, 0.1, 1.0, float("inf"))


def _reading(at: float, step: int, restarted_at: int | None = None) -> MetricReading:
    """A server that generates 40 tokens and answers 3 requests per step (counting again from
    nothing after ``restarted_at``)."""
    n = step if restarted_at is None or step < restarted_at else step - restarted_at + 1
    ttft = ((0.01, float(n)), (0.1, 2.0 * n), (1.0, 3.0 * n), (float("inf"), 3.0 * n))
    return MetricReading(
        at=at,
        gauges={"running": float(step % 5), "kv_usage": 0.01 * (step % 7)},
        counters={"generation_tokens": 40.0 * n, "preemptions": float(n // 10)},
        histograms={"ttft": ttft},
    )


def _every_interval(readings: list[MetricReading], window_s: float) -> ServingFigures:
    """The window's figures with every interval added up, from the last reading at or before
    its start."""
    start = readings[-1].at - window_s
    first = max((i for i, r in enumerate(readings) if r.at <= start), default=0)
    return window_figures(readings[first:], window_s)


def test_a_steady_long_window_has_the_figures_of_its_intervals_added_up() -> None:
    window = MetricsWindow()
    readings = [_reading(2.0 * step, step) for step in range(1, 200)]
    for reading in readings:
        window.add(reading)
    figures = window.over(LONG_S)
    assert figures == _every_interval(readings, LONG_S)
    assert figures.generated == 40.0 * 150
    assert figures.ttft_p50 is not None


def test_a_restart_inside_the_window_is_added_up_interval_by_interval() -> None:
    window = MetricsWindow()
    readings = [_reading(2.0 * step, step, restarted_at=150) for step in range(1, 200)]
    for reading in readings:
        window.add(reading)
    assert not steady(readings[148], readings[149])
    figures = window.over(LONG_S)
    assert figures == _every_interval(readings, LONG_S)
    assert figures.generated == 40.0 * 150


def test_once_the_restart_has_left_the_window_its_ends_give_the_figures_again() -> None:
    window = MetricsWindow(long_s=20.0)
    readings = [_reading(2.0 * step, step, restarted_at=20) for step in range(1, 60)]
    for reading in readings:
        window.add(reading)
    figures = window.over(20.0)
    assert figures == _every_interval(readings, 20.0)
    assert figures.generated == 40.0 * 10
    assert figures.seconds == 20.0
