"""What a scheduler (Slurm) says of the job a server runs in, as the judge hears it. Pure.

A job is QUEUED while the scheduler holds it, RUNNING once placed, ENDED once it left its nodes;
an ended job carries the server-level verdict its end means (``ending``: STOPPED for a job that
completed or was cancelled, FAILED for any other end) and a one-line ``summary`` with the
scheduler's state, reason and exit code. The judge (``tui.engine.judge.judge``) ranks it among
the other signals: a job that ended is never shown as starting, whatever its logs said last.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tui.engine.startup.snapshot import RankState, Snapshot
from tui.engine.startup.vocabulary import Verdict


class JobPhase(str, Enum):
    """Where a job is."""

    QUEUED = "queued"
    RUNNING = "running"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class ScheduledJob:
    """The job as last reported: its phase, the scheduler's words, where and how long."""

    job_id: str
    phase: JobPhase
    state: str
    summary: str
    reason: str | None = None
    nodes: tuple[str, ...] = ()
    """The nodes it runs on, node 0 first (empty while queued)."""
    queued_seconds: float | None = None
    running_seconds: float | None = None
    exit_code: str | None = None
    ending: Verdict | None = None
    """FAILED or STOPPED once the job ended; None before."""
    logs: tuple[str, ...] = ()
    """Each node's log, node 0 first, once known."""

    @property
    def ended(self) -> bool:
        return self.phase is JobPhase.ENDED

    @property
    def queued(self) -> bool:
        return self.phase is JobPhase.QUEUED

    @property
    def label(self) -> str:
        """``JOB_CANCELLED``: the scheduler's state as a word of its own."""
        return f"JOB_{self.state}"


def blamed_rank(snapshot: Snapshot) -> RankState | None:
    """The rank to show when a job ended: the one that failed, else the one silent longest."""
    failed = snapshot.failure.rank if snapshot.failure is not None else None
    ranks = [r for r in snapshot.ranks if r.tag == failed] or sorted(
        snapshot.ranks, key=lambda r: r.last_seen_at
    )
    return ranks[0] if ranks else None


def last_words(snapshot: Snapshot) -> str:
    """``last line of node 1 TP0: ...`` of the blamed rank."""
    rank = blamed_rank(snapshot)
    if rank is None:
        return "no log line was read"
    return f"last line of node {rank.node} {rank.tag}: {rank.last_message or rank.last_line}"
