"""The one judge: every verdict, in the app and in ``bringup wait``, is computed here.

``judge`` takes the log's ``Snapshot``, the other ``Signals`` (the link, the health poll, the
test generation, which of them the caller follows, and what the previous judgement remembered of
a READY run) and the expectations from past runs, and returns a ``Judgement``: the verdict
(``verdict.decide_verdict``), each rank's standing against the stall and lag rules
(``stall.assess``), the reason behind the verdict, every disagreement between the signals, and
the memory to hand to the next judgement (``Judgement.serving``, see ``degraded``). It is pure:
the caller brings the clock and carries the memory.

To add a verdict, extend ``Signals`` with what it needs, add the rung to ``decide_verdict`` and
its sentence to ``_reason``: no caller decides a verdict itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.engine.judge.degraded import (
    DEFAULT_HEALTH_GRACE,
    ServingMemory,
    degraded_reason,
    grace_over,
    grace_reason,
    port_trouble,
    remembered,
    unreached,
    with_trouble,
)
from tui.engine.judge.health import HealthState
from tui.engine.judge.rendezvous_gap import rendezvous_gap
from tui.engine.judge.scheduled_job import ScheduledJob, last_words
from tui.engine.judge.stall import RankStatus, StallPolicy, assess, stalled
from tui.engine.judge.verdict import Watched, decide_verdict
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome, Verdict
from tui.engine.timing.estimate import Expectations

FINAL = frozenset({Verdict.READY, Verdict.FAILED, Verdict.STOPPED})
"""Verdicts after which nothing more is to be waited for."""


@dataclass(frozen=True, slots=True)
class Signals:
    """What the judge hears besides the log."""

    connected: bool = True
    health: HealthState = HealthState.UNKNOWN
    generation_ok: bool | None = None
    """The test generation: answered (True), failed (False), not tried (None)."""
    watched: Watched = field(default_factory=Watched)
    job: ScheduledJob | None = None
    """The scheduler's job the server runs in (a Slurm job); None for a server started
    otherwise."""
    health_detail: str = ""
    """What the latest health poll said went wrong (``ReadTimeout``), for the reason."""
    serving: ServingMemory | None = None
    """What the previous judgement remembered of a READY run (its ``Judgement.serving``)."""
    health_grace: float = DEFAULT_HEALTH_GRACE
    """Seconds a READY run's port may fail (DEGRADED) before the verdict is FAILED."""
    process_ended: Verdict | None = None
    """How the launched server's process ended (FAILED or STOPPED) once the launcher saw it
    end; None while it runs or when nothing launched it."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict, why, each rank's standing, and where the signals disagree."""

    verdict: Verdict
    reason: str
    disagreements: tuple[str, ...] = ()
    statuses: tuple[RankStatus, ...] = ()
    serving: ServingMemory | None = None
    """What to remember for the next judgement: when this run became READY and since when its
    port fails (None before READY)."""

    @property
    def final(self) -> bool:
        """READY, FAILED or STOPPED: the start-up is over, one way or the other."""
        return self.verdict in FINAL

    @property
    def stalled(self) -> tuple[RankStatus, ...]:
        return stalled(self.statuses)


@dataclass(frozen=True, slots=True)
class VerdictChanged:
    """The verdict changed (``bringup wait`` reports each change): to ``verdict``, why, and
    from what (None for the first verdict)."""

    verdict: Verdict
    reason: str
    previous: Verdict | None = None


def judge(
    snapshot: Snapshot,
    signals: Signals,
    expectations: Expectations,
    now: float,
    policy: StallPolicy | None = None,
) -> Judgement:
    """The verdict over the log and the signals at ``now`` (the same clock as the snapshot)."""
    statuses = assess(snapshot, expectations, now, policy)
    memory = remembered(signals.serving, snapshot)
    if memory is not None:
        trouble = port_trouble(signals.health, signals.generation_ok, signals.health_detail)
        trouble = trouble if signals.watched.health else ""
        memory = with_trouble(memory, trouble, now, unreached(signals.health))
    report = decide_verdict(
        snapshot,
        connected=signals.connected,
        health=signals.health,
        generation_ok=signals.generation_ok,
        stalled_ranks=tuple(status.tag for status in stalled(statuses)),
        watched=signals.watched,
        job=signals.job,
        served=memory is not None,
        grace_over=memory is not None and grace_over(memory, now, signals.health_grace),
        process_ended=signals.process_ended,
    )
    verdict = report.verdict
    if verdict is Verdict.READY:
        ready_at = memory.ready_at if memory is not None else now
        memory = ServingMemory(ready_at, snapshot.runs_before)
    reason = (
        _job_reason(verdict, snapshot, signals.job)
        or _serving_reason(verdict, snapshot, memory, now, signals)
        or _reason(verdict, snapshot, signals.watched, statuses)
    )
    return Judgement(verdict, reason, report.disagreements, statuses, memory)


