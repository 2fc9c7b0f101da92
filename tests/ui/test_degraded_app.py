"""A READY server answering 503 for a few polls is DEGRADED, then READY again, in the app.

The simulator runs on uvicorn with ``--health-503 3``: once the monitor's test generation was
served, its next three ``/health`` answers are 503, as SGLang's during a long prefill. The app
is the real one (``build_app``: the tail, the health poll through the session, the engine and
the judge) in a headless pilot.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from tests.simserver import FAST, SimFactory
from tests.ui.monitor_factory import (
    HEALTH_503,
    READY_HEALTH,
    at_phase,
    feed_until,
    make_monitor,
)
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import Target
from tui.app.screens.main_screen import rank_cards
from tui.app.widgets.header import TimerLine
from tui.app.widgets.health_badge import VerdictBadge
from tui.app.widgets.rank_panel import RankPanel
from tui.config import MonitorConfig
from tui.engine.launch.launch_record import HowEnded, RunState, RunStatus
from tui.engine.startup.vocabulary import Verdict
from tui.io.transport.host_session import HostSession, LocalConnector

Compare = Callable[..., bool]


def _verdict(app: MonitorApp) -> Verdict:
    return app.screen.query_one(VerdictBadge).verdict


async def _until(
    pilot: Pilot[int], condition: Callable[[], bool], seen: list[Verdict], tries: int = 1500
) -> None:
    """Pause until ``condition`` holds, noting every verdict the badge shows on the way."""
    for _ in range(tries):
        verdict = _verdict(pilot.app)  # type: ignore[arg-type]
        if not seen or seen[-1] is not verdict:
            seen.append(verdict)
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"condition not reached; verdicts seen: {seen}")


async def test_a_503_while_ready_is_degraded_then_ready_again_in_the_app(
    start_sim: SimFactory,
) -> None:
    sim = start_sim(["--tp", "2", "--time-scale", FAST, "--health-503", "3"])
    session = HostSession(LocalConnector())
    settings = WatchSettings(
        target=Target("degraded", "local"), log_path=str(sim.log), port=sim.port, engine="sglang",
        monitor=MonitorConfig(health_interval_serving=1.0),  # every poll sees the blip
    )  # fmt: skip
    app = build_app(session, settings)
    app.alerts.mode = "always"
    seen: list[Verdict] = []
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await _until(pilot, lambda: _verdict(app) is Verdict.READY, seen)
            timer_at_ready = app.state.view().eta.elapsed
            rang = app.alerts.rang
            await _until(pilot, lambda: _verdict(app) is Verdict.DEGRADED, seen)
            view = app.state.view()
            assert view.reason.startswith("health 503 for ")
            assert "since READY, FAILED after 60 s" in view.reason
            timer = app.screen.query_one(TimerLine)
            await _until(pilot, lambda: "degraded: health 503" in timer.render().plain, seen)
            assert view.eta.elapsed == pytest.approx(timer_at_ready)
            assert {card.flag for card in rank_cards(view)} == {"degraded"}
            await pilot.pause(0.2)
            assert any("degraded" in p.render_text() for p in app.screen.query(RankPanel))
            assert app.alerts.rang == rang  # a toast and the title, not the bell
            assert app.alerts.titles[-1].startswith("DEGRADED")
            await _until(pilot, lambda: _verdict(app) is Verdict.READY, seen)
            assert app.state.view().eta.elapsed == pytest.approx(timer_at_ready)
            assert app.alerts.rang == rang
            await session.close()
    finally:
        await session.close()
    ready = seen.index(Verdict.READY)
    assert seen[ready:] == [Verdict.READY, Verdict.DEGRADED, Verdict.READY], seen
    assert Verdict.STARTING not in seen[ready:]


def test_the_degraded_screen(snap_compare: Compare) -> None:
    """The badge, the reason in the timer line and the panels' ``degraded`` flag."""
    app, clock = make_monitor()
    ready = at_phase(app, clock, 8, "ready", health=READY_HEALTH)

    async def run_before(pilot: Pilot[int]) -> None:
        await ready(pilot)
        app.state.set_health(HEALTH_503)
        app.flush()
        clock.now += 4.0
        app.state.touch()
        app.flush()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


async def test_the_header_says_why_a_degraded_server_failed_after_the_grace() -> None:
    app, clock = make_monitor()
    app.state.health_grace = 10.0
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        app.state.set_health(READY_HEALTH)
        assert app.state.view().verdict is Verdict.READY
        app.state.set_health(HEALTH_503)
        app.state.view()
        clock.now += 11.0
        app.state.touch()
        app.flush()
        await pilot.pause()
        assert _verdict(app) is Verdict.FAILED
        shown = app.screen.query_one(TimerLine).render().plain
        assert "failed: health 503 for 11 s, longer than the 10 s grace after READY" in shown


def test_a_launched_run_that_ended_fails_a_degraded_server_at_once() -> None:
    """The launcher's probe (``RunStatusChanged``) reaches the judge through the state."""
    app, clock = make_monitor()
    state = app.state
    state.feed(b"[2026-01-01 00:00:00] The server is fired up and ready to roll!\n")
    state.set_health(READY_HEALTH)
    assert state.view().verdict is Verdict.READY
    state.set_health(HEALTH_503)
    clock.now += 2.0
    assert state.view().verdict is Verdict.DEGRADED
    state.set_runs([RunStatus("gpu-a", RunState.RUNNING, "r1")])
    assert state.view().verdict is Verdict.DEGRADED
    ended = RunStatus("gpu-a", RunState.ENDED, "r1", exit_status=137, how_ended=HowEnded.FAILED)
    state.set_runs([ended])
    view = state.view()
    assert (view.verdict, view.reason) == (
        Verdict.FAILED,
        "the server's process ended after READY (failed)",
    )


async def test_every_verdict_has_its_badge() -> None:
    app, _ = make_monitor()
    async with app.run_test(size=(80, 24)):
        badge = app.screen.query_one(VerdictBadge)
        for verdict in [*Verdict][1:]:  # CONNECTING is the badge's own look
            badge.show(verdict)
            assert verdict.value in str(badge.render())
            assert badge.has_class(f"-{verdict.value.lower()}")
