"""``bringup wait`` for a Slurm job: the queue, then every node's log, then one verdict.

The job is found from ``--slurm-job ID`` or the profile's newest submission. While it is
PENDING each change is reported with Slurm's reason and the time queued; once it RUNS, every
node's log is followed over the one connection to the login host (or on this machine) into the
multi-node watcher of ``wait_cluster``, and node 0's port is reached through that connection at
the node's ``NodeAddr``. The start-up time counts from the job's start, not from its submission.

Verdicts beyond a single host's: ``JOB_<STATE>`` (exit 1) when the job ends before it is
ready (``JOB_TIMEOUT``, ``JOB_CANCELLED``, ``JOB_FAILED``, ``JOB_NODE_FAIL``,
``JOB_OUT_OF_MEMORY``, ``JOB_PREEMPTED``, ...), with Slurm's reason, the exit code and the last
line of the rank that failed or fell silent first; ``PENDING`` (exit 2) when ``--timeout`` ran
out while the job was still queued (the judge's QUEUED).

The job is the judge's like the logs are: each change reaches it as a ``ScheduledJob`` in
``Signals.job``, the same the monitor hands it, and its verdict and reason end the wait. Only at
the output edge is a FAILED or STOPPED of a job that ended named ``JOB_<STATE>``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace

from tui.commands.wait import (
    Ending,
    NodeTarget,
    SlurmTarget,
    WaitEnding,
    WaitPlan,
    exit_code,
)
from tui.commands.wait_cluster import ClusterWatcher, timeout_detail
from tui.commands.wait_watch import Decision, Report, guarded, session_for, until_decided
from tui.config import Profile
from tui.engine.cluster.slurm_verdict import JobPhase, clock
from tui.engine.judge.judge import Judgement, Signals
from tui.engine.judge.scheduled_job import ScheduledJob
from tui.engine.startup.vocabulary import Verdict
from tui.io.slurm.slurm_client import SlurmClient, SlurmError
from tui.io.slurm.slurm_follow import JobLocator, scheduled
from tui.io.slurm.slurm_watch import JobChanged, JobWatch
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.ssh import ConnectError


def slurm_target(args: argparse.Namespace, profile: Profile) -> SlurmTarget | None:
    """What to attach to, when the command line or the profile names a Slurm job."""
    job = getattr(args, "slurm_job", None)
    if job is None and profile.scheduler != "slurm":
        return None
    if job is not None and not job.isdigit():
        raise ValueError(f"--slurm-job: {job!r} is not a job id")
    login = getattr(args, "login", None) or profile.slurm.login
    return SlurmTarget(job, login, profile.log_dir, profile.slurm.nodes, profile.name)


def job_ending(verdict: Ending, job: ScheduledJob | None) -> Ending:
    """The wait's word for the judge's verdict: ``JOB_<STATE>`` when the job's end is what
    ended the start-up (the judge said FAILED or STOPPED of a job that ended), else the
    verdict itself."""
    if job is None or not job.ended or verdict not in (Verdict.FAILED, Verdict.STOPPED):
        return verdict
    try:
        return WaitEnding(job.label)
    except ValueError:
        return WaitEnding.JOB_ENDED


def _times(job: ScheduledJob) -> str:
    """``; ran 3m 05s after 5 s queued``: how long the job ran and waited."""
    ran = f"; ran {clock(job.running_seconds)}" if job.running_seconds is not None else ""
    queued = job.queued_seconds
    waited = f" after {clock(queued)} queued" if queued is not None else ""
    return f"{ran}{waited}"


HOLD_SECONDS = 3.0
"""How long a failure read from the logs of a job that still runs waits for the job's own end,
which explains it better (a cancelled job's servers log their shutdown before Slurm is asked
again)."""


class _JobWatcher(ClusterWatcher):
    """The multi-node watcher that also hears the job: the judge gets it in ``Signals.job``,
    so it says QUEUED while Slurm holds the job and the job's own end once it ended. A log's
    FAILED or STOPPED ends the wait only once it held for ``HOLD_SECONDS`` while the job still
    runs (the wait's own hold, like READY's)."""

    def __init__(self, plan: WaitPlan, report: Report, job: ScheduledJob | None = None) -> None:
        super().__init__(plan, report)
        self.job = job
        self.judgement: Judgement | None = None
        self.held_since: float | None = None

    def job_changed(self, job: ScheduledJob) -> None:
        self.job = job
        self.judge()

    def signals(self) -> Signals:
        return replace(super().signals(), job=self.job)

    def _ends_wait(self, judgement: Judgement, now: float) -> bool:
        self.judgement = judgement
        ends = super()._ends_wait(judgement, now)
        job_ended = self.job is not None and self.job.ended
        if not ends or job_ended or judgement.verdict not in (Verdict.FAILED, Verdict.STOPPED):
            self.held_since = None
            return ends
        self.held_since = now if self.held_since is None else self.held_since
        return now - self.held_since >= HOLD_SECONDS

    def _detail(self, judgement: Judgement) -> str:
        job = self.job
        times = _times(job) if job is not None and job.ended else ""
        return super()._detail(judgement) + times

    def ending(self, verdict: Ending) -> Ending:
        return job_ending(verdict, self.job)


class _Attached:
    """The wait itself: queue first, then the nodes; the judge hears the job throughout."""

    def __init__(self, plan: WaitPlan, target: SlurmTarget, report: Report) -> None:
        self.plan = plan
        self.target = target
        self.report = report
        self.watcher = _JobWatcher(plan, report)
        """The queue's watcher (no log yet), then the nodes' once the job runs."""
        self.placed = False

    async def run(self, session: HostSession) -> Decision:
        try:
            await session.start()
        except ConnectError as error:
            return WaitEnding.UNREACHABLE, error.message
        client = SlurmClient(session)
        target = self.target
        job = JobLocator(client, target.job_id, target.log_dir, target.profile)
        job_id = await job.job_id()
        watch = JobWatch(client, job_id)
        changes = watch.changes()
        async for change in changes:
            self.report.emit(change)
            if watch.last is not None and change.phase is not JobPhase.QUEUED:
                await job.note_started(watch.last)
            if change.phase is JobPhase.RUNNING:
                logs = await job.logs(job_id, max(len(change.nodes), 1))
                return await self._nodes(session, change, logs, changes)
            self.watcher.job_changed(scheduled(change))
            if self.watcher.decided.done():
                return self.watcher.decided.result()
        raise SlurmError(f"job {job_id}: its state could not be followed")

    async def _nodes(
        self, session: HostSession, change: JobChanged, logs: list[str],
        changes: AsyncIterator[JobChanged],
    ) -> Decision:  # fmt: skip
        login = self.target.login
        plan = replace(
            self.plan, host=login, log=logs[0] if logs else None,
            more_nodes=tuple(NodeTarget(login, log) for log in logs[1:]),
            health_host=change.node0_addr or "127.0.0.1",
        )  # fmt: skip
        job = scheduled(change, tuple(logs))
        watcher = self.watcher = _JobWatcher(plan, self.report, job)
        self.placed = True
        watcher.started = time.monotonic() - (change.running_seconds or 0.0)
        session.on_event(watcher.connection)
        tasks = [asyncio.create_task(watcher.watch_stalls())]
        for index, node in enumerate(plan.nodes):
            if node.log is not None:
                follow = watcher.follow_node(session, index, node.log)
                tasks.append(asyncio.create_task(guarded(watcher, follow)))
        if plan.port is not None:
            poll = watcher.poll(session, plan.port)
            tasks.append(asyncio.create_task(guarded(watcher, poll)))
        tasks.append(asyncio.create_task(self._follow_job(watcher, changes, tuple(logs))))
        return await until_decided(watcher, tasks)

    async def _follow_job(
        self, watcher: _JobWatcher, changes: AsyncIterator[JobChanged], logs: tuple[str, ...]
    ) -> None:
        async for change in changes:
            self.report.emit(change)
            watcher.job_changed(scheduled(change, logs))

    def timed_out(self) -> Decision:
        """PENDING when the judge last said QUEUED, else the wait's own TIMEOUT."""
        watcher, job = self.watcher, self.watcher.job
        queued = watcher.judgement is not None and watcher.judgement.verdict is Verdict.QUEUED
        if queued and job is not None:
            waited = f", queued {clock(job.queued_seconds)}" if job.queued_seconds else ""
            reason = f" ({job.reason})" if job.reason else ""
            return WaitEnding.PENDING, f"job {job.job_id} still {job.state}{reason}{waited}"
        if self.placed:
            return WaitEnding.TIMEOUT, timeout_detail(watcher)
        return WaitEnding.TIMEOUT, "gave up waiting before the job was seen"


async def wait_for_slurm(plan: WaitPlan, target: SlurmTarget, report: Report) -> int:
    """The whole wait for a Slurm job; returns the exit status."""
    session = session_for(plan, target.login)
    attached = _Attached(plan, target, report)
    try:
        ending, detail = await within(attached.run(session), plan.timeout)
    except asyncio.TimeoutError:
        ending, detail = attached.timed_out()
    except SlurmError as error:
        ending, detail = WaitEnding.UNREACHABLE, str(error)
    finally:
        await session.close()
    ending = attached.watcher.ending(ending)
    code = exit_code(ending)
    report.verdict(ending, code, detail)
    return code
