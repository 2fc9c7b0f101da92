"""The simulator's ``/metrics``: the engines' names and types, values that follow what it
generated, and ``--scenario accept-collapse``, where the accept length falls to 1 mid-run."""

from __future__ import annotations

import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.simserver import FAST, Sim, SimFactory
from tui.engine.metrics.metrics_window import MetricsWindow
from tui.engine.metrics.reading import read_scrape
from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.engine.servers.vllm.vllm_dialect import VLLM
from tui.io.metrics.exposition import parse_exposition

SGLANG_READY = "The server is fired up and ready to roll!"
VLLM_READY = "INFO:     Application startup complete."
PACE = ["--time-scale", FAST, "--decode-tok-s", "400", "--ttft-ms", "5", "--accept-len", "3.0"]
SGLANG_FLAGS = [
    *PACE,
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d/eagle3",
    "--enable-metrics",
]
SPEC = '{"method": "eagle3", "model": "d/eagle3", "num_speculative_tokens": 3}'
VLLM_FLAGS = ["--engine", "vllm", "serve", "m", "--speculative-config", SPEC, *PACE]


def _types(text: str) -> dict[str, str]:
    return {family.name: family.type for family in text_string_to_metric_families(text)}


def _generate(sim: Sim, engine: str, tokens: int) -> None:
    with httpx.Client(base_url=sim.url, timeout=60) as client:
        if engine == "sglang":
            body = {"text": "go", "sampling_params": {"max_new_tokens": tokens}}
            client.post("/generate", json=body).raise_for_status()
        else:
            body2 = {"prompt": "go", "max_tokens": tokens}
            client.post("/v1/completions", json=body2).raise_for_status()


def _scrape(sim: Sim, window: MetricsWindow, engine: str) -> str:
    text = httpx.get(f"{sim.url}/metrics", timeout=10).text
    names = (SGLANG if engine == "sglang" else VLLM).metric_names
    window.add(read_scrape(parse_exposition(text, time.monotonic()), names))
    return text


def test_sglang_publishes_its_names_and_types(start_sim: SimFactory) -> None:
    sim = start_sim(SGLANG_FLAGS)
    sim.wait_for(SGLANG_READY)
    window = MetricsWindow()
    _scrape(sim, window, "sglang")
    _generate(sim, "sglang", 400)
    text = _scrape(sim, window, "sglang")
    types = _types(text)
    for name in ("num_running_reqs", "num_queue_reqs", "token_usage", "gen_throughput",
                 "cache_hit_rate", "spec_accept_length", "spec_accept_rate"):  # fmt: skip
        assert types[f"sglang:{name}"] == "gauge", name
    assert types["sglang:generation_tokens"] == "counter"
    assert types["sglang:time_to_first_token_seconds"] == "histogram"
    assert types["sglang:inter_token_latency_seconds"] == "histogram"
    figures = window.intervals[-1]
    assert figures.generated == 400
    assert figures.accept_length == pytest.approx(3.0, rel=0.1)
    assert figures.acceptance_rate == pytest.approx(2 / 3, rel=0.15)
    # Three tokens per verify step at 400 tokens/s: one step every 7.5 ms, 2.5 ms a token.
    assert figures.itl_p50 is not None
    assert 0.001 < figures.itl_p50 < 0.01


def test_vllm_publishes_its_names_and_types(start_sim: SimFactory) -> None:
    sim = start_sim(VLLM_FLAGS)
    sim.wait_for(VLLM_READY)
    window = MetricsWindow()
    _scrape(sim, window, "vllm")
    _generate(sim, "vllm", 400)
    types = _types(_scrape(sim, window, "vllm"))
    for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc"):
        assert types[f"vllm:{name}"] == "gauge", name
    for name in ("generation_tokens", "prefix_cache_hits", "prefix_cache_queries",
                 "num_preemptions", "spec_decode_num_accepted_tokens", "spec_decode_num_drafts",
                 "spec_decode_num_draft_tokens"):  # fmt: skip
        assert types[f"vllm:{name}"] == "counter", name
    assert types["vllm:inter_token_latency_seconds"] == "histogram"
    figures = window.intervals[-1]
    assert figures.generated == 400
    assert figures.accept_length == pytest.approx(3.0, rel=0.05)
    assert figures.prefix_hit_rate == 0.0
    assert figures.preemptions == 0


@pytest.mark.parametrize(("engine", "flags", "ready"), [
    ("sglang", SGLANG_FLAGS, SGLANG_READY), ("vllm", VLLM_FLAGS, VLLM_READY),
])  # fmt: skip
def test_the_accept_length_collapses_mid_run(
    start_sim: SimFactory, engine: str, flags: list[str], ready: str
) -> None:
    sim = start_sim([*flags, "--scenario", "accept-collapse", "--collapse-after", "1.0"])
    sim.wait_for(ready)
    window = MetricsWindow()
    _scrape(sim, window, engine)
    _generate(sim, engine, 200)
    _scrape(sim, window, engine)
    before = window.intervals[-1].accept_length
    time.sleep(1.0)
    _generate(sim, engine, 200)
    _scrape(sim, window, engine)
    assert before == pytest.approx(3.0, rel=0.1)
    assert window.intervals[-1].accept_length == pytest.approx(1.0)


def test_the_collapse_needs_speculative_decoding() -> None:
    from tui.sim.config import SimConfig, validate

    problems = validate(SimConfig(scenario="accept-collapse"))
    assert any("needs speculative decoding" in problem for problem in problems)
