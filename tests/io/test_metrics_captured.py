"""``/metrics`` as real servers answered it (captured text kept beside this test, each file
naming where it was published), read through the same parser and dialect names as a live scrape."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.engine.metrics.metrics_window import MetricsWindow
from tui.engine.metrics.reading import engine_names, read_scrape
from tui.engine.servers import registry
from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.io.metrics.exposition import parse_exposition

CAPTURED = Path(__file__).parent / "captured_metrics"


def _text(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


def test_sglangs_published_answer_gives_every_figure_bringup_shows() -> None:
    scrape = parse_exposition(_text("sglang-docs-production-metrics.prom"), at=100.0)
    candidates = [(d.name, d.metric_names) for d in registry.dialects()]
    assert engine_names(scrape, candidates) == "sglang"
    reading = read_scrape(scrape, SGLANG.metric_names)
    assert reading.gauges == pytest.approx(
        {
            "running": 162.0,
            "queued": 2826.0,
            "gen_throughput": 86.50814177726902,
            "kv_usage": 0.28,
            "prefix_hit_rate": 0.007507552643049313,
        }
    )
    assert reading.counters == {"generation_tokens": 7.557572e06}
    ttft = reading.histograms["ttft"]
    assert ttft[0] == (0.001, 0.0)
    assert ttft[-1][1] == 11008.0
    itl = reading.histograms["itl"]  # the older name of the inter-token histogram
    assert itl[-1][1] == 7.400757e06
    assert [count for _, count in itl] == sorted(count for _, count in itl)


def test_an_unchanged_answer_two_seconds_later_is_an_idle_interval() -> None:
    text = _text("sglang-docs-production-metrics.prom")
    window = MetricsWindow()
    for at in (100.0, 102.0):
        window.add(read_scrape(parse_exposition(text, at), SGLANG.metric_names))
    figures = window.intervals[-1]
    assert figures.seconds == pytest.approx(2.0)
    assert figures.tok_s == 0.0
    assert figures.ttft_p50 is None
    assert figures.itl_p99 is None
    assert figures.running == 162
    assert figures.queued == 2826


def _vllm(name: str) -> tuple[str | None, dict[str, float], dict[str, float]]:
    scrape = parse_exposition(_text(name), at=100.0)
    found = engine_names(scrape, [(d.name, d.metric_names) for d in registry.dialects()])
    reading = read_scrape(scrape, registry.or_default("vllm").metric_names)
    return found, dict(reading.gauges), dict(reading.counters)


def test_a_vllm_0_10_answer_with_deprecated_twins_is_read_by_the_names_it_has() -> None:
    """vLLM 0.10 sends ``gpu_prefix_cache_*`` (deprecated) beside the v1 names, and ``_created``
    gauges beside every counter: a figure is read by the name the answer has (the queries by
    the v1 name; the hits, whose v1 line the thread cut off, by the deprecated one), the
    ``_created`` times are not counters, and a tiny KV-cache use keeps its value."""
    found, gauges, counters = _vllm("vllm-0.10-production-stack-617.prom")
    assert found == "vllm"
    assert gauges == {"kv_usage": pytest.approx(9.75010481363281e-06)}
    assert counters == {"prefix_hits": 0.0, "prefix_queries": 32.0}


def test_a_v0_vllm_answer_is_read_by_its_older_names() -> None:
    found, gauges, counters = _vllm("vllm-v0-production-stack-318.prom")
    assert found == "vllm"
    assert gauges == {"running": 0.0, "queued": 0.0, "kv_usage": 0.0}
    assert counters == {}
