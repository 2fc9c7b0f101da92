"""One start-up model for a server that spans several hosts (SGLang ``--nnodes``).

Each node's log goes through its own ``LogEngine`` (``node=k``, node 0 first, as the profile
lists the hosts); ``ClusterEngine`` merges their snapshots into one ``Snapshot`` that the
verdict, the stall rules, ``bringup wait`` and the app read as if it were one server:

- ranks: every node's ranks, node 0's first, each with its ``node``; a tag that an earlier node
  already printed is shown as ``n<k>:<tag>`` so that tags stay unique;
- a node is ready when its log says so: the API node's ready line (node 0), or, on every other
  node, SGLang's ``Dummy health check server started`` line (its schedulers are ready; it
  answers a dummy ``/health``). vLLM's other nodes log no such line: they count as ready with
  the API node. A ready node's ranks show ``ready`` (``serving`` once the API node serves);
- the server is READY only when every node is ready; it FAILED when any node failed (the first
  failure seen wins); it stopped when any node stopped;
- durations across hosts use log times moved onto the monitor's clock (``cluster_nodes``), so
  a host whose clock is off does not stretch or shrink the start-up;
- ``Snapshot.nodes`` holds one ``NodeSummary`` per node: its slowest stage, whether it reached
  the rendezvous, since when it is behind, its clock skew and one sentence for people.

The merge itself is in ``cluster_merge``; the node-level rules in ``cluster_nodes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tui.engine.cluster.cluster_merge import merge, node_is_ready
from tui.engine.cluster.cluster_nodes import SKEW_NOTICE, ClockOffsets, joined_at
from tui.engine.logs.log_engine import LogEngine, Update
from tui.engine.logs.log_line import LogLine
from tui.engine.servers import registry
from tui.engine.startup import log_events as ev
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome


@dataclass(frozen=True, slots=True)
class NodeJoined(ev.Event):
    """A node's ranks reached the distributed-init rendezvous; ``after`` is how many seconds
    after node 0, which hosts it (None for node 0 itself; reported once node 0 is there)."""

    node: int
    after: float | None


@dataclass(frozen=True, slots=True)
class NodeReady(ev.Event):
    """A node finished its start-up (ready line, or dummy health server on other nodes)."""

    node: int


@dataclass(frozen=True, slots=True)
class AllNodesReady(ev.Event):
    """Every node is ready; ``startup_seconds`` spans all hosts, their clock skew corrected."""

    nodes: int
    startup_seconds: float | None


@dataclass(frozen=True, slots=True)
class ClusterUpdate:
    """What one ``feed`` produced: the node fed, its events (then the cluster's own) and,
    with ``keep_lines``, the node's complete lines. ``snapshot`` is the merged snapshot, built
    when first asked for (a reader that repaints ten times a second merges no more often)."""

    node: int
    events: tuple[ev.Event, ...]
    cluster: ClusterEngine
    lines: tuple[LogLine, ...] = ()

    @property
    def snapshot(self) -> Snapshot:
        return self.cluster.snapshot


class ClusterEngine:
    """Incremental reader of every node's log; ``hosts`` names the nodes, node 0 first."""

    def __init__(
        self,
        hosts: Sequence[str],
        engine: str = "auto",
        clock: Callable[[], float] = time.monotonic,
        keep_lines: bool = False,
    ) -> None:
        if not hosts:
            raise ValueError("a cluster needs at least one host")
        self.hosts = tuple(hosts)
        self._clock = clock
        self._engines = [
            LogEngine(engine, clock, node, keep_lines) for node in range(len(self.hosts))
        ]
        self._snapshots = [engine.snapshot for engine in self._engines]
        self._offsets = ClockOffsets(len(self.hosts))
        self._joined: set[int] = set()
        self._ready: set[int] = set()
        self._all_ready = False
        self._failed: list[int] = []
        self._merged: Snapshot | None = None

    @property
    def size(self) -> int:
        return len(self.hosts)

    @property
    def engine(self) -> str:
        """The engine the logs were written by (``unknown`` until a line decides)."""
        unknown = registry.UNKNOWN
        return next((e.engine for e in self._engines if e.engine != unknown), unknown)

    @property
    def snapshot(self) -> Snapshot:
        """The merged snapshot (rebuilt only after a feed)."""
        if self._merged is None:
            self._merged = merge(self.hosts, self._snapshots, self._offsets, self._order())
        return self._merged

    def node_snapshot(self, node: int) -> Snapshot:
        """One node's own snapshot, as its log alone tells it."""
        return self._snapshots[node]

    def feed(self, node: int, data: bytes) -> ClusterUpdate:
        """Read a chunk of node ``node``'s log."""
        return self._take(node, self._engines[node].feed(data))

    def finish(self, node: int) -> ClusterUpdate:
        """Node ``node``'s log ended: its partial last line counts."""
        return self._take(node, self._engines[node].finish())

    def mark_new_run(self, node: int, reason: str) -> ClusterUpdate:
        """Node ``node``'s log was replaced or truncated."""
        self._joined.discard(node)
        self._ready.discard(node)
        self._all_ready = False
        if node in self._failed:
            self._failed.remove(node)
        return self._take(node, self._engines[node].mark_new_run(reason))

    # ------------------------------------------------------------------ internals

    def _take(self, node: int, update: Update) -> ClusterUpdate:
        self._snapshots[node] = update.snapshot
        self._offsets.observe(node, update.snapshot, self._clock())
        self._merged = None
        if update.snapshot.failure is not None and node not in self._failed:
            self._failed.append(node)
        found = (*update.events, *self._node_events(node))
        return ClusterUpdate(node, found, self, update.lines)

    def _order(self) -> tuple[int, ...]:
        """Nodes that failed, in the order their failures were seen."""
        return tuple(self._failed)

    def _joined_events(self) -> list[ev.Event]:
        """``NodeJoined`` for node 0 once it reached the rendezvous, then for each other node
        that did (``after`` measured from node 0, which hosts the rendezvous)."""
        first = joined_at(self._snapshots[0], self._offsets, 0)
        if first is None:
            return []
        found: list[ev.Event] = []
        for node, snapshot in enumerate(self._snapshots):
            joined = joined_at(snapshot, self._offsets, node)
            if joined is None or node in self._joined:
                continue
            self._joined.add(node)
            after = None if node == 0 else joined - first
            found.append(NodeJoined(0, None, None, node, after))
        return found

    def _node_events(self, node: int) -> list[ev.Event]:
        found: list[ev.Event] = []
        if len(self._joined) < self.size:
            found.extend(self._joined_events())
        if node not in self._ready and node_is_ready(self._snapshots[node], self._snapshots):
            self._ready.add(node)
            found.append(NodeReady(0, None, None, node))
        snapshots = self._snapshots
        if not self._all_ready and all(node_is_ready(s, snapshots) for s in snapshots):
            merged = self.snapshot
            if merged.outcome is Outcome.READY:
                self._all_ready = True
                found.append(AllNodesReady(0, None, None, self.size, merged.startup_seconds))
        return found


def skew_label(seconds: float | None) -> str:
    """``clock +3 s`` when a host's clock is off by at least ``SKEW_NOTICE``, else ``""``."""
    if seconds is None or abs(seconds) < SKEW_NOTICE:
        return ""
    return f"clock {seconds:+.0f} s"


def describe_cluster(item: object) -> str | None:
    """One plain sentence for a cluster event, or None for anything else."""
    if isinstance(item, NodeJoined):
        when = "" if item.after is None else f", {item.after:.1f} s after node 0"
        return f"node {item.node} reached the rendezvous (distributed init){when}"
    if isinstance(item, NodeReady):
        return f"node {item.node} is ready"
    if isinstance(item, AllNodesReady):
        took = "" if item.startup_seconds is None else f" ({item.startup_seconds:.1f} s start-up)"
        return f"all {item.nodes} nodes are ready{took}"
    return None
