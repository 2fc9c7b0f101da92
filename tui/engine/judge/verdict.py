"""The server verdict: readiness is a verdict over several signals, not one line.

READY needs the engine's ready line, ``/health`` answering OK, and one real generation
answered; each alone lies (``/health`` stays 200 on some versions after a scheduler died; the
ready line says nothing about the port the monitor reaches). When the signals disagree the
verdict says so in ``disagreements`` instead of silently picking one. Precedence:

1. FAILED when the log shows a failure (it wins over a healthy ``/health``);
2. STOPPED when the server shut down cleanly;
3. CONNECTING while the monitor has no connection to the host;
4. READY when all three signals agree;
5. STALLED when the caller's stall rules flagged ranks;
6. STARTING otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Outcome, Verdict


class HealthState(str, Enum):
    """What the health poller last saw."""

    UNKNOWN = "unknown"
    """Not polled yet (or no answer to reason about)."""
    REFUSED = "refused"
    """The port refuses connections: the HTTP server is not up."""
    UNAVAILABLE = "unavailable"
    """The HTTP server answers, but ``/health`` says 503 (or another error)."""
    OK = "ok"
    """``/health`` answers 200."""
    GENERATION_OK = "generation_ok"
    """``/health_generate`` (a real one-token generation) answers 200."""


@dataclass(frozen=True, slots=True)
class VerdictReport:
    """The verdict and one sentence per disagreement between the signals."""

    verdict: Verdict
    disagreements: tuple[str, ...] = ()


_HEALTHY = (HealthState.OK, HealthState.GENERATION_OK)


def _disagreements(
    snapshot: Snapshot, health: HealthState, generation_ok: bool | None
) -> tuple[str, ...]:
    notes: list[str] = []
    failure = snapshot.failure
    if failure is not None and health in _HEALTHY:
        where = f" on {failure.rank}" if failure.rank else ""
        notes.append(
            f"/health answers 200 but the log shows a failure ({failure.kind.value}{where})"
        )
    if failure is not None and generation_ok:
        notes.append("a generation was answered but the log shows a failure")
    if snapshot.ready_line_seen and failure is None:
        if health is HealthState.UNAVAILABLE:
            notes.append("ready line seen but /health answers 503")
        elif health is HealthState.REFUSED:
            notes.append("ready line seen but the port refuses connections")
        if generation_ok is False:
            notes.append("ready line seen but the test generation failed")
    if not snapshot.ready_line_seen and failure is None and health in _HEALTHY:
        notes.append("/health answers 200 but the log shows no ready line yet")
    if snapshot.stopped and health in _HEALTHY:
        notes.append("the log says the server stopped but /health still answers 200")
    return tuple(notes)


def decide_verdict(
    snapshot: Snapshot,
    *,
    connected: bool,
    health: HealthState,
    generation_ok: bool | None,
    stalled_ranks: tuple[str, ...] = (),
) -> VerdictReport:
    """The verdict from the log snapshot, the connection, ``/health`` and a test generation."""
    notes = _disagreements(snapshot, health, generation_ok)
    if snapshot.outcome is Outcome.FAILED:
        return VerdictReport(Verdict.FAILED, notes)
    if snapshot.stopped:
        return VerdictReport(Verdict.STOPPED, notes)
    if not connected:
        return VerdictReport(Verdict.CONNECTING, notes)
    generated = generation_ok is True or health is HealthState.GENERATION_OK
    if snapshot.ready_line_seen and health in _HEALTHY and generated:
        return VerdictReport(Verdict.READY, notes)
    if stalled_ranks:
        return VerdictReport(Verdict.STALLED, notes)
    return VerdictReport(Verdict.STARTING, notes)