def _serving_reason(
    verdict: Verdict, snapshot: Snapshot, memory: ServingMemory | None, now: float, signals: Signals
) -> str:
    """Why a run judged READY before is DEGRADED, ended with its process, or FAILED after the
    grace; else ``""``."""
    grace, process_ended = signals.health_grace, signals.process_ended
    if memory is None or snapshot.outcome is Outcome.FAILED or snapshot.stopped:
        return ""
    if verdict is Verdict.DEGRADED:
        return degraded_reason(memory, now, grace)
    if process_ended is not None and verdict is process_ended:
        return f"the server's process ended after READY ({process_ended.value.lower()})"
    if verdict is Verdict.FAILED:
        return grace_reason(memory, now, grace)
    return ""


def _job_reason(verdict: Verdict, snapshot: Snapshot, job: ScheduledJob | None) -> str:
    """The job's words when its phase decided the verdict (or explains a failure); else ``""``."""
    if job is None:
        return ""
    if verdict is Verdict.QUEUED:
        return job.summary
    if not job.ended:
        return ""
    if verdict is Verdict.FAILED and snapshot.failure is not None:
        return f"{_failure_reason(snapshot)}; {job.summary}"
    return f"{job.summary}; {last_words(snapshot)}"


def _reason(
    verdict: Verdict, snapshot: Snapshot, watched: Watched, statuses: tuple[RankStatus, ...]
) -> str:
    """One sentence on why the verdict is what it is."""
    if verdict is Verdict.FAILED:
        return _failure_reason(snapshot)
    if verdict is Verdict.STOPPED:
        when = "after" if snapshot.ready_line_seen else "before"
        return f"the server stopped {when} it was ready"
    if verdict is Verdict.CONNECTING:
        return "no connection to the host yet"
    if verdict is Verdict.READY:
        return _ready_reason(snapshot, watched)
    if verdict is Verdict.STALLED:
        return _stall_reason(snapshot, stalled(statuses)[0])
    stage = snapshot.last_stage.label if snapshot.last_stage is not None else "no stage yet"
    phase = next((s.reason for s in statuses if s.phase), "")
    return f"starting; last stage: {stage}" + (f" ({phase})" if phase else "")


def _ready_reason(snapshot: Snapshot, watched: Watched) -> str:
    """What agreed: the ready line and/or ``/health`` with a generated token; the start-up."""
    agreed = [
        *(["the ready line"] if watched.log else []),
        *(["/health 200 and one generated token"] if watched.health else []),
    ]
    took = snapshot.startup_seconds
    shown = f"; the log shows a {took:.1f} s start-up" if took is not None else ""
    return f"{' and '.join(agreed)}{shown}"


def _failure_reason(snapshot: Snapshot) -> str:
    failure = snapshot.failure
    if failure is None:
        return "failed"
    where = f" on {failure.rank}" if failure.rank else ""
    lines = failure.excerpt.strip().splitlines()
    raise_it = f"; to wait longer, raise {failure.setting}" if failure.setting else ""
    gap = rendezvous_gap(snapshot)
    gap = f"; {gap}" if gap else ""
    return f"{failure.kind.value}{where}: {lines[-1] if lines else ''}{raise_it}{gap}"


def _stall_reason(snapshot: Snapshot, status: RankStatus) -> str:
    """``TP3: silent ...``, with the node first when the server spans several hosts."""
    rank = snapshot.rank(status.tag)
    where = f"node {rank.node} " if snapshot.nodes and rank is not None else ""
    return f"{where}{status.tag}: {status.reason}"
