"""Every state the main screen shows, reached by feeding real log bytes through the real engine
and deciding the verdict with the engine's rules."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from tests.ui.monitor_factory import HEALTH_503, READY_HEALTH, feed_until, make_monitor
from tests.ui.startup_log import FAILURES
from tui.app.monitor.alerts import terminal_title
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import HealthReading
from tui.app.widgets.failure_panel import FailurePanel
from tui.app.widgets.header import StatusHeader
from tui.app.widgets.health_badge import VerdictBadge
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.judge.health import HealthState
from tui.engine.startup.vocabulary import FailureKind, Verdict


async def _flush(app: MonitorApp, pilot: Pilot[int]) -> None:
    app.state.touch()
    app.flush()
    await pilot.pause()


def _verdict(app: MonitorApp) -> Verdict:
    return app.screen.query_one(VerdictBadge).verdict


async def test_connecting_before_any_data() -> None:
    app, _ = make_monitor()
    async with app.run_test(size=(120, 40)) as pilot:
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.CONNECTING


@pytest.mark.parametrize(
    ("phase", "label"),
    [
        ("dist", "distributed init"),
        ("weights", "weight loading"),
        ("kv", "KV cache"),
        ("graphs", "CUDA graphs"),
    ],
)
async def test_each_stage_is_shown_on_every_panel(phase: str, label: str) -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, phase)
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        panels = list(app.query(RankPanel))
        assert len(panels) == 8
        assert all(label in panel.render_text() for panel in panels)


async def test_ready_needs_the_line_health_and_a_generation() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        app.state.set_health(HealthReading(HealthState.HEALTHY, 200, 5.0, "/health", None))
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        app.state.set_health(READY_HEALTH)
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.READY


async def test_a_disagreement_is_shown_not_hidden() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        app.state.set_health(HEALTH_503)
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        notes = str(app.screen.query_one(StatusHeader).query_one("#disagreement").render())
        assert "503" in notes


async def test_health_200_before_the_ready_line_is_a_disagreement() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "graphs")
        app.state.set_health(READY_HEALTH)
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        assert app.last_view is not None
        assert any("no ready line" in note for note in app.last_view.disagreements)


@pytest.mark.parametrize("kind", sorted(FAILURES))
async def test_each_failure_kind_is_failed_with_its_excerpt(kind: str) -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "graphs")
        app.state.feed(FAILURES[kind].encode())
        app.state.finish()
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.FAILED
        failure = app.state.link.snapshot.failure
        assert failure is not None
        assert failure.kind is FailureKind(kind)
        panel = app.screen.query_one(FailurePanel)
        assert panel.has_class("-shown")
        title = str(panel.query_one("#failure-title").render())
        assert "FAILED" in title
        if failure.rank and failure.rank.startswith("TP"):
            assert failure.rank in title
            highlighted = [p.tag for p in app.query(RankPanel) if p.has_class("-failing")]
            assert highlighted == [failure.rank]


async def test_a_silent_start_is_stalled() -> None:
    app, clock = make_monitor()
    app.state.expected_seconds = 60.0
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "weights")
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STARTING
        clock.now += 600
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.STALLED
        assert app.last_view is not None
        assert app.last_view.stalled
        flagged = [p.tag for p in app.query(RankPanel) if p.has_class("-lagging")]
        assert flagged


@pytest.mark.parametrize(
    ("mode", "focused", "rings"),
    [("auto", False, 1), ("auto", True, 0), ("always", True, 1), ("never", False, 0)],
)
async def test_the_bell_rings_on_ready_when_not_looking(
    mode: str, focused: bool, rings: int
) -> None:
    app, clock = make_monitor()
    app.alerts.mode = mode  # type: ignore[assignment]
    async with app.run_test(size=(120, 40)) as pilot:
        feed_until(app, clock, 8, "ready")
        await _flush(app, pilot)
        app.app_focus = focused
        app.state.set_health(READY_HEALTH)
        await _flush(app, pilot)
        assert _verdict(app) is Verdict.READY
        assert app.alerts.rang == rings
        if rings:
            assert app.alerts.titles[-1].startswith("READY")


def test_the_terminal_title_carries_no_control_bytes() -> None:
    sequence = terminal_title("READY · evil\x1b]0;x\x07\x9b · bringup")
    body = sequence[len("\x1b]2;") : -1]
    assert "\x1b" not in body
    assert "\x07" not in body
    assert "\x9b" not in body
