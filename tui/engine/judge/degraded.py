"""After READY: a port that stops answering well is DEGRADED, not STARTING, until a grace runs out.

A serving server misses polls: SGLang answers ``/health`` 503 while a long prefill holds its
scheduler, a poll times out under load, the link to the host drops and comes back. The judge
remembers that it said READY in this run (``ServingMemory``, which the caller carries from one
``Judgement`` to the next ``Signals``) and, while the log shows no failure and no stop, calls
such a server DEGRADED, with what fails and for how long; READY again as soon as the port
answers ``/health`` 200 and a generation; FAILED once it has failed for longer than the health
grace. A port the monitor cannot reach at all (the connection to its host is lost) is DEGRADED
for as long as that lasts, never FAILED by the grace: that says nothing about the server. A new
run in the log (a restart, a truncated or replaced file) is a new start-up: the memory is
dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tui.engine.judge.health import HealthState
from tui.engine.startup.snapshot import Snapshot
from tui.engine.timing.estimate import clock_label

DEFAULT_HEALTH_GRACE = 60.0
"""Seconds a READY server's port may fail before the verdict is FAILED."""

_TROUBLE = {
    HealthState.UNKNOWN: "health not answered",
    HealthState.NO_LINK: "port unreachable",
    HealthState.REFUSED: "port refused",
    HealthState.STARTING: "health 503",
    HealthState.UNHEALTHY: "health error",
    HealthState.HEALTHY: "test generation failed",
}
_UNREACHED = frozenset({HealthState.UNKNOWN, HealthState.NO_LINK})
"""Health states that say the monitor did not reach the port, not what the server answered."""


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """What the judge remembers of a run it judged READY."""

    ready_at: float
    """When the verdict first became READY in this run (the injected clock)."""
    run: int
    """``Snapshot.runs_before`` of that run."""
    failing_since: float | None = None
    """When the port stopped answering well; None while it answers."""
    trouble: str = ""
    """What fails (``health 503``), while it fails."""
    unreached: bool = False
    """The monitor cannot reach the port (the grace does not run out on that)."""

    def failing_for(self, now: float) -> float | None:
        """Seconds the port has failed at ``now``; None while it answers."""
        return None if self.failing_since is None else max(now - self.failing_since, 0.0)


def port_trouble(health: HealthState, generation_ok: bool | None, detail: str = "") -> str:
    """What fails on the port, in words (``health 503``, ``health error (ReadTimeout)``);
    ``""`` while it answers ``/health`` 200 and has generated."""
    if health.answers_ok and (health.generated or generation_ok is True):
        return ""
    words = _TROUBLE[health]
    if health is HealthState.HEALTHY and generation_ok is None:
        words = "no test generation yet"
    return f"{words} ({detail})" if detail and health is not HealthState.STARTING else words


def remembered(memory: ServingMemory | None, snapshot: Snapshot) -> ServingMemory | None:
    """The memory when it is of the snapshot's run (a new run is a new start-up)."""
    if memory is None or memory.run != snapshot.runs_before:
        return None
    return memory


def unreached(health: HealthState) -> bool:
    """Whether ``health`` says the monitor did not reach the port at all."""
    return health in _UNREACHED


def with_trouble(
    memory: ServingMemory, trouble: str, now: float, unreached: bool = False
) -> ServingMemory:
    """The memory with the port's trouble at ``now``: the failing time runs on while it fails,
    whatever the server answers, starts again once the monitor reaches the port again, and ends
    as soon as the port answers well."""
    if not trouble:
        return replace(memory, failing_since=None, trouble="", unreached=False)
    again = memory.unreached and not unreached
    since = memory.failing_since if memory.failing_since is not None and not again else now
    return replace(memory, failing_since=since, trouble=trouble, unreached=unreached)


def grace_over(memory: ServingMemory, now: float, grace: float) -> bool:
    """The port has failed, answering, for longer than ``grace``."""
    failing = memory.failing_for(now)
    return failing is not None and failing > grace and not memory.unreached


def degraded_reason(memory: ServingMemory, now: float, grace: float) -> str:
    """``health 503 for 4 s since READY, FAILED after 60 s``."""
    failing = memory.failing_for(now)
    trouble = memory.trouble or "not answering"
    took = f" for {seconds_label(failing)}" if failing is not None else ""
    if memory.unreached:
        return f"{trouble}{took} since READY (the monitor cannot reach the port)"
    return f"{trouble}{took} since READY, FAILED after {seconds_label(grace)}"


def grace_reason(memory: ServingMemory, now: float, grace: float) -> str:
    """``health 503 for 1m05s, longer than the 60 s grace after READY``."""
    failing = memory.failing_for(now) or 0.0
    trouble = memory.trouble or "not answering"
    return (
        f"{trouble} for {seconds_label(failing)}, longer than the {seconds_label(grace)} "
        "grace after READY"
    )


def seconds_label(seconds: float) -> str:
    """``4 s`` under two minutes, else a stopwatch reading (``2m05s``)."""
    return f"{seconds:.0f} s" if seconds < 120 else clock_label(seconds)
