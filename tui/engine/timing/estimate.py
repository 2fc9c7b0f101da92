"""How long this start-up should take, judged from past runs of the same launch.

``expectations_for`` turns the recorded history into an ``Expectations``: a ``Spread`` for the
whole start and for each stage, plus the basis it rests on (runs with the same fingerprint,
similar runs of the same model, or the profile's ``expected_startup`` split by
``DEFAULT_SPLIT``). ``estimate`` then gives the header's ETA and progress fraction from a
``Snapshot`` and the injected clock's ``now``; ``rank_timing`` gives one rank's time in its stage
against the usual one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from tui.engine.startup.log_events import MAIN
from tui.engine.startup.snapshot import RankState, Snapshot
from tui.engine.startup.vocabulary import FailureKind, Outcome, Phase, Stage
from tui.engine.timing.fingerprint import Fingerprint, similarity
from tui.engine.timing.spread import Spread

StageKey = tuple[Stage, bool]
"""A stage and whether it is the draft model's (``(Stage.CUDA_GRAPH, True)``)."""

DEFAULT_STARTUP = 600.0
MAX_RUNS = 20

# Share of the start-up each stage takes when there is no history. Weight loading and CUDA-graph
# capture dominate a large model's cold start (the engines' own messages warn that capture "can
# take up to several minutes"; shard loading has been seen at several minutes on slow disks);
# warm-up sends real requests; the rest is seconds.
DEFAULT_SPLIT: Mapping[StageKey, float] = {
    (Stage.PROCESS_START, False): 0.02,
    (Stage.ARGS, False): 0.01,
    (Stage.DISTRIBUTED_INIT, False): 0.04,
    (Stage.MODEL_CONFIG, False): 0.03,
    (Stage.WEIGHT_LOADING, False): 0.40,
    (Stage.KV_CACHE, False): 0.05,
    (Stage.CUDA_GRAPH, False): 0.30,
    (Stage.WARMUP, False): 0.15,
}
# With a drafter, the draft model's load and capture take this share from the target's.
DRAFT_SHARE: Mapping[StageKey, float] = {
    (Stage.WEIGHT_LOADING, True): 0.05,
    (Stage.CUDA_GRAPH, True): 0.10,
}
# How long one unit of a compile or JIT phase takes (a module built, a graph compiled, an
# autotune) when no past run says: AITER prints ``finish build [x], cost 28.7s`` for small
# modules and takes minutes for the large kernel libraries, SGLang warns that DeepGEMM's
# warm-up takes "typically 10-20 mins" over many kernels, vLLM's torch.compile prints tens of
# seconds per graph. The stall rules give a phase up to 1.5 times the p95 between two steps;
# the defaults are generous, one recorded run narrows them.
DEFAULT_PHASE_STEP: Mapping[Phase, Spread] = {
    Phase.AITER_BUILD: Spread(10.0, 45.0, 240.0),
    Phase.TORCH_COMPILE: Spread(10.0, 60.0, 300.0),
    Phase.FLASHINFER_AUTOTUNE: Spread(5.0, 30.0, 300.0),
    Phase.FLASHINFER_JIT: Spread(10.0, 30.0, 180.0),
    Phase.DEEPGEMM_JIT: Spread(10.0, 60.0, 300.0),
}
# Without history the range is honest about not knowing: half to twice the guess.
DEFAULT_LOW, DEFAULT_HIGH = 0.5, 2.0


@dataclass(frozen=True, slots=True)
class StageSample:
    """How long one rank spent in one stage of a past run."""

    rank: str
    stage: Stage
    draft: bool
    seconds: float


