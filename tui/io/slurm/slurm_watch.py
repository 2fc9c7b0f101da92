"""Following a Slurm job: its state polled on the login host, each change an event.

:class:`JobWatch` asks for the job every ``poll_seconds`` and yields a :class:`JobChanged`
whenever its state, reason or node list changes (and, while it waits in the queue, at most
every ``queued_every`` seconds so the queued time stays current). Once the job runs, node 0's
address (its ``NodeAddr``) is looked up once, for reaching its HTTP port.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from tui.engine.cluster.slurm_jobs import SlurmJob
from tui.engine.cluster.slurm_verdict import (
    JobPhase,
    job_end,
    job_phase,
    pending_note,
    queued_seconds,
    running_seconds,
)
from tui.io.slurm.slurm_client import SlurmClient

POLL_SECONDS = 1.0
QUEUED_EVERY = 15.0


@dataclass(frozen=True, slots=True)
class JobChanged:
    """The job as last seen: phase, Slurm's state and reason, nodes, queued and run time."""

    job_id: str
    phase: JobPhase
    state: str
    reason: str | None
    nodes: tuple[str, ...]
    queued_seconds: float | None
    running_seconds: float | None
    exit_code: str | None
    summary: str
    node0_addr: str | None = None


def job_changed(job: SlurmJob, now: float, node0_addr: str | None = None) -> JobChanged:
    phase = job_phase(job)
    end = job_end(job)
    if phase is JobPhase.QUEUED:
        summary = pending_note(job, now)
    elif end is not None:
        summary = end.describe()
    else:
        summary = f"job {job.job_id} {job.state} on {','.join(job.nodes) or '?'}"
    return JobChanged(
        job.job_id, phase, job.state, job.reason, job.nodes, queued_seconds(job, now),
        running_seconds(job, now), job.exit_code.describe() if job.exit_code else None,
        summary, node0_addr,
    )  # fmt: skip


class JobWatch:
    """Polls one job through ``client``."""

    def __init__(
        self, client: SlurmClient, job_id: str, poll_seconds: float = POLL_SECONDS,
        queued_every: float = QUEUED_EVERY,
    ) -> None:  # fmt: skip
        self.client = client
        self.job_id = job_id
        self.poll_seconds = poll_seconds
        self.queued_every = queued_every
        self.last: SlurmJob | None = None
        self.node0_addr: str | None = None

    async def _node0(self, job: SlurmJob) -> str | None:
        if self.node0_addr is None and job.nodes and job_phase(job) is not JobPhase.QUEUED:
            self.node0_addr = await self.client.node_addr(job.nodes[0]) or job.nodes[0]
        return self.node0_addr

    async def changes(self) -> AsyncIterator[JobChanged]:
        """Every change of the job, until it ended (the end is the last item)."""
        shown: tuple[object, ...] | None = None
        shown_at = 0.0
        while True:
            job = await self.client.job(self.job_id)
            if job is None:
                yield JobChanged(self.job_id, JobPhase.ENDED, "UNKNOWN", "Slurm no longer "
                                 "knows the job", (), None, None, None,
                                 f"job {self.job_id} is unknown to Slurm")  # fmt: skip
                return
            self.last = job
            key = (job.state, job.reason, job.nodes)
            now = time.time()
            stale = job.pending and now - shown_at >= self.queued_every
            if key != shown or stale:
                shown, shown_at = key, now
                yield job_changed(job, now, await self._node0(job))
            if job_phase(job) is JobPhase.ENDED:
                return
            await asyncio.sleep(self.poll_seconds)
