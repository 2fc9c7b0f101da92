"""``bringup wait`` for a server that spans several hosts: one session per host, one verdict.

Every node's log is followed at the same time, over one connection per host (nodes that share a
host share its connection), into one ``ClusterEngine``. Health and the test generation go to
node 0 only: the other nodes answer a dummy ``/health``. The exit statuses are those of a
single-host wait, and so is the judge: READY needs every node ready.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tui.commands.wait import WaitEnding, WaitPlan, exit_code
from tui.commands.wait_watch import (
    Decision,
    Report,
    Watcher,
    guarded,
    session_for,
    until_decided,
)
from tui.engine.cluster.cluster_engine import (
    AllNodesReady,
    ClusterEngine,
    ClusterUpdate,
    NodeJoined,
    NodeReady,
)
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.link_events import Chunk, ConnectionEvent, StreamMarker
from tui.io.transport.ssh import ConnectError

_CLUSTER_EVENTS = (NodeJoined, NodeReady, AllNodesReady)
CLOSE_SECONDS = 10.0


class ClusterWatcher(Watcher):
    """A ``Watcher`` whose log is several nodes' logs merged by a ``ClusterEngine``."""

    def __init__(self, plan: WaitPlan, report: Report) -> None:
        super().__init__(plan, report)
        hosts = [node.host or "local" for node in plan.nodes]
        self.cluster = ClusterEngine(hosts, plan.engine, time.monotonic)
        self.snapshot = self.cluster.snapshot

    async def follow_node(self, session: HostSession, node: int, path: str) -> None:
        async for item in session.tail(path):
            if isinstance(item, Chunk):
                self._take_update(self.cluster.feed(node, item.data))
                continue
            self.report.emit(item, node)
            if isinstance(item, StreamMarker) and item.starts_new_file:
                self._take_update(self.cluster.mark_new_run(node, item.detail))

    def _take_update(self, update: ClusterUpdate) -> None:
        for event in update.events:
            own = isinstance(event, _CLUSTER_EVENTS)
            self.report.emit(event, None if own else update.node)
            self.noticed(event)
        self.snapshot = update.snapshot
        self.judge()

    def node_of(self, rank: str | None) -> int | None:
        found = self.snapshot.rank(rank or "")
        return found.node if found is not None else None


async def wait_for_cluster(plan: WaitPlan, report: Report) -> int:
    """The whole multi-node wait; returns the exit status."""
    watcher = ClusterWatcher(plan, report)
    sessions = _sessions(plan, watcher.connection)
    try:
        ending, detail = await within(_watch(sessions, watcher), plan.timeout)
    except asyncio.TimeoutError:
        ending, detail = WaitEnding.TIMEOUT, timeout_detail(watcher)
    finally:
        await close_all(sessions)
    code = exit_code(ending)
    report.verdict(ending, code, detail)
    return code


async def close_all(sessions: list[HostSession]) -> None:
    """Close every host's session; a host that does not answer cannot hold the verdict up."""
    closing = asyncio.gather(*(session.close() for session in set(sessions)))
    try:
        await within(closing, CLOSE_SECONDS)
    except asyncio.TimeoutError:
        return


def _sessions(plan: WaitPlan, listener: Callable[[ConnectionEvent], None]) -> list[HostSession]:
    """One session per node, shared by the nodes on the same host."""
    opened: dict[str | None, HostSession] = {}
    for node in plan.nodes:
        if node.host not in opened:
            opened[node.host] = session_for(plan, node.host)
            opened[node.host].on_event(listener)
    return [opened[node.host] for node in plan.nodes]


async def _watch(sessions: list[HostSession], watcher: ClusterWatcher) -> Decision:
    try:
        await asyncio.gather(*(session.start() for session in set(sessions)))
    except ConnectError as error:
        return WaitEnding.UNREACHABLE, error.message
    plan = watcher.plan
    tasks = [asyncio.create_task(watcher.watch_stalls())]
    for index, (session, node) in enumerate(zip(sessions, plan.nodes, strict=True)):
        if node.log is not None:
            follow = watcher.follow_node(session, index, node.log)
            tasks.append(asyncio.create_task(guarded(watcher, follow)))

    def spawn(port: int) -> None:
        tasks.append(asyncio.create_task(guarded(watcher, watcher.poll(sessions[0], port))))

    watcher.poll_chosen_port(spawn)
    return await until_decided(watcher, tasks)


def timeout_detail(watcher: ClusterWatcher) -> str:
    """Why the wait gave up: the last stage, the health, and what each unready node is doing."""
    snapshot = watcher.snapshot
    stage = snapshot.last_stage.label if snapshot.last_stage is not None else "no stage yet"
    health = watcher.health.state.value if watcher.health is not None else "not polled"
    notes = [f"node {n.node}: {n.note}" for n in snapshot.nodes if not n.ready]
    return "; ".join([f"gave up waiting; last stage: {stage}; health: {health}", *notes])
