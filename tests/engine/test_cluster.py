"""Multi-node start-ups: one LogEngine per node merged into one model."""

from __future__ import annotations

import pytest

from tests.engine.multinode_logs import FakeClock, end_of, node_log, play
from tui.engine.cluster.cluster_engine import AllNodesReady, ClusterEngine, NodeJoined, skew_label
from tui.engine.judge.health import HealthState
from tui.engine.judge.stall import RankHealth, StallPolicy, assess
from tui.engine.judge.verdict import decide_verdict
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup import log_events as ev
from tui.engine.startup.snapshot import RankState, Snapshot
from tui.engine.startup.vocabulary import Outcome, Stage, Verdict
from tui.engine.timing.estimate import default_expectations

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


# ---------------------------------------------------------------- merged start-ups


def _cluster(nodes: int) -> tuple[ClusterEngine, FakeClock]:
    clock = FakeClock()
    return ClusterEngine([f"gpu-{k}" for k in range(nodes)], clock=clock), clock


def _workers(snapshot: Snapshot) -> list[RankState]:
    return [rank for rank in snapshot.ranks if rank.tag != "main"]


def test_two_nodes_merge_into_one_server_that_is_ready_once() -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    engine, clock = _cluster(2)
    updates = play(engine, clock, logs, end_of(logs))
    snapshot = engine.snapshot
    assert snapshot.outcome is Outcome.READY
    assert [r.tag for r in _workers(snapshot)] == [f"TP{k}" for k in range(16)]
    assert [r.node for r in _workers(snapshot)] == [0] * 8 + [1] * 8
    assert {r.stage for r in _workers(snapshot)} == {Stage.READY}
    assert [n.note for n in snapshot.nodes] == ["ready: serves the API", "ready: dummy /health"]
    finals = [e for u in updates for e in u.events if isinstance(e, AllNodesReady)]
    assert len(finals) == 1
    assert finals[0].startup_seconds == snapshot.startup_seconds
    assert snapshot.startup_seconds is not None
    assert snapshot.startup_seconds > 400


def test_ready_only_when_every_node_is_ready() -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    engine, clock = _cluster(2)
    dummy = logs[1][-1]
    play(engine, clock, [logs[0], logs[1][:-1]], end_of(logs))
    snapshot = engine.snapshot
    assert snapshot.nodes[0].ready
    assert not snapshot.nodes[1].ready
    assert snapshot.outcome is Outcome.INCOMPLETE
    assert not snapshot.ready_line_seen
    report = decide_verdict(snapshot, connected=True, health=HealthState.READY,
                            generation_ok=True)  # fmt: skip
    assert report.verdict is Verdict.STARTING
    engine.feed(1, dummy[1])
    assert engine.snapshot.outcome is Outcome.READY
    assert engine.snapshot.ready_line_seen


def test_a_node_that_has_not_reached_the_rendezvous_is_named() -> None:
    logs = [node_log(16, 2, k, scenario="node-lag") for k in range(2)]
    engine, clock = _cluster(2)
    begin = _first(logs[0], b"Init parallel begin")
    play(engine, clock, logs, begin + 30)
    nodes = engine.snapshot.nodes
    assert nodes[0].joined
    assert not nodes[1].joined
    assert nodes[1].note == "has not reached the rendezvous (distributed init) yet"
    assert nodes[0].note == "waiting for node 1"
    assert nodes[1].behind_since is not None
    updates = play(engine, clock, logs, end_of(logs), since=begin + 30)
    joined = [e for u in updates for e in u.events if isinstance(e, NodeJoined)]
    assert [e.node for e in joined] == [1]
    assert joined[0].after == pytest.approx(60, abs=2)
    assert engine.snapshot.outcome is Outcome.READY


def test_a_hang_on_node_one_is_flagged_on_its_node_and_rank() -> None:
    logs = [node_log(16, 2, k, scenario="node-hang", fail_rank=3) for k in range(2)]
    engine, clock = _cluster(2)
    play(engine, clock, logs, end_of(logs) + 600)
    snapshot = engine.snapshot
    assert snapshot.outcome is Outcome.INCOMPLETE
    assert snapshot.nodes[1].note == "TP11 still in weight loading"
    assert snapshot.nodes[0].note == "waiting for node 1"
    assert snapshot.nodes[0].behind_since is None
    plan, policy = default_expectations(600.0), StallPolicy(floor=60)
    flagged = [s.tag for s in assess(snapshot, plan, clock.now, policy) if s.flagged]
    assert flagged == ["TP11"]
    later = [s for s in assess(snapshot, plan, clock.now + 900, policy) if s.flagged]
    assert [(s.tag, s.health) for s in later] == [("TP11", RankHealth.STALLED)]
    hung = snapshot.rank("TP11")
    assert hung is not None
    assert hung.node == 1


