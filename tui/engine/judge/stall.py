"""Is a quiet rank slow or dead? Per-rank stall and lag rules over a ``Snapshot``.

The numbers come from past runs (``Expectations``): ``usual`` is a stage's median, ``p95`` its
95th percentile. For every rank still starting:

- LAGGING (flagged, not stalled): more than half of the other ranks left its stage at least
  ``max(lag, usual / 4)`` seconds ago.
- STALLED: it has been in its stage longer than ``max(factor * p95, floor)`` seconds and no rank
  in that stage has printed a line for ``floor`` seconds (one rank's progress bar shows the
  stage's collective work is moving for every rank in it). A lagging rank gets
  ``lagging_factor`` times the slack: the others are waiting for it, and a lone slow rank (a
  slower disk, a throttled GPU) is more likely than a hang that only one rank reached.
- OK, "waiting for TP2": a rank ahead of a live rank still in an earlier stage is blocked in a
  collective on it, whatever its own silence; the rank behind is the one judged.
- A compile, JIT or autotune phase (``RankState.phase``) has rules of its own while it runs:
  STALLED only when no step of it (a build started or finished, its bar redrawn) came for
  ``max(factor * p95, floor)`` of the phase's usual step time (``Expectations.phase_step``)
  and no rank in the stage printed a line for ``floor`` seconds; a cold cache's long builds
  are OK while they keep finishing. Time the stage spent in a phase that ended does not count
  against the stage's own limit.
- FAILED: the log showed a failure. Hangs the engines detect themselves (SGLang's scheduler
  watchdog, the NCCL watchdog) are classified by the grammar as failures, never guessed here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from tui.engine.startup.log_events import Event
from tui.engine.startup.snapshot import PhaseState, RankState, Snapshot
from tui.engine.startup.vocabulary import Outcome, Phase, Stage
from tui.engine.timing.estimate import (
    DEFAULT_HIGH,
    DEFAULT_LOW,
    DEFAULT_SPLIT,
    Expectations,
    clock_label,
    startup_ranks,
)
from tui.engine.timing.spread import Spread


class RankHealth(str, Enum):
    """A rank's standing against the usual start-up."""

    OK = "ok"
    LAGGING = "lagging"
    STALLED = "stalled"
    FAILED = "failed"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class StallPolicy:
    """The profile's ``[stall]`` table, in seconds and multiples of a stage's p95."""

    factor: float = 1.5
    floor: float = 60.0
    lag: float = 30.0
    lagging_factor: float = 2.0

    def threshold(self, usual: Spread, *, lagging: bool = False) -> float:
        """Seconds in a stage after which a silent rank is stalled."""
        factor = self.factor * (self.lagging_factor if lagging else 1.0)
        return max(factor * usual.high, self.floor)

    def lag_threshold(self, usual: Spread) -> float:
        """Seconds behind the other ranks after which a rank is lagging."""
        return max(self.lag, usual.median / 4)


@dataclass(frozen=True, slots=True)
class RankStatus:
    """One rank's health with the numbers behind it (seconds; ``None`` when not applicable)."""

    tag: str
    health: RankHealth
    stage: Stage
    draft: bool
    in_stage: float
    silent_for: float
    threshold: float | None = None
    behind_for: float | None = None
    reason: str = ""
    phase: Phase | None = None
    """The compile or JIT phase the rank was judged by, if one was running in its stage."""

    @property
    def flagged(self) -> bool:
        return self.health in (RankHealth.LAGGING, RankHealth.STALLED)


def assess(
    snapshot: Snapshot, expectations: Expectations, now: float, policy: StallPolicy | None = None
) -> tuple[RankStatus, ...]:
    """The health of every rank that decides the start-up, in snapshot order."""
    rules = policy or StallPolicy()
    ranks = startup_ranks(snapshot)
    return tuple(_assess_rank(rank, ranks, snapshot, expectations, now, rules) for rank in ranks)


def stalled(statuses: tuple[RankStatus, ...]) -> tuple[RankStatus, ...]:
    return tuple(status for status in statuses if status.health is RankHealth.STALLED)


