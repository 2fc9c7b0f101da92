"""The monitor's ``L``, ``K`` and ``R`` for a Slurm profile: submit, cancel and resubmit its job
(:class:`~tui.io.slurm.slurm_launcher.SlurmLauncher`) and the job's standing as a run status.

A job waiting in the queue or running counts as running (``K`` cancels it); a job that left the
queue has ended, FAILED for a job that ended in failure, STOPPED when it completed or was
cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable

from tui.config import Profile
from tui.engine.cluster.slurm_verdict import ending_verdict
from tui.engine.launch.launch_record import HowEnded, RunState, RunStatus
from tui.engine.startup.vocabulary import Verdict
from tui.io.slurm.slurm_client import SlurmClient, SlurmError
from tui.io.slurm.slurm_launcher import SlurmLauncher, SlurmOutcome
from tui.io.slurm.slurm_profile import login_target, login_transport, slurm_spec


class SlurmControl:
    """One profile's job, as the launch keys see it."""

    def __init__(self, launcher: SlurmLauncher, host: str) -> None:
        self.launcher = launcher
        self.host = host

    async def status(self) -> tuple[RunStatus, ...]:
        """The newest job's standing (nothing when no job is recorded)."""
        run = await self.launcher.current()
        if run is None:
            return (RunStatus(self.host, RunState.NONE),)
        client = self.launcher.client
        if await client.in_queue(run.job_id):
            return (RunStatus(self.host, RunState.RUNNING, f"job {run.job_id}"),)
        job = await client.job(run.job_id)
        state = job.state if job is not None else run.state or "UNKNOWN"
        failed = ending_verdict(state) is Verdict.FAILED
        how = HowEnded.FAILED if failed else HowEnded.STOPPED
        status = job.exit_code.status if job is not None and job.exit_code else None
        return (RunStatus(self.host, RunState.ENDED, f"job {run.job_id}", exit_status=status,
                          how_ended=how),)  # fmt: skip

    async def submit(self, force: bool = False) -> SlurmOutcome:
        return await _said(self.launcher.launch(force))

    async def cancel(self) -> SlurmOutcome:
        return await _said(self.launcher.kill())

    async def resubmit(self) -> SlurmOutcome:
        return await _said(self.launcher.restart(force=True))


async def _said(action: Awaitable[SlurmOutcome]) -> SlurmOutcome:
    """The outcome, or a failed one naming the Slurm command that failed."""
    try:
        return await action
    except SlurmError as error:
        return SlurmOutcome(False, (str(error),))


@contextlib.asynccontextmanager
async def open_slurm_control(profile: Profile) -> AsyncIterator[SlurmControl]:
    """The profile's job control over one connection to its login host (or this machine)."""
    async with login_transport(login_target(profile)) as transport:
        client = SlurmClient(transport)
        spec = slurm_spec(profile, await client.home())
        login = profile.slurm.login
        yield SlurmControl(SlurmLauncher(spec, client, login), login or "local")
