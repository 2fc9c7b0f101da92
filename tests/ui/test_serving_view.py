"""The serving view under the header: figures with sparklines at 80x24 and 200x50, an alarm
(toast, bell, title), and the decode lines' figures when the server has no ``/metrics``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from textual.pilot import Pilot

from tests.ui.monitor_factory import READY_HEALTH, at_phase, make_monitor
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.serving.serving_messages import MetricsMissed, MetricsRead
from tui.app.serving.serving_state import ServingState
from tui.app.serving.serving_text import figures_line, spark
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.metrics.alarms import ServingAlarm
from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.metrics_window import WindowedFigures
from tui.engine.metrics.rank_figures import RankFigures
from tui.io.metrics.metrics_scrape import MetricsMissing, MetricsScraped

Compare = Callable[..., bool]
FLOOR = ServingAlarm("accept-floor", "accept length", 1.0, "last 2 s", "below the floor 1.5")


def _report(
    step: int,
    alarms: tuple[ServingAlarm, ...] = (),
    started: bool = True,
    ranks: tuple[RankFigures, ...] = (),
) -> MetricsScraped:
    accept = 3.0 - (step % 5) * 0.1
    interval = ServingFigures(
        0.0, 2.0, tok_s=1200.0 + 40 * step, running=4 + step % 3, queued=step % 2,
        kv_usage=0.2 + 0.01 * step, prefix_hit_rate=0.25, accept_length=accept,
        acceptance_rate=(accept - 1) / 3, preemptions=0.0, ttft_p50=0.05, ttft_p99=0.2,
        itl_p50=0.008, itl_p99=0.02, generated=2400.0,
    )  # fmt: skip
    short = replace(interval, window_s=10.0, seconds=10.0)
    return MetricsScraped(
        2.0 * step,
        "sglang",
        WindowedFigures(interval, short, short, ranks),
        alarms if started else (),
        alarms,
        3.0,
        2.0,
    )


def _serving(
    app: MonitorApp, before: Callable[[Pilot[int]], Awaitable[None]], alarm: bool = False
) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        await before(pilot)
        for step in range(20):
            app.serving.post_message(MetricsRead(_report(step)))
        if alarm:
            app.serving.post_message(MetricsRead(_report(20, (FLOOR,))))
        await pilot.pause(0.1)
        app.flush()  # the frame that shows the later scrapes of a quiet READY screen
        await pilot.pause(0.1)

    return run_before


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_serving_figures(snap_compare: Compare, size: tuple[int, int]) -> None:
    app, clock = make_monitor()
    before = at_phase(app, clock, 8, "ready", health=READY_HEALTH)
    assert snap_compare(app, terminal_size=size, run_before=_serving(app, before))


def _per_rank(
    app: MonitorApp, before: Callable[[Pilot[int]], Awaitable[None]]
) -> Callable[[Pilot[int]], Awaitable[None]]:
    """Every scheduler's own figures (SGLang's ``tp_rank`` label, one value per rank)."""

    async def run_before(pilot: Pilot[int]) -> None:
        await before(pilot)
        ranks = tuple(
            RankFigures((("TP", tp),), 150.0 + tp, 4 + tp % 2, tp % 3, 0.1 * tp) for tp in range(8)
        )
        app.serving.post_message(MetricsRead(_report(1, ranks=ranks)))
        await pilot.pause(0.1)
        app.flush()  # the rank panels take their share with the app's repaint
        await pilot.pause(0.1)

    return run_before


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_serving_figures_per_rank(snap_compare: Compare, size: tuple[int, int]) -> None:
    app, clock = make_monitor()
    before = at_phase(app, clock, 8, "ready", health=READY_HEALTH)
    assert snap_compare(app, terminal_size=size, run_before=_per_rank(app, before))


async def test_rank_panels_show_their_engines_figures_and_drop_them_when_serving_ends() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(80, 24)) as pilot:
        await _per_rank(app, at_phase(app, clock, 8, "ready", health=READY_HEALTH))(pilot)
        texts = {panel.tag: panel.render_text() for panel in app.screen.query(RankPanel)}
        assert "tok/s 153  run 5  queue 0" in texts["TP3"]
        assert "\n" not in texts["TP3"].split("\n")[1]
        app.serving.state.stopped()
        app.state.touch()
        app.flush()
        await pilot.pause(0.1)
        assert "tok/s" not in app.screen.query(RankPanel).first().render_text()


def test_serving_alarm(snap_compare: Compare) -> None:
    app, clock = make_monitor()
    before = at_phase(app, clock, 8, "ready", health=READY_HEALTH)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_serving(app, before, True))


async def test_an_alarm_rings_notifies_and_sets_the_title() -> None:
    app, _ = make_monitor()
    app.alerts.mode = "always"
    async with app.run_test(size=(100, 30)) as pilot:
        app.serving.post_message(MetricsRead(_report(1, (FLOOR,))))
        await pilot.pause(0.1)
        assert app.alerts.rang == 1
        assert app.alerts.titles[-1].startswith("ALARM accept length 1.00 over the last 2 s")
        notes = [note.message for note in app._notifications]
        assert any("below the floor 1.5" in note for note in notes)
        app.serving.post_message(MetricsRead(_report(2, (FLOOR,), started=False)))
        await pilot.pause(0.1)
        assert app.alerts.rang == 1  # the alarm still holds: only its start rings


async def test_without_metrics_the_view_says_so_and_shows_the_decode_lines() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(120, 30)) as pilot:
        await at_phase(app, clock, 8, "ready", health=READY_HEALTH)(pilot)
        missing = MetricsMissing("/metrics answered 404: the server exports no metrics", True)
        app.serving.post_message(MetricsMissed(missing))
        await pilot.pause(0.1)
        status = app.serving.query_one("#serving-status")
        text = status.render().plain  # type: ignore[union-attr]
        assert text.startswith("/metrics answered 404: the server exports no metrics")


def test_a_narrow_line_drops_sparklines_then_cells_and_never_wraps() -> None:
    state = ServingState()
    for step in range(10):
        state.read(_report(step))
    wide, narrow = figures_line(state, 200), figures_line(state, 60)
    assert "▁" in wide.plain or "█" in wide.plain
    assert narrow.cell_length <= 60
    assert "\n" not in narrow.plain
    assert narrow.plain.startswith("serving  tok/s 1")
    assert "█" not in narrow.plain
    assert spark([0.0, 1.0, 2.0], 2) == "▁█"
    assert spark([5.0, 5.0], 4) == "▄▄"


def test_the_serving_line_says_when_the_scrapes_are_spaced_out() -> None:
    state = ServingState()
    state.read(_report(1))
    assert figures_line(state, 80).plain.startswith("serving  tok/s 1")
    state.read(replace(_report(2), interval=10.0, idle=True))
    line = figures_line(state, 80)
    assert line.plain.startswith("serving idle · every 10 s  tok/s 1")
    assert line.cell_length <= 80
    assert "\n" not in line.plain
    state.read(_report(3))
    assert "idle" not in figures_line(state, 80).plain


async def test_leaving_ready_hides_the_figures() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(120, 30)) as pilot:
        await at_phase(app, clock, 8, "ready", health=READY_HEALTH)(pilot)
        panel = app.serving
        panel.post_message(MetricsRead(_report(1)))
        await pilot.pause(0.1)
        assert panel.has_class("-shown")

        async def scraping() -> None:
            await asyncio.sleep(60)

        panel.worker = panel.run_worker(scraping, group="serving")
        panel.stop()
        await pilot.pause(0.1)
        assert not panel.has_class("-shown")
        assert panel.state.figures is None
        assert len(panel.state.timed) == 1  # kept for the benchmark's records
