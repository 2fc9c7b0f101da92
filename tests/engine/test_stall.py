"""Stall and lag rules on synthetic start-ups driven by an injected clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from tests.engine.startup_factory import FP, USUAL, finished_run, rank_at, snapshot_of
from tui.engine.judge.stall import (
    RankHealth,
    RankStalled,
    RankStatus,
    StallPolicy,
    StallTracker,
    assess,
    stalled,
)
from tui.engine.startup.log_events import MAIN
from tui.engine.startup.snapshot import Failure, RankState
from tui.engine.startup.vocabulary import FailureKind, Outcome, Stage
from tui.engine.timing.estimate import Expectations, expectations_for
from tui.engine.timing.spread import Spread

GRAPH_START = sum(USUAL[s] for s in USUAL if s.order < Stage.CUDA_GRAPH.order)
LOAD_START = sum(USUAL[s] for s in USUAL if s.order < Stage.WEIGHT_LOADING.order)
DEFAULT = StallPolicy()
TIGHT = StallPolicy(factor=1.5, floor=30.0, lag=20.0)
TAGS = ("TP0", "TP1", "TP2", "TP3")

Ranks = Callable[[float], list[RankState]]


def _history(*scales: float) -> Expectations:
    runs = [finished_run(scale, recorded_at=i) for i, scale in enumerate(scales)]
    return expectations_for(FP, runs)


def _statuses(
    ranks: list[RankState], expectations: Expectations, now: float, policy: StallPolicy = TIGHT
) -> dict[str, RankStatus]:
    return {status.tag: status for status in assess(snapshot_of(ranks), expectations, now, policy)}


def _first(
    health: RankHealth,
    tag: str,
    ranks_at: Ranks,
    expectations: Expectations,
    policy: StallPolicy = TIGHT,
    until: int = 3000,
) -> float | None:
    """The first second at which rank ``tag`` shows ``health`` (from the load, when all is OK)."""
    for now in range(int(LOAD_START), until):
        ranks = ranks_at(float(now))
        if _statuses(ranks, expectations, float(now), policy)[tag].health is health:
            return float(now)
    return None


def _collective_hang(now: float) -> list[RankState]:
    """Every rank stuck in CUDA-graph capture; TP0's progress bar stopped 60 s into it."""
    ranks = [rank_at(now, tag=tag, hang=Stage.CUDA_GRAPH) for tag in TAGS]
    if now > GRAPH_START:
        ranks[0] = dataclasses.replace(ranks[0], last_seen_at=min(now, GRAPH_START + 60.0))
    return ranks


def _lone_hang(now: float) -> list[RankState]:
    """TP2 stuck in CUDA-graph capture while the other ranks go on."""
    return [rank_at(now, tag=tag, hang=Stage.CUDA_GRAPH if tag == "TP2" else None) for tag in TAGS]


def _slow_loader(now: float) -> list[RankState]:
    """TP1 loads its weights 2.5 times slower than usual and prints nothing meanwhile."""
    slow = {Stage.WEIGHT_LOADING: 2.5}
    return [rank_at(now, tag=tag, stretch=slow if tag == "TP1" else None) for tag in TAGS]


def test_collective_hang_is_stalled_within_one_and_a_half_usual_times_plus_floor() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    detected = _first(RankHealth.STALLED, "TP2", _collective_hang, expectations, DEFAULT)
    assert detected is not None
    usual = USUAL[Stage.CUDA_GRAPH]
    assert usual < detected - GRAPH_START <= 1.5 * usual + DEFAULT.floor
    statuses = _statuses(_collective_hang(detected), expectations, detected, DEFAULT)
    assert all(status.health is RankHealth.STALLED for status in statuses.values())
    assert "CUDA graphs" in statuses["TP2"].reason


def test_lone_hung_rank_is_lagging_first_and_stalled_with_more_slack() -> None:
    expectations = _history(1.0, 1.0, 1.0)
    lagging = _first(RankHealth.LAGGING, "TP2", _lone_hang, expectations, DEFAULT)
    stalled_at = _first(RankHealth.STALLED, "TP2", _lone_hang, expectations, DEFAULT)
    assert lagging is not None
    assert stalled_at is not None
    assert lagging - GRAPH_START == pytest.approx(150.0 + 150.0 / 4, abs=1.0)
    assert stalled_at - GRAPH_START == pytest.approx(2 * 1.5 * 150.0, abs=1.0)
    status = _statuses(_lone_hang(stalled_at), expectations, stalled_at, DEFAULT)["TP2"]
    assert status.threshold == pytest.approx(450.0)
    assert status.behind_for is not None


