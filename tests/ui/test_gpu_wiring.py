"""GPU telemetry in the monitor: the simulated nvidia-smi read through a real local session."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from tests.ui.startup_log import up_to
from tui.app.app import MonitorApp
from tui.app.build import WatchSettings, build_app
from tui.app.model import Target
from tui.app.screens.main import rank_cards
from tui.app.widgets.gpu import GpuSummary, summary_line
from tui.app.widgets.rank_panel import RankPanel
from tui.io.session import HostSession, LocalConnector
from tui.io.telemetry import TelemetrySettings


async def _until(pilot: Pilot[int], condition: Callable[[], bool], tries: int = 400) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached")


def _app(log: Path, command: tuple[str, ...]) -> tuple[MonitorApp, HostSession]:
    session = HostSession(LocalConnector())
    settings = WatchSettings(
        target=Target("gpu-test", "local"),
        log_path=str(log),
        telemetry=TelemetrySettings(command=command, interval_ms=100),
    )
    return build_app(session, settings), session


def _sim_nvidia_smi(state: Path) -> tuple[str, ...]:
    return (sys.executable, "-m", "tui.sim.nvidia_smi", "--state-file", str(state))


async def test_gpu_readings_reach_the_header_and_every_rank(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    app, session = _app(log, _sim_nvidia_smi(tmp_path / "gpus.json"))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, lambda: len(app.query(RankPanel)) == 8)
            await _until(pilot, lambda: app.state.gpu is not None and len(app.state.gpu.gpus) == 8)
            app.flush()
            view = app.last_view
            assert view is not None
            assert [p.gpu for p in view.placements] == list(range(8))
            cards = rank_cards(view)
            assert all(card.gpu is not None and card.gpu.gpu is not None for card in cards)
            summary = app.screen.query_one(GpuSummary)
            assert summary.has_class("-shown")
            assert "8 GPUs" in summary_line(summary.snapshot, summary.now).plain
    finally:
        await session.close()


async def test_a_missing_nvidia_smi_shows_no_telemetry(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("weights"))
    app, session = _app(log, ("bringup-test-no-such-nvidia-smi",))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, lambda: len(app.query(RankPanel)) == 8)
            await _until(pilot, lambda: app.state.gpu is not None and bool(app.state.gpu.missing))
            app.flush()
            summary = app.screen.query_one(GpuSummary)
            assert "no telemetry" in summary_line(summary.snapshot, summary.now).plain
            assert app.state.link.snapshot.rank("TP0") is not None
    finally:
        await session.close()
