"""``bringup wait`` on multi-node servers: simulated nodes on loopback, followed over real SSH.

One sshd serves every "host": each node gets its own ``ssh_config`` alias, so the wait opens
one connection per node, all at the same time, exactly as with separate machines. Every node
is a real ``python -m tui.sim --nnodes N --node-rank K`` process writing its own log; health
goes to node 0's port only.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.net import free_port
from tests.sshd import TestServer
from tui.commands.wait import NodeTarget, WaitPlan
from tui.commands.wait_watch import wait_for_server
from tui.engine.judge.stall import StallPolicy

SCALE = "0.01"


def alias_config(server: TestServer, names: list[str], path: Path) -> Path:
    """An ``ssh_config`` in which every name in ``names`` is an alias of ``server``."""
    text = server.ssh_config.read_text()
    blocks = [text.replace(f"Host {server.alias}\n", f"Host {name}\n", 1) for name in names]
    path.write_text("".join(blocks))
    return path


class Nodes:
    """Simulated nodes of one server, each with its own log, port and ssh alias."""

    def __init__(self, server: TestServer, tmp: Path, count: int) -> None:
        self.server = server
        self.tmp = tmp
        self.count = count
        self.ports = [free_port() for _ in range(count)]
        self.logs = [tmp / f"node{k}.log" for k in range(count)]
        self.aliases = [f"node{k}" for k in range(count)]
        self.ssh_config = alias_config(server, self.aliases, tmp / "ssh_config")
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, tp: int, *flags: str, only: range | None = None, scale: str = SCALE) -> None:
        env = {**os.environ, "SGLANG_LOG_MS": "1"}
        for k in only if only is not None else range(self.count):
            command = [
                sys.executable, "-m", "tui.sim", "--tp", str(tp), "--nnodes", str(self.count),
                "--node-rank", str(k), "--port", str(self.ports[k]), "--time-scale", scale,
                "--dist-init-addr", f"127.0.0.1:{self.ports[0]}",
                "--log-file", str(self.logs[k]), "--state-file", str(self.tmp / f"gpu{k}.json"),
                *flags,
            ]  # fmt: skip
            self.processes.append(subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL))

    def plan(self, timeout: float = 60.0, **options: Any) -> WaitPlan:
        more = tuple(
            NodeTarget(a, str(log)) for a, log in zip(self.aliases, self.logs, strict=True)
        )
        return WaitPlan(
            self.aliases[0], str(self.logs[0]), self.ports[0], "auto", timeout, json=True,
            ssh_config=self.ssh_config, more_nodes=more[1:], **options,
        )  # fmt: skip

    async def logged(self, node: int, text: str, timeout: float = 60.0) -> None:
        """Wait until node ``node``'s log holds ``text`` (a loaded machine starts slowly)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.logs[node].exists() and text in self.logs[node].read_text(errors="replace"):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"node {node} never logged {text!r}")

    def joined(self, node: int) -> float:
        """When the node's first rank logged ``Init parallel begin`` (log seconds)."""
        for line in self.logs[node].read_text().splitlines():
            if line.endswith("Init parallel begin."):
                stamp = datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S.%f")
                return stamp.timestamp()
        raise AssertionError(f"node {node} never began distributed init")

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


@pytest.fixture
def nodes_of(ssh_server: TestServer, tmp_path: Path) -> Iterator[Any]:
    started: list[Nodes] = []

    def make(count: int) -> Nodes:
        made = Nodes(ssh_server, tmp_path, count)
        started.append(made)
        return made

    yield make
    for made in started:
        made.stop()


async def run_wait(plan: WaitPlan) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    code = await wait_for_server(plan, out)
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


def named(records: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [record for record in records if record["event"] == event]


async def test_two_nodes_one_joining_late_are_ready_only_when_both_are(nodes_of: Any) -> None:
    nodes = nodes_of(2)
    nodes.start(16, "--scenario", "node-lag")
    code, records = await run_wait(nodes.plan())
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("READY", 0), verdict
    joined = {record["node"]: record["after"] for record in named(records, "node_joined")}
    assert joined[0] is None
    # 60 simulated seconds (0.6 s here) plus however much later node 1's process started
    assert joined[1] == pytest.approx(nodes.joined(1) - nodes.joined(0), abs=0.05)
    ready = named(records, "node_ready")
    assert sorted(record["node"] for record in ready) == [0, 1]
    assert records.index(named(records, "all_nodes_ready")[0]) > records.index(ready[-1])
    ranks = {(r["node"], r["rank"]) for r in named(records, "stage_entered")}
    assert {rank for node, rank in ranks if node == 1} >= {f"TP{k}" for k in range(8, 16)}
    assert {rank for node, rank in ranks if node == 0} >= {f"TP{k}" for k in range(8)}
    health = named(records, "health_changed")
    assert health[-1]["state"] == "ready"
    assert health[-1]["generation_ms"] is not None
    connected = {record["host"] for record in named(records, "connected")}
    assert connected == {"node0", "node1"}


async def test_a_late_node_is_named_when_the_wait_gives_up(nodes_of: Any) -> None:
    nodes = nodes_of(2)
    nodes.start(16, "--scenario", "node-lag", only=range(1), scale="0.05")
    await nodes.logged(0, "Init parallel begin.")
    code, records = await run_wait(nodes.plan(timeout=10.0))
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("TIMEOUT", 6), verdict
    assert "node 0: waiting for node 1" in verdict["detail"]
    assert "node 1: no log lines yet" in verdict["detail"]


async def test_a_hang_on_node_one_fails_the_wait_on_that_rank(nodes_of: Any) -> None:
    nodes = nodes_of(2)
    nodes.start(16, "--scenario", "node-hang", "--fail-rank", "3")
    await nodes.logged(1, "TP11] Load weight begin.")  # every rank is up: judge ranks only
    policy = StallPolicy(factor=1.0, floor=1.0)
    plan = nodes.plan(fail_on_stall=True, expected_startup=10.0, stall=policy)
    code, records = await run_wait(plan)
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("STALLED", 1), verdict
    assert verdict["detail"].startswith("node 1 TP11: ")
    stalled = named(records, "rank_stalled")
    assert [(r["node"], r["rank"]) for r in stalled] == [(1, "TP11")]


async def test_four_nodes_of_eight_ranks(nodes_of: Any) -> None:
    nodes = nodes_of(4)
    nodes.start(32, scale="0.004")
    code, records = await run_wait(nodes.plan())
    assert code == 0, records[-1]
    final = named(records, "all_nodes_ready")
    assert [record["nodes"] for record in final] == [4]
    ready = sorted(record["node"] for record in named(records, "node_ready"))
    assert ready == [0, 1, 2, 3]


async def test_an_unreachable_node_ends_the_wait_as_unreachable(
    nodes_of: Any, ssh_server: TestServer
) -> None:
    nodes = nodes_of(2)
    dead = f"Host dead\n    HostName 127.0.0.1\n    Port {free_port()}\n    User nobody\n"
    nodes.ssh_config.write_text(nodes.ssh_config.read_text() + dead)
    plan = nodes.plan(timeout=30.0)
    plan = WaitPlan(**{**_fields(plan), "more_nodes": (NodeTarget("dead", str(nodes.logs[1])),)})
    code, records = await run_wait(plan)
    assert (records[-1]["verdict"], code) == ("UNREACHABLE", 3), records[-1]


def _fields(plan: WaitPlan) -> dict[str, Any]:
    return {name: getattr(plan, name) for name in WaitPlan.__dataclass_fields__}