def test_slow_rank_is_lagging_but_never_stalled() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    assert _first(RankHealth.LAGGING, "TP1", _slow_loader, expectations, DEFAULT) is not None
    never = _first(RankHealth.STALLED, "TP1", _slow_loader, expectations, DEFAULT, until=1200)
    assert never is None


def test_a_uniformly_slower_rank_is_lagging_but_never_stalled() -> None:
    expectations = _history(1.0, 1.02, 0.98)

    def ranks_at(now: float) -> list[RankState]:
        return [rank_at(now, tag=tag, scale=1.3 if tag == "TP1" else 1.0) for tag in TAGS]

    assert _first(RankHealth.LAGGING, "TP1", ranks_at, expectations) is not None
    assert _first(RankHealth.STALLED, "TP1", ranks_at, expectations, until=800) is None


def test_progress_of_one_rank_keeps_its_stage_alive() -> None:
    expectations = _history(1.0)
    now = LOAD_START + 3 * 300.0  # three times the usual load, everyone still loading
    slow = {Stage.WEIGHT_LOADING: 4.0}
    printing = rank_at(now, tag="TP0", stretch=slow, chatty=True)
    quiet = rank_at(now, tag="TP1", stretch=slow)
    statuses = _statuses([printing, quiet], expectations, now, DEFAULT)
    assert statuses["TP1"].health is RankHealth.OK
    assert statuses["TP1"].silent_for == pytest.approx(900.0)
    alone = _statuses([quiet], expectations, now, DEFAULT)["TP1"]
    assert alone.health is RankHealth.STALLED


def test_a_rank_that_keeps_printing_is_not_stalled() -> None:
    expectations = _history(1.0)
    chatty = rank_at(GRAPH_START + 1000.0, hang=Stage.CUDA_GRAPH, chatty=True)
    status = _statuses([chatty], expectations, GRAPH_START + 1000.0)["TP0"]
    assert status.health is RankHealth.OK
    assert status.silent_for == pytest.approx(1.0)


def test_cold_start_uses_the_default_split_and_the_floor() -> None:
    expectations = expectations_for(FP, [], expected_startup=600.0)
    limit = DEFAULT.threshold(Spread(120.0, 240.0, 480.0))
    assert limit == pytest.approx(720.0)
    for offset, health in ((limit - 1, RankHealth.OK), (limit + 1, RankHealth.STALLED)):
        now = LOAD_START + offset
        rank = rank_at(now, hang=Stage.WEIGHT_LOADING)
        assert _statuses([rank], expectations, now, DEFAULT)["TP0"].health is health


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


def test_ranks_blocked_on_a_slower_rank_are_waiting_not_stalled() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    now = LOAD_START + 2.4 * 300.0  # TP1 still loading; the others long since in KV cache
    slow = rank_at(now, tag="TP1", stretch={Stage.WEIGHT_LOADING: 2.5})
    blocked = [rank_at(now, tag=tag, hang=Stage.KV_CACHE) for tag in ("TP0", "TP2")]
    statuses = _statuses([blocked[0], slow, blocked[1]], expectations, now, DEFAULT)
    assert statuses["TP0"].health is RankHealth.OK
    assert statuses["TP0"].reason == "waiting for TP1"
    assert statuses["TP1"].health is RankHealth.LAGGING
    assert "most other ranks left it" in statuses["TP1"].reason


def test_rank_zero_alone_in_the_draft_capture_leaves_no_one_behind() -> None:
    expectations = _history(1.0)
    now = GRAPH_START + 140.0
    others = [rank_at(now, tag=tag, hang=Stage.CUDA_GRAPH) for tag in ("TP1", "TP2")]
    draft = RankState(
        tag="TP0", stage=Stage.CUDA_GRAPH, draft=True, stage_started_at=GRAPH_START + 40.0,
        last_seen_at=now - 1.0, history=others[0].history,
    )  # fmt: skip
    statuses = _statuses([draft, *others], expectations, now, DEFAULT)
    assert [s.health for s in statuses.values()] == [RankHealth.OK] * 3


def test_the_tracker_reports_each_stalled_rank_once() -> None:
    expectations = _history(1.0, 1.02, 0.98)
    tracker = StallTracker()
    reported: list[RankStalled] = []
    for now in range(int(GRAPH_START), int(GRAPH_START) + 400, 5):
        snapshot = snapshot_of(_collective_hang(float(now)))
        reported.extend(tracker.newly_stalled(assess(snapshot, expectations, float(now), DEFAULT)))
    assert sorted(event.rank or "" for event in reported) == list(TAGS)
    first = reported[0]
    assert first.stage is Stage.CUDA_GRAPH
    assert first.threshold == pytest.approx(1.5 * 153.0, rel=0.01)
    assert first.in_stage > first.threshold
    assert "silent" in first.reason
