"""What bringup needs to know of one serving engine (SGLang, vLLM, ...): its dialect.

Every question whose answer depends on the engine is asked of a ``Dialect``, found by name in
``tui.engine.servers.registry``: how its lines read, which fast path a serving log of it takes,
its default port, how to probe its HTTP server, what its processes are titled, which benchmark
tool it ships and which metrics it exports. Nothing else in bringup names an engine.

The line grammar reads SGLang's and vLLM's envelopes together (real logs mix them); a dialect
whose lines look like neither brings its own envelope reader (``read_line``), which the grammar
tries on every line no built-in envelope claimed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from tui.engine.servers.hits import Hit, Parsed


class FastPath(Enum):
    """How a serving log of the engine skips the full grammar for its common lines (see
    ``tui.engine.logs.line_scan``); the scanner picks its path once the engine is known."""

    NONE = "none"
    """Every line goes through the grammar."""
    STAMPED_SHAPES = "stamped-shapes"
    """Lines are told apart by their first 40 characters (a stamp, rank tags, the message
    head): decode, prefill, access and quiet lines are absorbed in bulk (SGLang)."""
    ACCESS_LINES = "access-lines"
    """uvicorn access lines behind a process prefix are only counted (vLLM)."""


@dataclass(frozen=True, slots=True)
class GenerationProbe:
    """One real generation of a single token: where to send it and what to send."""

    path: str
    prompt_key: str
    """The body's field that holds the prompt."""
    options: Mapping[str, object]
    """The rest of the body: one token, greedy."""
    names_model: bool = False
    """The body names the served model (asked of ``/v1/models`` first)."""
    request_id_key: str | None = None
    """The body's field that names the request (SGLang's ``rid``); None where a header does."""

    def body(self, prompt: str, request_id: str | None = None) -> dict[str, object]:
        """The request body asking for ``prompt``, named ``request_id`` where the body can."""
        body: dict[str, object] = {self.prompt_key: prompt, **self.options}
        if request_id is not None and self.request_id_key is not None:
            body[self.request_id_key] = request_id
        return body


@dataclass(frozen=True, slots=True)
class MetricNames:
    """The Prometheus series an engine exports on ``/metrics`` for each serving figure.

    Each field lists the sample names that carry the figure, the newest version's first and the
    names older versions used after it; counters are named as they are sent (``..._total``).
    A field left empty is a figure the engine does not export.
    """

    running: tuple[str, ...] = ()
    """Gauge: requests in the running batch."""
    queued: tuple[str, ...] = ()
    """Gauge: requests waiting for a slot."""
    kv_usage: tuple[str, ...] = ()
    """Gauge: the KV cache in use, as a fraction (1 is full)."""
    generation_tokens: tuple[str, ...] = ()
    """Counter: tokens generated."""
    prompt_tokens: tuple[str, ...] = ()
    """Counter: prompt tokens prefilled."""
    requests: tuple[str, ...] = ()
    """Counter: requests the engine finished."""
    gen_throughput: tuple[str, ...] = ()
    """Gauge: generated tokens per second as the engine measures it."""
    prefix_hits: tuple[str, ...] = ()
    """Counter: prompt tokens found in the prefix cache."""
    prefix_queries: tuple[str, ...] = ()
    """Counter: prompt tokens looked up in the prefix cache."""
    prefix_hit_rate: tuple[str, ...] = ()
    """Gauge: the prefix cache's hit rate (0..1)."""
    preemptions: tuple[str, ...] = ()
    """Counter: requests preempted (their KV cache evicted)."""
    ttft: tuple[str, ...] = ()
    """Histogram: time to first token, seconds."""
    itl: tuple[str, ...] = ()
    """Histogram: time between two output tokens, seconds."""
    accepted_tokens: tuple[str, ...] = ()
    """Counter: draft tokens the target model accepted."""
    drafts: tuple[str, ...] = ()
    """Counter: speculative drafts (verify steps)."""
    draft_tokens: tuple[str, ...] = ()
    """Counter: draft tokens proposed."""
    accept_length: tuple[str, ...] = ()
    """Gauge: tokens per verify step, the bonus token included."""
    accept_rate: tuple[str, ...] = ()
    """Gauge: the fraction of draft tokens accepted."""

    def names(self) -> tuple[str, ...]:
        """Every name, in field order."""
        return tuple(name for field_name in self.__slots__ for name in getattr(self, field_name))


