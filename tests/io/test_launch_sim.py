"""The simulated server launched, followed to READY, crashed and killed over a real SSH server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.io.launch_support import live_group_members, wait_for_state
from tests.net import free_port
from tests.sshd import TestServer
from tui.engine.launch.launch_plan import LaunchSpec
from tui.engine.launch.launch_preflight import RefusalKind
from tui.engine.launch.launch_record import HowEnded, RunState, parse_record
from tui.engine.startup.vocabulary import Verdict
from tui.io.launch.launch_kill import KillOutcome
from tui.io.launch.launch_node import Node
from tui.io.launch.launcher import Launcher, LaunchResult
from tui.io.transport.ssh import SshTransport, connect

READY_LINE = "The server is fired up and ready to roll!"
SIM = (
    sys.executable,
    "-m",
    "tui.sim",
    "--port",
    "{port}",
    "--tp-size",
    "2",
    "--time-scale",
    "0.02",
)


@pytest.fixture
async def transport(ssh_server: TestServer) -> AsyncIterator[SshTransport]:
    opened = SshTransport(await connect(ssh_server.target()))
    yield opened
    await opened.close()


def sim_launcher(transport: SshTransport, log_dir: Path, port: int, *extra: str) -> Launcher:
    spec = LaunchSpec(
        profile="sim", command=(*SIM, *extra), log_dir=str(log_dir), port=port, grace_period=10.0
    )
    return Launcher(spec, [Node("sshd", transport)])


async def ready(log: Path, port: int, timeout: float = 120.0) -> None:
    """Wait for the engine's ready line and /health answering 200."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with httpx.AsyncClient(timeout=2.0) as client:
        while loop.time() < deadline:
            text = await asyncio.to_thread(log.read_text, errors="replace")
            if READY_LINE in text:
                try:
                    if (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
            await asyncio.sleep(0.2)
    raise AssertionError(f"not ready within {timeout} s")


def started(result: LaunchResult, groups: list[int]) -> int:
    assert result.ok, result
    groups.append(result.started[0].identity.pid)
    return result.started[0].identity.pid


async def test_launch_follow_to_ready_refuse_and_kill(
    tmp_path: Path, transport: SshTransport, groups: list[int]
) -> None:
    port = free_port()
    launcher = sim_launcher(transport, tmp_path, port)
    result = await launcher.launch()
    pgid = started(result, groups)
    await ready(tmp_path / "sim-latest.log", port)
    (status,) = await launcher.status()
    assert len(status.processes) >= 3

    again = await launcher.launch()
    assert {r.kind for r in again.refusals} == {
        RefusalKind.PORT_IN_USE,
        RefusalKind.PREVIOUS_RUN_ALIVE,
    }
    other = sim_launcher(transport, tmp_path / "other", port)
    assert [r.kind for r in (await other.launch()).refusals] == [RefusalKind.PORT_IN_USE]

    (kill,) = await launcher.kill()
    assert kill.outcome in (KillOutcome.STOPPED, KillOutcome.KILLED)
    assert kill.port_released is True
    assert live_group_members(pgid) == []
    record_file = Path(result.started[0].plan.paths.record)
    record = parse_record(await asyncio.to_thread(record_file.read_text), "record")
    assert record.how_ended in (HowEnded.STOPPED, HowEnded.KILLED)
    assert record.ended_at is not None
    assert record.exit_status is not None


async def test_a_rank_crash_is_failed_with_the_exit_status(
    tmp_path: Path, transport: SshTransport, groups: list[int]
) -> None:
    port = free_port()
    launcher = sim_launcher(transport, tmp_path, port, "--scenario", "rank-crash")
    result = await launcher.launch()
    pgid = started(result, groups)
    (status,) = await wait_for_state(launcher, RunState.ENDED, timeout=120.0)
    log = await asyncio.to_thread(Path(result.started[0].plan.paths.log).read_text)
    assert status.verdict is Verdict.FAILED, (status, log[-2000:])
    assert status.exit_status not in (None, 0)
    assert f"exited {status.exit_status}" in status.describe()
    (kill,) = await launcher.kill()
    assert kill.outcome is KillOutcome.ALREADY_ENDED
    assert kill.port_released is True
    assert live_group_members(pgid) == []
    assert kill.status is not None
    assert kill.status.record is not None
    assert kill.status.record.how_ended is HowEnded.FAILED
