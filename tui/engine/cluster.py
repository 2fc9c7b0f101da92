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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from tui.engine import events as ev
from tui.engine.cluster_nodes import (
    SKEW_NOTICE,
    ClockOffsets,
    behind_since,
    joined_at,
    slowest,
    workers,
)
from tui.engine.feed import LogEngine, Update
from tui.engine.scan import LogLine
from tui.engine.snapshot import NodeSummary, RankState, Snapshot
from tui.engine.stages import Outcome, Stage


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
        return next((e.engine for e in self._engines if e.engine != "unknown"), "unknown")

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
        if not self._all_ready and len(self._ready) == self.size and not self._failed:
            merged = self.snapshot
            if merged.outcome is Outcome.READY:
                self._all_ready = True
                found.append(AllNodesReady(0, None, None, self.size, merged.startup_seconds))
        return found


def node_is_ready(snapshot: Snapshot, every: Sequence[Snapshot]) -> bool:
    """Ready line, or the dummy health server; vLLM's other nodes follow the API node."""
    if snapshot.failure is not None:
        return False
    if snapshot.ready_line_seen or snapshot.node_ready_at is not None:
        return True
    api_ready = any(other.ready_line_seen for other in every)
    return api_ready and snapshot.server.engine == "vllm"


def _ready_at(snapshot: Snapshot, every: Sequence[Snapshot]) -> float | None:
    if not node_is_ready(snapshot, every):
        return None
    if snapshot.ready_at is not None:
        return snapshot.ready_at
    if snapshot.node_ready_at is not None:
        return snapshot.node_ready_at
    return max((other.ready_at for other in every if other.ready_at is not None), default=None)


def merge(
    hosts: Sequence[str],
    snapshots: Sequence[Snapshot],
    offsets: ClockOffsets,
    failed_order: Sequence[int] = (),
) -> Snapshot:
    """The one ``Snapshot`` of a server whose nodes are ``snapshots`` (node 0 first)."""
    ready_at = [_ready_at(snapshot, snapshots) for snapshot in snapshots]
    api = next((s for s in snapshots if s.ready_line_seen), snapshots[0])
    failed = [snapshots[k] for k in failed_order if snapshots[k].failure is not None]
    failure = failed[0].failure if failed else None
    ready = all(at is not None for at in ready_at) and any(s.ready_line_seen for s in snapshots)
    outcome = Outcome.FAILED if failure else Outcome.READY if ready else Outcome.INCOMPLETE
    serving = any(rank.stage is Stage.SERVING for rank in api.ranks)
    ranks = _merged_ranks(snapshots, ready_at, serving)
    info = next((s.server for s in snapshots if s.server.model is not None), api.server)
    return Snapshot(
        server=replace(info, nnodes=max(info.nnodes, len(snapshots))),
        ranks=ranks,
        outcome=outcome,
        last_stage=max((r.stage for r in ranks), key=lambda s: s.order, default=None),
        failure=failure,
        ready_line_seen=ready,
        stopped=any(s.stopped for s in snapshots),
        lines=sum(s.lines for s in snapshots),
        runs_before=max(s.runs_before for s in snapshots),
        started_at=min((s.started_at for s in snapshots if s.started_at is not None),
                       default=None),
        first_ts=_first_ts(snapshots, offsets),
        ready_ts=_ready_ts(snapshots, offsets) if ready else None,
        ready_at=max((at for at in ready_at if at is not None), default=None) if ready else None,
        decode=api.decode,
        requests=sum(s.requests for s in snapshots),
        nodes=tuple(
            summarize(k, hosts[k], snapshots, offsets, ready_at) for k in range(len(snapshots))
        ),
    )  # fmt: skip


def _merged_ranks(
    snapshots: Sequence[Snapshot], ready_at: Sequence[float | None], serving: bool
) -> tuple[RankState, ...]:
    seen: set[str] = set()
    merged: list[RankState] = []
    for node, snapshot in enumerate(snapshots):
        for rank in snapshot.ranks:
            tag = rank.tag
            if tag != ev.MAIN and tag in seen:
                rank = replace(rank, tag=f"n{node}:{tag}")
            seen.add(tag)
            merged.append(_promoted(rank, ready_at[node], serving))
    return tuple(merged)


