"""The verdict rule: readiness is a verdict over several signals, not one line.

READY needs the engine's ready line, ``/health`` answering OK, and one real generation
answered; each alone lies (``/health`` stays 200 on some versions after a scheduler died; the
ready line says nothing about the port the monitor reaches). A caller that does not follow a
signal (``bringup wait`` without ``--port``, or without ``--log``) says so in ``Watched`` and
READY does without it. When the signals disagree the verdict says so in ``disagreements``
instead of silently picking one. Precedence:

1. FAILED when the log shows a failure (it wins over a healthy ``/health``);
2. the job's own end (FAILED or STOPPED) when the scheduler says the job the server ran in
   ended: whatever the log said last, it is not starting any more;
3. STOPPED when the server shut down, before or after its ready line: it serves nothing now;
4. QUEUED while the scheduler still holds the job;
5. CONNECTING while the monitor has no connection to the host;
6. READY when every watched signal agrees;
7. for a run already judged READY whose port now fails (``tui.engine.judge.degraded``): the
   end of its launched process when the launcher saw it end (FAILED or STOPPED), FAILED once it
   has failed for longer than the health grace, DEGRADED before that;
8. STALLED when the stall rules flagged ranks;
9. STARTING otherwise.

Callers go through ``tui.engine.judge.judge``, which adds the stall rules, what the judge
remembers of a READY run and the reasons; a new verdict is one more rung here and one more
reason there.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.engine.judge.health import HealthState
from tui.engine.judge.scheduled_job import ScheduledJob
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome, Verdict


@dataclass(frozen=True, slots=True)
class Watched:
    """Which signals the caller follows: READY does without the ones it does not."""

    log: bool = True
    health: bool = True


@dataclass(frozen=True, slots=True)
class VerdictReport:
    """The verdict and one sentence per disagreement between the signals."""

    verdict: Verdict
    disagreements: tuple[str, ...] = ()


_HEALTH_NOTES = {
    HealthState.STARTING: "ready line seen but /health answers 503",
    HealthState.UNHEALTHY: "ready line seen but /health answers an error",
    HealthState.REFUSED: "ready line seen but the port refuses connections",
    HealthState.NO_LINK: "ready line seen but the port cannot be reached",
}


def _disagreements(
    snapshot: Snapshot, health: HealthState, generation_ok: bool | None, watched: Watched
) -> tuple[str, ...]:
    notes: list[str] = []
    failure = snapshot.failure
    if failure is not None and health.answers_ok:
        where = f" on {failure.rank}" if failure.rank else ""
        notes.append(
            f"/health answers 200 but the log shows a failure ({failure.kind.value}{where})"
        )
    if failure is not None and generation_ok:
        notes.append("a generation was answered but the log shows a failure")
    if snapshot.ready_line_seen and failure is None:
        if health in _HEALTH_NOTES:
            notes.append(_HEALTH_NOTES[health])
        if generation_ok is False:
            notes.append("ready line seen but the test generation failed")
    if watched.log and not snapshot.ready_line_seen and failure is None and health.answers_ok:
        notes.append("/health answers 200 but the log shows no ready line yet")
    if snapshot.stopped and health.answers_ok:
        notes.append("the log says the server stopped but /health still answers 200")
    return tuple(notes)


def _ready(
    snapshot: Snapshot, health: HealthState, generation_ok: bool | None, watched: Watched
) -> bool:
    """Every watched signal says the server serves: the ready line, ``/health`` and a token."""
    log_ready = not watched.log or snapshot.ready_line_seen
    generated = generation_ok is True or health.generated
    port_ready = not watched.health or (health.answers_ok and generated)
    return log_ready and port_ready


def decide_verdict(
    snapshot: Snapshot,
    *,
    connected: bool,
    health: HealthState,
    generation_ok: bool | None,
    stalled_ranks: tuple[str, ...] = (),
    watched: Watched | None = None,
    job: ScheduledJob | None = None,
    served: bool = False,
    grace_over: bool = False,
    process_ended: Verdict | None = None,
) -> VerdictReport:
    """The verdict from the log snapshot, the connection, ``/health``, a test generation and,
    for a server run by a scheduler, its job. ``served``: this run was judged READY before;
    ``grace_over``: its port has failed for longer than the health grace since;
    ``process_ended``: how the launched server's process ended, when the launcher saw it end."""
    follows = watched or Watched()
    notes = _disagreements(snapshot, health, generation_ok, follows)
    if snapshot.outcome is Outcome.FAILED:
        return VerdictReport(Verdict.FAILED, notes)
    if job is not None and job.ended:
        return VerdictReport(job.ending or Verdict.STOPPED, notes)
    if snapshot.stopped:
        return VerdictReport(Verdict.STOPPED, notes)
    if job is not None and job.queued:
        return VerdictReport(Verdict.QUEUED, notes)
    if not connected:
        return VerdictReport(Verdict.CONNECTING, notes)
    if _ready(snapshot, health, generation_ok, follows):
        return VerdictReport(Verdict.READY, notes)
    if served and process_ended is not None:
        return VerdictReport(process_ended, notes)
    if served:
        return VerdictReport(Verdict.FAILED if grace_over else Verdict.DEGRADED, notes)
    if stalled_ranks:
        return VerdictReport(Verdict.STALLED, notes)
    return VerdictReport(Verdict.STARTING, notes)
