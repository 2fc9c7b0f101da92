"""``bringup watch`` on a Slurm job, in the real app against the loopback Slurm (the commands run
on this machine, as on a login node): the queue with its reason, both nodes' ranks, node 0's
health, and a job cancelled outside bringup as its own verdict."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.conftest import REPO
from tests.io.slurm_support import processes_of, sim_command, slurm_config
from tests.net import free_port
from tests.slurm import SlurmCluster
from tui.app.bench.bench_state import BenchPhase
from tui.app.launch.launch_actions import ConfirmScreen
from tui.app.monitor.cluster_build import build_job_app
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import WatchSettings
from tui.app.monitor.view_model import Target
from tui.app.widgets.header import timer_line
from tui.cli import main
from tui.commands.watch import _launcher, watch_plan
from tui.config import BenchConfig, load_config
from tui.engine.judge.health import HealthState
from tui.engine.judge.stall import StallPolicy
from tui.engine.startup.vocabulary import Verdict
from tui.io.bench.bench_setup import BenchOptions
from tui.io.slurm.slurm_follow import SlurmFollower
from tui.io.transport.host_session import HostSession, LocalConnector

pytestmark = pytest.mark.slow


@pytest.fixture
def slurm_env(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster


def _config(tmp_path: Path, *sim: str, nodes: int = 2, slurm: str = "") -> Path:
    port = free_port()
    return slurm_config(
        tmp_path / "config.toml", tmp_path / "logs", sim_command(port, *sim), nodes=nodes,
        port=port, extra='expected_startup = "6s"\n', slurm=slurm,
    )  # fmt: skip


async def _bringup(*argv: str) -> int:
    """A command that runs its own event loop, from a test that has one."""
    return await asyncio.to_thread(main, list(argv))


async def _launch(config: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert await _bringup("launch", "--config", str(config)) == 0, capsys.readouterr()
    return capsys.readouterr().out.split("submitted job ")[1].split()[0]


def _args(config: Path, *extra: str) -> argparse.Namespace:
    from tui.commands import watch

    parser = argparse.ArgumentParser()
    watch.register(parser.add_subparsers())
    return parser.parse_args(["watch", "--config", str(config), *extra])


async def _app(
    config: Path, *extra: str, stall: StallPolicy | None = None
) -> tuple[MonitorApp, HostSession]:
    """The app ``bringup watch`` builds for the profile's job (or ``--slurm-job``)."""
    plan = watch_plan(_args(config, *extra), load_config(config))
    assert plan.slurm is not None
    session = HostSession(LocalConnector())
    target = plan.slurm
    follower = await SlurmFollower.attach(
        session, target.job_id, target.log_dir, target.profile, target.nodes
    )
    quick = BenchOptions(BenchConfig(num_prompts=2, input_len=16, output_len=8, concurrency=(1,)))
    settings = WatchSettings(
        Target("big", "local"), "", port=plan.profile.port, bench=quick,
        expected_seconds=plan.profile.expected_startup, stall=stall or StallPolicy(),
    )  # fmt: skip
    launcher = _launcher(plan.profile)
    app = build_job_app(session, follower, follower.node_count, settings, launcher=launcher)
    app.launch_actions.poll_seconds = 0.5
    return app, session


