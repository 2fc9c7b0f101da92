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
out while the job was still queued.
"""

from __future__ import annotations

import argparse
import asyncio
import posixpath
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
from tui.engine.launch.launch_plan import DEFAULT_LOG_DIR, expand_home, run_stem
from tui.engine.launch.slurm_record import current_path, parse_slurm_run
from tui.engine.launch.slurm_script import node_log
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.io.slurm.slurm_client import SlurmClient, SlurmError
from tui.io.slurm.slurm_watch import JobChanged, JobWatch
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession
from tui.io.transport.ssh import ConnectError

_BATCH_SUFFIX = "-batch.log"


def slurm_target(args: argparse.Namespace, profile: Profile) -> SlurmTarget | None:
    """What to attach to, when the command line or the profile names a Slurm job."""
    job = getattr(args, "slurm_job", None)
    if job is None and profile.scheduler != "slurm":
        return None
    if job is not None and not job.isdigit():
        raise ValueError(f"--slurm-job: {job!r} is not a job id")
    login = getattr(args, "login", None) or profile.slurm.login
    return SlurmTarget(job, login, profile.log_dir, profile.slurm.nodes, profile.name)


class _Job:
    """The job id and the nodes' logs, resolved on the login host."""

    def __init__(self, client: SlurmClient, target: SlurmTarget) -> None:
        self.client = client
        self.target = target

    async def job_id(self) -> str:
        if self.target.job_id is not None:
            return self.target.job_id
        log_dir = await self.log_dir()
        text = await self.client.read(current_path(log_dir, self.target.profile))
        if not text:
            raise SlurmError(f"no Slurm job recorded for profile {self.target.profile!r}")
        return parse_slurm_run(text, "the current Slurm run").job_id

    async def log_dir(self) -> str:
        return expand_home(self.target.log_dir or DEFAULT_LOG_DIR, await self.client.home())

    async def logs(self, job_id: str, nodes: int) -> list[str]:
        """Every node's log: the profile's pattern, else beside the job's ``StdOut``."""
        job = await self.client.job(job_id)
        out = job.std_out if job is not None else None
        if out is not None:
            out = out.replace("%j", job_id)
        if out is not None and out.endswith(f"-{job_id}{_BATCH_SUFFIX}"):
            folder, name = posixpath.split(out)
            stem = name[: -len(f"-{job_id}{_BATCH_SUFFIX}")]
            return [posixpath.join(folder, f"{stem}-{job_id}-node{k}.log") for k in range(nodes)]
        if self.target.job_id is None or self.target.log_dir is not None:
            log_dir = await self.log_dir()
            profile = run_stem(self.target.profile, 0, 1)
            return [node_log(log_dir, profile, job_id, k) for k in range(nodes)]
        return [out] if out is not None else []


def _silent_rank(snapshot: Snapshot) -> str:
    """The last line of the rank that failed, else of the rank silent the longest."""
    failed = snapshot.failure.rank if snapshot.failure is not None else None
    ranks = [r for r in snapshot.ranks if r.tag == failed] or sorted(
        snapshot.ranks, key=lambda r: r.last_seen_at
    )
    if not ranks:
        return "no log line was read"
    rank = ranks[0]
    return f"last line of node {rank.node} {rank.tag}: {rank.last_message or rank.last_line}"


def _end_detail(change: JobChanged, snapshot: Snapshot | None) -> str:
    ran = f"; ran {clock(change.running_seconds)}" if change.running_seconds is not None else ""
    queued = change.queued_seconds
    waited = f" after {clock(queued)} queued" if queued is not None else ""
    lines = f"; {_silent_rank(snapshot)}" if snapshot is not None else ""
    return f"{change.summary}{ran}{waited}{lines}"


def _ended(change: JobChanged, snapshot: Snapshot | None) -> Decision:
    try:
        ending = WaitEnding(f"JOB_{change.state}")
    except ValueError:
        ending = WaitEnding.JOB_ENDED
    return ending, _end_detail(change, snapshot)


HOLD_SECONDS = 3.0
"""How long a failure read from the logs waits for the job's own end, which explains it better
(a cancelled job's servers log their shutdown before Slurm is asked again)."""


class _NodesWatcher(ClusterWatcher):
    """The multi-node watcher, with a log's FAILED or STOPPED held back for ``HOLD_SECONDS``."""

    held: Decision | None = None

    def decide(self, ending: Ending, detail: str) -> None:
        if ending not in (Verdict.FAILED, Verdict.STOPPED):
            super().decide(ending, detail)
        elif self.held is None:
            self.held = (ending, detail)
            asyncio.get_running_loop().call_later(HOLD_SECONDS, self._release)

    def _release(self) -> None:
        if self.held is not None:
            super().decide(*self.held)

    def job_ended(self, change: JobChanged) -> None:
        ending, detail = _ended(change, self.snapshot)
        logged = f"; the logs said: {self.held[1]}" if self.held is not None else ""
        super().decide(ending, detail + logged)


class _Attached:
    """The wait itself: queue first, then the nodes."""

    def __init__(self, plan: WaitPlan, target: SlurmTarget, report: Report) -> None:
        self.plan = plan
        self.target = target
        self.report = report
        self.last: JobChanged | None = None
        self.watcher: _NodesWatcher | None = None

    async def run(self, session: HostSession) -> Decision:
        try:
            await session.start()
        except ConnectError as error:
            return WaitEnding.UNREACHABLE, error.message
        client = SlurmClient(session)
        job = _Job(client, self.target)
        job_id = await job.job_id()
        changes = JobWatch(client, job_id).changes()
        async for change in changes:
            self._emit(change)
            if change.phase is JobPhase.ENDED:
                return _ended(change, None)
            if change.phase is JobPhase.RUNNING:
                logs = await job.logs(job_id, max(len(change.nodes), 1))
                return await self._nodes(session, change, logs, changes)
        raise SlurmError(f"job {job_id}: its state could not be followed")

    def _emit(self, change: JobChanged) -> None:
        self.last = change
        self.report.emit(change)

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
        watcher = self.watcher = _NodesWatcher(plan, self.report)
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
        tasks.append(asyncio.create_task(self._until_ended(watcher, changes)))
        return await until_decided(watcher, tasks)

    async def _until_ended(
        self, watcher: _NodesWatcher, changes: AsyncIterator[JobChanged]
    ) -> None:
        async for change in changes:
            self._emit(change)
            if change.phase is JobPhase.ENDED:
                watcher.job_ended(change)

    def timed_out(self) -> Decision:
        last = self.last
        if self.watcher is None and last is not None and last.phase is JobPhase.QUEUED:
            queued = f", queued {clock(last.queued_seconds)}" if last.queued_seconds else ""
            reason = f" ({last.reason})" if last.reason else ""
            return WaitEnding.PENDING, f"job {last.job_id} still {last.state}{reason}{queued}"
        if self.watcher is not None:
            return WaitEnding.TIMEOUT, timeout_detail(self.watcher)
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
    code = exit_code(ending)
    report.verdict(ending, code, detail)
    return code
