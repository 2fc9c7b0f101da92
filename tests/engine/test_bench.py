"""Benchmark arithmetic against hand-computed values (published definitions, to 1e-9)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.bench.bench_math import (
    Distribution,
    LevelResult,
    RequestRecord,
    Slo,
    TokenChunk,
    percentile,
    summarize,
)
from tui.engine.bench.level_fields import level_fields
from tui.engine.bench.level_figures import LevelFigures, figures_of

TOL = 1e-9

# Six tokens, one three-token chunk (speculative), 3 verify steps.
SPEC = RequestRecord(
    sent_at=0.0,
    ended_at=0.4,
    chunks=(TokenChunk(0.1, 1), TokenChunk(0.2, 1), TokenChunk(0.35, 3), TokenChunk(0.4, 1)),
    server_tokens=6,
    prompt_tokens=10,
    spec_verify_ct=3,
)
ONE_TOKEN = RequestRecord(1.0, 1.25, (TokenChunk(1.2, 1),), server_tokens=1, prompt_tokens=10)
NO_TOKEN = RequestRecord(2.0, 2.05, (), server_tokens=0, prompt_tokens=10)
FAILED = RequestRecord(0.5, 0.6, (), success=False, error="HTTP 500")
# The server says 5 tokens, the client counted 4: a disagreement.
MISMATCH = RequestRecord(
    0.2,
    0.8,
    (TokenChunk(0.5, 2), TokenChunk(0.7, 2)),
    server_tokens=5,
    prompt_tokens=12,
    spec_verify_ct=2,
)
RECORDS = (SPEC, ONE_TOKEN, NO_TOKEN, FAILED, MISMATCH)


def close(actual: float | None, expected: float) -> bool:
    return actual is not None and abs(actual - expected) <= TOL


def test_per_request_definitions() -> None:
    assert close(SPEC.ttft, 0.1)
    assert close(SPEC.tpot, (0.4 - 0.1) / 5)
    assert close(SPEC.decode_speed, 5 / 0.3)
    assert ONE_TOKEN.decode_speed is None
    gaps = [0.1, 0.05, 0.05, 0.05, 0.05]
    assert all(close(a, b) for a, b in zip(SPEC.token_gaps, gaps, strict=True))
    # vLLM's ITL: one gap per chunk, whatever the tokens it carried.
    assert all(close(a, b) for a, b in zip(SPEC.itl, [0.1, 0.15, 0.05], strict=True))
    assert SPEC.accept_length == 2.0
    assert ONE_TOKEN.tpot is None
    assert ONE_TOKEN.itl == []
    assert ONE_TOKEN.token_gaps == []
    assert NO_TOKEN.ttft is None
    assert (MISMATCH.client_tokens, MISMATCH.output_tokens) == (4, 5)


def test_level_counts_and_throughput() -> None:
    result = summarize(RECORDS, concurrency=4, duration=2.5)
    assert (result.completed, result.failed, result.concurrency) == (4, 1, 4)
    assert (result.total_input_tokens, result.total_output_tokens) == (42, 12)
    assert close(result.request_throughput, 4 / 2.5)
    assert close(result.output_throughput, 12 / 2.5)
    assert result.token_mismatches == 1
    assert result.errors == ("HTTP 500",)


def test_level_ttft_tpot_itl_e2el() -> None:
    result = summarize(RECORDS, concurrency=4, duration=2.5)
    assert result.ttft.count == 3
    assert close(result.ttft.mean, 0.2)
    assert close(result.ttft.median, 0.2)
    assert close(result.ttft.p99, 0.2 + 0.98 * 0.1)
    assert close(result.ttft.std, math.sqrt(0.02 / 3))
    # Latency ends at the last chunk with a token (MISMATCH: 0.7 - 0.2, not the end at 0.8).
    assert close(result.tpot.mean, (0.06 + 0.05) / 2)
    assert close(result.tpot.p99, 0.05 + 0.99 * 0.01)
    assert result.token_gap.count == 7
    assert close(result.token_gap.mean, 0.5 / 7)
    assert close(result.token_gap.median, 0.05)
    assert close(result.token_gap.p90, 0.1)
    assert result.itl.count == 4
    assert close(result.itl.mean, 0.5 / 4)
    assert close(result.itl.median, 0.125)
    # 0.4, 0.2 (ONE_TOKEN's last chunk at 1.2), 0.05 (no token: the end), 0.5.
    assert close(result.e2el.mean, 1.15 / 4)
    assert close(result.e2el.median, (0.2 + 0.4) / 2)
    assert close(result.e2el.p99, 0.4 + 0.97 * 0.1)


def test_level_decode_speed_and_accept_length() -> None:
    result = summarize(RECORDS, concurrency=4, duration=2.5)
    # SPEC: 5 tokens after the first chunk in 0.3 s; MISMATCH: 5 - 2 tokens in 0.2 s.
    assert close(result.decode_speed.mean, (5 / 0.3 + 3 / 0.2) / 2)
    assert result.decode_speed.count == 2
    assert close(result.accept_length, 11 / 5)
    assert close(result.accept_lengths.mean, 2.25)


def test_goodput_counts_requests_within_every_slo() -> None:
    # TTFT 100, 200, 300 ms; TPOT 60, 0 (one token), 50 ms for the completed requests with tokens.
    result = summarize(RECORDS, concurrency=4, duration=2.0, slo=Slo(ttft_ms=250, tpot_ms=70))
    assert close(result.request_goodput, 2 / 2.0)
    assert summarize(RECORDS, 4, 2.0).request_goodput is None


def test_duration_defaults_to_the_span_of_the_records() -> None:
    assert close(summarize(RECORDS, 1).duration, 2.05)
    empty = summarize([], 1)
    assert (empty.completed, empty.request_throughput, empty.ttft) == (0, 0.0, Distribution())


def test_percentile_matches_linear_interpolation() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 25) == 1.75
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([7.0], 99) == 7.0
    assert percentile([1.0, 2.0], 100) == 2.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_stays_within_the_values(values: list[float], p: float) -> None:
    found = percentile(values, p)
    assert min(values) - TOL <= found <= max(values) + TOL


def result_fields(result: LevelResult) -> dict[str, Any]:
    """The client's result as the flat fields it is saved in."""
    figures: LevelFigures = figures_of(result)
    return level_fields(figures)


def test_result_fields_use_vllm_names_in_milliseconds() -> None:
    fields = result_fields(summarize(RECORDS, concurrency=4, duration=2.5))
    for name in ("completed", "failed", "duration", "request_throughput", "output_throughput"):
        assert name in fields
    assert close(fields["mean_ttft_ms"], 200.0)
    assert close(fields["median_tpot_ms"], 55.0)
    assert close(fields["p99_e2el_ms"], 497.0)
    assert close(fields["mean_token_gap_ms"], 500 / 7)
    assert close(fields["mean_itl_ms"], 125.0)
    assert close(fields["total_token_throughput"], (42 + 12) / 2.5)
    assert close(fields["accept_length"], 2.2)
    assert fields["max_concurrency"] == 4
    empty = result_fields(summarize([], 1))
    assert empty["mean_ttft_ms"] is None
