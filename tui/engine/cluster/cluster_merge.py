"""Merging the nodes' snapshots of a multi-node server into one
(``tui.engine.cluster.cluster_engine``).

Ranks keep their node, a ready node's ranks show ``ready`` (``serving`` with the API node),
log times across hosts are moved onto node 0's clock with their measured skew, and each node
gets a ``NodeSummary`` with one sentence about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tui.engine.cluster.cluster_nodes import (
    ClockOffsets,
    behind_since,
    joined_at,
    slowest,
    workers,
)
from tui.engine.servers import registry
from tui.engine.startup.log_events import MAIN
from tui.engine.startup.snapshot import NodeSummary, RankState, Rendezvous, Snapshot
from tui.engine.startup.vocabulary import Outcome, Stage


def node_is_ready(snapshot: Snapshot, every: Sequence[Snapshot]) -> bool:
    """Ready line, or the dummy health server; vLLM's other nodes follow the API node."""
    if snapshot.failure is not None:
        return False
    if snapshot.ready_line_seen or snapshot.node_ready_at is not None:
        return True
    api_ready = any(other.ready_line_seen for other in every)
    dialect = registry.find(snapshot.server.engine)
    return api_ready and dialect is not None and dialect.traits.nodes_follow_api


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
        rendezvous=short_rendezvous(snapshots),
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
            if tag != MAIN and tag in seen:
                rank = replace(rank, tag=f"n{node}:{tag}")
            seen.add(tag)
            merged.append(_promoted(rank, ready_at[node], serving))
    return tuple(merged)


def _promoted(rank: RankState, ready_at: float | None, serving: bool) -> RankState:
    """A rank of a ready node is ready (serving with the API node) whatever it last logged."""
    if ready_at is None or rank.failed or rank.tag == MAIN:
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


def short_rendezvous(snapshots: Sequence[Snapshot]) -> Rendezvous | None:
    """The first node's rendezvous that came up short or named a peer (node 0 hosts the
    store), else the first one seen."""
    found = [s.rendezvous for s in snapshots if s.rendezvous is not None]
    return next((r for r in found if r.missing or r.peers), found[0] if found else None)


def _missing(host: str, joined: bool, rendezvous: Rendezvous | None) -> bool:
    """The node's ranks never joined a rendezvous that came up short, or its address is the
    peer that went away."""
    if rendezvous is None:
        return False
    named = bool(host) and any(peer == host or peer.startswith(host + ":") or
                               host.endswith("@" + peer) for peer in rendezvous.peers)  # fmt: skip
    return named or (rendezvous.missing > 0 and not joined)


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
        missing=_missing(host, joined, short_rendezvous(snapshots)),
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
    rendezvous = short_rendezvous(snapshots)
    if summary.missing and rendezvous is not None:
        count = f" ({rendezvous.joined}/{rendezvous.expected} joined)" if rendezvous.missing else ""
        return f"missing from the rendezvous{count}"
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