async def _until(
    pilot: Pilot[int], app: MonitorApp, ready: Callable[[], bool], timeout: float = 90
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not ready():
        assert loop.time() < deadline, (_verdict(app), app.last_view and app.last_view.reason)
        await pilot.pause(0.2)


async def test_a_two_node_job_reaches_ready_with_both_nodes_ranks(
    slurm_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    job_id = await _launch(config, capsys)
    app, session = await _app(config)
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, app, lambda: _verdict(app) is Verdict.READY)
            view = app.last_view
            assert view is not None
            assert view.job is not None
            assert view.job.job_id == job_id
            assert view.job.nodes == ("gpu1", "gpu2")
            assert {rank.node for rank in view.snapshot.ranks} == {0, 1}
            assert [node.host for node in view.snapshot.nodes] == ["gpu1", "gpu2"]
            assert view.health.state is HealthState.READY
            assert view.job.queued_seconds is not None
            record = _record(tmp_path, job_id)
            assert record["started_at"].endswith("Z")
            assert record["queued_seconds"] >= 0
            assert _record(tmp_path, None)["started_at"] == record["started_at"]
            bench = app.bench.state
            await _until(pilot, app, lambda: bench.phase in (BenchPhase.DONE, BenchPhase.FAILED))
            assert bench.phase is BenchPhase.DONE, bench.error
            assert all(level.figures and level.figures.completed for level in bench.levels)
            measured, out = await _bench(config)
            report = json.loads(out)
            assert measured == 0, report
            assert report["url"] == f"http://127.0.0.1:{plan_port(config)}"
            await _until(pilot, app, lambda: app.check_action("kill", ()) is True)
            await pilot.press("K")
            await _until(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
            confirm = app.screen
            assert isinstance(confirm, ConfirmScreen)
            assert f"local: job {job_id} running" in confirm.detail
            assert "scancel" in confirm.detail
            await pilot.press("y")
            await _until(pilot, app, lambda: _ended(app))
            assert _verdict(app) is Verdict.STOPPED
            assert app.last_view is not None
            assert app.last_view.reason.startswith(f"job {job_id} CANCELLED")
    finally:
        await session.close()
    assert job_id not in slurm_env.job_ids()
    assert processes_of(tmp_path / "logs") == []


async def _bench(config: Path) -> tuple[int, str]:
    """``bringup bench --profile big`` as its own process (the app owns this one's output)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "bench", "--config", str(config), "--profile", "big",
        "--num-prompts", "2", "--output-len", "8", "--json", "--no-save",
        stdout=asyncio.subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    out, _ = await process.communicate()
    return await process.wait(), out.decode()


def _record(tmp_path: Path, job_id: str | None) -> dict[str, Any]:
    """The job's run record (None: the profile's current one)."""
    name = "big-slurm-current.json" if job_id is None else f"big-{job_id}.slurm.json"
    data = json.loads((tmp_path / "logs" / ".bringup" / name).read_text())
    assert isinstance(data, dict)
    return data


def plan_port(config: Path) -> int:
    port = load_config(config).profile("big").port
    assert port is not None
    return port


def _job_id(app: MonitorApp) -> str | None:
    view = app.last_view
    return None if view is None or view.job is None else view.job.job_id


def _ended(app: MonitorApp) -> bool:
    view = app.last_view
    return view is not None and view.job is not None and view.job.ended


def _verdict(app: MonitorApp) -> Verdict | None:
    return None if app.last_view is None else app.last_view.verdict


async def test_a_job_that_cannot_be_placed_is_queued_with_its_reason(
    slurm_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, nodes=3)
    job_id = await _launch(config, capsys)
    app, session = await _app(config, "--slurm-job", job_id)
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, app, lambda: _verdict(app) is Verdict.QUEUED)
            view = app.last_view
            assert view is not None
            assert view.job is not None
            assert view.job.reason in ("PartitionNodeLimit", "PartitionConfig", "Resources")
            assert view.reason.startswith(f"job {job_id} PENDING")
            line = timer_line(view, 120).plain
            assert line.startswith("queued 00:")
            assert f"job {job_id} PENDING ({view.job.reason})" in line
            await pilot.pause(2.5)  # health polls meanwhile: node 0 is not known yet
            assert app.last_view is not None
            assert app.last_view.health.state is HealthState.UNKNOWN
            assert "not known yet" in app.last_view.health.detail
    finally:
        await session.close()
    assert await _bringup("kill", "--config", str(config)) == 0
    assert job_id not in slurm_env.job_ids()


async def test_a_job_cancelled_outside_bringup_shows_its_end(
    slurm_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "--scenario", "node-hang", "--fail-rank", "1")
    job_id = await _launch(config, capsys)
    app, session = await _app(config)
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, app, lambda: bool(app.last_view and app.last_view.snapshot.ranks))
            slurm_env.run("scancel", job_id)
            await _until(pilot, app, lambda: _ended(app))
            view = app.last_view
            assert view is not None
            assert view.job is not None
            assert view.verdict is Verdict.STOPPED, view.reason
            assert view.reason.startswith(f"job {job_id} CANCELLED")
            assert "last line of node" in view.reason
            assert f"job {job_id} CANCELLED" in timer_line(view, 160).plain
            await _until(pilot, app, lambda: app.check_action("restart", ()) is True)
            await pilot.press("R")
            await _until(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await _until(pilot, app, lambda: app.check_action("kill", ()) is True)
            await _until(pilot, app, lambda: _job_id(app) not in (None, job_id))
            await _until(pilot, app, lambda: bool(app.last_view and app.last_view.snapshot.ranks))
            assert _verdict(app) in (Verdict.QUEUED, Verdict.STARTING, Verdict.STALLED)
    finally:
        await session.close()
    resubmitted = [job for job in slurm_env.job_ids() if job != job_id]
    assert len(resubmitted) == 1
    assert await _bringup("kill", "--config", str(config)) == 0
    assert slurm_env.job_ids() == []
    assert processes_of(tmp_path / "logs") == []


async def test_a_hung_rank_is_stalled_and_the_time_limit_ends_the_job_as_failed(
    slurm_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Node 1's rank hangs in weight loading: the app says STALLED and names it; when Slurm
    ends the job at its one-minute limit the verdict is FAILED with Slurm's TIMEOUT, the
    blamed rank's last line, and L/K/R no longer offer a kill."""
    config = _config(tmp_path, "--scenario", "node-hang", "--fail-rank", "1", slurm='time = "1"\n')
    job_id = await _launch(config, capsys)
    app, session = await _app(config, stall=StallPolicy(factor=1.0, floor=2.0))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(pilot, app, lambda: _verdict(app) is Verdict.STALLED)
            view = app.last_view
            assert view is not None
            assert "weight loading" in view.reason, view.reason
            await _until(pilot, app, lambda: _ended(app), timeout=180)
            view = app.last_view
            assert view is not None
            assert view.job is not None
            assert view.verdict is Verdict.FAILED, view.reason
            assert view.reason.startswith(f"job {job_id} TIMEOUT"), view.reason
            assert "last line of node" in view.reason
            assert f"job {job_id} TIMEOUT" in timer_line(view, 160).plain
    finally:
        await session.close()
    assert job_id not in slurm_env.job_ids()
    assert processes_of(tmp_path / "logs") == []
