"""``bringup watch --local``: a real file followed by the real tail, engine and app."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.ui.pilot_wait import until
from tests.ui.startup_log import phases, up_to
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.view_model import ConnectionState, Target
from tui.app.widgets.rank_panel import RankPanel
from tui.commands.watch import watch_plan
from tui.config import Config
from tui.engine.startup.vocabulary import Stage
from tui.io.transport.host_session import HostSession, LocalConnector


def _app(log: Path) -> tuple[MonitorApp, HostSession]:
    session = HostSession(LocalConnector())
    settings = WatchSettings(target=Target("local-test", "local"), log_path=str(log))
    return build_app(session, settings), session


async def test_a_growing_local_log_drives_the_panels(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    app, session = _app(log)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: len(app.query(RankPanel)) == 8)
            assert app.state.connection is ConnectionState.CONNECTED
            with log.open("ab") as handle:
                handle.write("".join(list(phases().values())[3:]).encode())
            await until(pilot, lambda: app.state.link.snapshot.ready_line_seen)
            await until(pilot, lambda: app.state.log.total > 60)
            tp0 = app.state.link.snapshot.rank("TP0")
            assert tp0 is not None
            assert tp0.stage.order >= Stage.READY.order
            await session.close()
    finally:
        await session.close()


async def test_a_truncated_log_is_marked_and_starts_a_new_run(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("kv"))
    app, session = _app(log)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: len(app.state.link.snapshot.ranks) > 1)
            log.write_bytes(up_to("args"))
            await until(pilot, lambda: bool(app.state.markers))
            assert any("trunc" in marker or "new" in marker for marker in app.state.markers)
            await session.close()
    finally:
        await session.close()


def _args(**values: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "profile": None, "config": None, "host": None, "local": False, "log": None,
        "port": None, "engine": None, "theme": None,
    }  # fmt: skip
    defaults.update(values)
    return argparse.Namespace(**defaults)


def test_watch_needs_a_log_when_no_profile_names_one() -> None:
    with pytest.raises(ValueError, match="--log"):
        watch_plan(_args(local=True), Config())


def test_watch_local_takes_the_default_port_of_the_engine() -> None:
    plan = watch_plan(_args(local=True, log="/var/log/x.log", engine="vllm"), Config())
    assert plan.host is None
    assert plan.profile.port == 8000
    assert plan.log == "/var/log/x.log"


def test_watch_host_keeps_the_host_spec() -> None:
    plan = watch_plan(_args(host="me@gpu-1:2222", log="/srv/s.log"), Config())
    assert plan.host == "me@gpu-1:2222"
    assert plan.profile.port is None, "the start of the log names the engine (watch_port)"
