"""A failure or a stall makes the app read the host's kernel log over the node's session; the
simulator's fake ``dmesg`` puts an Xid in it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.engine.multinode_logs import node_log
from tests.ui.fakes import FakeClock
from tests.ui.monitor_factory import STARTING, feed_until
from tests.ui.pilot_wait import until
from tests.ui.startup_log import oom_failure
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import ConnectionState, Target
from tui.io.transport.host_session import HostSession, LocalConnector
from tui.sim.fake_dmesg import install


@pytest.fixture
async def session() -> AsyncIterator[HostSession]:
    opened = HostSession(LocalConnector())
    await opened.start()
    yield opened
    await opened.close()


def _app(session: HostSession, dmesg: Path) -> tuple[MonitorApp, FakeClock]:
    clock = FakeClock(1000.0)
    app = MonitorApp(
        link=EngineAdapter("auto", clock), source=ScriptedSource([]),
        target=Target("kimi", "gpu-a"), clock=clock, hosts=[session],
    )  # fmt: skip
    app.kernel_check.commands = (("bringup-no-such-journalctl", "-k"), (str(dmesg),))
    return app, clock


def _hardware(app: MonitorApp) -> str:
    return str(app.screen.query_one("#failure-hardware", Static).render())


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--xid", "79"], "Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus"),
        (
            ["--denied"],
            "bringup-no-such-journalctl -k: not installed; dmesg: read kernel buffer failed: "
            "Operation",
        ),
    ],
    ids=["xid", "not-permitted"],
)
async def test_a_failure_shows_the_kernel_log(
    session: HostSession, tmp_path: Path, args: list[str], expected: str
) -> None:
    app, clock = _app(session, install(tmp_path / "bin", args))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        feed_until(app, clock, 8, "graphs")
        app.state.set_health(STARTING)
        app.state.feed(oom_failure())
        app.state.touch()
        app.flush()
        await until(pilot, lambda: expected in _hardware(app))
        assert app.kernel_check.report is not None


async def test_a_stalled_rank_brings_the_kernel_log_as_a_notification(
    session: HostSession, tmp_path: Path
) -> None:
    app, clock = _app(session, install(tmp_path / "bin", ["--xid", "79"]))
    log = node_log(2, 1, 0, scenario="jit-hang")
    hung = next(at for at, data in log if b"start build [module_rmsnorm]" in data)
    start = clock.now
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        app.state.set_connection(ConnectionState.CONNECTED)
        app.state.set_health(STARTING)
        for at, data in log:
            if at > hung:
                break
            clock.now = start + at
            app.state.feed(data)
        clock.now = start + hung + 400.0  # past the phase's bound (360 s without history)
        app.state.touch()
        app.flush()
        await until(pilot, lambda: any("Xid 79 on PCI:0000:3b:00" in note.message
                                        for note in app._notifications))  # fmt: skip