@dataclass(frozen=True, slots=True)
class BenchTool:
    """The engine's own serving benchmark and how to ask it for a random-prompt workload."""

    title: str
    """How the tool is named to the user (``vllm bench serve``)."""
    command: tuple[str, ...]
    """Its command line before the options; with ``via_python`` it follows the interpreter."""
    backend: str
    """The ``--backend`` value, also how its summary names itself."""
    warmup_flag: str
    via_python: bool = False
    extra: tuple[str, ...] = ()
    """Options that make its workload match the built-in client's."""
    ignore_eos_flag: str | None = None
    """Added when end-of-sequence tokens are ignored (the tool keeps them by default)."""
    keep_eos_flag: str | None = None
    """Added when they are not (the tool ignores them by default)."""
    signature_rows: tuple[str, ...] = ()
    """Summary rows (lower case) only this tool prints."""
    offline_dataset: str = "random"
    """The ``--dataset-name`` of random prompts that needs no download."""
    result_format: str = ""
    """How it writes machine-readable results: ``vllm`` (``--save-result --result-dir``) or
    ``sglang`` (``--output-file``, JSON lines)."""

    def argv(
        self, python: str, model: list[str], common: list[str], warmups: int, ignore_eos: bool
    ) -> list[str]:
        """The whole command line, given the options every tool shares (``common``)."""
        head = [python, *self.command] if self.via_python else [*self.command]
        eos = self.ignore_eos_flag if ignore_eos else self.keep_eos_flag
        return [
            *head, "--backend", self.backend, *model, *common, *self.extra,
            self.warmup_flag, str(warmups), *([eos] if eos else []),
        ]  # fmt: skip

    def printed(self, backend: str, labels: Sequence[str]) -> bool:
        """True when a summary with this ``backend`` value and these row labels is its own."""
        return backend.startswith(self.backend) or any(row in labels for row in self.signature_rows)


@dataclass(frozen=True, slots=True)
class StartupTraits:
    """How the engine's start-up differs from the plain reading of its log."""

    short_stamps_foreign: bool = False
    """Stamps without a year come from another engine's import, not from this log's clock."""
    config_before_workers: bool = False
    """The API process resolves the model's configuration before any worker starts, so a
    worker in distributed init is further along than that configuration."""
    answers_only_when_ready: bool = False
    """The HTTP server answers nothing before start-up completed: an answered generation
    means the server is serving even without its ready line."""
    omits_default_args: bool = False
    """The logged arguments leave out defaults (the port among them)."""
    nodes_follow_api: bool = False
    """Nodes other than the API node log no ready line: they are ready with it."""
    process_prefix_names_rank: bool = False
    """Any ``(Name pid=N)`` prefix in front of a line is a rank of the server's."""
    decode_lines_as_text: bool = False
    """Decode lines are kept as text for the decode tracker to read in bulk."""
    front_processes: frozenset[str] = field(default_factory=frozenset)
    """Process names that front the server and never draw a worker's progress bars."""


class Dialect(Protocol):
    """One serving engine, as the rest of bringup asks about it."""

    @property
    def name(self) -> str:
        """How configs, logs and the user name the engine (``sglang``)."""
        ...

    @property
    def default_port(self) -> int: ...

    @property
    def native_endpoint(self) -> str:
        """The built-in benchmark's endpoint when none is configured (``generate``)."""
        ...

    @property
    def fast_path(self) -> FastPath: ...

    @property
    def traits(self) -> StartupTraits: ...

    @property
    def health_path(self) -> str: ...

    @property
    def generation(self) -> GenerationProbe: ...

    @property
    def bench_tool(self) -> BenchTool: ...

    @property
    def metric_names(self) -> MetricNames:
        """The Prometheus series the engine exports for each serving figure."""
        ...

    @property
    def read_line(self) -> Callable[[str], Parsed | None] | None:
        """Reads a line in the engine's own envelope (None when it is not one); the line seen
        first that it reads names the engine. None for the engines whose envelopes the shared
        grammar reads itself."""
        ...

    def message_hits(self, msg: str) -> tuple[Hit, ...]:
        """What a message without an envelope means in this engine's wording."""
        ...

    def process_titles(self, tag: str) -> tuple[str, ...]:
        """The process titles the rank tagged ``tag`` may carry (for a stack dump)."""
        ...
