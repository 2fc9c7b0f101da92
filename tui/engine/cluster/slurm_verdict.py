"""Where a Slurm job is (queued, running, ended) and what its end means. Pure.

Queue time is a phase of its own: a job is QUEUED while Slurm holds it (with Slurm's reason:
Resources, Priority, QOSMaxNodePerJobLimit, ...), RUNNING from its start time, ENDED once it
left the nodes. The start-up timer starts at the job's start; the time queued is kept beside it.

An ended job is a verdict: ``JOB_<STATE>`` (``JOB_FAILED``, ``JOB_CANCELLED``, ``JOB_TIMEOUT``,
``JOB_NODE_FAIL``, ``JOB_OUT_OF_MEMORY``, ``JOB_PREEMPTED``, ``JOB_COMPLETED``, ...), with the
reason and exit code Slurm gives. A job that ended is never shown as starting, whatever its
logs said last.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tui.engine.cluster.slurm_jobs import ExitCode, SlurmJob
from tui.engine.startup.vocabulary import Verdict


class JobPhase(str, Enum):
    """Where a job is."""

    QUEUED = "queued"
    RUNNING = "running"
    ENDED = "ended"


def job_phase(job: SlurmJob) -> JobPhase:
    if job.pending:
        return JobPhase.QUEUED
    if job.running:
        return JobPhase.RUNNING
    return JobPhase.ENDED


@dataclass(frozen=True, slots=True)
class JobEnd:
    """How a job ended, as a verdict."""

    job_id: str
    state: str
    reason: str | None
    exit_code: ExitCode | None

    @property
    def verdict(self) -> str:
        """``JOB_<STATE>``, e.g. ``JOB_TIMEOUT`` (a word of its own, not the wait's TIMEOUT)."""
        return f"JOB_{self.state}"

    @property
    def engine_verdict(self) -> Verdict:
        """The server-level verdict: STOPPED for a job that completed or was cancelled,
        FAILED for every other end."""
        return Verdict.STOPPED if self.state in ("COMPLETED", "CANCELLED") else Verdict.FAILED

    def describe(self) -> str:
        """``job 12 TIMEOUT (TimeLimit), signal 15``."""
        reason = f" ({self.reason})" if self.reason else ""
        code = f", {self.exit_code.describe()}" if self.exit_code is not None else ""
        return f"job {self.job_id} {self.state}{reason}{code}"


def job_end(job: SlurmJob) -> JobEnd | None:
    """The end of an ended job; None while it is queued or running."""
    if job_phase(job) is not JobPhase.ENDED:
        return None
    return JobEnd(job.job_id, job.state, job.reason, job.exit_code)


def queued_seconds(job: SlurmJob, now: float) -> float | None:
    """Seconds the job waited in the queue: until its start, or until ``now`` while queued."""
    if job.submit_time is None:
        return None
    until = now if job.pending or job.start_time is None else job.start_time
    return max(0.0, until - job.submit_time)


def running_seconds(job: SlurmJob, now: float) -> float | None:
    """Seconds since the job started (until its end once ended); None before it started."""
    if job.pending or job.start_time is None:
        return None
    until = job.end_time if job.end_time is not None and job_end(job) else now
    return max(0.0, until - job.start_time)


def clock(seconds: float) -> str:
    """``45 s``, ``3m 05s``, ``2h 01m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def pending_note(job: SlurmJob, now: float) -> str:
    """``job 12 PENDING (Resources), queued 1m 20s``."""
    reason = f" ({job.reason})" if job.reason else ""
    waited = queued_seconds(job, now)
    queued = f", queued {clock(waited)}" if waited is not None else ""
    return f"job {job.job_id} {job.state}{reason}{queued}"
