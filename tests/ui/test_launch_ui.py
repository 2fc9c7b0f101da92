"""``L``, ``K`` and ``R`` in the app, with real process groups launched on this machine."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from textual.message import Message
from textual.widgets import Button

from tests.io.launch_support import live_group_members, local_launcher
from tests.ui.fakes import FakeClock, FakeLink
from tests.ui.pilot_wait import until
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.launch.launch_actions import ConfirmScreen, LauncherOpener, LaunchReported
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.engine.launch.launch_record import RunState
from tui.io.launch.launcher import Launcher

SLEEPER = ("sh", "-c", "sleep 60")


def opener_for(
    log_dir: Path, command: tuple[str, ...] = SLEEPER, **changes: object
) -> LauncherOpener:
    launcher = local_launcher(log_dir, command, **changes)

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Launcher]:
        yield launcher

    return opened


def make_app(opener: LauncherOpener | None, read_only: bool = False) -> MonitorApp:
    app = MonitorApp(
        link=FakeLink(),
        source=ScriptedSource([]),
        target=Target("t", "localhost"),
        clock=FakeClock(),
        launcher=opener,
        read_only=read_only,
    )
    app.launch_actions.poll_seconds = 0.3
    return app


def current_group(log_dir: Path) -> int:
    return int(next((log_dir / ".bringup").glob("*.pid")).read_text().split()[0])


async def test_without_a_launcher_or_read_only_the_keys_are_gone(tmp_path: Path) -> None:
    for app in (make_app(None), make_app(opener_for(tmp_path), read_only=True)):
        async with app.run_test(size=(120, 30)) as pilot:
            for action in ("launch", "kill", "restart"):
                assert app.check_action(action, ()) is False
            await pilot.press("K")
            await pilot.press("L")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen)
            shown = {active.binding.action for active in app.active_bindings.values()}
            assert shown.isdisjoint({"launch", "kill", "restart"})
    assert not (tmp_path / ".bringup").exists()


async def test_launch_then_kill_asks_first_and_no_changes_nothing(
    tmp_path: Path, groups: None
) -> None:
    seen: list[Message] = []
    app = make_app(opener_for(tmp_path))
    async with app.run_test(size=(120, 30), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.launch_actions.statuses != ())
        assert app.check_action("kill", ()) is None
        assert app.check_action("launch", ()) is True
        assert not app.active_bindings["K"].enabled
        await pilot.press("K")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("L")
        await until(pilot, lambda: app.launch_actions.running and not app.launch_actions.busy)
        pgid = current_group(tmp_path)
        assert app.check_action("launch", ()) is None
        assert app.check_action("kill", ()) is True

        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert isinstance(app.focused, Button)
        assert app.focused.id == "no"
        await pilot.press("enter")
        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmScreen)
        assert live_group_members(pgid) != []

        await pilot.press("K")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(
            pilot, lambda: any(isinstance(m, LaunchReported) and m.action == "kill" for m in seen)
        )
        assert live_group_members(pgid) == []
        report = next(m for m in seen if isinstance(m, LaunchReported) and m.action == "kill")
        assert report.ok
        await until(pilot, lambda: app.check_action("kill", ()) is None)


async def test_a_refused_launch_asks_before_forcing(tmp_path: Path, groups: None) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        app = make_app(opener_for(tmp_path, port=taken.getsockname()[1]))
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: app.launch_actions.statuses != ())
            await pilot.press("L")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            screen = app.screen
            assert isinstance(screen, ConfirmScreen)
            assert f"pid {os.getpid()}" in screen.detail
            await pilot.press("n")
            await until(pilot, lambda: not app.launch_actions.busy)
            assert not (tmp_path / "t-latest.log").exists()


async def test_a_crash_is_noticed_with_its_exit_status(tmp_path: Path, groups: None) -> None:
    app = make_app(opener_for(tmp_path, ("sh", "-c", "sleep 0.5; exit 3")))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await until(pilot, lambda: app.launch_actions.statuses != ())
        await pilot.press("L")
        await until(
            pilot, lambda: any(s.state is RunState.ENDED for s in app.launch_actions.statuses)
        )
        await until(pilot, lambda: any("exited 3" in str(n.message) for n in app._notifications))
        failed = next(n for n in app._notifications if "exited 3" in str(n.message))
        assert failed.severity == "error"
        assert app.check_action("kill", ()) is None
