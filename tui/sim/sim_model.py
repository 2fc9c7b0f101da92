"""Plausible model facts (class names, sizes, memory) guessed from the model's name.

The simulator never reads weights: it only needs numbers that look like a real start of that
model on H200 GPUs, so the memory lines, the KV-cache size and the GPU telemetry agree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tui.sim.config import SimConfig

GPU_NAME = "NVIDIA H200"
GPU_TOTAL_MIB = 143771
GPU_TOTAL_GB = GPU_TOTAL_MIB / 1024
CONTEXT_GB = 0.55
BASELINE_GB = 0.62
SHARD_GB = 5.0

_KNOWN_PARAMS = (("kimi-k2", 1000.0), ("deepseek-v3", 671.0), ("deepseek-r1", 671.0))
_PARAMS = re.compile(r"(\d+(?:\.\d+)?)b(?![a-z])")


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What a real start would report about the target and draft models, per rank."""

    architecture: str
    draft_architecture: str | None
    context_len: int
    weight_gb: float
    draft_gb: float
    shards: int
    draft_shards: int
    kv_bytes_per_token: int
    mla: bool


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """GPU memory (GB, as SGLang prints it) after each start-up step on one rank."""

    start_avail: float
    after_weights: float
    after_draft: float
    kv_tokens: int
    kv_gb: float
    after_kv: float
    draft_kv_gb: float
    after_draft_kv: float
    graph_gb: float
    after_graphs: float
    draft_graph_gb: float
    after_draft_graphs: float


def facts_for(config: SimConfig) -> ModelFacts:
    """Guess the model's class, size and context length from its path."""
    name = config.model_path.lower()
    total_gb = _params_b(name) * _bytes_per_param(name)
    mla = "deepseek" in name or "kimi-k2" in name
    draft = _draft_architecture(config, _architecture(name))
    draft_total = 0.0 if draft is None else min(3.2, max(0.8, total_gb / 200))
    return ModelFacts(
        architecture=_architecture(name),
        draft_architecture=draft,
        context_len=_context_len(name),
        weight_gb=round(total_gb / config.tp_size, 2),
        draft_gb=round(draft_total / config.tp_size, 2),
        shards=max(1, min(64, math.ceil(total_gb / SHARD_GB))),
        draft_shards=1,
        kv_bytes_per_token=70272 if mla else 147456 // min(config.tp_size, 8),
        mla=mla,
    )


def plan_memory(config: SimConfig, facts: ModelFacts) -> MemoryPlan:
    """Walk one rank's memory through load, KV allocation and graph capture."""
    start = GPU_TOTAL_GB - CONTEXT_GB - BASELINE_GB
    after_weights = start - facts.weight_gb
    after_draft = after_weights - facts.draft_gb
    reserve = GPU_TOTAL_GB * (1 - config.mem_fraction_static)
    budget = max(after_draft - reserve, 0.0)
    draft_share = 0.04 if facts.draft_architecture else 0.0
    kv_gb = budget * (1 - draft_share)
    draft_kv_gb = budget * draft_share
    kv_tokens = int(kv_gb * 1024**3 / facts.kv_bytes_per_token)
    after_kv = after_draft - kv_gb
    after_draft_kv = after_kv - draft_kv_gb
    graph_gb = 0.72 if config.speculative else 0.61
    draft_graph_gb = 0.23 if facts.draft_architecture else 0.0
    return MemoryPlan(
        start_avail=start,
        after_weights=after_weights,
        after_draft=after_draft,
        kv_tokens=kv_tokens,
        kv_gb=kv_gb,
        after_kv=after_kv,
        draft_kv_gb=draft_kv_gb,
        after_draft_kv=after_draft_kv,
        graph_gb=graph_gb,
        after_graphs=after_draft_kv - graph_gb,
        draft_graph_gb=draft_graph_gb,
        after_draft_graphs=after_draft_kv - graph_gb - draft_graph_gb,
    )


def _params_b(name: str) -> float:
    for key, params in _KNOWN_PARAMS:
        if key in name:
            return params
    match = _PARAMS.search(name.rsplit("/", 1)[-1])
    return float(match.group(1)) if match else 30.0


def _bytes_per_param(name: str) -> float:
    if any(key in name for key in ("int4", "awq", "gptq", "w4a", "kimi-k2")):
        return 0.55
    if "fp8" in name or "deepseek" in name:
        return 1.0
    return 2.0


def _architecture(name: str) -> str:
    if "kimi-k2.5" in name:
        return "KimiK25ForConditionalGeneration"
    if "deepseek" in name or "kimi-k2" in name:
        return "DeepseekV3ForCausalLM"
    if "qwen3" in name:
        return "Qwen3MoeForCausalLM" if re.search(r"-a\d+b", name) else "Qwen3ForCausalLM"
    if "glm" in name:
        return "Glm4MoeForCausalLM"
    return "LlamaForCausalLM"


def _draft_architecture(config: SimConfig, target: str) -> str | None:
    algorithm = config.speculative_algorithm
    if algorithm is None or algorithm == "NGRAM":
        return None
    if algorithm in ("NEXTN", "MTP", "DEEPSEEK_MTP"):
        return target.replace("ForConditionalGeneration", "ForCausalLM") + "NextN"
    if algorithm == "EAGLE3":
        return "LlamaForCausalLMEagle3"
    if algorithm == "EAGLE":
        return "LlamaForCausalLMEagle"
    return "LlamaForCausalLM"


def _context_len(name: str) -> int:
    for key, length in (("kimi-k2", 262144), ("deepseek", 163840), ("qwen3", 40960)):
        if key in name:
            return length
    return 131072 if "llama" in name else 32768
