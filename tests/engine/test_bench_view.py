"""Accept lengths around a benchmark level (client, server differenced, log) and token counts."""

from __future__ import annotations

import pytest

from tui.engine.bench.bench_view import (
    LevelExtras,
    accept_figures,
    accept_view,
    accepts_between,
    sglang_accept_between,
    sglang_spec_counters,
    throughputs,
    token_view,
)
from tui.engine.bench.level_fields import level_fields, level_from_fields
from tui.engine.bench.level_figures import LevelFigures
from tui.engine.servers.hits import SpecHit
from tui.engine.startup.decode_stats import RING, DecodeTracker
from tui.engine.startup.snapshot import DecodeSummary


def _tracker(values: list[float]) -> DecodeTracker:
    tracker = DecodeTracker()
    for value in values:
        tracker.add_spec(SpecHit(value, None))
    return tracker


def test_only_values_logged_during_the_level_are_taken() -> None:
    tracker = _tracker([1.5, 1.6])
    before = tracker.summary()
    for value in (2.4, 2.6):
        tracker.add_spec(SpecHit(value, None))
    assert accepts_between(before, tracker.summary()) == (2.4, 2.6)
    assert accepts_between(tracker.summary(), tracker.summary()) == ()


def test_a_full_ring_still_gives_the_new_values() -> None:
    tracker = _tracker([1.0] * (RING + 10))
    before = tracker.summary()
    tracker.add_spec(SpecHit(3.0, None))
    after = tracker.summary()
    assert len(after.accept_len) == RING
    assert accepts_between(before, after) == (3.0,)


def test_a_new_run_in_between_counts_from_zero() -> None:
    before = DecodeSummary(accept_len=(1.0,) * 5, accept_count=50)
    after = DecodeSummary(accept_len=(2.0, 2.2), accept_count=2)
    assert accepts_between(before, after) == (2.0, 2.2)


def test_sglang_counters_are_summed_and_differenced() -> None:
    text = (
        "# TYPE sglang:generation_tokens_total counter\n"
        'sglang:generation_tokens_total{model_name="m",tp_rank="0"} 1000.0\n'
        'sglang:spec_verify_calls_total{model_name="m",tp_rank="0"} 400.0\n'
        "sglang:spec_verify_calls_total nan\n"
        "sglang:spec_verify_calls_total junk\n"
    )
    before = sglang_spec_counters(text)
    assert before == {"tokens": 1000.0, "verify": 400.0}
    after = {"tokens": 1250.0, "verify": 500.0}
    assert sglang_accept_between(before, after) == pytest.approx(2.5)
    assert sglang_accept_between(after, after) is None


def extra_fields(extras: LevelExtras, fields: dict[str, float]) -> dict[str, object]:
    """The saved fields of the accept figures ``extras`` give a level read from ``fields``."""
    figures = accept_figures(extras, level_from_fields(fields))
    return level_fields(LevelFigures(1, accepts=figures))


def test_server_view_prefers_differenced_counters_over_the_lifetime_average() -> None:
    lifetime = {"server_avg_spec_accept_length_after": 2.1, "accept_length": 2.5}
    extras = LevelExtras(100, (2.4, 2.6), {"tokens": 0.0, "verify": 0.0},
                         {"tokens": 250.0, "verify": 100.0})  # fmt: skip
    fields = extra_fields(extras, lifetime)
    assert fields["server_accept_length"] == pytest.approx(2.5)
    assert fields["server_accept_basis"] == "differenced"
    assert fields["log_accept_length"] == pytest.approx(2.5)
    assert fields["log_accept_samples"] == 2
    only_lifetime = extra_fields(LevelExtras(100), lifetime)
    assert only_lifetime["server_accept_basis"] == "lifetime"
    vllm = extra_fields(LevelExtras(100), {"spec_decode_acceptance_length": 2.9})
    assert vllm["server_accept_length"] == 2.9
    nothing = extra_fields(LevelExtras(100), {})
    assert nothing["server_accept_length"] is None
    assert nothing["server_accept_basis"] is None
    assert nothing["log_accept_length"] is None


def test_views_read_stored_fields_defensively() -> None:
    saved = {"accept_length": 2.5, "server_accept_length": "2.4",
             "log_accept_length": float("nan"), "log_accept_samples": True}  # fmt: skip
    view = accept_view(level_from_fields(saved))
    assert (view.client, view.server, view.log, view.log_samples) == (2.5, None, None, 0)
    assert view.any
    tokens = token_view(
        level_from_fields({"total_output_tokens": 512, "client_output_tokens": 510})
    )
    assert tokens.disagree
    same = level_from_fields({"total_output_tokens": 512, "client_output_tokens": 512})
    assert not token_view(same).disagree
    assert token_view(level_from_fields({"token_mismatches": 2})).disagree
    levels = [level_from_fields({"output_throughput": 10.5}), level_from_fields({})]
    assert throughputs(levels) == [10.5, 0.0]
