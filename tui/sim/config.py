"""The simulated server's resolved settings: one frozen value built from the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.engine.servers.vllm.vllm_dialect import VLLM

SCENARIOS: tuple[str, ...] = (
    "ok",
    "oom-kv-cache",
    "nccl-timeout",
    "cuda-graph-hang",
    "rank-crash",
    "port-in-use",
    "slow-rank",
    "warmup-fail",
    "health-lies",
    "node-lag",
    "node-hang",
    "jit-cold-cache",
    "jit-hang",
    "accept-collapse",
)
VLLM_SCENARIOS: tuple[str, ...] = (
    "ok",
    "oom-kv-cache",
    "rank-crash",
    "port-in-use",
    "accept-collapse",
)
SGLANG_ENGINE = SGLANG.name
VLLM_ENGINE = VLLM.name
ENGINES: tuple[str, ...] = (SGLANG_ENGINE, VLLM_ENGINE)
"""The registered engines the simulator imitates."""
DEFAULT_PORTS = {dialect.name: dialect.default_port for dialect in (SGLANG, VLLM)}
SGLANG_VERSION = "0.5.23"
VLLM_VERSION = "0.33.0"

ExtraValue: TypeAlias = str | int | float | bool | tuple[str, ...]
ExtraArg: TypeAlias = tuple[str, ExtraValue]


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Everything the simulator needs to know, as a real server would resolve it."""

    engine: str = SGLANG_ENGINE
    model_path: str = "Qwen/Qwen3-8B"
    served_model_name: str | None = None
    tp_size: int = 1
    dp_size: int = 1
    ep_size: int = 1
    enable_dp_attention: bool = False
    nnodes: int = 1
    node_rank: int = 0
    dist_init_addr: str | None = None
    base_gpu_id: int = 0
    host: str = "127.0.0.1"
    port: int = 30000
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_num_steps: int = 3
    speculative_eagle_topk: int = 1
    speculative_num_draft_tokens: int = 4
    enable_metrics: bool = False
    log_level: str = "info"
    mem_fraction_static: float = 0.88
    watchdog_timeout: float = 300.0
    dist_timeout: float | None = None
    max_running: int = 256
    time_scale: float = 1.0
    seed: int = 0
    decode_tok_s: float = 60.0
    ttft_ms: float = 150.0
    accept_len: float = 2.5
    answer_len: int = 0
    health_503: int = 0
    """``/health`` answers 503 this many times once a generation was served (a long prefill)."""
    api_key: str | None = None
    scenario: str = "ok"
    collapse_after: float = 60.0
    """``accept-collapse``: seconds after the first request when accept length falls to 1."""
    fail_rank: int | None = None
    pid_file: str | None = None
    log_file: str | None = None
    state_file: str | None = None
    extra_args: tuple[ExtraArg, ...] = ()
    argv: tuple[str, ...] = field(default_factory=tuple)

    @property
    def speculative(self) -> bool:
        """Whether a speculative-decoding algorithm is configured."""
        return self.speculative_algorithm is not None

    @property
    def model_name(self) -> str:
        """The name clients use for the model (``--served-model-name`` or the path)."""
        return self.served_model_name or self.model_path

    @property
    def max_accept(self) -> int:
        """The most tokens one verify step can yield (drafts plus the bonus token)."""
        return self.speculative_num_draft_tokens if self.speculative else 1

    @property
    def mean_accept(self) -> float:
        """Mean tokens per verify step: ``accept_len`` when speculative, else exactly 1."""
        return self.accept_len if self.speculative else 1.0

    @property
    def http_host(self) -> str:
        """An address that reaches this server from the same machine."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host


def validate(config: SimConfig) -> list[str]:
    """Return one message per invalid setting, each naming the flag it is about."""
    problems: list[str] = []
    for flag, value in (
        ("--tp-size", config.tp_size),
        ("--dp-size", config.dp_size),
        ("--ep-size", config.ep_size),
        ("--nnodes", config.nnodes),
        ("--max-running", config.max_running),
    ):
        if value < 1:
            problems.append(f"{flag} must be at least 1 (got {value})")
    problems.extend(_parallel_problems(config))
    problems.extend(_rate_problems(config))
    if config.engine == VLLM_ENGINE and config.scenario not in VLLM_SCENARIOS:
        problems.append(
            f"--scenario {config.scenario} is simulated for SGLang only; with --engine vllm "
            f"use one of: {', '.join(VLLM_SCENARIOS)}"
        )
    if config.scenario == "accept-collapse" and not config.speculative:
        problems.append(
            "--scenario accept-collapse needs speculative decoding "
            "(--speculative-algorithm, or --speculative-config with --engine vllm)"
        )
    if not 0 <= config.port <= 65535:
        problems.append(f"--port must be between 0 and 65535 (got {config.port})")
    return problems


def _parallel_problems(config: SimConfig) -> list[str]:
    problems: list[str] = []
    if not 0 <= config.node_rank < max(config.nnodes, 1):
        problems.append(f"--node-rank {config.node_rank} must be below --nnodes {config.nnodes}")
    world = config.tp_size * (1 if config.enable_dp_attention else config.dp_size)
    if config.nnodes > 1 and world % config.nnodes:
        problems.append(f"{world} ranks cannot be split evenly over --nnodes {config.nnodes}")
    if config.enable_dp_attention and config.tp_size % config.dp_size:
        problems.append(
            f"--dp-size {config.dp_size} must divide --tp-size {config.tp_size} "
            "with --enable-dp-attention"
        )
    if config.ep_size > 1 and config.tp_size % config.ep_size:
        problems.append(f"--ep-size {config.ep_size} must divide --tp-size {config.tp_size}")
    per_node = world // config.nnodes if config.nnodes > 0 else world
    if config.fail_rank is not None and not 0 <= config.fail_rank < max(per_node, 1):
        problems.append(
            f"--fail-rank {config.fail_rank} is not a rank of this node (0..{per_node - 1})"
        )
    if config.base_gpu_id < 0:
        problems.append(f"--base-gpu-id must not be negative (got {config.base_gpu_id})")
    return problems


def _rate_problems(config: SimConfig) -> list[str]:
    problems: list[str] = []
    for flag, value in (
        ("--time-scale", config.time_scale),
        ("--decode-tok-s", config.decode_tok_s),
        ("--mem-fraction-static", config.mem_fraction_static),
        ("--watchdog-timeout", config.watchdog_timeout),
    ):
        if not value > 0:
            problems.append(f"{flag} must be greater than 0 (got {value})")
    if config.answer_len < 0:
        problems.append(f"--answer-len must not be negative (got {config.answer_len})")
    if config.health_503 < 0:
        problems.append(f"--health-503 must not be negative (got {config.health_503})")
    if config.ttft_ms < 0:
        problems.append(f"--ttft-ms must not be negative (got {config.ttft_ms})")
    if config.mem_fraction_static >= 1:
        problems.append(f"--mem-fraction-static must be below 1 (got {config.mem_fraction_static})")
    if config.speculative and not 1 <= config.accept_len <= config.max_accept:
        problems.append(
            f"--accept-len {config.accept_len} must be between 1 and the "
            f"{config.max_accept} tokens a verify step can yield "
            "(--speculative-num-draft-tokens, or num_speculative_tokens + 1 for vLLM)"
        )
    if config.speculative_num_draft_tokens < 1 or config.speculative_num_steps < 1:
        problems.append("--speculative-num-steps and --speculative-num-draft-tokens must be >= 1")
    return problems
