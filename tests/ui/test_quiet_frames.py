"""A quiet READY screen repaints in frames: readings on a timer (GPUs, ``/metrics``) and the
monitor's own access lines wait for the next frame boundary and share its repaint; a log line,
an alarm or the first figures repaint at once; the clock tick comes, and repaints, only when the
panels' stepped clocks turn, and every second again once a clock on screen counts seconds."""

from __future__ import annotations

import time

from textual.pilot import Pilot

from tests.ui.monitor_factory import HEALTH_503, READY_HEALTH, feed_until, make_monitor
from tests.ui.startup_log import line
from tui.app.monitor.clock_tick import EARLY, SECOND, quiet_delay
from tui.app.monitor.monitor_app import (
    BUSY_FLUSH_SECONDS,
    FRAME_MARGIN,
    FRAME_SECONDS,
    MonitorApp,
)
from tui.app.screens.log_view import LogScreen
from tui.app.screens.main_screen import PANEL_CLOCK_STEP
from tui.engine.servers.monitor_traffic import monitor_path
from tui.engine.startup.vocabulary import Verdict

ACCESS = 'INFO:     127.0.0.1:50312 - "GET {path} HTTP/1.1" 200 OK'


def _armed_at_frame(app: MonitorApp) -> bool:
    """The armed repaint runs at a frame boundary (not within the short flush delay)."""
    due = app.flush_due_at
    assert due is not None
    offset = (due - FRAME_MARGIN) % FRAME_SECONDS
    return min(offset, FRAME_SECONDS - offset) < 1e-6


async def _settled(pilot: Pilot[int], app: MonitorApp) -> None:
    """Wait until no repaint is armed (the one armed runs) and the next frame boundary is far
    enough ahead that a lazy repaint armed now is told from a prompt one."""
    while app.flush_due_at is not None:
        await pilot.pause(0.05)
    while FRAME_SECONDS - time.monotonic() % FRAME_SECONDS <= 2 * BUSY_FLUSH_SECONDS:
        await pilot.pause(0.05)


async def _ready(app: MonitorApp) -> None:
    app.state.set_health(READY_HEALTH)
    app.state.touch()
    app.flush()
    assert app.last_view is not None
    assert app.last_view.verdict is Verdict.READY


async def test_the_monitors_own_access_lines_wait_for_the_frame_a_log_line_does_not() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        await _ready(app)
        await _settled(pilot, app)
        own = ACCESS.format(path=monitor_path("/metrics"))
        app.state.feed(line(300, None, own).encode())
        assert app.state.dirty
        assert _armed_at_frame(app)  # the lazy repaint waits for the frame boundary
        app.state.feed(line(301, None, ACCESS.format(path="/v1/models")).encode())
        due = app.flush_due_at
        assert due is not None
        assert due - time.monotonic() <= BUSY_FLUSH_SECONDS


async def test_gpu_readings_wait_for_the_frame_once_ready_not_while_starting() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "weights")
        await _settled(pilot, app)
        app.state.touch(lazy=True)
        due = app.flush_due_at
        assert due is not None
        assert due - time.monotonic() <= BUSY_FLUSH_SECONDS
        feed_until(app, clock, 8, "ready")
        await _ready(app)
        await _settled(pilot, app)
        app.state.touch(lazy=True)
        assert _armed_at_frame(app)


async def test_the_tick_repaints_a_ready_screen_only_when_the_stepped_clocks_turn() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        await _ready(app)
        await pilot.pause(BUSY_FLUSH_SECONDS)
        clock.now = (clock.now // PANEL_CLOCK_STEP + 1) * PANEL_CLOCK_STEP + 0.5
        app.state.touch()
        app.flush()
        await pilot.pause(BUSY_FLUSH_SECONDS)
        shown = app.last_view
        clock.now += 1.0  # the same step: nothing on screen moves
        app._tick()
        assert app.last_view is shown
        assert not app.state.dirty
        clock.now += PANEL_CLOCK_STEP  # the next step
        app._tick()
        assert app.last_view is not shown or app.state.dirty


async def test_a_quiet_ready_screen_ticks_when_its_steps_turn_and_every_second_again_after() -> (
    None
):
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "weights")
        assert app.clock_tick.delay() == SECOND  # the panels count seconds while it starts
        feed_until(app, clock, 8, "ready")
        await _ready(app)
        clock.now = clock.now // PANEL_CLOCK_STEP * PANEL_CLOCK_STEP + 1.0
        assert app.clock_tick.delay() == quiet_delay(clock.now)
        await pilot.pause(SECOND + 0.2)  # the tick armed at the old pace runs, the next waits
        assert _due_in(app) > SECOND + EARLY
        app.state.set_health(HEALTH_503)  # READY no longer: the header counts seconds again
        app.state.touch()
        app.flush()
        assert app.last_view is not None
        assert app.last_view.verdict is not Verdict.READY
        assert _due_in(app) <= SECOND + EARLY


async def test_opening_the_log_view_on_a_quiet_screen_brings_the_tick_forward() -> None:
    app, clock = make_monitor()
    async with app.run_test(size=(160, 48)) as pilot:
        feed_until(app, clock, 8, "ready")
        await _ready(app)
        clock.now = clock.now // PANEL_CLOCK_STEP * PANEL_CLOCK_STEP + 1.0
        await pilot.pause(SECOND + 0.2)
        assert _due_in(app) > SECOND + EARLY
        app.action_open_log()
        await pilot.pause(0.2)
        assert isinstance(app.screen, LogScreen)
        assert _due_in(app) <= SECOND + EARLY


def _due_in(app: MonitorApp) -> float:
    due = app.clock_tick.due_in
    assert due is not None
    return due
