"""Apps fed real log bytes through the real engine, at chosen states, with a frozen clock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.pilot import Pilot

from tests.ui.fakes import FakeClock
from tests.ui.startup_log import oom_failure, phases
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState, HealthReading, Target
from tui.engine.judge.health import HealthState

STEP_SECONDS = 30.0
STARTING = HealthReading(HealthState.REFUSED, None, None, "/model_info", None, "refused")
READY_HEALTH = HealthReading(HealthState.READY, 200, 12.0, "/health", True)
HEALTH_503 = HealthReading(HealthState.STARTING, 503, 9.0, "/health")


def make_monitor() -> tuple[MonitorApp, FakeClock]:
    clock = FakeClock(1000.0)
    app = MonitorApp(
        link=EngineAdapter("auto", clock),
        source=ScriptedSource([]),
        target=Target("kimi-k25-tp8", "gpu-h200-1"),
        clock=clock,
    )
    return app, clock


def feed_until(app: MonitorApp, clock: FakeClock, count: int, phase: str) -> None:
    """Feed the start-up log phase by phase, the clock moving between phases."""
    app.state.set_connection(ConnectionState.CONNECTED)
    for name, text in phases(count).items():
        app.state.feed(text.encode())
        clock.now += STEP_SECONDS
        if name == phase:
            return


def at_phase(
    app: MonitorApp,
    clock: FakeClock,
    count: int,
    phase: str,
    health: HealthReading = STARTING,
    failed: bool = False,
) -> Callable[[Pilot[int]], Awaitable[None]]:
    """A ``run_before`` for ``snap_compare`` that puts ``app`` in the given state."""

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()
        feed_until(app, clock, count, phase)
        if failed:
            app.state.feed(oom_failure())
        app.state.set_health(health)
        app.state.touch()
        app.flush()
        await pilot.pause(0.1)
        app.state.touch()
        app.flush()
        await pilot.pause()

    return run_before
