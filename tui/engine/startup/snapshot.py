"""Immutable views of a server's start-up, handed from the engine to the UI and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tui.engine.startup.vocabulary import FailureKind, Outcome, Phase, Stage


@dataclass(frozen=True, slots=True)
class StageSpan:
    """One stage a rank went through. ``seconds`` is None while the stage is current."""

    stage: Stage
    draft: bool
    start_ts: float | None
    start_text: str | None
    started_at: float
    seconds: float | None


@dataclass(frozen=True, slots=True)
class Progress:
    """Progress inside the current stage."""

    done: int
    total: int
    label: str

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class PhaseState:
    """A compile, JIT or autotune phase inside the rank's stage (the current one, or the last
    one seen in it). Times ``*_at`` come from the injected clock."""

    phase: Phase
    stage: Stage
    started_at: float
    step_at: float
    """When the phase last moved: it began, a unit started or finished, its bar redrew."""
    done: int = 0
    """Units finished (modules built, graphs compiled), or the bar's count."""
    total: int | None = None
    """The bar's total, when the phase draws one."""
    detail: str = ""
    """The unit being worked on, or the last one finished."""
    running: bool = True
    """Work is in progress: a unit started and has not finished, or the phase began and has
    not ended. Between two module builds the stage's own work goes on."""
    bracketed: bool = False
    """The phase printed a begin line, so it runs until its end line."""
    ended: bool = False
    start_ts: float | None = None
    unit_ts: float | None = None
    """Log time the current unit started."""
    unit_at: float = 0.0

    @property
    def label(self) -> str:
        """``"AITER build 3 done (module_moe)"``, ``"DeepGEMM JIT 40/128"``."""
        if self.total is not None:
            count = f" {self.done}/{self.total}"
        elif self.done:
            count = f" {self.done} done"
        else:
            count = ""
        detail = f" ({self.detail})" if self.detail and self.total is None else ""
        return f"{self.phase.label}{count}{detail}"


@dataclass(frozen=True, slots=True)
class PhaseSpan:
    """A phase that ended: how long it took and how many units it finished."""

    phase: Phase
    seconds: float
    steps: int


@dataclass(frozen=True, slots=True)
class RankState:
    """Everything known about one rank (or one process, for engines that log per process)."""

    tag: str
    node: int = 0
    stage: Stage = Stage.PROCESS_START
    draft: bool = False
    stage_started_at: float = 0.0
    progress: Progress | None = None
    avail_gb: float | None = None
    used_gb: float | None = None
    kv_tokens: int | None = None
    last_line: str = ""
    last_seen_at: float = 0.0
    lines: int = 0
    failed: bool = False
    history: tuple[StageSpan, ...] = ()
    draft_stage: Stage | None = None
    """While ``draft`` is True: the step the draft model is in (its weights, KV pool, graphs);
    ``stage`` stays the furthest stage the rank reached, so it never moves backwards."""
    last_message: str = ""
    """``last_line`` without its envelope (time stamp, rank tags, vLLM's level and source)."""
    phase: PhaseState | None = None
    """The compile, JIT or autotune phase of the current stage, if the log showed one."""
    phases: tuple[PhaseSpan, ...] = ()
    """The phases that ended, oldest first (bounded)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """The first failure that explains the outcome."""

    kind: FailureKind
    rank: str | None
    line: int
    excerpt: str
    stage: Stage | None
    setting: str = ""
    """For a start-up timeout: the setting that raises the limit it ran into."""


FigureSlots = tuple[tuple[float | None, ...], tuple[float | None, ...], tuple[float | None, ...]]
"""The latest figure slots of each kind (gen throughput, accept len, accept rate), oldest
first; a slot whose number could not be read is None."""


class DecodeSummary:
    """Decode statistics seen in the log; value lists are bounded to the most recent samples.

    Each list holds the readable figures among the latest 512 *slots* of its kind (a slot is a
    figure the log printed; one that is not a finite number leaves a gap). The figures are read
    from the log text on first access (a replay reads only the last ones), then kept. Instances
    are immutable and compare by value.
    """

    __slots__ = ("_accept_count", "_lines", "_source", "_values")

    def __init__(
        self,
        lines: int = 0,
        gen_throughput: tuple[float, ...] = (),
        accept_len: tuple[float, ...] = (),
        accept_rate: tuple[float, ...] = (),
        accept_count: int = 0,
        *,
        read: Callable[[], FigureSlots] | None = None,
    ) -> None:
        """Either the figures themselves, or ``read``: called once, when first needed."""
        self._lines = lines
        self._accept_count = accept_count
        self._source: FigureSlots | Callable[[], FigureSlots] = (
            (gen_throughput, accept_len, accept_rate) if read is None else read
        )
        self._values: tuple[tuple[float, ...], ...] | None = None

    @property
    def lines(self) -> int:
        """Decode lines seen in this run."""
        return self._lines

    @property
    def accept_count(self) -> int:
        """Accept-length slots seen in this run; ``accept_len`` keeps only the newest of them, so
        the values that arrived between two summaries ``a`` and ``b`` are
        ``b.latest_accepts(b.accept_count - a.accept_count)``."""
        return self._accept_count

    @property
    def gen_throughput(self) -> tuple[float, ...]:
        return self._readable()[0]

    @property
    def accept_len(self) -> tuple[float, ...]:
        return self._readable()[1]

    @property
    def accept_rate(self) -> tuple[float, ...]:
        return self._readable()[2]

    def latest_accepts(self, count: int) -> tuple[float, ...]:
        """The readable accept lengths among the latest ``count`` slots (as many as are kept)."""
        if count <= 0:
            return ()
        return tuple(value for value in self.slots()[1][-count:] if value is not None)

    def slots(self) -> FigureSlots:
        """Every kept slot, gaps included (read from the log text on the first call)."""
        source = self._source
        if callable(source):
            source = self._source = source()
        return source

    def _readable(self) -> tuple[tuple[float, ...], ...]:
        if self._values is None:
            self._values = tuple(
                tuple(value for value in kind if value is not None) for kind in self.slots()
            )
        return self._values

    def _key(self) -> tuple[int, int, FigureSlots]:
        return (self._lines, self._accept_count, self.slots())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecodeSummary):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        gen, accept, rate = self.slots()
        return (
            f"DecodeSummary(lines={self._lines}, gen_throughput={gen!r}, accept_len={accept!r},"
            f" accept_rate={rate!r}, accept_count={self._accept_count})"
        )


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the server's arguments and banner said about it."""

    engine: str = "unknown"
    version: str | None = None
    model: str | None = None
    served_model_name: str | None = None
    drafter: str | None = None
    speculative_algorithm: str | None = None
    tp_size: int = 1
    dp_size: int = 1
    ep_size: int = 1
    pp_size: int = 1
    nnodes: int = 1
    port: int | None = None


