"""The app on the simulator's cold-cache scenarios, through Textual's pilot: the log the
simulator writes goes through the real engine and judge on a clock that follows it."""

from __future__ import annotations

from itertools import pairwise

from textual.pilot import Pilot

from tests.engine.multinode_logs import node_log
from tests.ui.monitor_factory import STARTING, make_monitor
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState
from tui.app.widgets.health_badge import VerdictBadge
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.judge.stall import StallPolicy
from tui.engine.startup.vocabulary import Phase, Verdict
from tui.engine.timing.estimate import default_expectations


async def _show(app: MonitorApp, pilot: Pilot[int]) -> None:
    app.state.touch()
    app.flush()
    await pilot.pause()


def _tp0(app: MonitorApp) -> str:
    return next(p for p in app.screen.query(RankPanel) if p.tag == "TP0").render_text()


async def test_a_cold_cache_shows_the_build_with_progress_and_no_stall() -> None:
    app, clock = make_monitor()
    log = node_log(2, 1, 0, scenario="jit-cold-cache")
    start = clock.now
    sixth = next(at for at, data in log if b"start build [module_moe_sorting]" in data)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.set_connection(ConnectionState.CONNECTED)
        app.state.set_health(STARTING)
        seen: set[Verdict] = set()
        for (at, data), (after, _) in pairwise(log):
            if at > sixth + 30:
                break
            clock.now = start + at
            app.state.feed(data)
            for moment in (at, max(at, after - 1.0)):  # each line, and just before the next
                clock.now = start + moment
                await _show(app, pilot)
                seen.add(app.screen.query_one(VerdictBadge).verdict)
        assert "AITER build 5 done (module_moe_sorting)" in _tp0(app)
        assert Verdict.STALLED not in seen
        assert app.screen.query_one(VerdictBadge).verdict is Verdict.STARTING


async def test_a_build_that_hangs_turns_stalled() -> None:
    app, clock = make_monitor()
    log = node_log(2, 1, 0, scenario="jit-hang")
    hung = next(at for at, data in log if b"start build [module_rmsnorm]" in data)
    start = clock.now
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.set_connection(ConnectionState.CONNECTED)
        app.state.set_health(STARTING)
        for at, data in log:
            if at > hung:
                break
            clock.now = start + at
            app.state.feed(data)
        await _show(app, pilot)
        assert app.screen.query_one(VerdictBadge).verdict is Verdict.STARTING
        limit = StallPolicy().threshold(default_expectations(600.0).phase_step(Phase.AITER_BUILD))
        clock.now = start + hung + limit - 10.0
        await _show(app, pilot)
        assert app.screen.query_one(VerdictBadge).verdict is Verdict.STARTING
        clock.now = start + hung + limit + 10.0  # past the phase's bound (no history)
        await _show(app, pilot)
        assert app.screen.query_one(VerdictBadge).verdict is Verdict.STALLED