@dataclass(frozen=True, slots=True)
class PhaseSample:
    """How long one rank's compile or JIT phase took in a past run, over how many steps."""

    rank: str
    phase: Phase
    seconds: float
    steps: int

    @property
    def step_seconds(self) -> float:
        """The time of one step (a module built, a graph compiled)."""
        return self.seconds / max(self.steps, 1)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One past start-up: its fingerprint, outcome, total time and per-rank stage times."""

    fingerprint: Fingerprint
    outcome: Outcome
    total_seconds: float | None
    samples: tuple[StageSample, ...] = ()
    recorded_at: float = 0.0
    profile: str | None = None
    failure: FailureKind | None = None
    phases: tuple[PhaseSample, ...] = ()

    def stage_seconds(self) -> dict[StageKey, float]:
        """Per stage, the slowest rank's time (the server waits for it); the main process
        counts only when it is the only process that logged stages."""
        ranks = {s.rank for s in self.samples}
        skip_main = len(ranks) > 1
        slowest: dict[StageKey, float] = {}
        for sample in self.samples:
            if skip_main and sample.rank == MAIN:
                continue
            key = (sample.stage, sample.draft)
            slowest[key] = max(slowest.get(key, 0.0), sample.seconds)
        return slowest


def run_record(
    fingerprint: Fingerprint, snapshot: Snapshot, *, recorded_at: float, profile: str | None = None
) -> RunRecord:
    """The record of a finished (or abandoned) start-up, read off its last snapshot."""
    samples = tuple(
        StageSample(rank.tag, span.stage, span.draft, span.seconds)
        for rank in snapshot.ranks
        for span in rank.history
        if span.seconds is not None and span.seconds >= 0 and span.stage.order < Stage.READY.order
    )
    failure = snapshot.failure.kind if snapshot.failure is not None else None
    phases = tuple(
        PhaseSample(rank.tag, span.phase, span.seconds, span.steps)
        for rank in snapshot.ranks
        for span in rank.phases
    )
    return RunRecord(
        fingerprint,
        snapshot.outcome,
        _total(snapshot),
        samples,
        recorded_at,
        profile,
        failure,
        phases,
    )


def _total(snapshot: Snapshot) -> float | None:
    """Launch to ready: from the log's timestamps (right even when the log was read late),
    else from the injected clock."""
    if snapshot.outcome is not Outcome.READY:
        return None
    logged = snapshot.startup_seconds
    if logged is not None and logged >= 0:
        return logged
    if snapshot.ready_at is not None and snapshot.started_at is not None:
        return max(snapshot.ready_at - snapshot.started_at, 0.0)
    return None


class Basis(str, Enum):
    """What an expectation rests on."""

    HISTORY = "history"
    SIMILAR = "similar"
    DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class Expectations:
    """The usual duration of the whole start-up and of each stage, and why we think so."""

    basis: Basis
    runs: int
    total: Spread
    stages: tuple[tuple[StageKey, Spread], ...]
    phases: tuple[tuple[Phase, Spread], ...] = ()
    """Per compile or JIT phase, the usual time of one of its steps, learned from past runs."""

    def stage(self, stage: Stage, draft: bool = False) -> Spread | None:
        return next((spread for key, spread in self.stages if key == (stage, draft)), None)

    def phase_step(self, phase: Phase) -> Spread:
        """The usual time of one step of ``phase``: learned, else ``DEFAULT_PHASE_STEP``."""
        learned = next((spread for key, spread in self.phases if key is phase), None)
        return learned if learned is not None else DEFAULT_PHASE_STEP[phase]

    @property
    def basis_label(self) -> str:
        """``"history: 5 runs"``, ``"similar runs: 3"`` or ``"default 10 min"``."""
        if self.basis is Basis.HISTORY:
            return f"history: {self.runs} run{'s' * (self.runs != 1)}"
        if self.basis is Basis.SIMILAR:
            return f"similar runs: {self.runs}"
        median = self.total.median
        return f"default {round(median / 60)} min" if median >= 90 else f"default {round(median)} s"


def default_expectations(expected_startup: float, *, speculative: bool = False) -> Expectations:
    """The profile's ``expected_startup`` split over the stages by ``DEFAULT_SPLIT``."""
    split = dict(DEFAULT_SPLIT)
    if speculative:
        for (stage, _), share in DRAFT_SHARE.items():
            split[(stage, False)] -= share
        split.update(DRAFT_SHARE)
    stages = tuple(
        (key, Spread(share * expected_startup * DEFAULT_LOW, share * expected_startup,
                     share * expected_startup * DEFAULT_HIGH))
        for key, share in sorted(split.items(), key=_key_order)
    )  # fmt: skip
    total = Spread(
        expected_startup * DEFAULT_LOW, expected_startup, expected_startup * DEFAULT_HIGH
    )
    return Expectations(Basis.DEFAULT, 0, total, stages)


def expectations_for(
    fingerprint: Fingerprint,
    history: Iterable[RunRecord],
    *,
    expected_startup: float = DEFAULT_STARTUP,
) -> Expectations:
    """Expectations from the ready runs with this fingerprint, else from the most similar ready
    runs of the same model, else from the default split of ``expected_startup``."""
    ready = [run for run in history if run.outcome is Outcome.READY]
    same = [run for run in ready if run.fingerprint == fingerprint]
    basis = Basis.HISTORY
    if not same:
        same, basis = _most_similar(fingerprint, ready), Basis.SIMILAR
    if not same:
        speculative = bool(fingerprint.drafter or fingerprint.speculative)
        return default_expectations(expected_startup, speculative=speculative)
    recent = sorted(same, key=lambda run: run.recorded_at)[-MAX_RUNS:]
    return from_runs(recent, basis)


def _most_similar(fingerprint: Fingerprint, runs: Sequence[RunRecord]) -> list[RunRecord]:
    scored = [(similarity(fingerprint, run.fingerprint), run) for run in runs]
    best = max((score for score, _ in scored), default=0)
    return [run for score, run in scored if score == best] if best > 0 else []


