"""Start-up expectations and the ETA, on synthetic histories with an injected clock."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from tests.engine.startup_factory import FP, USUAL, finished_run, rank_at, snapshot_of
from tui.engine.startup.snapshot import ServerInfo
from tui.engine.startup.vocabulary import Outcome, Stage
from tui.engine.timing.estimate import (
    DEFAULT_SPLIT,
    Basis,
    default_expectations,
    estimate,
    expectations_for,
    rank_timing,
    run_record,
)
from tui.engine.timing.fingerprint import Fingerprint, fingerprint_of, similarity
from tui.engine.timing.spread import Spread, range_label, without_outliers


def test_default_split_covers_the_whole_start() -> None:
    assert sum(DEFAULT_SPLIT.values()) == pytest.approx(1.0)
    plain = default_expectations(600.0)
    speculative = default_expectations(600.0, speculative=True)
    for expectations in (plain, speculative):
        assert sum(s.median for _, s in expectations.stages) == pytest.approx(600.0)
    assert speculative.stage(Stage.CUDA_GRAPH, draft=True) is not None
    assert plain.stage(Stage.CUDA_GRAPH, draft=True) is None


def test_cold_start_uses_the_profile_default_and_says_so() -> None:
    expectations = expectations_for(FP, [], expected_startup=600.0)
    assert expectations.basis is Basis.DEFAULT
    assert expectations.basis_label == "default 10 min"
    eta = estimate(snapshot_of([rank_at(0.0)]), expectations, now=0.0)
    assert eta.remaining.median == pytest.approx(600.0)
    assert eta.remaining.low < 600.0 < eta.remaining.high
    assert "default 10 min" in eta.label


def test_cold_start_with_a_custom_expected_startup() -> None:
    expectations = expectations_for(FP, [], expected_startup=1200.0)
    assert expectations.basis_label == "default 20 min"
    assert expectations.stage(Stage.WEIGHT_LOADING) == Spread(240.0, 480.0, 960.0)


def test_same_fingerprint_history_is_the_basis() -> None:
    runs = [finished_run(scale, recorded_at=i) for i, scale in enumerate((1.0, 1.02, 0.98))]
    expectations = expectations_for(FP, runs)
    assert expectations.basis is Basis.HISTORY
    assert expectations.basis_label == "history: 3 runs"
    assert expectations.total.median == pytest.approx(600.0)
    loading = expectations.stage(Stage.WEIGHT_LOADING)
    assert loading is not None
    assert loading.low == pytest.approx(300.0 * 0.984)
    assert loading.median == pytest.approx(300.0)


def test_similar_runs_are_used_when_the_flags_differ() -> None:
    other_flags = dataclasses.replace(FP, speculative="eagle3", drafter="draft")
    other_gpu = dataclasses.replace(FP, gpu="H100", speculative="eagle3", drafter="draft")
    runs = [finished_run(1.0, fingerprint=other_flags) for _ in range(3)]
    runs += [finished_run(2.0, fingerprint=other_gpu) for _ in range(2)]
    expectations = expectations_for(FP, runs)
    assert expectations.basis is Basis.SIMILAR
    assert expectations.basis_label == "similar runs: 3"
    assert expectations.total.median == pytest.approx(600.0)


def test_another_model_falls_back_to_the_default() -> None:
    runs = [finished_run(fingerprint=dataclasses.replace(FP, model="Qwen3-235B"))]
    assert expectations_for(FP, runs).basis is Basis.DEFAULT


def test_failed_runs_do_not_shape_the_expectation() -> None:
    failed = dataclasses.replace(finished_run(5.0), outcome=Outcome.FAILED, total_seconds=None)
    expectations = expectations_for(FP, [finished_run(1.0), failed])
    assert expectations.runs == 1
    assert expectations.total.median == pytest.approx(600.0)


def test_outliers_do_not_move_median_or_p95() -> None:
    runs = [finished_run(scale) for scale in (1.0, 1.01, 0.99, 1.02, 0.98, 4.0)]
    expectations = expectations_for(FP, runs)
    assert expectations.total.median == pytest.approx(600.0, rel=0.02)
    assert expectations.total.high < 620.0
    graph = expectations.stage(Stage.CUDA_GRAPH)
    assert graph is not None
    assert graph.high < 160.0


def test_three_ok_runs_predict_the_fourth_within_ten_percent() -> None:
    rng = random.Random(7)
    for _ in range(50):
        scales = [rng.uniform(0.95, 1.05) for _ in range(4)]
        runs = [finished_run(scale, recorded_at=i) for i, scale in enumerate(scales)]
        predicted = expectations_for(FP, runs[:3]).total.median
        actual = runs[3].total_seconds
        assert actual is not None
        assert abs(predicted - actual) <= 0.10 * actual


def test_eta_counts_the_stages_still_to_go_plus_the_rest_of_the_current_one() -> None:
    expectations = expectations_for(FP, [finished_run(1.0), finished_run(1.0)])
    now = 100.0  # 50 s into weight loading, which usually takes 300 s
    eta = estimate(
        snapshot_of([rank_at(now, tag="TP0"), rank_at(now, tag="TP1")]), expectations, now
    )
    assert eta.remaining.median == pytest.approx(500.0)
    assert eta.fraction == pytest.approx(100.0 / 600.0)
    assert eta.elapsed == pytest.approx(100.0)


def test_the_slowest_rank_decides_the_eta() -> None:
    expectations = expectations_for(FP, [finished_run(1.0)])
    now = 400.0
    ahead, behind = rank_at(now, tag="TP0"), rank_at(now, tag="TP1", scale=1.5)
    eta = estimate(snapshot_of([ahead, behind]), expectations, now)
    alone = estimate(snapshot_of([behind]), expectations, now)
    assert eta.remaining == alone.remaining
    assert behind.stage is Stage.WEIGHT_LOADING


def test_eta_range_follows_the_spread_of_past_totals() -> None:
    runs = [finished_run(scale) for scale in (0.8, 0.9, 1.0, 1.1, 1.2)]
    expectations = expectations_for(FP, runs)
    eta = estimate(snapshot_of([rank_at(0.0)]), expectations, now=0.0)
    assert eta.remaining.low < eta.remaining.median < eta.remaining.high
    assert eta.remaining.label == "8-12 min"


def test_eta_fraction_grows_and_the_remainder_shrinks_over_a_healthy_start() -> None:
    expectations = expectations_for(FP, [finished_run(1.0)])
    fractions, remainders = [], []
    for now in range(0, 600, 7):
        eta = estimate(snapshot_of([rank_at(float(now))]), expectations, float(now))
        fractions.append(eta.fraction)
        remainders.append(eta.remaining.median)
    assert fractions == sorted(fractions)
    assert remainders == sorted(remainders, reverse=True)


def test_a_ready_server_has_nothing_left() -> None:
    expectations = expectations_for(FP, [finished_run(1.0)])
    ready = snapshot_of([rank_at(700.0)], ready_at=600.0)
    eta = estimate(ready, expectations, 700.0)
    assert (eta.fraction, eta.remaining.median) == (1.0, 0.0)


def test_overdue_start_says_so() -> None:
    expectations = expectations_for(FP, [finished_run(1.0)])
    late = rank_at(2000.0, hang=Stage.WARMUP)
    assert estimate(snapshot_of([late]), expectations, 2000.0).label.startswith("overdue")


def test_rank_timing_shows_the_stage_time_against_the_usual_one() -> None:
    expectations = expectations_for(FP, [finished_run(1.0), finished_run(1.0)])
    timing = rank_timing(rank_at(340.0), expectations, 340.0)
    assert timing.stage is Stage.WEIGHT_LOADING
    assert timing.ratio == pytest.approx(290.0 / 300.0)
    assert timing.label == "4m50s / usual about 5 min"


def test_run_record_keeps_every_rank_and_the_total() -> None:
    record = finished_run(1.0)
    assert record.total_seconds == pytest.approx(sum(USUAL.values()))
    assert {s.rank for s in record.samples} == {"TP0", "TP1"}
    assert record.stage_seconds()[(Stage.CUDA_GRAPH, False)] == pytest.approx(150.0)
    late_reader = dataclasses.replace(
        snapshot_of([rank_at(700.0)], ready_at=5.0), first_ts=1000.0, ready_ts=1590.0
    )
    assert run_record(FP, late_reader, recorded_at=1.0).total_seconds == pytest.approx(590.0)
    unfinished = run_record(FP, snapshot_of([rank_at(100.0)]), recorded_at=1.0)
    assert unfinished.outcome is Outcome.INCOMPLETE
    assert unfinished.total_seconds is None


def test_spread_helpers() -> None:
    assert without_outliers([1.0, 1.0, 1.0, 1.1, 50.0]) == [1.0, 1.0, 1.0, 1.1]
    assert without_outliers([1.0, 50.0]) == [1.0, 50.0]
    assert Spread.of([5.0]) == Spread.exactly(5.0)
    with pytest.raises(ValueError, match="no finite"):
        Spread.of([float("nan")])
    assert range_label(360, 480) == "6-8 min"
    assert range_label(40, 55) == "40-55 s"
    assert range_label(400, 420) == "about 7 min"


def test_fingerprint_round_trips_and_tolerates_hostile_json() -> None:
    assert Fingerprint.from_json(FP.to_json()) == FP
    hostile = json.dumps({"engine": 3, "tp": "8", "model": ["x"], "ep": True, "extra": 1})
    assert Fingerprint.from_json(hostile) == Fingerprint()
    with pytest.raises(ValueError, match="JSON object"):
        Fingerprint.from_json("[1]")
    assert FP.key == Fingerprint.from_json(FP.to_json()).key
    assert FP.key != dataclasses.replace(FP, tp=8).key


def test_fingerprint_of_a_server_and_its_label() -> None:
    server = ServerInfo(
        engine="sglang", version="0.5.21", model="Kimi-K2.5", drafter="eagle-head",
        speculative_algorithm="EAGLE3", tp_size=8, ep_size=8,
    )  # fmt: skip
    fp = fingerprint_of(server, gpu="H200", host="gpu1", speculative_flags="steps=3")
    assert fp.label == "sglang 0.5.21 Kimi-K2.5 +EAGLE3 steps=3:eagle-head TP8EP8 H200 @gpu1"
    assert similarity(fp, dataclasses.replace(fp, model="other")) == 0
    assert similarity(fp, fp) > similarity(fp, dataclasses.replace(fp, tp=4)) > 0
