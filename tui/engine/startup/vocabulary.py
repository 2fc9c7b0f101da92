"""Canonical start-up stages, outcomes and failure kinds (with the words shown for them),
shared by every engine grammar."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum


class Stage(str, Enum):
    """A rank's start-up stage, in the order a healthy start walks through them."""

    PROCESS_START = "process_start"
    ARGS = "args"
    DISTRIBUTED_INIT = "distributed_init"
    MODEL_CONFIG = "model_config"
    WEIGHT_LOADING = "weight_loading"
    KV_CACHE = "kv_cache"
    CUDA_GRAPH = "cuda_graph"
    WARMUP = "warmup"
    READY = "ready"
    SERVING = "serving"

    @property
    def order(self) -> int:
        return _ORDER[self]

    @property
    def label(self) -> str:
        return _LABELS[self]


STAGES: tuple[Stage, ...] = tuple(Stage)
_ORDER = {stage: index for index, stage in enumerate(STAGES)}
_LABELS = {
    Stage.PROCESS_START: "process start",
    Stage.ARGS: "arguments",
    Stage.DISTRIBUTED_INIT: "distributed init",
    Stage.MODEL_CONFIG: "model config",
    Stage.WEIGHT_LOADING: "weight loading",
    Stage.KV_CACHE: "KV cache",
    Stage.CUDA_GRAPH: "CUDA graphs",
    Stage.WARMUP: "warm-up",
    Stage.READY: "ready",
    Stage.SERVING: "serving",
}


class Phase(str, Enum):
    """A compile, JIT or autotune step inside a stage (it belongs to the stage the rank is in
    when it starts); on a cold cache these take a third or more of a start-up."""

    TORCH_COMPILE = "torch_compile"
    FLASHINFER_AUTOTUNE = "flashinfer_autotune"
    FLASHINFER_JIT = "flashinfer_jit"
    DEEPGEMM_JIT = "deepgemm_jit"
    AITER_BUILD = "aiter_build"

    @property
    def label(self) -> str:
        return PHASE_LABELS[self]


PHASE_LABELS: Mapping[Phase, str] = {
    Phase.TORCH_COMPILE: "torch.compile",
    Phase.FLASHINFER_AUTOTUNE: "FlashInfer autotune",
    Phase.FLASHINFER_JIT: "FlashInfer JIT",
    Phase.DEEPGEMM_JIT: "DeepGEMM JIT",
    Phase.AITER_BUILD: "AITER build",
}
"""Every phase's human label."""


class Outcome(str, Enum):
    """What a log says about the server as a whole."""

    READY = "ready"
    FAILED = "failed"
    INCOMPLETE = "incomplete"


class FailureKind(str, Enum):
    """Why a start failed."""

    OOM = "oom"
    NCCL = "nccl"
    CUDA_GRAPH = "cuda_graph"
    PORT_IN_USE = "port_in_use"
    WEIGHTS_MISSING = "weights_missing"
    TRACEBACK_OTHER = "traceback_other"
    HANG = "hang"
    KILLED = "killed"
    STARTUP_TIMEOUT = "startup_timeout"

    @property
    def label(self) -> str:
        """What a person reads for this kind; JSON output and the stores keep ``value``."""
        return FAILURE_LABELS[self]


FAILURE_LABELS: Mapping[FailureKind, str] = {
    FailureKind.OOM: "CUDA out of memory",
    FailureKind.NCCL: "NCCL error",
    FailureKind.CUDA_GRAPH: "CUDA graph capture failed",
    FailureKind.PORT_IN_USE: "port already in use",
    FailureKind.WEIGHTS_MISSING: "model weights not found",
    FailureKind.TRACEBACK_OTHER: "other exception",
    FailureKind.HANG: "no progress (hang)",
    FailureKind.KILLED: "process killed",
    FailureKind.STARTUP_TIMEOUT: "start-up timed out",
}
"""Every failure kind's human label (a test fails when a kind has none)."""


class Verdict(str, Enum):
    """The server-level verdict shown in the header and reported by ``bringup wait``."""

    CONNECTING = "CONNECTING"
    QUEUED = "QUEUED"
    """The scheduler holds the job the server is to run in (Slurm's PENDING)."""
    STARTING = "STARTING"
    READY = "READY"
    DEGRADED = "DEGRADED"
    """It was READY and its port stopped answering well (a missed poll, a timeout, a 503 during
    a long prefill): still serving as far as the log knows, READY again once the port answers,
    FAILED once that lasts longer than the health grace."""
    FAILED = "FAILED"
    STALLED = "STALLED"
    STOPPED = "STOPPED"

    @property
    def serving(self) -> bool:
        """READY or DEGRADED: the start-up is over and the server is serving."""
        return self in (Verdict.READY, Verdict.DEGRADED)
