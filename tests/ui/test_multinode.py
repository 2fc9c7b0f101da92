"""The monitor of a multi-node server: 16 and 32 ranks, grouped by node, one verdict.

The logs are the simulator's own start-ups (``tests.engine.multinode_logs``), fed through the
app's real ingest queue, state and merged engine on a frozen clock, so the screens show exactly
what a user would see at that moment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from tests.engine.multinode_logs import end_of, node_log
from tests.ui.fakes import FakeClock
from tui.app.feed.cluster_link import ClusterLink
from tui.app.feed.cluster_source import ClusterSource, combined
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.feed.stream_items import ChunkReceived, StreamItem
from tui.app.monitor.cluster_build import build_cluster_app
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_build import WatchSettings
from tui.app.monitor.monitor_messages import ConnectionChanged
from tui.app.monitor.view_model import ConnectionState, HealthReading, Target
from tui.app.widgets.node_rows import node_title
from tui.app.widgets.rank_grid import RankGrid
from tui.app.widgets.rank_panel import RankPanel
from tui.commands.watch import watch_plan
from tui.commands.watch_cluster import cluster_nodes
from tui.config import load_config
from tui.engine.judge.health import HealthState
from tui.engine.startup.vocabulary import Outcome, Verdict
from tui.io.transport.host_session import HostSession, LocalConnector

Compare = Callable[..., bool]
SIZES = [(160, 48), (240, 70)]
BASE = 1000.0
READY = HealthReading(HealthState.READY, 200, 12.0, "/health", True)
Logs = list[list[tuple[float, bytes]]]


def make_monitor(nodes: int, messages: list[ChunkReceived] | None = None) -> MonitorApp:
    clock = FakeClock(BASE)
    hosts = [f"gpu-{chr(ord('a') + k)}" for k in range(nodes)]
    return MonitorApp(
        link=ClusterLink(hosts, "auto", clock),
        source=ScriptedSource(messages or []),
        target=Target("kimi-k25-tp16", f"{hosts[0]} +{nodes - 1}"),
        clock=clock,
    )


def feed(app: MonitorApp, logs: Logs, until: float) -> None:
    """Every node's lines up to ``until`` (simulated seconds), each received as it was written."""
    clock = app.state.clock
    assert isinstance(clock, FakeClock)
    steps = sorted(
        ((at, node, data) for node, log in enumerate(logs) for at, data in log if at <= until),
        key=lambda step: (step[0], step[1]),
    )
    for at, node, data in steps:
        clock.now = BASE + at
        app.ingest.apply(ChunkReceived(data, node))
    clock.now = BASE + until


def at_moment(
    app: MonitorApp, logs: Logs, until: float, health: HealthReading | None = None
) -> Callable[[Pilot[int]], Awaitable[None]]:
    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()
        app.state.set_connection(ConnectionState.CONNECTED, "2 hosts")
        feed(app, logs, until)
        if health is not None:
            app.state.set_health(health)
        for _ in range(2):
            app.state.touch()
            app.flush()
            await pilot.pause(0.1)
        app.clear_notifications()  # the READY toast slides in on its own schedule
        await pilot.pause()

    return run_before


def lagging_logs() -> tuple[Logs, float]:
    logs = [node_log(16, 2, k, scenario="node-lag") for k in range(2)]
    begin = next(at for at, data in logs[0] if b"Init parallel begin" in data)
    return logs, begin + 30


def hung_logs() -> tuple[Logs, float]:
    logs = [node_log(32, 4, k, scenario="node-hang", fail_rank=3) for k in range(4)]
    return logs, end_of(logs) + 120


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sixteen_ranks_node_one_late_to_the_rendezvous(
    snap_compare: Compare, size: tuple[int, int]
) -> None:
    app = make_monitor(2)
    logs, moment = lagging_logs()
    assert snap_compare(app, terminal_size=size, run_before=at_moment(app, logs, moment))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_thirty_two_ranks_one_hung_on_node_three(
    snap_compare: Compare, size: tuple[int, int]
) -> None:
    app = make_monitor(4)
    logs, moment = hung_logs()
    assert snap_compare(app, terminal_size=size, run_before=at_moment(app, logs, moment))


def test_thirty_two_ranks_ready(snap_compare: Compare) -> None:
    app = make_monitor(4)
    logs = [node_log(32, 4, k) for k in range(4)]
    run_before = at_moment(app, logs, end_of(logs) + 5, READY)
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)


async def test_node_tagged_chunks_reach_their_node_through_the_app() -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    messages = [ChunkReceived(data, node) for node, log in enumerate(logs) for _, data in log]
    app = make_monitor(2, messages)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        for worker in [w for w in app.workers if w.group == "source"]:
            await worker.wait()  # the script has put its last chunk into the queue
        app.ingest.drain()
        app.state.set_health(READY)
        app.state.set_connection(ConnectionState.CONNECTED)
        app.flush()
        await pilot.pause()
        view = app.last_view
        assert view is not None
        assert view.verdict is Verdict.READY
        assert [n.ready for n in view.snapshot.nodes] == [True, True]
        panels = app.screen.query_one(RankGrid).panels()
        assert len(panels) == 16
        assert {panel.tag for panel in panels} == {f"TP{k}" for k in range(16)}
        titles = [str(title.visual) for title in app.screen.query(".node-title").results(Static)]
        assert titles[0].startswith("node 0 · gpu-a · 8 ranks")
        assert "ready: dummy /health" in titles[1]
        assert isinstance(app.screen.query(RankPanel).first(), RankPanel)


