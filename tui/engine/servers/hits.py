"""What a grammar recognised in one line, before the start-up model gives it meaning.

Hits are small named tuples: cheap to build, and built only for lines that matter. The model
turns them into public events (``tui.engine.startup.log_events``) once it knows the rank's history,
for
example whether a second ``Load weight begin`` belongs to the draft model.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from tui.engine.startup.vocabulary import FailureKind, Phase, Stage


class StageHit(NamedTuple):
    """A milestone that puts a rank in ``stage``.

    ``key`` names the milestone (two different messages may lead to the same stage);
    ``draftable`` says that a second occurrence of the same key means the draft model;
    ``draft`` is True or False when the text itself says so, None when only repetition can tell.
    """

    stage: Stage
    key: str
    draftable: bool = False
    draft: bool | None = None
    detail: str = ""


class ProgressHit(NamedTuple):
    """A progress bar state (shards loaded, graph batch sizes captured)."""

    stage: Stage
    done: int
    total: int
    label: str
    phase: Phase | None = None
    """Set for a bar of a compile or JIT phase (``DeepGEMM warmup``): it moves the phase,
    not the stage."""


class PhaseStep(Enum):
    """What a phase line says."""

    BEGIN = "begin"
    """The phase started (a cache directory named, an autotune begun)."""
    START = "start"
    """One unit of work started (a module build); the phase is running."""
    DONE = "done"
    """One unit of work finished (a module built, a graph compiled): progress."""
    END = "end"
    """The whole phase finished."""


class PhaseHit(NamedTuple):
    """A compile, JIT or autotune line: ``detail`` names the unit (a module, a kernel);
    ``seconds`` is what the line says it took."""

    phase: Phase
    step: PhaseStep
    detail: str = ""
    seconds: float | None = None


class RendezvousHit(NamedTuple):
    """How many ranks reached a rendezvous of ``expected`` (the TCP store, a Gloo mesh seen by
    ``rank``), or a ``peer`` address that went away or could not be reached."""

    joined: int | None = None
    expected: int | None = None
    rank: int | None = None
    peer: str = ""


class MemoryHit(NamedTuple):
    """Memory figures in GB and KV-cache capacity in tokens."""

    avail_gb: float | None = None
    used_gb: float | None = None
    kv_tokens: int | None = None


class FailureHit(NamedTuple):
    """A failure signature.

    ``hard`` means the process is going down (a scheduler exception, a SIGQUIT, a watchdog); a
    soft hit (a bare traceback, an OOM message) may still be survived. ``kind`` is None when the
    text names no cause; ``evidence`` lines name one without being failures by themselves.
    A ``weak`` cause (vLLM waiting on its shared-memory broadcast: a rank is slow, for example
    compiling) gives way to an exception that follows it.
    """

    kind: FailureKind | None
    hard: bool
    evidence: bool = False
    weak: bool = False


class DecodeHit(NamedTuple):
    """A decode statistics line."""

    gen_throughput: float | None
    accept_len: float | None = None
    accept_rate: float | None = None
    running: int | None = None
    queued: int | None = None


class SpecHit(NamedTuple):
    """A speculative-decoding line that complements the previous decode line (vLLM)."""

    accept_len: float | None
    accept_rate: float | None


class RequestHit(NamedTuple):
    """An HTTP access line."""

    method: str
    path: str
    status: int


class ArgsHit(NamedTuple):
    """The server's resolved arguments; None where the line does not say."""

    model: str | None = None
    served_model_name: str | None = None
    drafter: str | None = None
    speculative_algorithm: str | None = None
    tp_size: int | None = None
    dp_size: int | None = None
    ep_size: int | None = None
    pp_size: int | None = None
    nnodes: int | None = None
    node_rank: int | None = None
    port: int | None = None


class StopHit(NamedTuple):
    """A clean shutdown marker."""

    reason: str


class VersionHit(NamedTuple):
    """The engine version as the log states it."""

    engine: str
    version: str


class Marker(Enum):
    """Hits without a payload."""

    READY = "ready"
    RUN_STARTED = "run_started"
    SCHEDULER_READY = "scheduler_ready"
    NODE_READY = "node_ready"
    """A node other than node 0 has its schedulers ready (it serves a dummy ``/health``)."""
    BATCH = "batch"
    """A batch of requests ran: the warm-up before the ready line, serving after it."""
    TRAFFIC = "traffic"
    """Requests are being served (several at once, queued ones, a retraction under load),
    whether or not the ready line was seen."""


Hit = (
    StageHit
    | ProgressHit
    | PhaseHit
    | RendezvousHit
    | MemoryHit
    | FailureHit
    | DecodeHit
    | SpecHit
    | RequestHit
    | ArgsHit
    | StopHit
    | VersionHit
    | Marker
)


class Parsed(NamedTuple):
    """One interesting line: who printed it, when, and what it means.

    ``rank`` is the tag as printed, ``"main"`` for an untagged process line, or None when the
    line carries no envelope at all (a traceback continuation, a progress bar, wrapper noise).
    ``semantics`` names the engine whose wording the envelope implies (``"sglang"``,
    ``"vllm"``) or ``""`` when the line could come from either.
    """

    rank: str | None
    ts_text: str | None
    msg: str
    hits: tuple[Hit, ...]
    semantics: str = ""
    renamed: str | None = None
    """The tag this process logged under until this line (vLLM starts its workers as
    ``Worker`` and renames them ``Worker_TP0``): the rank takes the new name."""
