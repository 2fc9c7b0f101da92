"""SGLang as a dialect: ``python -m sglang.launch_server`` and what bringup asks of it."""

from __future__ import annotations

from tui.engine.servers.dialect import (
    BenchTool,
    FastPath,
    GenerationProbe,
    MetricNames,
    StartupTraits,
)
from tui.engine.servers.hits import Hit
from tui.engine.servers.sglang import sglang_grammar


class SglangDialect:
    """SGLang: ``[time TP0] message`` lines, its native ``/generate``, schedulers titled
    ``sglang::scheduler_TP0``."""

    name = sglang_grammar.NAME
    default_port = 30000
    native_endpoint = "generate"
    fast_path = FastPath.STAMPED_SHAPES
    traits = StartupTraits(short_stamps_foreign=True, decode_lines_as_text=True)
    health_path = "/health"
    generation = GenerationProbe(
        "/generate",
        "text",
        {"sampling_params": {"max_new_tokens": 1, "temperature": 0}},
        request_id_key="rid",
    )
    bench_tool = BenchTool(
        title="sglang.bench_serving",
        command=("-m", "sglang.bench_serving"),
        via_python=True,
        backend="sglang",
        warmup_flag="--warmup-requests",
        extra=("--random-range-ratio", "1"),
        keep_eos_flag="--disable-ignore-eos",
        signature_rows=("total generated tokens (retokenized)",),
        offline_dataset="random-ids",
        result_format="sglang",
    )
    metric_names = MetricNames(
        # python/sglang/srt/metrics/collector.py (newer releases:
        # python/sglang/srt/observability/metrics_collector.py); exported with
        # --enable-metrics. SGLang publishes no preemption counter under a stable name.
        running=("sglang:num_running_reqs",),
        queued=("sglang:num_queue_reqs",),
        kv_usage=("sglang:token_usage",),
        generation_tokens=("sglang:generation_tokens_total",),
        prompt_tokens=("sglang:prompt_tokens_total",),
        requests=("sglang:num_requests_total",),
        gen_throughput=("sglang:gen_throughput",),
        prefix_hit_rate=("sglang:cache_hit_rate",),
        ttft=("sglang:time_to_first_token_seconds",),
        # Older releases sent the gaps between output tokens as
        # time_per_output_token_seconds: one observation per token (its count follows
        # generation_tokens_total in the docs' captured answer, tests/io/captured_metrics).
        itl=("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        accept_length=("sglang:spec_accept_length",),
        accept_rate=("sglang:spec_accept_rate",),
    )
    read_line = None
    """SGLang's envelope is read by the shared grammar (``tui.engine.servers.line_grammar``)."""

    def message_hits(self, msg: str) -> tuple[Hit, ...]:
        return sglang_grammar.message_hits(msg)

    def process_titles(self, tag: str) -> tuple[str, ...]:
        """``sglang::scheduler_DP0_TP3`` for the rank ``DP0 TP3``; the main process's title
        has no tags."""
        parts = "".join(f"_{part}" for part in tag.split() if part != sglang_grammar.MAIN)
        return (f"sglang::scheduler{parts}",)


SGLANG = SglangDialect()
