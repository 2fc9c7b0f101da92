"""GPU telemetry in the monitor: the simulated nvidia-smi read through a real local session."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.engine.multinode_logs import node_log
from tests.tmux import processes_mentioning
from tests.ui.fakes import FakeClock
from tests.ui.monitor_factory import READY_HEALTH
from tests.ui.pilot_wait import until
from tests.ui.startup_log import up_to
from tui.app.feed.cluster_link import ClusterLink
from tui.app.monitor.cluster_build import build_cluster_app
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import WatchSettings, build_app
from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.view_model import Target
from tui.app.screens.main_screen import rank_cards
from tui.app.widgets.gpu_widgets import GpuSummary, map_lines, summary_line
from tui.app.widgets.rank_panel import RankPanel
from tui.engine.gpu.gpu_state import GpuSnapshot, GpuState
from tui.engine.gpu.gpu_values import GpuSample, NoTelemetry, NoTelemetryKind
from tui.engine.startup.vocabulary import Verdict
from tui.io.gpu.gpu_telemetry import TelemetrySettings
from tui.io.transport.host_session import HostSession, LocalConnector


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
            await until(pilot, lambda: len(app.query(RankPanel)) == 8)
            await until(pilot, lambda: app.state.gpu is not None and len(app.state.gpu.gpus) == 8)
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
            await until(pilot, lambda: len(app.query(RankPanel)) == 8)
            await until(pilot, lambda: app.state.gpu is not None and bool(app.state.gpu.missing))
            app.flush()
            summary = app.screen.query_one(GpuSummary)
            assert "no telemetry" in summary_line(summary.snapshot, summary.now).plain
            assert app.state.link.snapshot.rank("TP0") is not None
    finally:
        await session.close()


# ------------------------------------------------------------------ a server over two hosts


def _tp16_logs(tmp_path: Path) -> list[str]:
    """Both nodes' whole start-up of a TP16 server over two hosts, as files."""
    paths = []
    for node in range(2):
        path = tmp_path / f"node{node}.log"
        path.write_bytes(b"".join(data for _, data in node_log(16, 2, node)))
        paths.append(str(path))
    return paths


def _host(used_mib: float) -> GpuSnapshot:
    gpus = tuple(
        GpuState(GpuSample(index, memory_used_mib=used_mib, memory_total_mib=81920.0))
        for index in range(8)
    )
    return GpuSnapshot(gpus=gpus, seen_at=1000.0, samples=1)


def test_each_rank_reads_the_gpus_of_its_own_nodes_host(tmp_path: Path) -> None:
    clock = FakeClock(1000.0)
    link = ClusterLink(["gpu-a", "gpu-b"], "auto", clock)
    for node, path in enumerate(_tp16_logs(tmp_path)):
        link.node(node).feed(Path(path).read_bytes())
    state = MonitorState(link, Target("tp16", "gpu-a +1"), clock)
    state.set_gpu(_host(1000.0), (0,))
    early = state.view()
    assert {p.rank for p in early.placements} == {f"TP{tp}" for tp in range(8)}
    assert early.node_gpu(1) is None, "node 1's ranks wait for their own host's readings"
    state.set_gpu(_host(7000.0), (1,))
    view = state.view()
    placed = {p.rank: (p.node, p.gpu) for p in view.placements}
    assert placed == {f"TP{tp}": (tp // 8, tp % 8) for tp in range(16)}
    cards = rank_cards(view)
    assert len(cards) == 16
    for card in cards:
        assert card.gpu is not None, card.rank.tag
        assert card.gpu.gpu is not None, card.rank.tag
        used = card.gpu.gpu.sample.memory_used_mib
        assert used == (7000.0 if card.rank.node == 1 else 1000.0), card.rank.tag
    assert view.gpu is not None
    assert (len(view.gpu.gpus), view.gpu.used_mib) == (16, 8 * 1000.0 + 8 * 7000.0)
    assert "TP8 → GPU 0 on node 1" in map_lines(view.placements).plain
    state.set_gpu(GpuSnapshot(missing=NoTelemetry(NoTelemetryKind.NOT_INSTALLED)), (1,))
    view = state.view()
    assert view.gpu is not None
    assert "node 1: nvidia-smi not found" in summary_line(view.gpu, view.now).plain


async def test_a_monitor_over_two_hosts_reads_both_hosts_gpus(tmp_path: Path) -> None:
    """One simulated nvidia-smi per host session, through the cluster monitor's own wiring."""
    paths = _tp16_logs(tmp_path)
    sessions = [HostSession(LocalConnector()) for _ in paths]
    command = _sim_nvidia_smi(tmp_path / "gpus.json")
    settings = WatchSettings(
        target=Target("tp16", "gpu-a +1"),
        log_path=paths[0],
        telemetry=TelemetrySettings(command=command, interval_ms=100),
    )
    app = build_cluster_app(sessions, ["gpu-a", "gpu-b"], paths, settings)
    try:
        async with app.run_test(size=(200, 70)) as pilot:
            await until(pilot, lambda: len(app.query(RankPanel)) == 16)
            await until(
                pilot,
                lambda: (
                    sorted(app.state.gpus) == [0, 1]
                    and all(len(s.gpus) == 8 for s in app.state.gpus.values())
                ),
            )
            app.flush()
            view = app.last_view
            assert view is not None
            assert {(p.rank, p.node, p.gpu) for p in view.placements} == {
                (f"TP{tp}", tp // 8, tp % 8) for tp in range(16)
            }
            cards = rank_cards(view)
            assert all(card.gpu is not None and card.gpu.gpu is not None for card in cards)
            summary = app.screen.query_one(GpuSummary)
            assert "16 GPUs" in summary_line(summary.snapshot, summary.now).plain
    finally:
        for session in sessions:
            await session.close()


def _smi_rates(state: Path) -> list[str]:
    """The ``-lms`` value of every simulated nvidia-smi reading ``state`` now."""
    rates = []
    for line in processes_mentioning(str(state)):
        words = line.split()
        if "-lms" in words:
            rates.append(words[words.index("-lms") + 1])
    return rates


async def test_once_ready_the_gpus_are_read_at_the_serving_rate(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(up_to("ready"))
    state = tmp_path / "gpus.json"
    session = HostSession(LocalConnector())
    settings = WatchSettings(
        target=Target("gpu-test", "local"),
        log_path=str(log),
        telemetry=TelemetrySettings(
            command=_sim_nvidia_smi(state), interval_ms=100, serving_interval_ms=1500
        ),
    )
    app = build_app(session, settings)
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await until(pilot, lambda: _smi_rates(state) == ["100"])
            app.state.set_health(READY_HEALTH)
            await until(pilot, lambda: app.last_view is not None
                         and app.last_view.verdict is Verdict.READY)  # fmt: skip
            await until(pilot, lambda: _smi_rates(state) == ["1500"])
            await until(pilot, lambda: app.state.gpu is not None and len(app.state.gpu.gpus) == 8)
    finally:
        await session.close()