@dataclass(frozen=True, slots=True)
class Rendezvous:
    """How many ranks reached the distributed rendezvous, and the peers that went away or could
    not be reached (addresses as printed)."""

    joined: int | None = None
    expected: int | None = None
    peers: tuple[str, ...] = ()

    @property
    def missing(self) -> int:
        """Ranks that never joined (0 when the count is complete or unknown)."""
        if self.joined is None or self.expected is None:
            return 0
        return max(self.expected - self.joined, 0)


@dataclass(frozen=True, slots=True)
class NodeSummary:
    """One node (host) of a multi-node server, as the merged start-up sees it.

    ``stage`` is its slowest rank's stage; ``behind_since`` the instant (monitor clock) since
    which most other nodes have left that stage; ``clock_skew`` how far its log clock runs ahead
    of node 0's (seconds, from log timestamps against the monitor's receive times); ``note`` one
    sentence for people.
    """

    node: int
    host: str = ""
    ranks: int = 0
    stage: Stage | None = None
    joined: bool = False
    ready: bool = False
    failed: bool = False
    stopped: bool = False
    lines: int = 0
    behind_since: float | None = None
    clock_skew: float | None = None
    note: str = ""
    missing: bool = False
    """The rendezvous came up short and this node's ranks are the ones that never joined (or
    its address is the peer that could not be reached)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The start-up model at one instant. ``*_at`` values come from the injected clock."""

    server: ServerInfo = field(default_factory=ServerInfo)
    ranks: tuple[RankState, ...] = ()
    outcome: Outcome = Outcome.INCOMPLETE
    last_stage: Stage | None = None
    failure: Failure | None = None
    ready_line_seen: bool = False
    stopped: bool = False
    lines: int = 0
    runs_before: int = 0
    started_at: float | None = None
    first_ts: float | None = None
    ready_ts: float | None = None
    ready_at: float | None = None
    decode: DecodeSummary = field(default_factory=DecodeSummary)
    requests: int = 0
    """HTTP access lines seen in this run."""
    node_ready_ts: float | None = None
    """Log time of a non-zero node's ``Dummy health check server started`` line (its
    schedulers are ready; it answers a dummy ``/health``)."""
    node_ready_at: float | None = None
    nodes: tuple[NodeSummary, ...] = ()
    """One summary per node when the server spans several hosts."""
    rendezvous: Rendezvous | None = None
    """What the distributed rendezvous lines said (counts, unreachable peers), if any."""

    @property
    def startup_seconds(self) -> float | None:
        """Log-time seconds from the first timestamped line to the ready line."""
        if self.first_ts is None or self.ready_ts is None:
            return None
        return self.ready_ts - self.first_ts

    def rank(self, tag: str) -> RankState | None:
        return next((r for r in self.ranks if r.tag == tag), None)
