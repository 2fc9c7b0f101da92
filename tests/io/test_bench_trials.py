"""More trials of a level pool the per-request percentiles of every trial, against the real
simulator on uvicorn.

Two batches of trials of the same level are measured; the second batch generates longer
outputs, so its latencies differ from the first's and a percentile of the second batch alone
cannot pass for the pooled one. Each pooled percentile must equal the percentile, as
``tui.engine.bench.bench_math`` defines it (linear interpolation between closest ranks), of the
union of both batches' per-request values, computed here from the records the client returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import pytest

from tests.simserver import FAST, Sim, running_sim
from tui.engine.bench.bench_math import RequestRecord
from tui.engine.bench.level_figures import LevelFigures, Stats
from tui.engine.bench.load_plan import LoadLevel
from tui.engine.bench.trial_figures import with_more_trials
from tui.engine.bench.vllm_result import ResultMeta, vllm_result
from tui.io.bench.bench_client import BenchClient, LevelReport, Workload, level_figures

SIM_FLAGS = [
    "--time-scale", FAST, "--ttft-ms", "40", "--decode-tok-s", "400",
    "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/eagle3",
    "--accept-len", "2.5",
]  # fmt: skip
PROMPTS = ("one", "two", "three", "four", "five")
LEVEL = LoadLevel(2)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    with running_sim(tmp_path_factory.mktemp("trials"), SIM_FLAGS) as server:
        yield server


def percentile(values: Sequence[float], p: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


async def _batch(url: str, output_len: int, seed: int) -> LevelReport:
    workload = Workload(PROMPTS, output_len=output_len, concurrency=(LEVEL.concurrency,),
                        trials=2, seed=seed, warmup_requests=1)  # fmt: skip
    async with BenchClient(url, workload) as client:
        await client.resolve_model()
        await client.warm_up()
        return await client.run_level(LEVEL)


PerRequest = Callable[[RequestRecord], list[float]]
VALUES: dict[str, PerRequest] = {
    "ttft_ms": lambda r: [] if r.ttft is None else [r.ttft * 1000.0],
    "tpot_ms": lambda r: [] if r.tpot is None else [r.tpot * 1000.0],
    "itl_ms": lambda r: [gap * 1000.0 for gap in r.itl],
    "e2el_ms": lambda r: [r.latency * 1000.0],
    "token_gap_ms": lambda r: [gap * 1000.0 for gap in r.token_gaps],
}
POINTS = (("median", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0))


def _union(records: Sequence[RequestRecord], figure: str) -> list[float]:
    return [value for r in records if r.success for value in VALUES[figure](r)]


def _stats(figures: LevelFigures, figure: str) -> Stats:
    stats = getattr(figures, figure)
    assert isinstance(stats, Stats)
    return stats


async def test_more_trials_pool_the_percentiles_of_every_trials_requests(sim: Sim) -> None:
    first = await _batch(sim.url, output_len=12, seed=0)
    second = await _batch(sim.url, output_len=40, seed=2)
    later = level_figures(second)
    pooled = with_more_trials(level_figures(first), later)
    every = (*first.records, *second.records)
    assert len(every) == 4 * len(PROMPTS)
    assert all(record.success for record in every)
    assert pooled.completed == len(every)
    assert pooled.records == every
    for figure in VALUES:
        values = _union(every, figure)
        stats = _stats(pooled, figure)
        for name, point in POINTS:
            assert getattr(stats, name) == pytest.approx(percentile(values, point)), (figure, name)
        assert stats.mean == pytest.approx(math.fsum(values) / len(values)), figure
        assert stats.max == pytest.approx(max(values)), figure
    # The second batch's outputs are longer: its own E2E median is not the pooled one.
    assert _stats(later, "e2el_ms").median != pytest.approx(_stats(pooled, "e2el_ms").median)
    tokens = sum(record.output_tokens for record in every)
    duration = first.result.duration + second.result.duration
    assert pooled.total_output_tokens == tokens
    assert pooled.duration == pytest.approx(duration)
    assert pooled.output_throughput == pytest.approx(tokens / duration)
    spread = pooled.spread("output_throughput")
    assert spread is not None
    assert spread.n == 4


async def test_the_result_file_of_pooled_trials_carries_the_pooled_figures(sim: Sim) -> None:
    first = await _batch(sim.url, output_len=12, seed=0)
    second = await _batch(sim.url, output_len=24, seed=2)
    pooled = with_more_trials(level_figures(first), level_figures(second))
    meta = ResultMeta("20260101-000000", "m", "generate")
    body = vllm_result(pooled, meta, detailed=True)
    every = (*first.records, *second.records)
    assert body["completed"] == len(every)
    assert len(body["ttfts"]) == len(body["itls"]) == len(every)
    ttfts = [value * 1000.0 for value in body["ttfts"]]
    assert body["p99_ttft_ms"] == pytest.approx(percentile(ttfts, 99.0))
    assert body["median_itl_ms"] == pytest.approx(
        percentile([gap * 1000.0 for gaps in body["itls"] for gap in gaps], 50.0)
    )
    # Without the earlier records (a level read back from the store) nothing is made up: the
    # later trials' own percentiles stay, the counts add up.
    alone = with_more_trials(replace(level_figures(first), records=()), level_figures(second))
    assert alone.completed == len(every)
    assert alone.ttft_ms == level_figures(second).ttft_ms