async def test_only_node_one_ready_is_not_ready() -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    app = make_monitor(2)
    async with app.run_test(size=(160, 48)) as pilot:
        feed(app, [logs[0], logs[1][:-1]], end_of(logs))
        app.state.set_health(READY)
        app.state.set_connection(ConnectionState.CONNECTED)
        app.flush()
        await pilot.pause()
        view = app.last_view
        assert view is not None
        assert view.verdict is Verdict.STARTING
        assert [n.ready for n in view.snapshot.nodes] == [True, False]


def test_the_worst_host_is_the_connection_shown() -> None:
    hosts = ["gpu-a", "gpu-b"]
    up = ConnectionChanged(ConnectionState.CONNECTED)
    lost = ConnectionChanged(ConnectionState.LOST, "reset by peer")
    shown = combined({0: up, 1: lost}, hosts)
    assert (shown.state, shown.detail) == (ConnectionState.LOST, "node 1 (gpu-b): reset by peer")
    waiting = combined({0: up}, hosts)
    assert (waiting.state, waiting.detail) == (ConnectionState.CONNECTING, "node 1 (gpu-b)")
    assert combined({0: up, 1: up}, hosts).state is ConnectionState.CONNECTED


def _watch_args(config: Path) -> argparse.Namespace:
    return argparse.Namespace(
        profile="big", config=config, host=None, local=False, log=None, port=None,
        engine=None, theme=None,
    )  # fmt: skip


def test_a_multi_host_profile_is_watched_node_by_node(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[profiles.big]\nhosts = ["gpu-a", "gpu-b"]\nlog = "/l/n{node_rank}.log"\n')
    plan = watch_plan(_watch_args(path), load_config(path))
    assert cluster_nodes(plan) == [("gpu-a", "/l/n0.log"), ("gpu-b", "/l/n1.log")]
    single = watch_plan(_watch_args(path), load_config(path))
    single.log = "/elsewhere.log"
    assert cluster_nodes(single) == []


async def test_every_node_is_followed_through_its_own_session(tmp_path: Path) -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    paths = [tmp_path / f"node{k}.log" for k in range(2)]
    for path, log in zip(paths, logs, strict=True):
        path.write_bytes(b"".join(data for _, data in log))
    sessions = [HostSession(LocalConnector()) for _ in paths]
    settings = WatchSettings(target=Target("big", "gpu-a"), log_path=str(paths[0]))
    app = build_cluster_app(sessions, ["gpu-a", "gpu-b"], [str(p) for p in paths], settings)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            for _ in range(300):
                nodes = app.state.link.snapshot.nodes
                if nodes and all(node.ready for node in nodes):
                    break
                await pilot.pause(0.05)
            snapshot = app.state.link.snapshot
            assert [node.ready for node in snapshot.nodes] == [True, True]
            assert snapshot.outcome is Outcome.READY
            assert app.state.connection is ConnectionState.CONNECTED
    finally:
        for session in sessions:
            await session.close()


def test_hostile_tags_and_hosts_reach_the_node_row_as_plain_text() -> None:
    engine_clock = FakeClock(BASE)
    link = ClusterLink(["gpu-a", "gpu-\x1b[31mb"], "auto", engine_clock)
    link.node(0).feed(b"[2026-01-01 10:00:00 TP0] Init parallel begin.\n")
    link.node(0).feed(b"[2026-01-01 10:00:01 TP0] Load weight begin. avail mem=70 GB\n")
    hostile = b"[2026-01-01 10:00:00 TP[bold]1] Init parallel begin.\x1b]0;owned\x07\n"
    link.node(1).feed(hostile)
    engine_clock.now += 300
    link.node(0).feed(b"[2026-01-01 10:05:00 TP0] Load weight end. type=X, avail mem=9 GB\n")
    summary = link.snapshot.nodes[1]
    title = node_title(1, summary, engine_clock.now)
    assert "TP[bold]1" in title.plain
    assert "\x1b" not in title.plain
    assert "\x07" not in title.plain


async def test_every_node_reads_no_faster_than_the_app_parses(tmp_path: Path) -> None:
    sessions = [HostSession(LocalConnector()) for _ in range(2)]
    paths = [tmp_path / f"node{k}.log" for k in range(2)]
    for k, path in enumerate(paths):
        path.write_bytes(b"".join(b"node %d line %d\n" % (k, n) for n in range(5000)))
    source = ClusterSource(sessions, [str(p) for p in paths], ["gpu-a", "gpu-b"])
    taken: list[StreamItem] = []
    room = asyncio.Event()

    async def put(item: StreamItem) -> None:
        taken.append(item)
        await room.wait()  # the engine is busy: the queue has no room

    reading = asyncio.create_task(source.run(lambda message: None, put))
    try:
        for _ in range(100):
            if len(taken) == 2:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        assert sorted(item.node for item in taken) == [0, 1], "each node waits after one item"
        room.set()
        for _ in range(500):
            got = [b"".join(i.data for i in taken if isinstance(i, ChunkReceived) and i.node == k)
                   for k in range(2)]  # fmt: skip
            if got == [path.read_bytes() for path in paths]:
                break
            await asyncio.sleep(0.02)
        assert got == [path.read_bytes() for path in paths], "every byte, in order, per node"
    finally:
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading
        for session in sessions:
            await session.close()