def _promoted(rank: RankState, ready_at: float | None, serving: bool) -> RankState:
    """A rank of a ready node is ready (serving with the API node) whatever it last logged."""
    if ready_at is None or rank.failed or rank.tag == ev.MAIN:
        return rank
    stage = Stage.SERVING if serving else Stage.READY
    if rank.stage.order >= stage.order:
        return rank
    return replace(rank, stage=stage, stage_started_at=max(ready_at, rank.stage_started_at))


def _on_node0_clock(ts: float | None, node: int, offsets: ClockOffsets) -> float | None:
    """A node's log time expressed in node 0's log clock (its skew, when known, removed)."""
    if ts is None:
        return None
    return ts - offsets.correction(node)


def _first_ts(snapshots: Sequence[Snapshot], offsets: ClockOffsets) -> float | None:
    times = [_on_node0_clock(s.first_ts, k, offsets) for k, s in enumerate(snapshots)]
    known = [ts for ts in times if ts is not None]
    return min(known) if known else None


def _ready_ts(snapshots: Sequence[Snapshot], offsets: ClockOffsets) -> float | None:
    times = [
        _on_node0_clock(s.ready_ts if s.ready_ts is not None else s.node_ready_ts, k, offsets)
        for k, s in enumerate(snapshots)
    ]
    known = [ts for ts in times if ts is not None]
    return max(known) if known else None


def summarize(
    node: int,
    host: str,
    snapshots: Sequence[Snapshot],
    offsets: ClockOffsets,
    ready_at: Sequence[float | None],
) -> NodeSummary:
    """What the merged view says about one node."""
    snapshot = snapshots[node]
    rank = slowest(snapshot)
    joined = joined_at(snapshot, offsets, node) is not None or ready_at[node] is not None
    summary = NodeSummary(
        node=node,
        host=host,
        ranks=len(workers(snapshot)),
        stage=Stage.READY if ready_at[node] is not None else rank.stage if rank else None,
        joined=joined,
        ready=ready_at[node] is not None,
        failed=snapshot.failure is not None,
        stopped=snapshot.stopped,
        lines=snapshot.lines,
        behind_since=behind_since(node, snapshots, offsets, ready_at),
        clock_skew=offsets.skew(node),
    )
    return replace(summary, note=node_note(summary, snapshots, offsets, ready_at))


def node_note(
    summary: NodeSummary,
    snapshots: Sequence[Snapshot],
    offsets: ClockOffsets,
    ready_at: Sequence[float | None],
) -> str:
    """One sentence about a node, the most important fact first."""
    snapshot = snapshots[summary.node]
    failure = snapshot.failure
    if failure is not None:
        return f"failed: {failure.kind.value}" + (f" on {failure.rank}" if failure.rank else "")
    if summary.stopped:
        return "stopped"
    if summary.ready:
        return "ready: serves the API" if snapshot.ready_line_seen else "ready: dummy /health"
    if summary.lines == 0:
        return "no log lines yet"
    others = [k for k in range(len(snapshots)) if k != summary.node]
    if not summary.joined and any(joined_at(snapshots[k], offsets, k) for k in others):
        return "has not reached the rendezvous (distributed init) yet"
    rank = slowest(snapshot)
    if summary.behind_since is not None and rank is not None:
        return f"{rank.tag} still in {rank.stage.label}"
    waiting = _waiting_for(summary.node, snapshots, offsets, ready_at)
    if waiting:
        return "waiting for " + ", ".join(f"node {k}" for k in waiting)
    return rank.stage.label if rank is not None else "starting"


def _waiting_for(
    node: int,
    snapshots: Sequence[Snapshot],
    offsets: ClockOffsets,
    ready_at: Sequence[float | None],
) -> list[int]:
    """The other nodes that are behind this one or have not reached the rendezvous."""
    waiting = []
    mine = joined_at(snapshots[node], offsets, node)
    for other, snapshot in enumerate(snapshots):
        if other == node or ready_at[other] is not None:
            continue
        behind = behind_since(other, snapshots, offsets, ready_at) is not None
        absent = mine is not None and joined_at(snapshot, offsets, other) is None
        if behind or absent:
            waiting.append(other)
    return waiting


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
