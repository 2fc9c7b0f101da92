"""Node-level facts of a multi-node start-up: the rendezvous, the node behind, clock skew.

Pure functions over each node's own ``Snapshot`` (see ``tui.engine.cluster.cluster_engine``). Times
are on the
monitor's clock (the engine's injected clock). A log time is moved onto that clock with the
node's *offset*: the smallest ``receive time - log time`` seen on that node, so durations
between nodes stay right when the hosts' clocks disagree (the skew between two nodes is the
difference of their offsets). Log timestamps have one-second resolution, so skews under
``SKEW_NOTICE`` seconds are not worth mentioning.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.engine.startup.log_events import MAIN
from tui.engine.startup.snapshot import RankState, Snapshot, StageSpan
from tui.engine.startup.vocabulary import STAGES, Stage

SKEW_NOTICE = 2.0
"""Seconds of clock skew between two hosts worth mentioning."""
LIVE_GAP = 0.5
"""Seconds without data after which a node's stream is live (no longer a backlog)."""


class ClockOffsets:
    """Per node, the smallest ``receive time - log time`` seen: maps log times onto the clock.

    Node 0's offset (else the first known one) maps every node's log times onto the monitor's
    clock; a node's own offset only tells its skew against node 0.

    Only lines received live count: a backlog (the lines already in the file when the monitor
    attached) arrives long after it was written. A node's stream counts as live from the first
    chunk that follows a pause of ``LIVE_GAP`` seconds; until then (and for a log read whole),
    its offset is unknown and the hosts' clocks are assumed to agree.
    """

    def __init__(self, nodes: int) -> None:
        self._best: list[float | None] = [None] * nodes
        self._live_since: list[float | None] = [None] * nodes
        self._last_feed: list[float | None] = [None] * nodes
        self._any: float | None = None

    def observe(self, node: int, snapshot: Snapshot, now: float) -> None:
        """Take the samples of a node's snapshot: each rank's current stage entry and the ready
        lines, as (log time, receive time)."""
        last = self._last_feed[node]
        if self._live_since[node] is None and last is not None and now - last >= LIVE_GAP:
            self._live_since[node] = now
        self._last_feed[node] = now
        since = self._live_since[node]
        for ts, at in _samples(snapshot):
            if ts is None or at is None:
                continue
            gap = at - ts
            self._any = gap if self._any is None else min(self._any, gap)
            best = self._best[node]
            if since is not None and at >= since and (best is None or gap < best):
                self._best[node] = gap

    def skew(self, node: int) -> float | None:
        """Seconds node ``node``'s log clock runs ahead of node 0's (None until both logged
        live lines)."""
        first, mine = self._best[0], self._best[node]
        return None if first is None or mine is None else first - mine

    def correction(self, node: int) -> float:
        """The skew removed from the node's log times: only a clear one (``SKEW_NOTICE``);
        below that, the hosts' clocks are taken to agree and log times are compared as
        printed (they are finer than any estimate from receive times)."""
        skew = self.skew(node)
        return skew if skew is not None and abs(skew) >= SKEW_NOTICE else 0.0

    def on_clock(self, node: int, span: StageSpan) -> float:
        """When a stage span began on the monitor's clock, from its log time when possible."""
        base = next((value for value in (*self._best, self._any) if value is not None), None)
        if span.start_ts is None or base is None:
            return span.started_at
        return span.start_ts - self.correction(node) + base


def _samples(snapshot: Snapshot) -> list[tuple[float | None, float | None]]:
    samples: list[tuple[float | None, float | None]] = [
        (rank.history[-1].start_ts, rank.history[-1].started_at)
        for rank in snapshot.ranks
        if rank.history
    ]
    samples.append((snapshot.ready_ts, snapshot.ready_at))
    samples.append((snapshot.node_ready_ts, snapshot.node_ready_at))
    return samples


def workers(snapshot: Snapshot) -> tuple[RankState, ...]:
    """The ranks that do the start-up (every tagged rank; not the main process)."""
    return tuple(rank for rank in snapshot.ranks if rank.tag != MAIN)


def slowest(snapshot: Snapshot) -> RankState | None:
    """The node's least advanced rank (its main process when no rank has logged yet)."""
    ranks = workers(snapshot) or snapshot.ranks
    live = [rank for rank in ranks if not rank.failed] or list(ranks)
    return min(live, key=lambda rank: rank.stage.order, default=None)


def entered(rank: RankState, stage: Stage, clock: ClockOffsets, node: int) -> float | None:
    """When ``rank`` first entered ``stage`` or a later one (monitor clock), or None."""
    for span in rank.history:
        if span.stage.order >= stage.order:
            return clock.on_clock(node, span)
    if rank.stage.order >= stage.order:
        return rank.stage_started_at
    return None


def joined_at(snapshot: Snapshot, clock: ClockOffsets, node: int) -> float | None:
    """When the node's first rank reached the rendezvous (distributed init), or None."""
    times = [entered(rank, Stage.DISTRIBUTED_INIT, clock, node) for rank in workers(snapshot)]
    known = [at for at in times if at is not None]
    return min(known) if known else None


def left_at(snapshot: Snapshot, stage: Stage, clock: ClockOffsets, node: int) -> float | None:
    """When the node's last rank left ``stage`` (entered a later one), or None if one has not."""
    ranks = workers(snapshot)
    if not ranks or stage is STAGES[-1]:
        return None
    later = STAGES[stage.order + 1]
    times = [entered(rank, later, clock, node) for rank in ranks]
    known = [at for at in times if at is not None]
    return max(known) if len(known) == len(times) else None


def behind_since(
    node: int,
    snapshots: Sequence[Snapshot],
    clock: ClockOffsets,
    ready_at: Sequence[float | None],
) -> float | None:
    """Since when most other nodes have left the stage this node's slowest rank is in.

    ``ready_at[k]`` is when node ``k`` became ready (None while it is not): a ready node has
    left every start-up stage, even when its own log names no later one.
    """
    rank = slowest(snapshots[node])
    if rank is None or ready_at[node] is not None or len(snapshots) < 2:
        return None
    left: list[float] = []
    for other, snapshot in enumerate(snapshots):
        if other == node:
            continue
        at = left_at(snapshot, rank.stage, clock, other)
        at = ready_at[other] if at is None else at
        if at is not None:
            left.append(at)
    others = len(snapshots) - 1
    if len(left) * 2 < others:
        return None
    return sorted(left)[(others - 1) // 2]
