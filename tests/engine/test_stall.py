"""Stall and lag rules on synthetic start-ups driven by an injected clock."""

from __future__ import annotations

import dataclasses

import pytest

from tests.engine.startup_factory import FP, USUAL, finished_run, rank_at, snapshot_of
from tui.engine.estimate import Expectations, expectations_for
from tui.engine.events import MAIN
from tui.engine.snapshot import Failure, RankState
from tui.engine.spread import Spread
from tui.engine.stages import FailureKind, Outcome, Stage
from tui.engine.stall import RankHealth, RankStatus, StallPolicy, assess, stalled

GRAPH_START = sum(USUAL[s] for s in USUAL if s.order < Stage.CUDA_GRAPH.order)
TIGHT = StallPolicy(factor=1.5, floor=30.0, lag=20.0)


def _history(*scales: float) -> Expectations:
    return expectations_for(
        FP, [finished_run(scale, recorded_at=i) for i, scale in enumerate(scales)]
    )


def _statuses(
    ranks: list[RankState], expectations: Expectations, now: float, policy: StallPolicy = TIGHT
) -> dict[str, RankStatus]:
    return {status.tag: status for status in assess(snapshot_of(ranks), expectations, now, policy)}


def _first(
    health: RankHealth,
    tag: str,
    scale_of: dict[str, float],
    expectations: Expectations,
    hang: Stage | None = None,
    until: int = 3000,
) -> float | None:
    """The first second at which rank ``tag`` shows ``health`` (each rank walks at its scale)."""
    for now in range(until):
        ranks = [
            rank_at(float(now), tag=t, scale=s, hang=hang if t == tag else None)
            for t, s in scale_of.items()
        ]
        if _statuses(ranks, expectations, float(now))[tag].health is health:
            return float(now)
    return None


def test_hung_rank_is_stalled_within_one_and_a_half_usual_stage_times_plus_floor() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    scales = {f"TP{i}": 1.0 for i in range(4)}
    detected = _first(RankHealth.STALLED, "TP2", scales, expectations, hang=Stage.CUDA_GRAPH)
    assert detected is not None
    usual = USUAL[Stage.CUDA_GRAPH]
    assert usual < detected - GRAPH_START <= 1.5 * usual + TIGHT.floor


def test_hung_rank_is_lagging_before_it_is_stalled() -> None:
    expectations = _history(1.0, 1.0, 1.0)
    scales = {"TP0": 1.0, "TP1": 1.0, "TP2": 1.0}
    lagging = _first(RankHealth.LAGGING, "TP1", scales, expectations, hang=Stage.CUDA_GRAPH)
    stalled_at = _first(RankHealth.STALLED, "TP1", scales, expectations, hang=Stage.CUDA_GRAPH)
    assert lagging is not None
    assert stalled_at is not None
    assert lagging < stalled_at
    status = _statuses(
        [rank_at(stalled_at, tag="TP0"), rank_at(stalled_at, tag="TP1", hang=Stage.CUDA_GRAPH)],
        expectations, stalled_at,
    )["TP1"]  # fmt: skip
    assert status.threshold == pytest.approx(1.5 * 150.0)
    assert "silent" in status.reason
    assert "CUDA graphs" in status.reason


def test_slow_rank_is_lagging_but_never_stalled() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    scales = {"TP0": 1.0, "TP1": 1.3, "TP2": 1.0}
    assert _first(RankHealth.LAGGING, "TP1", scales, expectations) is not None
    assert _first(RankHealth.STALLED, "TP1", scales, expectations, until=800) is None


def test_a_rank_that_keeps_printing_is_not_stalled() -> None:
    expectations = _history(1.0)
    chatty = rank_at(GRAPH_START + 1000.0, hang=Stage.CUDA_GRAPH, chatty=True)
    status = _statuses([chatty], expectations, GRAPH_START + 1000.0)["TP0"]
    assert status.health is RankHealth.OK
    assert status.silent_for == pytest.approx(1.0)


def test_cold_start_uses_the_default_split_and_the_floor() -> None:
    expectations = expectations_for(FP, [], expected_startup=600.0)
    policy = StallPolicy()  # factor 3, floor 60 s
    loading_start = sum(USUAL[s] for s in USUAL if s.order < Stage.WEIGHT_LOADING.order)
    limit = policy.threshold(Spread(120.0, 240.0, 480.0))
    assert limit == pytest.approx(1440.0)
    for offset, health in ((limit - 1, RankHealth.OK), (limit + 1, RankHealth.STALLED)):
        now = loading_start + offset
        rank = rank_at(now, hang=Stage.WEIGHT_LOADING)
        assert _statuses([rank], expectations, now, policy)["TP0"].health is health


def test_short_stages_get_the_floor_long_ones_the_factor() -> None:
    expectations = _history(1.0)
    now = 10.0 + 5.0 + 40.0  # 40 s into distributed init, which usually takes 25 s
    rank = rank_at(now, hang=Stage.DISTRIBUTED_INIT)
    lenient = dataclasses.replace(TIGHT, floor=45.0)
    assert _statuses([rank], expectations, now, lenient)["TP0"].health is RankHealth.OK
    assert _statuses([rank], expectations, now)["TP0"].health is RankHealth.STALLED


def test_an_outlier_run_does_not_raise_the_threshold() -> None:
    clean = _history(1.0, 1.01, 0.99, 1.02, 0.98)
    dirty = _history(1.0, 1.01, 0.99, 1.02, 0.98, 5.0)
    clean_graph, dirty_graph = clean.stage(Stage.CUDA_GRAPH), dirty.stage(Stage.CUDA_GRAPH)
    assert clean_graph is not None
    assert dirty_graph is not None
    assert TIGHT.threshold(dirty_graph) == pytest.approx(TIGHT.threshold(clean_graph))


def test_failed_and_ready_ranks_are_not_guessed_about() -> None:
    expectations = _history(1.0)
    now = GRAPH_START + 2000.0
    hung = dataclasses.replace(rank_at(now, tag="TP1", hang=Stage.CUDA_GRAPH), failed=True)
    failure = Failure(FailureKind.HANG, "TP1", 900, "Scheduler watchdog timeout", Stage.CUDA_GRAPH)
    snapshot = dataclasses.replace(
        snapshot_of([rank_at(now, tag="TP0", hang=Stage.CUDA_GRAPH), hung]),
        outcome=Outcome.FAILED, failure=failure,
    )  # fmt: skip
    statuses = {s.tag: s for s in assess(snapshot, expectations, now, TIGHT)}
    assert statuses["TP1"].health is RankHealth.FAILED
    assert statuses["TP1"].reason == "failed: hang"
    assert statuses["TP0"].health is RankHealth.OK
    ready = snapshot_of([rank_at(700.0)], ready_at=600.0)
    assert [s.health for s in assess(ready, expectations, 5000.0)] == [RankHealth.DONE]


def test_the_main_process_is_not_judged_beside_the_ranks() -> None:
    expectations = _history(1.0)
    now = GRAPH_START + 10.0
    main = RankState(tag=MAIN, stage=Stage.ARGS, stage_started_at=10.0, last_seen_at=10.0)
    statuses = assess(snapshot_of([main, rank_at(now)]), expectations, now, TIGHT)
    assert [s.tag for s in statuses] == ["TP0"]
    assert stalled(statuses) == ()