def from_runs(runs: Sequence[RunRecord], basis: Basis = Basis.HISTORY) -> Expectations:
    """Robust per-stage and total spreads of ``runs`` (which must not be empty)."""
    per_stage: dict[StageKey, list[float]] = {}
    for run in runs:
        for key, seconds in run.stage_seconds().items():
            per_stage.setdefault(key, []).append(seconds)
    stages = tuple(
        (key, Spread.of(values)) for key, values in sorted(per_stage.items(), key=_key_order)
    )
    totals = [run.total_seconds for run in runs if run.total_seconds is not None]
    if totals:
        total = Spread.of(totals)
    else:
        total = sum((spread for _, spread in stages), Spread.exactly(0.0))
    return Expectations(basis, len(runs), total, stages, _phase_steps(runs))


def _phase_steps(runs: Sequence[RunRecord]) -> tuple[tuple[Phase, Spread], ...]:
    """Per phase, the spread of its step times over ``runs``' samples."""
    steps: dict[Phase, list[float]] = {}
    for run in runs:
        for sample in run.phases:
            steps.setdefault(sample.phase, []).append(sample.step_seconds)
    return tuple((phase, Spread.of(values)) for phase, values in steps.items())


def _key_order(item: tuple[StageKey, object]) -> tuple[int, bool]:
    (stage, draft), _ = item
    return stage.order, draft


@dataclass(frozen=True, slots=True)
class Eta:
    """Where the start-up stands: elapsed seconds, what is left, and the bar's fraction."""

    elapsed: float
    remaining: Spread
    fraction: float
    basis_label: str

    @property
    def label(self) -> str:
        """``"ETA 6-8 min (history: 5 runs)"``; ``"overdue (…)"`` when nothing is expected left."""
        if self.remaining.high <= 0:
            return f"overdue ({self.basis_label})"
        return f"ETA {self.remaining.label} ({self.basis_label})"


def estimate(snapshot: Snapshot, expectations: Expectations, now: float) -> Eta:
    """The ETA from the stages every rank still has to go through plus what is left of its
    current one; the slowest rank decides. The range takes the spread of past totals."""
    elapsed = max(now - snapshot.started_at, 0.0) if snapshot.started_at is not None else 0.0
    if snapshot.outcome is not Outcome.INCOMPLETE:
        return Eta(elapsed, Spread.exactly(0.0), 1.0, expectations.basis_label)
    ranks = startup_ranks(snapshot)
    if ranks:
        left = max(remaining_seconds(rank, expectations, now) for rank in ranks)
    else:
        left = max(expectations.total.median - elapsed, 0.0)
    total = expectations.total
    low = total.low / total.median if total.median > 0 else 1.0
    high = total.high / total.median if total.median > 0 else 1.0
    fraction = elapsed / (elapsed + left) if elapsed + left > 0 else 0.0
    return Eta(elapsed, Spread(left * low, left, left * high), fraction, expectations.basis_label)


def startup_ranks(snapshot: Snapshot) -> tuple[RankState, ...]:
    """The ranks whose stages decide the start-up: the main process only when alone."""
    workers = tuple(rank for rank in snapshot.ranks if rank.tag != MAIN)
    return workers or snapshot.ranks


def remaining_seconds(rank: RankState, expectations: Expectations, now: float) -> float:
    """Usual seconds left for ``rank``: later stages' medians plus the rest of its current one."""
    if rank.stage.order >= Stage.READY.order:
        return 0.0
    current = (rank.stage.order, rank.draft)
    later = sum(s.median for (st, dr), s in expectations.stages if (st.order, dr) > current)
    usual = expectations.stage(rank.stage, rank.draft)
    in_stage = max(now - rank.stage_started_at, 0.0)
    return later + (max(usual.median - in_stage, 0.0) if usual is not None else 0.0)


@dataclass(frozen=True, slots=True)
class RankTiming:
    """One rank's time in its current stage against the stage's usual time."""

    tag: str
    stage: Stage
    draft: bool
    in_stage: float
    usual: Spread | None

    @property
    def ratio(self) -> float | None:
        """Time in stage over the usual (median) time, when there is one."""
        if self.usual is None or self.usual.median <= 0:
            return None
        return self.in_stage / self.usual.median

    @property
    def label(self) -> str:
        """``"1m10s / usual 40-55 s"`` for the rank panel."""
        spent = clock_label(self.in_stage)
        return f"{spent} / usual {self.usual.label}" if self.usual is not None else spent


def rank_timing(rank: RankState, expectations: Expectations, now: float) -> RankTiming:
    usual = expectations.stage(rank.stage, rank.draft)
    return RankTiming(
        rank.tag, rank.stage, rank.draft, max(now - rank.stage_started_at, 0.0), usual
    )


def clock_label(seconds: float) -> str:
    """``"4m05s"`` or ``"42s"``: a stopwatch reading."""
    whole = int(seconds)
    minutes, secs = divmod(whole, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
