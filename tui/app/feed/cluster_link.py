"""The engine link of a server that spans several hosts: one ``ClusterEngine`` behind it.

``feed``, ``finish`` and ``new_run`` read node 0's log, as for a single host; ``node(k)`` gives
the same three for node ``k``. The snapshot is the merged one
(``tui.engine.cluster.cluster_engine``): every
node's ranks, one verdict, and a summary per node in ``Snapshot.nodes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from tui.engine.cluster.cluster_engine import ClusterEngine, ClusterUpdate
from tui.engine.judge.judge import Judgement, Signals, judge
from tui.engine.judge.stall import StallPolicy
from tui.engine.logs.log_line import LogLine
from tui.engine.startup.snapshot import Snapshot
from tui.engine.timing.estimate import Expectations


class NodeFeed(Protocol):
    """What reads one node's log."""

    def feed(self, data: bytes) -> Sequence[LogLine]: ...

    def finish(self) -> Sequence[LogLine]: ...

    def new_run(self, reason: str) -> Sequence[LogLine]: ...


@runtime_checkable
class NodeLinks(Protocol):
    """An engine link that reads several nodes' logs."""

    def node(self, index: int) -> NodeFeed: ...


class ClusterLink:
    """``EngineLink`` over a ``ClusterEngine`` keeping lines for the log view."""

    def __init__(
        self,
        hosts: Sequence[str],
        engine: str = "auto",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cluster = ClusterEngine(hosts, engine, clock, keep_lines=True)
        self._nodes = [_Node(self, index) for index in range(self.cluster.size)]

    @property
    def snapshot(self) -> Snapshot:
        """The merged snapshot (merged again only when asked after a feed)."""
        return self.cluster.snapshot

    def node(self, index: int) -> NodeFeed:
        return self._nodes[index]

    def feed(self, data: bytes) -> Sequence[LogLine]:
        return self._nodes[0].feed(data)

    def finish(self) -> Sequence[LogLine]:
        return self._nodes[0].finish()

    def new_run(self, reason: str) -> Sequence[LogLine]:
        return self._nodes[0].new_run(reason)

    def take(self, update: ClusterUpdate) -> Sequence[LogLine]:
        return update.lines

    def judge(
        self, signals: Signals, expectations: Expectations, now: float, policy: StallPolicy
    ) -> Judgement:
        return judge(self.cluster.snapshot, signals, expectations, now, policy)


class _Node:
    """One node's side of a ``ClusterLink``."""

    def __init__(self, link: ClusterLink, index: int) -> None:
        self._link = link
        self._index = index

    def feed(self, data: bytes) -> Sequence[LogLine]:
        return self._link.take(self._link.cluster.feed(self._index, data))

    def finish(self) -> Sequence[LogLine]:
        return self._link.take(self._link.cluster.finish(self._index))

    def new_run(self, reason: str) -> Sequence[LogLine]:
        return self._link.take(self._link.cluster.mark_new_run(self._index, reason))