def usual_for(expectations: Expectations, stage: Stage, draft: bool) -> Spread:
    """The stage's spread, or a guess from ``DEFAULT_SPLIT`` scaled to the expected total."""
    known = expectations.stage(stage, draft)
    if known is not None:
        return known
    guess = DEFAULT_SPLIT.get((stage, False), 0.02) * expectations.total.median
    return Spread(guess * DEFAULT_LOW, guess, guess * DEFAULT_HIGH)


def _assess_rank(
    rank: RankState,
    ranks: tuple[RankState, ...],
    snapshot: Snapshot,
    expectations: Expectations,
    now: float,
    policy: StallPolicy,
) -> RankStatus:
    in_stage = max(now - rank.stage_started_at, 0.0)
    silent = max(now - max(rank.last_seen_at, rank.stage_started_at), 0.0)
    base = RankStatus(rank.tag, RankHealth.OK, rank.stage, rank.draft, in_stage, silent)
    if rank.failed:
        return _with(base, RankHealth.FAILED, reason=_failure_reason(snapshot, rank))
    if rank.stage.order >= Stage.READY.order or snapshot.outcome is Outcome.READY:
        return _with(base, RankHealth.DONE)
    if snapshot.outcome is not Outcome.INCOMPLETE or snapshot.stopped:
        return base
    waiting = _waiting_for(rank, ranks)
    if waiting:
        return _with(base, RankHealth.OK, reason=f"waiting for {', '.join(waiting[:4])}")
    running = _running_phase(rank, ranks)
    if running is not None:
        return _assess_phase(base, rank, running, ranks, expectations, now, policy)
    resumed = _phase_left_at(rank, ranks)
    if resumed is not None:  # the stage's own work resumed when the phase last stepped
        in_stage = max(now - max(rank.stage_started_at, resumed), 0.0)
    usual = usual_for(expectations, rank.stage, rank.draft)
    behind = _behind_for(rank, ranks, now)
    lagging = behind is not None and behind > policy.lag_threshold(usual)
    limit = policy.threshold(usual, lagging=lagging)
    quiet = _stage_silence(rank, ranks, now)
    if in_stage > limit and quiet > min(policy.floor, limit):
        reason = (
            f"silent {clock_label(quiet)}, {clock_label(in_stage)} in {_stage_name(rank)}"
            f" (usually {usual.label}, limit {clock_label(limit)})"
        )
        return _with(base, RankHealth.STALLED, threshold=limit, behind_for=behind, reason=reason)
    if lagging and behind is not None:
        reason = f"still in {_stage_name(rank)}; most other ranks left it {clock_label(behind)} ago"
        return _with(base, RankHealth.LAGGING, threshold=limit, behind_for=behind, reason=reason)
    return base


def _running_phase(rank: RankState, ranks: tuple[RankState, ...]) -> PhaseState | None:
    """The compile or JIT phase running in ``rank``'s stage: its own, else another rank's in
    the same stage (the builds of every rank are often printed without a rank tag, and the
    ranks wait for each other's)."""
    for other in (rank, *ranks):
        phase = other.phase
        if (
            phase is not None
            and phase.running
            and phase.stage is rank.stage
            and other.stage is rank.stage
            and not other.failed
        ):
            return phase
    return None


def _phase_left_at(rank: RankState, ranks: tuple[RankState, ...]) -> float | None:
    """When the last compile or JIT step in ``rank``'s stage happened (on any rank in it)."""
    steps = [
        other.phase.step_at
        for other in (rank, *ranks)
        if other.phase is not None and other.phase.stage is rank.stage and other.stage is rank.stage
    ]
    return max(steps) if steps else None


def _assess_phase(
    base: RankStatus,
    rank: RankState,
    phase: PhaseState,
    ranks: tuple[RankState, ...],
    expectations: Expectations,
    now: float,
    policy: StallPolicy,
) -> RankStatus:
    """A rank inside a running compile or JIT phase: judged by the time since its last step."""
    usual = expectations.phase_step(phase.phase)
    limit = policy.threshold(usual)
    since_step = max(now - phase.step_at, 0.0)
    quiet = _stage_silence(rank, ranks, now)
    if since_step > limit and quiet > min(policy.floor, limit):
        reason = (
            f"silent {clock_label(quiet)}, no {phase.phase.label} step for "
            f"{clock_label(since_step)} in {_stage_name(rank)} (a step usually {usual.label}, "
            f"limit {clock_label(limit)})"
        )
        stuck = _with(base, RankHealth.STALLED, threshold=limit, reason=reason)
        return replace(stuck, phase=phase.phase)
    return replace(_with(base, RankHealth.OK, threshold=limit, reason=phase.label),
                   phase=phase.phase)  # fmt: skip


