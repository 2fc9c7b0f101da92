"""Prometheus text exposition of the simulator's counters, with SGLang's and vLLM's names."""

from __future__ import annotations

from tui.sim.config import SimConfig
from tui.sim.stats import Histogram, ServerStats

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _labels(pairs: dict[str, str]) -> str:
    inner = ",".join(f'{key}="{_escape(value)}"' for key, value in pairs.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _metric(out: list[str], name: str, kind: str, doc: str, labels: str, value: float) -> None:
    out.append(f"# HELP {name} {doc}")
    out.append(f"# TYPE {name} {kind}")
    out.append(f"{name}{labels} {float(value)}")


def _histogram(
    out: list[str], name: str, doc: str, labels: dict[str, str], hist: Histogram
) -> None:
    out.append(f"# HELP {name} {doc}")
    out.append(f"# TYPE {name} histogram")
    counts = hist.counts or [0] * len(hist.bounds)
    for bound, count in zip(hist.bounds, counts, strict=True):
        out.append(f"{name}_bucket{_labels({**labels, 'le': str(bound)})} {float(count)}")
    out.append(f"{name}_bucket{_labels({**labels, 'le': '+Inf'})} {float(hist.n)}")
    out.append(f"{name}_sum{_labels(labels)} {hist.total}")
    out.append(f"{name}_count{_labels(labels)} {float(hist.n)}")


def _accept_rate(config: SimConfig, accept_len: float) -> float:
    if not config.speculative or accept_len <= 0 or config.max_accept <= 1:
        return 0.0
    return (accept_len - 1) / (config.max_accept - 1)


def sglang_metrics(config: SimConfig, stats: ServerStats) -> str:
    """``/metrics`` as SGLang exports it from its stats-logging rank."""
    base = {
        "model_name": config.model_name,
        "engine_type": "unified",
        "tp_rank": "0",
        "pp_rank": "0",
        "moe_ep_rank": "0",
    }
    labels = _labels(base)
    totals = stats.totals
    out: list[str] = []
    gauges = (
        ("num_running_reqs", "The number of running requests.", len(stats.running)),
        ("num_queue_reqs", "The number of requests in the waiting queue.", stats.waiting),
        ("num_used_tokens", "The number of used tokens.", stats.tokens_in_use),
        ("token_usage", "The token usage.", stats.tokens_in_use / stats.capacity),
        ("gen_throughput", "The generation throughput (token/s).", totals.last_gen_throughput),
        ("max_total_num_tokens", "Maximum total number of tokens in the KV pool.", stats.capacity),
        ("cache_hit_rate", "The prefix cache hit rate.", 0.0),
        (
            "spec_accept_length",
            "The average acceptance length of speculative decoding "
            "(accepted drafts + bonus token per forward).",
            totals.last_accept_len,
        ),
        (
            "spec_accept_rate",
            "The average acceptance rate of speculative decoding (accepted drafts / drafts).",
            _accept_rate(config, totals.last_accept_len),
        ),
    )
    for name, doc, value in gauges:
        _metric(out, f"sglang:{name}", "gauge", doc, labels, value)
    counters = (
        ("prompt_tokens_total", "Number of prefill tokens processed.", totals.prompt_tokens),
        (
            "generation_tokens_total",
            "Number of generation tokens processed.",
            totals.generation_tokens,
        ),
        ("num_requests_total", "Number of requests processed.", totals.requests),
        (
            "spec_verify_calls_total",
            "Number of speculative verify forward calls.",
            totals.verify_steps,
        ),
    )
    for name, doc, value in counters:
        _metric(out, f"sglang:{name}", "counter", doc, labels, value)
    names = {"model_name": config.model_name}
    _histogram(
        out,
        "sglang:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        names,
        totals.ttft,
    )
    _histogram(
        out,
        "sglang:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        names,
        totals.itl,
    )
    _histogram(
        out,
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        names,
        totals.e2e,
    )
    return "\n".join(out) + "\n"


def vllm_metrics(config: SimConfig, stats: ServerStats) -> str:
    """``/metrics`` as vLLM exports it (always mounted)."""
    base = {"engine": "0", "model_name": config.model_name}
    labels = _labels(base)
    totals = stats.totals
    out: list[str] = []
    _metric(
        out,
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        labels,
        len(stats.running),
    )
    _metric(
        out,
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        labels,
        stats.waiting,
    )
    _metric(
        out,
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        labels,
        stats.tokens_in_use / stats.capacity,
    )
    _metric(
        out,
        "vllm:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        labels,
        totals.prompt_tokens,
    )
    _metric(
        out,
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        labels,
        totals.generation_tokens,
    )
    vllm_counters = (
        ("prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried "
         "tokens.", totals.prompt_tokens),
        ("prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", 0),
        ("num_preemptions_total", "Cumulative number of preemption from the engine.", 0),
    )  # fmt: skip
    for name, doc, value in vllm_counters:
        _metric(out, f"vllm:{name}", "counter", doc, labels, value)
    if config.speculative:
        drafts = totals.verify_steps
        _metric(
            out,
            "vllm:spec_decode_num_drafts_total",
            "counter",
            "Number of spec decoding drafts.",
            labels,
            drafts,
        )
        _metric(
            out,
            "vllm:spec_decode_num_draft_tokens_total",
            "counter",
            "Number of draft tokens.",
            labels,
            drafts * (config.max_accept - 1),
        )
        _metric(
            out,
            "vllm:spec_decode_num_accepted_tokens_total",
            "counter",
            "Number of accepted tokens.",
            labels,
            totals.accepted_drafts,
        )
        name = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        out.append(f"# HELP {name} Accepted tokens per draft position.")
        out.append(f"# TYPE {name} counter")
        for position, count in enumerate(totals.per_position):
            pos_labels = _labels({**base, "position": str(position)})
            out.append(f"{name}{pos_labels} {float(count)}")
    _histogram(
        out,
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        base,
        totals.ttft,
    )
    _histogram(
        out,
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        base,
        totals.itl,
    )
    _histogram(
        out,
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        base,
        totals.e2e,
    )
    return "\n".join(out) + "\n"
