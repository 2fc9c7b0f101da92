"""Launch, watch and kill a two-node simulated server over SSH, one connection per node."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.io.launch_support import live_group_members
from tests.io.test_multinode_wait import alias_config, named, run_wait
from tests.net import free_port
from tests.sshd import TestServer
from tui.commands.wait import NodeTarget, WaitPlan
from tui.engine.judge.stall import StallPolicy
from tui.engine.launch.launch_plan import LaunchSpec
from tui.io.launch.launch_kill import KillOutcome
from tui.io.launch.launch_node import Node
from tui.io.launch.launch_profile import kill_lines, launch_lines
from tui.io.launch.launcher import Launcher
from tui.io.transport.ssh import SshTransport, connect

HOSTS = ("node0", "node1")
SIM = (
    sys.executable, "-m", "tui.sim", "--tp", "16", "--nnodes", "{nnodes}",
    "--node-rank", "{node_rank}", "--dist-init-addr", "{dist_init_addr}", "--port", "{port}",
    "--time-scale", "0.01", "--scenario", "node-hang", "--fail-rank", "3",
    "--state-file", "{log_dir}/gpu-{node_rank}.json",
)  # fmt: skip


async def test_every_node_is_launched_watched_and_killed(
    ssh_server: TestServer, tmp_path: Path, groups: list[int]
) -> None:
    config = alias_config(ssh_server, list(HOSTS), tmp_path / "ssh_config")
    targets = [ssh_server.target(host=host, config_path=config) for host in HOSTS]
    transports = [SshTransport(await connect(target)) for target in targets]
    try:
        spec = LaunchSpec(
            profile="big", command=SIM, hosts=HOSTS, log_dir=str(tmp_path / "runs"),
            port=free_port(), grace_period=10.0, cwd=str(REPO),
        )  # fmt: skip
        launcher = Launcher(spec, [Node(h, t) for h, t in zip(HOSTS, transports, strict=True)])
        result = await launcher.launch()
        groups.extend(node.identity.pid for node in result.started)
        assert result.ok, launch_lines(result)
        said = [line for line in launch_lines(result) if not line.startswith("note: ")]
        assert [line.split(":")[0] for line in said] == ["node 0 node0", "node 1 node1"]
        logs = [node.plan.paths.log for node in result.started]
        plan = WaitPlan(
            "node0", logs[0], None, "auto", 60.0, json=True, ssh_config=config,
            fail_on_stall=True, expected_startup=6.0, stall=StallPolicy(factor=1.0, floor=1.0),
            more_nodes=(NodeTarget("node1", logs[1]),),
        )  # fmt: skip
        code, records = await run_wait(plan)
        assert (records[-1]["verdict"], code) == ("STALLED", 1), records[-1]
        assert [(r["node"], r["rank"]) for r in named(records, "rank_stalled")] == [(1, "TP11")]
        kills = await launcher.kill()
        assert [(k.host, k.outcome) for k in kills] == [
            ("node0", KillOutcome.STOPPED),
            ("node1", KillOutcome.STOPPED),
        ]
        report = kill_lines(kills)
        assert [line.split(":")[0] for line in report] == ["node0", "node1"]
        assert all("port released" in line for line in report)
        for pgid in groups:
            assert live_group_members(pgid) == []
    finally:
        await asyncio.gather(*(transport.close() for transport in transports))
