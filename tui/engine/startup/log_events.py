"""Typed, frozen events produced by the grammars and the start-up model.

Every event carries the 1-based ``line`` number inside the stream it came from (0 when it does
not come from a log line) and the ``rank`` tag as printed in the log (``"TP3"``,
``"DP0 TP3 EP3"``, ``"Worker_TP0"``, ``"EngineCore_DP0"``), or ``"main"`` for the untagged main
process. ``ts`` is the log timestamp in seconds (naive wall time read as UTC; only differences
are meaningful) when the line had one.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.engine.startup.vocabulary import FailureKind, Phase, Stage

MAIN = "main"


@dataclass(frozen=True, slots=True)
class Event:
    """Base class: where an event came from."""

    line: int
    rank: str | None
    ts: float | None


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    """A new server run began in the same stream (``server_args=`` or the vLLM banner)."""

    runs_before: int


@dataclass(frozen=True, slots=True)
class EngineDetected(Event):
    """The grammar recognised the engine (and its version when the log states it)."""

    engine: str
    version: str | None


@dataclass(frozen=True, slots=True)
class ServerArgsSeen(Event):
    """The server's resolved arguments: model, drafter and parallel sizes."""

    model: str | None
    served_model_name: str | None
    drafter: str | None
    speculative_algorithm: str | None
    tp_size: int
    dp_size: int
    ep_size: int
    pp_size: int
    nnodes: int
    node_rank: int
    port: int | None


@dataclass(frozen=True, slots=True)
class StageEntered(Event):
    """A rank entered a stage; ``draft`` marks the draft model's load or capture."""

    stage: Stage
    draft: bool = False
    detail: str = ""


@dataclass(frozen=True, slots=True)
class StageProgressed(Event):
    """Progress inside a stage (shards loaded, graph batch sizes captured)."""

    stage: Stage
    done: int
    total: int
    label: str = ""

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class MemoryReported(Event):
    """Memory figures the log gives (GB as SGLang prints them; tokens of KV cache)."""

    avail_gb: float | None = None
    used_gb: float | None = None
    kv_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ReadyLineSeen(Event):
    """The engine's own ready line (SGLang ``fired up``; vLLM ``Application startup complete.``)."""


@dataclass(frozen=True, slots=True)
class NodeReadySeen(Event):
    """A node other than node 0 said its schedulers are ready (SGLang starts a dummy health
    server there: ``Dummy health check server started ...``)."""


@dataclass(frozen=True, slots=True)
class FailureDetected(Event):
    """A failure signature; ``excerpt`` holds the traceback head and the error line."""

    kind: FailureKind
    excerpt: str
    stage: Stage | None = None


@dataclass(frozen=True, slots=True)
class DecodeStats(Event):
    """A decode statistics line (SGLang ``Decode batch``; vLLM throughput and spec lines)."""

    gen_throughput: float | None
    accept_len: float | None = None
    accept_rate: float | None = None
    running: int | None = None
    queued: int | None = None


@dataclass(frozen=True, slots=True)
class RequestLogged(Event):
    """An HTTP access line (``"POST /generate HTTP/1.1" 200``)."""

    method: str
    path: str
    status: int


@dataclass(frozen=True, slots=True)
class ServerStopped(Event):
    """A clean shutdown was logged (SIGTERM, ``Application shutdown complete.``)."""

    reason: str


@dataclass(frozen=True, slots=True)
class LineLogged(Event):
    """Any other line, kept as the rank's last line. Not emitted for every line in bulk mode."""

    text: str


@dataclass(frozen=True, slots=True)
class PhaseStepped(Event):
    """A compile, JIT or autotune phase moved inside ``stage``: it began, a unit finished
    (``done`` of ``total`` when a bar gives it), or it ended (``running`` False)."""

    phase: Phase
    stage: Stage
    done: int
    total: int | None
    detail: str
    running: bool
