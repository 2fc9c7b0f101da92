"""Figures per data-parallel engine (vLLM's ``engine`` label, SGLang's ``dp_rank`` and
``tp_rank``) and the rank panel each belongs on; one engine's figures are the server's."""

from __future__ import annotations

import pytest

from tui.engine.metrics.figure_text import panel_cells
from tui.engine.metrics.figures import ServingFigures
from tui.engine.metrics.metrics_window import MetricsWindow
from tui.engine.metrics.rank_figures import RankFigures, rank_of
from tui.engine.metrics.reading import read_scrape
from tui.engine.metrics.samples import MetricSample, MetricScrape
from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.engine.servers.vllm.vllm_dialect import VLLM


def _vllm(at: float, engines: dict[str, tuple[int, int, float, int]]) -> MetricScrape:
    """Per ``engine`` label: running, waiting, KV use and tokens generated."""
    samples = []
    for engine, (running, waiting, kv, generated) in engines.items():
        labels = (("engine", engine), ("model_name", "m"))
        samples += [
            MetricSample("vllm:num_requests_running", labels, running),
            MetricSample("vllm:num_requests_waiting", labels, waiting),
            MetricSample("vllm:kv_cache_usage_perc", labels, kv),
            MetricSample("vllm:generation_tokens_total", labels, generated),
        ]
    return MetricScrape(at, tuple(samples))


def test_vllm_engines_are_told_apart_and_the_header_still_sums_them() -> None:
    window = MetricsWindow()
    window.add(
        read_scrape(_vllm(0.0, {"0": (4, 0, 0.5, 1000), "1": (2, 3, 0.25, 500)}), VLLM.metric_names)
    )
    reading = read_scrape(
        _vllm(2.0, {"0": (4, 1, 0.5, 3000), "1": (2, 3, 0.75, 600)}), VLLM.metric_names
    )
    figures = window.add(reading)
    assert reading.gauges["running"] == 6  # the header's figures add the engines up
    assert figures.interval.tok_s == pytest.approx((2000 + 100) / 2)
    first, second = figures.ranks
    assert (first.name, first.tok_s, first.running, first.queued, first.kv_usage) == (
        "DP0", 1000.0, 4, 1, 0.5,
    )  # fmt: skip
    assert (second.name, second.tok_s, second.queued, second.kv_usage) == ("DP1", 50.0, 3, 0.75)
    tags = ["APIServer", "EngineCore_DP0", "EngineCore_DP1", "Worker_TP0", "Worker_TP1"]
    placed = rank_of(tags, figures.ranks)
    assert {tag: group.name for tag, group in placed.items()} == {
        "EngineCore_DP0": "DP0", "EngineCore_DP1": "DP1",
    }  # fmt: skip
    cells = panel_cells(tags, figures.short, figures.ranks)
    assert cells["EngineCore_DP1"] == (("tok/s", "50"), ("run", "2"), ("queue", "3"), ("KV", "75%"))


def test_one_engine_is_the_server_and_goes_on_the_first_rank() -> None:
    reading = read_scrape(_vllm(0.0, {"0": (4, 0, 0.5, 1000)}), VLLM.metric_names)
    assert reading.groups == {}
    server = ServingFigures(10.0, 10.0, tok_s=1600.0, running=4.0, queued=0.0, kv_usage=0.5)
    cells = panel_cells(["TP0", "TP1"], server, ())
    assert cells == {"TP0": (("tok/s", "1600"), ("run", "4"), ("queue", "0"), ("KV", "50%"))}
    assert panel_cells(["TP0"], None, ()) == {}


def test_sglang_dp_attention_ranks_carry_their_own_scheduler() -> None:
    samples = []
    for dp in range(2):
        labels = (("dp_rank", str(dp)), ("model_name", "m"), ("tp_rank", str(dp)))
        samples += [
            MetricSample("sglang:num_running_reqs", labels, 3 + dp),
            MetricSample("sglang:num_queue_reqs", labels, dp),
            MetricSample("sglang:token_usage", labels, 0.1 * (dp + 1)),
        ]
    reading = read_scrape(MetricScrape(0.0, tuple(samples)), SGLANG.metric_names)
    ranks = MetricsWindow().add(reading).ranks
    assert [group.name for group in ranks] == ["DP0 TP0", "DP1 TP1"]
    placed = rank_of(["DP0 TP0 EP0", "DP1 TP1 EP1"], ranks)
    assert placed["DP1 TP1 EP1"].running == 4
    assert placed["DP1 TP1 EP1"].tok_s is None  # one reading: no rate yet


def test_a_label_with_one_value_tells_nothing_apart() -> None:
    labels = (("model_name", "m"), ("tp_rank", "0"))
    scrape = MetricScrape(0.0, (MetricSample("sglang:num_running_reqs", labels, 3),))
    assert read_scrape(scrape, SGLANG.metric_names).groups == {}
    assert rank_of(["TP0"], (RankFigures((("TP", 5),)),)) == {}
