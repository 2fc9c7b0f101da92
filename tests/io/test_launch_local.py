"""Launch, kill and restart real process groups on this machine through the local transport."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.io.launch_support import (
    kill_group,
    live_group_members,
    local_launcher,
    wait_for_state,
)
from tui.engine.launch.launch_preflight import RefusalKind
from tui.engine.launch.launch_record import HowEnded, RunState
from tui.engine.startup.vocabulary import Verdict
from tui.io.launch.launch_kill import KillOutcome
from tui.io.launch.launcher import LaunchResult, ReadOnlyError

SLEEPERS = ("sh", "-c", "sleep 60 & sleep 60; wait")


def started_group(result: LaunchResult, groups: list[int]) -> int:
    assert result.ok, result
    pgid = result.started[0].identity.pid
    groups.append(pgid)
    return pgid


def record(log_dir: Path, run_id: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((log_dir / ".bringup" / f"{run_id}.json").read_text())
    return data


async def test_launch_makes_its_own_group_and_kill_leaves_nothing(
    tmp_path: Path, groups: list[int]
) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    result = await launcher.launch()
    pgid = started_group(result, groups)
    assert pgid != os.getpgid(0)
    assert os.getsid(pgid) == pgid
    run_id = result.started[0].plan.run_id
    assert (tmp_path / "t-latest.log").resolve() == tmp_path / f"{run_id}.log"
    assert record(tmp_path, run_id)["pgid"] == pgid
    (status,) = await launcher.status()
    assert status.state is RunState.RUNNING
    assert len(status.processes) >= 3

    (kill,) = await launcher.kill(progress=lambda _line: None)
    assert kill.outcome is KillOutcome.STOPPED
    assert kill.after_grace == ()
    assert live_group_members(pgid) == []
    ended = record(tmp_path, run_id)
    assert ended["how_ended"] == "stopped"
    assert ended["exit_status"] == 143
    assert ended["ended_at"]


async def test_a_group_that_ignores_sigterm_is_killed_after_the_grace_period(
    tmp_path: Path, groups: list[int]
) -> None:
    stubborn = ("sh", "-c", "trap '' TERM; sleep 60 & sleep 60; wait")
    launcher = local_launcher(tmp_path, stubborn, grace_period=0.5)
    pgid = started_group(await launcher.launch(), groups)
    lines: list[str] = []
    (kill,) = await launcher.kill(progress=lines.append)
    assert kill.outcome is KillOutcome.KILLED
    assert {p.name for p in kill.after_grace} >= {"sh", "sleep"}
    assert any("SIGKILL" in line for line in lines)
    assert live_group_members(pgid) == []
    run_id = kill.run_id or ""
    assert record(tmp_path, run_id)["how_ended"] == "killed"
    assert record(tmp_path, run_id)["exit_status"] == 137


async def test_a_crash_is_failed_with_its_exit_status_and_kill_is_harmless(
    tmp_path: Path, groups: list[int]
) -> None:
    launcher = local_launcher(tmp_path, ("sh", "-c", "echo dying; sleep 0.2; exit 3"))
    started_group(await launcher.launch(), groups)
    (status,) = await wait_for_state(launcher, RunState.ENDED)
    assert status.verdict is Verdict.FAILED
    assert status.exit_status == 3
    assert status.describe() == "failed: exited 3"
    (kill,) = await launcher.kill()
    assert kill.outcome is KillOutcome.ALREADY_ENDED
    assert kill.ok
    assert "exited 3" in kill.message
    assert record(tmp_path, kill.run_id or "")["how_ended"] == "failed"


async def test_a_reused_pid_is_never_signalled(tmp_path: Path, groups: list[int]) -> None:
    """A pid file whose leader start time is not the live leader's names a stranger's group."""
    launcher = local_launcher(tmp_path, SLEEPERS)
    result = await launcher.launch()
    pgid = started_group(result, groups)
    pid_file = Path(result.started[0].plan.paths.pid_file)
    original = await asyncio.to_thread(pid_file.read_text)
    pid, start, boot = original.split()
    await asyncio.to_thread(pid_file.write_text, f"{pid} {int(start) - 1} {boot}\n")
    (kill,) = await launcher.kill()
    assert kill.outcome is KillOutcome.ALREADY_ENDED
    assert "now belongs to another process" in kill.message
    assert "nothing left to stop" in kill.message
    assert live_group_members(pgid) != []


def stranger() -> subprocess.Popen[bytes]:
    """An unrelated process that leads its own group, as a reused pid would."""
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


async def test_a_run_whose_pid_went_to_a_stranger_is_closed_and_a_new_launch_starts(
    tmp_path: Path, groups: list[int]
) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    first = await launcher.launch()
    pgid = started_group(first, groups)
    run_id = first.started[0].plan.run_id
    pid_file = Path(first.started[0].plan.paths.pid_file)
    _pid, start, boot = (await asyncio.to_thread(pid_file.read_text)).split()
    kill_group(pgid)  # the run dies without writing its exit status
    other = stranger()
    try:
        await asyncio.to_thread(pid_file.write_text, f"{other.pid} {start} {boot}\n")
        (status,) = await launcher.status()
        assert status.state is RunState.ENDED
        again = await launcher.launch()
        started_group(again, groups)
        assert again.refusals == ()
        assert not again.forced
        ended = record(tmp_path, run_id)
        assert ended["how_ended"] == "vanished"
        assert ended["ended_at"]
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


async def test_kill_leaves_a_stranger_holding_the_pid_alone(
    tmp_path: Path, groups: list[int]
) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    first = await launcher.launch()
    pgid = started_group(first, groups)
    pid_file = Path(first.started[0].plan.paths.pid_file)
    _pid, start, boot = (await asyncio.to_thread(pid_file.read_text)).split()
    kill_group(pgid)
    other = stranger()
    try:
        await asyncio.to_thread(pid_file.write_text, f"{other.pid} {start} {boot}\n")
        (kill,) = await launcher.kill()
        assert kill.outcome is KillOutcome.ALREADY_ENDED
        assert kill.ok
        assert "nothing left to stop" in kill.message
        assert record(tmp_path, first.started[0].plan.run_id)["how_ended"] == "vanished"
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


async def test_launch_is_refused_while_the_previous_run_lives(
    tmp_path: Path, groups: list[int]
) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    first = await launcher.launch()
    started_group(first, groups)
    again = await launcher.launch()
    assert again.started == ()
    assert [r.kind for r in again.refusals] == [RefusalKind.PREVIOUS_RUN_ALIVE]
    assert first.started[0].plan.run_id in again.refusals[0].message
    forced = await launcher.launch(force=True)
    started_group(forced, groups)
    assert forced.forced
    assert record(tmp_path, forced.started[0].plan.run_id)["previous_run"] == (
        first.started[0].plan.run_id
    )


async def test_launch_is_refused_when_the_port_is_taken(tmp_path: Path, groups: list[int]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        launcher = local_launcher(tmp_path, SLEEPERS, port=port)
        result = await launcher.launch()
        assert [r.kind for r in result.refusals] == [RefusalKind.PORT_IN_USE]
        assert f"port {port}" in result.refusals[0].message
        assert f"pid {os.getpid()}" in result.refusals[0].message
        assert not (tmp_path / "t-latest.log").exists()


async def test_a_missing_model_path_is_refused(tmp_path: Path) -> None:
    launcher = local_launcher(tmp_path, ("true", "{model}"), model=str(tmp_path / "no-model"))
    result = await launcher.launch()
    assert [r.kind for r in result.refusals] == [RefusalKind.MODEL_MISSING]


async def test_restart_keeps_the_previous_record(tmp_path: Path, groups: list[int]) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    first = await launcher.launch()
    old_group = started_group(first, groups)
    restarted = await launcher.restart()
    new_group = started_group(restarted.launched, groups)
    assert [k.outcome for k in restarted.killed] == [KillOutcome.STOPPED]
    assert live_group_members(old_group) == []
    assert new_group != old_group
    old_id, new_id = first.started[0].plan.run_id, restarted.launched.started[0].plan.run_id
    assert old_id != new_id
    assert record(tmp_path, old_id)["how_ended"] == HowEnded.STOPPED.value
    assert record(tmp_path, new_id)["previous_run"] == old_id
    assert (tmp_path / "t-latest.log").resolve().name == f"{new_id}.log"


async def test_read_only_switches_everything_off(tmp_path: Path) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS)
    launcher.read_only = True
    with pytest.raises(ReadOnlyError, match="read-only"):
        await launcher.launch()
    with pytest.raises(ReadOnlyError):
        await launcher.kill()
    with pytest.raises(ReadOnlyError):
        await launcher.restart()
    assert await asyncio.to_thread(os.listdir, tmp_path) == []


async def test_kill_without_a_run_says_so(tmp_path: Path) -> None:
    (kill,) = await local_launcher(tmp_path, SLEEPERS).kill()
    assert kill.outcome is KillOutcome.NO_RUN
    assert kill.ok


async def test_a_launch_that_cannot_start_says_why_and_leaves_no_running_run(
    tmp_path: Path,
) -> None:
    launcher = local_launcher(tmp_path, SLEEPERS, cwd=str(tmp_path / "missing"))
    result = await launcher.launch()
    assert not result.ok
    assert "cannot enter the working directory" in result.errors[0]
    (status,) = await launcher.status()
    assert status.state is RunState.ENDED
    assert status.how_ended is HowEnded.NOT_STARTED
    (kill,) = await launcher.kill()
    assert kill.outcome is KillOutcome.ALREADY_ENDED
    assert "never started" in kill.message


async def test_an_ended_run_always_has_its_exit_status(tmp_path: Path) -> None:
    """The group is probed before the status file, so "gone" never races "status written"."""
    for attempt in range(10):
        launcher = local_launcher(tmp_path / str(attempt), ("sh", "-c", "exit 3"))
        assert (await launcher.launch()).ok
        (status,) = await wait_for_state(launcher, RunState.ENDED)
        assert (status.how_ended, status.exit_status) == (HowEnded.FAILED, 3)
