"""A start-up as a pure schedule: what each process prints, and when, in simulated seconds.

The schedule is built without a clock or any I/O (see ``sglang_startup`` and
``vllm_startup``); the runner plays it back, sleeping ``at * time_scale`` seconds from launch
before each step. Steps are plain frozen values so tests can read a whole start-up at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class Log:
    """One log record. ``who`` is the rank tag (SGLang) or process name (vLLM); None = main."""

    who: str | None
    msg: str
    level: str = "INFO"
    src: str = ""
    shown: str | None = None


@dataclass(frozen=True, slots=True)
class Raw:
    """Text written verbatim: tqdm redraws, C++ runtime lines. vLLM prefixes it with ``who``."""

    text: str
    who: str | None = None
    stamped: bool = False


@dataclass(frozen=True, slots=True)
class Gpu:
    """A rank's GPU memory and utilisation changed (``rank`` None means every rank)."""

    rank: int | None
    used_gb: float
    util: int


@dataclass(frozen=True, slots=True)
class Signal:
    """Make a rank process act: ``sigquit`` its parent and exit, ``abort``, or ``exit``."""

    rank: int
    how: str


@dataclass(frozen=True, slots=True)
class Spawn:
    """The launcher starts its child processes: ``(name, log tag)``, ranks first, in order."""

    children: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Bind:
    """vLLM binds its HTTP socket early (not listening yet); a busy port fails the launch."""


@dataclass(frozen=True, slots=True)
class Exit:
    """The main process exits with ``code`` after reaping its children."""

    code: int


@dataclass(frozen=True, slots=True)
class Ready:
    """Every rank of this node finished start-up; the main process may serve HTTP."""


Action: TypeAlias = Log | Raw | Gpu | Signal | Spawn | Bind | Exit | Ready


@dataclass(frozen=True, slots=True)
class Step:
    """An action and the simulated second it happens at."""

    at: float
    action: Action


@dataclass(frozen=True, slots=True)
class StartupTimes:
    """Per-phase durations in real seconds, as ``Engine startup timings`` reports them."""

    load_weight: float = 0.0
    kv_cache_allocation: float = 0.0
    scheduler_e2e: float = 0.0
    cuda_graph: dict[str, float] = field(default_factory=dict)
    tokenizer_e2e: float = 0.0

    @classmethod
    def from_phases(cls, phases: dict[str, float]) -> StartupTimes:
        """From per-phase seconds keyed by SGLang's phase names (missing ones are 0)."""
        graphs = (
            "prefill",
            "decode",
            "target_verify",
            "draft_prefill",
            "draft_decode",
            "draft_extend",
        )
        return cls(
            load_weight=phases.get("load_weight", 0.0),
            kv_cache_allocation=phases.get("kv_cache_allocation", 0.0),
            scheduler_e2e=phases.get("scheduler_e2e", 0.0),
            cuda_graph={key: phases.get(key, 0.0) for key in graphs},
            tokenizer_e2e=phases.get("tokenizer_e2e", 0.0),
        )

    def summary(self) -> str:
        """SGLang's ``Engine startup timings (s): ...`` line."""
        graphs = ", ".join(f"{key}={value:.2f}" for key, value in self.cuda_graph.items())
        return (
            f"Engine startup timings (s): load_weight={self.load_weight:.2f}, "
            f"kv_cache_allocation={self.kv_cache_allocation:.2f}, "
            f"scheduler_e2e={self.scheduler_e2e:.2f}, cuda_graph={{{graphs}}}, "
            f"tokenizer_e2e={self.tokenizer_e2e:.2f}"
        )


@dataclass(frozen=True, slots=True)
class Timeline:
    """A whole start-up: its steps in time order and the figures it reports."""

    steps: tuple[Step, ...]
    times: StartupTimes
    ready: bool

    @property
    def end(self) -> float:
        return self.steps[-1].at if self.steps else 0.0

    def logs(self) -> list[Log]:
        """The log records, in order (handy for tests)."""
        return [step.action for step in self.steps if isinstance(step.action, Log)]


class Script:
    """Collects steps in any order; ``timeline`` sorts them by time, keeping insertion order."""

    def __init__(self) -> None:
        self._steps: list[Step] = []

    def add(self, at: float, action: Action) -> None:
        self._steps.append(Step(at, action))

    def log(
        self,
        at: float,
        who: str | None,
        msg: str,
        level: str = "INFO",
        src: str = "",
        shown: str | None = None,
    ) -> None:
        self.add(at, Log(who, msg, level, src, shown))

    def cut(self, at: float) -> None:
        """Forget everything scheduled after ``at`` (a failure stops the start there)."""
        self._steps = [step for step in self._steps if step.at <= at]

    def timeline(self, times: StartupTimes, ready: bool) -> Timeline:
        ordered = sorted(enumerate(self._steps), key=lambda pair: (pair[1].at, pair[0]))
        return Timeline(tuple(step for _, step in ordered), times, ready)
