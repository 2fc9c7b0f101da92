"""Following a Slurm job for the monitor: where its logs are, and each change of the job as a
scheduler-neutral :class:`~tui.engine.judge.scheduled_job.ScheduledJob`.

:class:`JobLocator` finds the job (``--slurm-job ID`` or the profile's newest submission) and
every node's log (beside the job's ``StdOut`` when it follows bringup's naming, else from the
profile's ``log_dir``, else ``StdOut`` itself). :class:`SlurmFollower` polls the job on the login
host's session and, once it runs, points the session's forwards at node 0's ``NodeAddr``, so
the health poll and the benchmark reach node 0 through the login host.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
from collections.abc import AsyncIterator
from dataclasses import replace

from tui.engine.cluster.slurm_jobs import SlurmJob, utc
from tui.engine.cluster.slurm_verdict import ending_verdict, queued_seconds
from tui.engine.judge.scheduled_job import JobPhase, ScheduledJob
from tui.engine.launch.launch_plan import DEFAULT_LOG_DIR, expand_home, run_stem
from tui.engine.launch.slurm_record import (
    SlurmRecordError,
    SlurmRun,
    current_path,
    parse_slurm_run,
    record_path,
)
from tui.engine.launch.slurm_script import node_log
from tui.io.slurm.slurm_client import SlurmClient, SlurmError
from tui.io.slurm.slurm_watch import JobChanged, JobWatch
from tui.io.transport.host_session import HostSession

_BATCH_SUFFIX = "-batch.log"
NEXT_JOB_SECONDS = 2.0
"""How often the profile's record is read, once its job ended, for a job submitted after it."""


class JobLocator:
    """The job id and the nodes' logs, resolved on the login host."""

    def __init__(
        self, client: SlurmClient, job_id: str | None, log_dir: str | None, profile: str
    ) -> None:
        self.client = client
        self.given_id = job_id
        self.log_dir_setting = log_dir
        self.profile = profile

    async def job_id(self) -> str:
        """The given id, else the profile's newest submission (``SlurmError`` when none)."""
        if self.given_id is not None:
            return self.given_id
        text = await self.client.read(current_path(await self.log_dir(), self.profile))
        if not text:
            raise SlurmError(f"no Slurm job recorded for profile {self.profile!r}")
        return parse_slurm_run(text, "the current Slurm run").job_id

    async def log_dir(self) -> str:
        home = await self.client.home()
        return expand_home(self.log_dir_setting or DEFAULT_LOG_DIR, home)

    async def logs(self, job_id: str, nodes: int) -> list[str]:
        """Every node's log: beside the job's ``StdOut``, else the profile's pattern."""
        job = await self.client.job(job_id)
        out = job.std_out if job is not None else None
        if out is not None:
            out = out.replace("%j", job_id)
        if out is not None and out.endswith(f"-{job_id}{_BATCH_SUFFIX}"):
            folder, name = posixpath.split(out)
            stem = name[: -len(f"-{job_id}{_BATCH_SUFFIX}")]
            return [posixpath.join(folder, f"{stem}-{job_id}-node{k}.log") for k in range(nodes)]
        if self.given_id is None or self.log_dir_setting is not None:
            log_dir = await self.log_dir()
            profile = run_stem(self.profile, 0, 1)
            return [node_log(log_dir, profile, job_id, k) for k in range(nodes)]
        return [out] if out is not None else []

    async def note_started(self, job: SlurmJob) -> SlurmRun | None:
        """Fill the run record's ``started_at`` and ``queued_seconds`` once the job started (a
        job bringup did not submit has no record: None)."""
        if job.start_time is None:
            return None
        log_dir = await self.log_dir()
        path = record_path(log_dir, self.profile, job.job_id)
        text = await self.client.read(path)
        if not text:
            return None
        try:
            run = parse_slurm_run(text, path)
        except SlurmRecordError:
            return None
        if run.started_at is not None:
            return run
        waited = queued_seconds(job, job.start_time)
        started = replace(run, started_at=utc(job.start_time), queued_seconds=waited)
        await self.client.write(path, started.to_json())
        current = current_path(log_dir, self.profile)
        newest = await self.client.read(current)
        with contextlib.suppress(SlurmRecordError):
            if newest and parse_slurm_run(newest, current).job_id == job.job_id:
                await self.client.write(current, started.to_json())
        return started


