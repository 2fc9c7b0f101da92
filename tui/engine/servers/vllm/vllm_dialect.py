"""vLLM as a dialect: ``vllm serve`` and what bringup asks of it."""

from __future__ import annotations

from tui.engine.servers.dialect import (
    BenchTool,
    FastPath,
    GenerationProbe,
    MetricNames,
    StartupTraits,
)
from tui.engine.servers.hits import Hit
from tui.engine.servers.vllm import vllm_grammar


class VllmDialect:
    """vLLM: ``(Worker_TP0 pid=7) INFO 03-01 12:00:00 [file.py:12] message`` lines, the OpenAI
    API only, workers titled ``VLLM::Worker_TP0``."""

    name = vllm_grammar.NAME
    default_port = 8000
    native_endpoint = "completions"
    fast_path = FastPath.ACCESS_LINES
    traits = StartupTraits(
        config_before_workers=True,
        answers_only_when_ready=True,
        omits_default_args=True,
        nodes_follow_api=True,
        process_prefix_names_rank=True,
        front_processes=frozenset({"APIServer"}),
    )
    health_path = "/health"
    generation = GenerationProbe(
        "/v1/completions", "prompt", {"max_tokens": 1, "temperature": 0}, names_model=True
    )
    bench_tool = BenchTool(
        title="vllm bench serve",
        command=("vllm", "bench", "serve"),
        backend="vllm",
        warmup_flag="--num-warmups",
        ignore_eos_flag="--ignore-eos",
        signature_rows=("failed requests", "maximum request concurrency", "acceptance length"),
        result_format="vllm",
    )
    metric_names = MetricNames(
        # vllm/v1/metrics/loggers.py (PrometheusStatLogger); the older names are those of
        # the releases before the v1 engine's renames (gpu_cache_usage_perc,
        # gpu_prefix_cache_*, time_per_output_token_seconds).
        running=("vllm:num_requests_running",),
        queued=("vllm:num_requests_waiting",),
        kv_usage=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        generation_tokens=("vllm:generation_tokens_total",),
        prompt_tokens=("vllm:prompt_tokens_total",),
        requests=("vllm:request_success_total",),
        prefix_hits=("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
        prefix_queries=(
            "vllm:prefix_cache_queries_total",
            "vllm:gpu_prefix_cache_queries_total",
        ),
        preemptions=("vllm:num_preemptions_total",),
        ttft=("vllm:time_to_first_token_seconds",),
        itl=("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        # vllm/v1/spec_decode/metrics.py (SpecDecodingProm)
        accepted_tokens=("vllm:spec_decode_num_accepted_tokens_total",),
        drafts=("vllm:spec_decode_num_drafts_total",),
        draft_tokens=("vllm:spec_decode_num_draft_tokens_total",),
    )
    read_line = None
    """vLLM's envelope is read by the shared grammar (``tui.engine.servers.line_grammar``)."""

    def message_hits(self, msg: str) -> tuple[Hit, ...]:
        return vllm_grammar.message_hits(msg)

    def process_titles(self, tag: str) -> tuple[str, ...]:
        """``VLLM::Worker_TP0``: the rank's process name behind vLLM's prefix."""
        return (f"VLLM::{tag}",)


VLLM = VllmDialect()
