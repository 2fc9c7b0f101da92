"""vLLM as a dialect: ``vllm serve`` and what bringup asks of it."""

from __future__ import annotations

from tui.engine.servers.dialect import (
    BenchTool,
    FastPath,
    GenerationProbe,
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
    metric_names = (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:prompt_tokens_total",
        "vllm:generation_tokens_total",
        "vllm:time_to_first_token_seconds",
    )
    read_line = None
    """vLLM's envelope is read by the shared grammar (``tui.engine.servers.line_grammar``)."""

    def message_hits(self, msg: str) -> tuple[Hit, ...]:
        return vllm_grammar.message_hits(msg)

    def process_titles(self, tag: str) -> tuple[str, ...]:
        """``VLLM::Worker_TP0``: the rank's process name behind vLLM's prefix."""
        return (f"VLLM::{tag}",)


VLLM = VllmDialect()
