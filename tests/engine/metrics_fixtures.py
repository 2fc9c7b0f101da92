"""Small ``/metrics`` answers of both engines, cut down to the series bringup reads.

They are written line for line in the form each engine's exporter produces: vLLM registers its
series with ``prometheus_client`` in ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``:
``engine`` and ``model_name`` labels, counters sent as ``..._total`` with a ``..._created``
twin) and ``vllm/v1/spec_decode/metrics.py``; SGLang in ``python/sglang/srt/metrics/
collector.py`` (labels ``model_name, engine_type, tp_rank, pp_rank, moe_ep_rank``; its
multiprocess registry sends no ``_created`` series). Names and label sets follow those files;
the values are ours. ``VLLM_OLD`` uses the names of vLLM releases before the v1 renames
(``gpu_cache_usage_perc``, ``gpu_prefix_cache_*``, ``time_per_output_token_seconds``).
"""

from __future__ import annotations

_M = 'engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"'


def _hist(
    name: str, labels: str, bounds: tuple[str, ...], counts: tuple[int, ...], total: float
) -> str:
    lines = [f"# HELP {name} Histogram.", f"# TYPE {name} histogram"]
    lines += [
        f'{name}_bucket{{{labels},le="{bound}"}} {float(count)}'
        for bound, count in zip(bounds, counts, strict=True)
    ]
    lines.append(f"{name}_count{{{labels}}} {float(counts[-1])}")
    lines.append(f"{name}_sum{{{labels}}} {total}")
    lines.append(f"{name}_created{{{labels}}} 1.7331e+09")
    return "\n".join(lines) + "\n"


TTFT_BOUNDS = (
    "0.001",
    "0.005",
    "0.01",
    "0.02",
    "0.04",
    "0.06",
    "0.08",
    "0.1",
    "0.25",
    "0.5",
    "0.75",
    "1.0",
    "2.5",
    "5.0",
    "+Inf",
)
ITL_BOUNDS = ("0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "+Inf")


def vllm(
    *,
    running: int,
    waiting: int,
    kv: float,
    generated: int,
    hits: int,
    queries: int,
    preemptions: int,
    drafts: int,
    accepted: int,
    ttft: tuple[int, ...],
    itl: tuple[int, ...],
    old: bool = False,
) -> str:
    """vLLM's answer with these values (``old``: the names before the v1 renames)."""
    kv_name = "vllm:gpu_cache_usage_perc" if old else "vllm:kv_cache_usage_perc"
    prefix = "vllm:gpu_prefix_cache" if old else "vllm:prefix_cache"
    itl_name = "vllm:time_per_output_token_seconds" if old else "vllm:inter_token_latency_seconds"
    text = f"""# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{{_M}}} {float(running)}
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{{_M}}} {float(waiting)}
# HELP {kv_name} KV-cache usage. 1 means 100 percent usage.
# TYPE {kv_name} gauge
{kv_name}{{{_M}}} {kv}
# HELP {prefix}_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE {prefix}_queries_total counter
{prefix}_queries_total{{{_M}}} {float(queries)}
{prefix}_queries_created{{{_M}}} 1.7331e+09
# HELP {prefix}_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE {prefix}_hits_total counter
{prefix}_hits_total{{{_M}}} {float(hits)}
{prefix}_hits_created{{{_M}}} 1.7331e+09
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{{{_M}}} {float(preemptions)}
vllm:num_preemptions_created{{{_M}}} 1.7331e+09
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{{{_M}}} 50240.0
vllm:prompt_tokens_created{{{_M}}} 1.7331e+09
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{{{_M}}} {float(generated)}
vllm:generation_tokens_created{{{_M}}} 1.7331e+09
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{{_M}}} {float(drafts)}
vllm:spec_decode_num_drafts_created{{{_M}}} 1.7331e+09
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{{{_M}}} {float(drafts * 3)}
vllm:spec_decode_num_draft_tokens_created{{{_M}}} 1.7331e+09
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{{{_M}}} {float(accepted)}
vllm:spec_decode_num_accepted_tokens_created{{{_M}}} 1.7331e+09
"""
    text += _hist("vllm:time_to_first_token_seconds", _M, TTFT_BOUNDS, ttft, 12.5)
    return text + _hist(itl_name, _M, ITL_BOUNDS, itl, 40.25)


_S = 'engine_type="unified",model_name="Qwen/Qwen3-8B",moe_ep_rank="0",pp_rank="0",tp_rank="0"'


def sglang(
    *,
    running: int,
    queued: int,
    usage: float,
    throughput: float,
    hit_rate: float,
    accept_length: float,
    generated: int,
    ttft: tuple[int, ...],
) -> str:
    """SGLang's answer (``--enable-metrics``) with these values."""
    gauges = (
        ("num_running_reqs", "The number of running requests.", running),
        ("num_queue_reqs", "The number of requests in the waiting queue.", queued),
        ("token_usage", "The token usage.", usage),
        ("gen_throughput", "The generation throughput (token/s).", throughput),
        ("cache_hit_rate", "The prefix cache hit rate.", hit_rate),
        (
            "spec_accept_length",
            "The average acceptance length of speculative decoding.",
            accept_length,
        ),
    )
    text = "".join(
        f"# HELP sglang:{name} {doc}\n# TYPE sglang:{name} gauge\n"
        f"sglang:{name}{{{_S}}} {float(value)}\n"
        for name, doc, value in gauges
    )
    text += (
        "# HELP sglang:generation_tokens_total Number of generation tokens processed.\n"
        "# TYPE sglang:generation_tokens_total counter\n"
        f"sglang:generation_tokens_total{{{_S}}} {float(generated)}\n"
    )
    bounds = TTFT_BOUNDS
    lines = [
        "# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.",
        "# TYPE sglang:time_to_first_token_seconds histogram",
    ]
    labels = 'model_name="Qwen/Qwen3-8B"'
    lines += [
        f'sglang:time_to_first_token_seconds_bucket{{{labels},le="{bound}"}} {float(count)}'
        for bound, count in zip(bounds, ttft, strict=True)
    ]
    lines.append(f"sglang:time_to_first_token_seconds_sum{{{labels}}} 3.5")
    lines.append(f"sglang:time_to_first_token_seconds_count{{{labels}}} {float(ttft[-1])}")
    return text + "\n".join(lines) + "\n"