def test_clock_skew_is_measured_and_removed_from_durations() -> None:
    plain = [node_log(16, 2, k) for k in range(2)]
    skewed = [node_log(16, 2, 0), node_log(16, 2, 1, skew=120.0)]
    results = []
    for logs in (plain, skewed):
        engine, clock = _cluster(2)
        play(engine, clock, logs, end_of(logs))
        results.append(engine.snapshot)
    assert results[1].nodes[1].clock_skew == pytest.approx(120, abs=1.5)
    assert results[0].nodes[1].clock_skew == pytest.approx(0, abs=1.5)
    assert results[1].startup_seconds == pytest.approx(results[0].startup_seconds, abs=1.5)
    assert skew_label(results[1].nodes[1].clock_skew).startswith("clock +12")
    assert skew_label(results[0].nodes[1].clock_skew) == ""


def test_four_nodes_of_eight_ranks() -> None:
    logs = [node_log(32, 4, k) for k in range(4)]
    engine, clock = _cluster(4)
    play(engine, clock, logs, end_of(logs))
    snapshot = engine.snapshot
    assert snapshot.outcome is Outcome.READY
    assert len(_workers(snapshot)) == 32
    assert [r.node for r in _workers(snapshot)] == [k for k in range(4) for _ in range(8)]
    assert [n.ranks for n in snapshot.nodes] == [8, 8, 8, 8]


def test_a_failure_on_one_node_fails_the_server() -> None:
    logs = [node_log(16, 2, 0), node_log(16, 2, 1, scenario="rank-crash", fail_rank=2)]
    engine, clock = _cluster(2)
    play(engine, clock, logs, end_of(logs))
    snapshot = engine.snapshot
    assert snapshot.outcome is Outcome.FAILED
    assert snapshot.failure is not None
    assert snapshot.failure.rank == "TP10"
    assert snapshot.nodes[1].note.startswith("failed: ")
    assert snapshot.nodes[1].failed
    assert not snapshot.nodes[0].failed


def test_a_tag_printed_by_two_nodes_stays_unique() -> None:
    engine, _clock = _cluster(2)
    line = b"[2026-01-01 10:00:02 TP0] Init parallel begin.\n"
    engine.feed(0, line)
    engine.feed(1, line)
    assert [r.tag for r in _workers(engine.snapshot)] == ["TP0", "n1:TP0"]


def test_a_cluster_needs_a_host() -> None:
    with pytest.raises(ValueError, match="at least one host"):
        ClusterEngine([])


def _first(log: list[tuple[float, bytes]], needle: bytes) -> float:
    return next(at for at, data in log if needle in data)


def test_logs_read_whole_assume_the_clocks_agree() -> None:
    logs = [node_log(16, 2, 0), node_log(16, 2, 1, skew=30.0)]
    engine, clock = _cluster(2)
    clock.now = 1000.0
    updates = [
        engine.feed(node, b"".join(data for _, data in log)) for node, log in enumerate(logs)
    ]
    joined = [e for u in updates for e in u.events if isinstance(e, NodeJoined)]
    assert [e.node for e in joined] == [0, 1]
    assert joined[1].after == pytest.approx(30, abs=1.5)
    assert engine.snapshot.nodes[1].clock_skew is None
    assert engine.snapshot.outcome is Outcome.READY


def test_a_relaunch_after_a_failed_node_becomes_ready_in_the_same_logs() -> None:
    first = [node_log(16, 2, 0), node_log(16, 2, 1, scenario="rank-crash", fail_rank=1)]
    later = end_of(first) + 60
    again = [node_log(16, 2, k) for k in range(2)]
    logs = [[*first[k], *((at + later, data) for at, data in again[k])] for k in range(2)]
    engine, clock = _cluster(2)
    updates = play(engine, clock, logs, later - 1)
    assert engine.snapshot.outcome is Outcome.FAILED
    updates = play(engine, clock, logs, end_of(logs), since=later - 1)
    found = [event for update in updates for event in update.events]
    assert any(isinstance(event, AllNodesReady) for event in found)
    final = engine.snapshot
    assert final.outcome is Outcome.READY


def test_nodes_placed_late_are_named_in_the_merged_snapshot() -> None:
    logs = [node_log(16, 2, k) for k in range(2)]
    engine, clock = _cluster(2)
    play(engine, clock, logs, end_of(logs) / 2)
    before = engine.snapshot
    engine.name_hosts(["gpu1", "gpu2", "gpu3"])
    assert engine.hosts == ("gpu1", "gpu2")
    assert [node.host for node in engine.snapshot.nodes] == ["gpu1", "gpu2"]
    assert [r.tag for r in engine.snapshot.ranks] == [r.tag for r in before.ranks]
    engine.name_hosts(["gpu7"])
    assert engine.hosts == ("gpu7", "gpu2")
