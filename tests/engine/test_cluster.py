"""Multi-node start-ups: one LogEngine per node merged into one model (``tui.engine.cluster``)."""

from __future__ import annotations

from tui.engine import events as ev
from tui.engine.feed import LogEngine
from tui.engine.stages import Outcome, Stage

NODE1 = (
    "[2026-01-01 10:00:00] server_args={'tp_size': 16, 'nnodes': 2, 'node_rank': 1}\n"
    "[2026-01-01 10:00:02 TP8] Init parallel begin.\n"
    "[2026-01-01 10:00:02 TP9] Init parallel begin.\n"
    "[2026-01-01 10:00:09] Dummy health check server started in background thread at "
    "0.0.0.0:30000\n"
)


def test_a_non_zero_nodes_dummy_health_line_is_noted_without_moving_its_ranks() -> None:
    engine = LogEngine(node=1, clock=lambda: 5.0)
    update = engine.feed(NODE1.encode())
    snapshot = update.snapshot
    assert snapshot.node_ready_at == 5.0
    assert snapshot.node_ready_ts is not None
    stages = [r.stage for r in snapshot.ranks if r.tag != "main"]
    assert stages == [Stage.DISTRIBUTED_INIT, Stage.DISTRIBUTED_INIT]
    assert {r.node for r in snapshot.ranks} == {1}
    assert any(isinstance(e, ev.NodeReadySeen) for e in update.events)
    assert snapshot.outcome is Outcome.INCOMPLETE
    assert not snapshot.ready_line_seen
