"""Alarms on the serving figures: each starts once, names its figure, window and threshold,
and starts again only after its condition cleared."""

from __future__ import annotations

from dataclasses import replace

from tui.engine.metrics.alarms import AlarmThresholds, AlarmWatch
from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.metrics_window import WindowedFigures

STEP = 2.0


def _figures(**values: float | None) -> WindowedFigures:
    base = ServingFigures(
        0.0, STEP, tok_s=500.0, generated=1000.0, running=8, queued=0, kv_usage=0.4
    )
    interval = replace(base, **values)  # type: ignore[arg-type]
    short = replace(interval, window_s=10.0, seconds=10.0)
    return WindowedFigures(interval, short, short)


def _run(watch: AlarmWatch, series: list[WindowedFigures], start: float = 0.0) -> list[list[str]]:
    return [
        [alarm.kind for alarm in watch.update(start + STEP * (index + 1), figures)]
        for index, figures in enumerate(series)
    ]


def test_accept_length_collapsing_to_one_raises_the_floor_and_the_drop_alarms() -> None:
    watch = AlarmWatch(AlarmThresholds(accept_baseline_s=6.0))
    steady = [_figures(accept_length=3.0)] * 4
    collapsed = [_figures(accept_length=1.0)] * 2
    raised = _run(watch, [*steady, *collapsed])
    assert raised[:4] == [[], [], [], []]
    assert sorted(raised[4]) == ["accept-drop", "accept-floor"]
    assert raised[5] == []
    drop = watch.active["accept-drop"]
    assert drop.text == (
        "accept length 1.00 over the last 2 s (more than 30% under its baseline 3.00)"
    )
    assert watch.active["accept-floor"].threshold == "below the floor 1.5"


def test_a_drop_of_less_than_the_threshold_raises_nothing_and_recovery_clears() -> None:
    watch = AlarmWatch(AlarmThresholds(accept_baseline_s=4.0, accept_floor=1.2))
    series = [_figures(accept_length=3.0)] * 3 + [_figures(accept_length=2.2)]
    assert _run(watch, series) == [[], [], [], []]
    again = [_figures(accept_length=1.5), _figures(accept_length=3.0), _figures(accept_length=1.5)]
    assert _run(watch, again, start=8.0) == [["accept-drop"], [], ["accept-drop"]]


def test_a_server_that_does_not_speculate_never_raises_accept_alarms() -> None:
    watch = AlarmWatch(AlarmThresholds(accept_baseline_s=2.0))
    assert _run(watch, [_figures(accept_length=1.0)] * 5) == [[]] * 5


def test_tokens_stopped_with_requests_queued_is_a_stall_after_the_threshold() -> None:
    watch = AlarmWatch(AlarmThresholds(stall_s=5.0))
    stopped = _figures(generated=0.0, tok_s=0.0, queued=4)
    raised = _run(watch, [_figures(), stopped, stopped, stopped, stopped])
    assert raised == [[], [], [], ["stall"], []]
    assert watch.active["stall"].threshold == "4 queued, stalled for more than 5 s"
    idle = _figures(generated=0.0, tok_s=0.0, queued=0, running=0)
    assert _run(watch, [idle] * 4, start=10.0) == [[]] * 4


def test_a_full_kv_cache_preemptions_and_a_slow_first_token_raise_their_alarms() -> None:
    watch = AlarmWatch(AlarmThresholds(ttft_p99_slo_s=1.0))
    raised = _run(watch, [_figures(kv_usage=0.97, preemptions=3.0, ttft_p99=2.5)])
    assert sorted(raised[0]) == ["kv-full", "preempting", "ttft-slo"]
    assert watch.active["kv-full"].text == "KV cache use 0.97 over the last 2 s (above 95%)"
    assert watch.active["ttft-slo"].window == "last 10 s"
    assert watch.active["ttft-slo"].threshold == "SLO 1 s"
    assert _run(watch, [_figures(ttft_p99=2.5)], start=2.0) == [[]]
    assert list(watch.active) == ["ttft-slo"]


def test_without_an_slo_a_slow_first_token_raises_nothing() -> None:
    assert _run(AlarmWatch(), [_figures(ttft_p99=30.0)]) == [[]]
