"""Multi-node launches: one command per node with its rank, killed together, rolled back together.

Two "hosts" are the local machine with different home folders, and two connections to the
real SSH server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.io.launch_support import EnvRunner, live_group_members
from tests.sshd import TestServer
from tui.engine.launch.launch_plan import LaunchSpec
from tui.io.launch.launch_kill import KillOutcome
from tui.io.launch.launch_node import Node, Runner
from tui.io.launch.launcher import Launcher
from tui.io.transport.ssh import SshTransport, connect

COMMAND = (
    "sh",
    "-c",
    'echo "rank $0 of $1 via $2"; sleep 60',
    "{node_rank}",
    "{nnodes}",
    "{dist_init_addr}",
)


def spec(log_dir: str) -> LaunchSpec:
    return LaunchSpec(
        profile="multi",
        command=COMMAND,
        hosts=("gpu-a", "gpu-b"),
        log_dir=log_dir,
        grace_period=15.0,
    )


async def first_line(path: str) -> str:
    text = await asyncio.to_thread(Path(path).read_text)
    return text.splitlines()[0] if text else ""


async def launch_and_kill(launcher: Launcher, groups: list[int]) -> None:
    result = await launcher.launch()
    assert result.ok, result
    groups.extend(node.identity.pid for node in result.started)
    for node in result.started:
        for _ in range(50):
            if await first_line(node.plan.paths.log):
                break
            await asyncio.sleep(0.1)
    lines = [await first_line(node.plan.paths.log) for node in result.started]
    assert lines == ["rank 0 of 2 via gpu-a:20000", "rank 1 of 2 via gpu-a:20000"]
    kills = await launcher.kill()
    assert [k.outcome for k in kills] == [KillOutcome.STOPPED, KillOutcome.STOPPED]
    assert [k.host for k in kills] == [n.host for n in launcher.nodes]
    for pgid in groups:
        assert live_group_members(pgid) == []


async def test_each_node_gets_its_rank_and_all_are_killed(
    tmp_path: Path, groups: list[int]
) -> None:
    homes = [tmp_path / "a", tmp_path / "b"]
    runners: list[Runner] = [EnvRunner({"HOME": str(home)}) for home in homes]
    launcher = Launcher(spec("logs"), [Node(f"node{k}", r) for k, r in enumerate(runners)])
    await launch_and_kill(launcher, groups)
    assert (homes[1] / "logs" / "multi-node1-latest.log").is_symlink()


async def test_a_node_that_fails_to_start_rolls_back_the_others(
    tmp_path: Path, groups: list[int]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    runners: list[Runner] = [EnvRunner({"HOME": str(tmp_path)}), EnvRunner({"HOME": str(blocker)})]
    launcher = Launcher(spec("logs"), [Node(f"node{k}", r) for k, r in enumerate(runners)])
    result = await launcher.launch()
    groups.extend(node.identity.pid for node in result.started)
    assert not result.ok
    assert len(result.errors) == 1
    assert "node1" in result.errors[0]
    assert "cannot create" in result.errors[0]
    assert [k.outcome for k in result.rolled_back] == [KillOutcome.STOPPED]
    assert all(live_group_members(pgid) == [] for pgid in groups)


async def test_two_ssh_hosts(tmp_path: Path, ssh_server: TestServer, groups: list[int]) -> None:
    transports = [SshTransport(await connect(ssh_server.target())) for _ in range(2)]
    try:
        nodes = [Node(f"ssh{k}", t) for k, t in enumerate(transports)]
        await launch_and_kill(Launcher(spec(str(tmp_path / "logs")), nodes), groups)
    finally:
        await asyncio.gather(*(t.close() for t in transports))