def _behind_for(rank: RankState, ranks: tuple[RankState, ...], now: float) -> float | None:
    """Seconds since most of the other ranks left ``rank``'s stage, or None if they have not."""
    others = [other for other in ranks if other.tag != rank.tag]
    left = sorted(t for t in (_left_at(other, rank.stage) for other in others) if t is not None)
    if not others or len(left) * 2 <= len(others):
        return None
    return max(now - left[len(left) // 2], 0.0)


def _waiting_for(rank: RankState, ranks: tuple[RankState, ...]) -> list[str]:
    """The live ranks still in an earlier stage: a collective makes ``rank`` wait for them."""
    return [
        other.tag
        for other in ranks
        if other.stage.order < rank.stage.order and not other.failed and other.tag != rank.tag
    ]


def _stage_silence(rank: RankState, ranks: tuple[RankState, ...], now: float) -> float:
    """Seconds since any rank in ``rank``'s stage printed a line (or entered the stage)."""
    peers = [r for r in ranks if r.stage is rank.stage] or [rank]
    last = max(max(r.last_seen_at, r.stage_started_at) for r in peers)
    return max(now - last, 0.0)


def _left_at(rank: RankState, stage: Stage) -> float | None:
    """When ``rank`` entered a stage after ``stage`` (from the injected clock), or None.

    The draft model's part of a stage is the same stage here: SGLang's other ranks go silent
    while rank 0 alone captures the draft model's graphs.
    """
    entries = [(span.stage.order, span.started_at) for span in rank.history]
    entries.append((rank.stage.order, rank.stage_started_at))
    later = [at for order, at in entries if order > stage.order]
    return min(later) if later else None


def _with(
    base: RankStatus,
    health: RankHealth,
    *,
    threshold: float | None = None,
    behind_for: float | None = None,
    reason: str = "",
) -> RankStatus:
    return RankStatus(
        base.tag, health, base.stage, base.draft, base.in_stage, base.silent_for,
        threshold, behind_for, reason,
    )  # fmt: skip


def _failure_reason(snapshot: Snapshot, rank: RankState) -> str:
    failure = snapshot.failure
    if failure is None or failure.rank not in (None, rank.tag):
        return "failed"
    return f"failed: {failure.kind.value}"


def _stage_name(rank: RankState) -> str:
    return ("draft " if rank.draft else "") + rank.stage.label


@dataclass(frozen=True, slots=True)
class RankStalled(Event):
    """A rank was judged STALLED (reported once per rank and stage); ``rank`` holds its tag."""

    stage: Stage
    draft: bool
    in_stage: float
    silent_for: float
    threshold: float
    reason: str


class StallTracker:
    """Remembers which ranks were already reported stalled, so each is reported once per stage.

    It decides nothing: it turns the judge's rank statuses into one ``RankStalled`` per rank
    and stage, for a caller that reports events (``bringup wait``).
    """

    def __init__(self) -> None:
        self._reported: set[tuple[str, Stage, bool]] = set()

    def newly_stalled(self, statuses: tuple[RankStatus, ...]) -> tuple[RankStalled, ...]:
        """The ranks among ``statuses`` judged STALLED and not reported yet."""
        fresh: list[RankStalled] = []
        for status in stalled(statuses):
            key = (status.tag, status.stage, status.draft)
            if key in self._reported:
                continue
            self._reported.add(key)
            fresh.append(
                RankStalled(
                    line=0,
                    rank=status.tag,
                    ts=None,
                    stage=status.stage,
                    draft=status.draft,
                    in_stage=status.in_stage,
                    silent_for=status.silent_for,
                    threshold=status.threshold or 0.0,
                    reason=status.reason,
                )
            )
        return tuple(fresh)