def scheduled(change: JobChanged, logs: tuple[str, ...] = ()) -> ScheduledJob:
    """A change of a Slurm job as the judge and the monitor hear it."""
    ended = change.phase is JobPhase.ENDED
    return ScheduledJob(
        job_id=change.job_id, phase=change.phase, state=change.state, summary=change.summary,
        reason=change.reason, nodes=change.nodes, queued_seconds=change.queued_seconds,
        running_seconds=change.running_seconds, exit_code=change.exit_code,
        ending=ending_verdict(change.state) if ended else None, logs=logs,
    )  # fmt: skip


class SlurmFollower:
    """One job's changes through the login host's ``session``; ``node_count`` is known after
    :meth:`attach` (from the job itself, else ``nodes``)."""

    def __init__(self, session: HostSession, locator: JobLocator, nodes: int = 1) -> None:
        self.session = session
        self.locator = locator
        self.node_count = max(nodes, 1)
        self.job_id: str | None = None
        self.logs: tuple[str, ...] = ()

    @classmethod
    async def attach(
        cls, session: HostSession, job_id: str | None, log_dir: str | None, profile: str,
        nodes: int = 1,
    ) -> SlurmFollower:  # fmt: skip
        """Connect, find the job and its size; ``SlurmError`` when Slurm does not know it
        (``ConnectError`` when the login host cannot be reached)."""
        await session.start()
        follower = cls(session, JobLocator(SlurmClient(session), job_id, log_dir, profile), nodes)
        follower.job_id = await follower.locator.job_id()
        job = await follower.locator.client.job(follower.job_id)
        if job is None:
            raise SlurmError(f"Slurm does not know job {follower.job_id}")
        follower.node_count = max(len(job.nodes) or job.node_count or nodes, 1)
        return follower

    async def changes(self) -> AsyncIterator[ScheduledJob]:
        """Every change of the job until it ended (the end is the last one). Following a
        profile's newest job, a job submitted after it (a restart) is followed next."""
        if self.job_id is None:
            self.job_id = await self.locator.job_id()
        while True:
            async for job in self._follow(self.job_id):
                yield job
            if self.locator.given_id is not None:
                return
            self.job_id, self.logs = await self._next_job(self.job_id), ()

    async def _follow(self, job_id: str) -> AsyncIterator[ScheduledJob]:
        self.session.hold_api()
        watch = JobWatch(self.locator.client, job_id)
        async for change in watch.changes():
            if change.phase is not JobPhase.QUEUED and not self.logs:
                found = await self.locator.logs(job_id, self.node_count)
                self.logs = tuple(found)
                if watch.last is not None:
                    await self.locator.note_started(watch.last)
            if change.node0_addr is not None:
                self.session.place_api(change.node0_addr)
            yield scheduled(change, self.logs)

    async def _next_job(self, ended: str) -> str:
        """The profile's next submission after ``ended``, once its record names one."""
        while True:
            await asyncio.sleep(NEXT_JOB_SECONDS)
            with contextlib.suppress(SlurmError, SlurmRecordError):
                job_id = await self.locator.job_id()
                if job_id != ended:
                    return job_id


class JobNotRunning(SlurmError):
    """The job is not running, so its node 0 cannot be reached."""


@contextlib.asynccontextmanager
async def job_port(
    session: HostSession, job_id: str | None, log_dir: str | None, profile: str, port: int
) -> AsyncIterator[tuple[str, str]]:
    """``http://127.0.0.1:N`` reaching ``port`` on the running job's node 0 (at its
    ``NodeAddr``) through ``session``'s host, and node 0's own address (``http://ADDR:PORT``)
    to record; ``JobNotRunning`` while it is queued or ended."""
    follower = await SlurmFollower.attach(session, job_id, log_dir, profile)
    client = follower.locator.client
    job = await client.job(str(follower.job_id))
    if job is None or not job.running or not job.nodes:
        state = job.state if job is not None else "unknown to Slurm"
        raise JobNotRunning(f"job {follower.job_id} is not running ({state})")
    address = await client.node_addr(job.nodes[0]) or job.nodes[0]
    yield await session.forward(port, address), f"http://{address}:{port}"
