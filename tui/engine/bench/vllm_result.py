"""A level as the result JSON ``vllm bench serve --save-result`` writes, field by field.

The field names and meanings are those of vLLM's ``vllm/benchmarks/serve.py`` (``benchmark``
builds the metrics, ``main`` adds the run's settings, ``--save-detailed`` keeps the per-request
arrays): times in milliseconds for the ``*_ms`` figures and in seconds in ``ttfts`` and
``itls``; ``itls`` one gap per streamed chunk; TPOT ``(e2el - ttft) / (output_len - 1)``; the
statistics over the successful requests. A field we do not measure (``tokenizer_id``,
``generated_texts``, ``max_output_tokens_per_s``, ``max_concurrent_requests``) is absent,
never zero. Our own figures use names vLLM does not: ``spec_accept_length`` (SGLang's
``meta_info`` name: completion tokens over verify steps, summed over the level),
``*_token_gap_ms``, ``median_decode_tok_s``, ``bringup_trials``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui.engine.bench.bench_math import RequestRecord
from tui.engine.bench.level_fields import rate_text
from tui.engine.bench.level_figures import LevelFigures, Stats

_VLLM_STATS = ("mean", "median", "std", "p90", "p95", "p99")
BACKENDS = {"completions": "openai", "chat": "openai-chat"}
"""vLLM's ``--backend`` names for the OpenAI routes (``/generate`` has none)."""


@dataclass(frozen=True, slots=True)
class ResultMeta:
    """The run's settings as vLLM saves them."""

    date: str
    model_id: str
    endpoint: str


def _stats(name: str, stats: Stats) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for stat in _VLLM_STATS:
        value = getattr(stats, stat)
        if value is not None:
            found[f"{stat}_{name}_ms"] = value
    return found


def vllm_result(
    figures: LevelFigures,
    meta: ResultMeta,
    records: Sequence[RequestRecord] = (),
    detailed: bool = False,
    input_lens: Sequence[int] = (),
) -> dict[str, Any]:
    """The result object of one level; ``detailed`` adds the per-request arrays (of ``records``,
    by default the level's own: every request of every trial, as its figures)."""
    f = figures
    closed = f.request_rate is None
    result: dict[str, Any] = {"date": meta.date}
    if meta.endpoint in BACKENDS:
        result["backend"] = BACKENDS[meta.endpoint]
    result |= {
        "model_id": meta.model_id,
        "num_prompts": f.num_prompts,
        "request_rate": "inf" if closed else rate_text(f.request_rate or 0.0),
        "burstiness": 1.0 if closed else f.burstiness,
        "max_concurrency": f.concurrency if closed or f.concurrency else None,
        "duration": f.duration,
        "completed": f.completed,
        "failed": f.failed,
        "total_input_tokens": f.total_input_tokens,
        "total_output_tokens": f.total_output_tokens,
        "request_throughput": f.request_throughput,
        "output_throughput": f.output_throughput,
        "total_token_throughput": f.total_token_throughput,
    }
    if f.request_goodput is not None:
        result["request_goodput"] = f.request_goodput
    for name, stats in (("ttft", f.ttft_ms), ("tpot", f.tpot_ms), ("itl", f.itl_ms),
                        ("e2el", f.e2el_ms)):  # fmt: skip
        result |= _stats(name, stats)
    result = {key: value for key, value in result.items() if value is not None or key in (
        "max_concurrency",)}  # fmt: skip
    result |= _ours(f)
    if detailed:
        result |= detailed_arrays(records or f.records, input_lens)
    return result


def _ours(f: LevelFigures) -> dict[str, Any]:
    found: dict[str, Any] = _stats("token_gap", f.token_gap_ms)
    if f.decode_tok_s.median is not None:
        found["median_decode_tok_s"] = f.decode_tok_s.median
    if f.accept_length is not None:
        found["spec_accept_length"] = f.accept_length
    if f.trials:
        found["bringup_trials"] = {
            name: {"n": s.n, "mean": s.mean, "std": s.std, "ci95": s.ci95} for name, s in f.trials
        }
    return found


def detailed_arrays(
    records: Sequence[RequestRecord], input_lens: Sequence[int] = ()
) -> dict[str, Any]:
    """vLLM's per-request arrays, in request order: a failed request has TTFT 0, no ITL, no
    output tokens and its error text (an empty text when it succeeded)."""
    lens = list(input_lens) or [r.prompt_tokens or 0 for r in records]
    return {
        "input_lens": lens,
        "output_lens": [r.output_tokens if r.success else 0 for r in records],
        "ttfts": [(r.ttft or 0.0) if r.success else 0.0 for r in records],
        "itls": [r.itl if r.success else [] for r in records],
        "errors": ["" if r.success else r.error for r in records],
    }
