"""Submit, cancel and resubmit a Slurm profile's job, keeping its record on the shared folder.

A launch renders the batch script, refuses while the previous job is still in the queue
(unless forced), submits it and records the job id. A kill runs ``scancel`` (Slurm sends
SIGTERM, then SIGKILL after its ``KillWait``), waits up to the grace period for the job to
leave the queue, then SIGKILLs every step and the batch shell, and reports whether the job
left the queue. A restart kills, then resubmits the recorded script unchanged.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from tui.engine.launch.launch_record import iso
from tui.engine.launch.slurm_record import (
    SlurmRecordError,
    SlurmRun,
    current_path,
    parse_slurm_run,
    record_path,
)
from tui.engine.launch.slurm_script import (
    SlurmSpec,
    batch_log,
    batch_script,
    node_log,
    sbatch_argv,
)
from tui.io.slurm.slurm_client import SlurmClient

POLL_SECONDS = 0.5
KILL_SECONDS = 60.0
"""How long the job may take to leave the queue after SIGKILL."""


@dataclass(frozen=True, slots=True)
class SlurmOutcome:
    """What a launch, kill or restart did, as sentences."""

    ok: bool
    lines: tuple[str, ...]
    job_id: str | None = None


class SlurmLauncher:
    """Launch, kill and restart one profile's job through ``client``."""

    def __init__(self, spec: SlurmSpec, client: SlurmClient, login: str | None = None) -> None:
        self.spec = spec
        self.client = client
        self.login = login

    @property
    def _log_dir(self) -> str:
        return self.spec.launch.log_dir

    async def current(self) -> SlurmRun | None:
        """The record of the newest job launched for this profile."""
        text = await self.client.read(current_path(self._log_dir, self.spec.launch.profile))
        if not text:
            return None
        try:
            return parse_slurm_run(text, "the current Slurm run")
        except SlurmRecordError:
            return None

    async def save(self, run: SlurmRun) -> None:
        profile = self.spec.launch.profile
        await self.client.write(record_path(self._log_dir, profile, run.job_id), run.to_json())
        await self.client.write(current_path(self._log_dir, profile), run.to_json())

    async def launch(self, force: bool = False) -> SlurmOutcome:
        previous = await self.current()
        queued = previous is not None and await self.client.in_queue(previous.job_id)
        if previous is not None and queued and not force:
            return SlurmOutcome(False, (
                    f"refused: job {previous.job_id} of this profile is still in the queue; "
                    "kill it first", "(use --force to launch anyway)",
                ))  # fmt: skip
        argv, script = sbatch_argv(self.spec), batch_script(self.spec)
        return await self._submit(tuple(argv), script, previous)

    async def _submit(
        self, argv: tuple[str, ...], script: str, previous: SlurmRun | None
    ) -> SlurmOutcome:
        await self.client.make_dir(self._log_dir)
        job_id = await self.client.submit(argv, script)
        launch = self.spec.launch
        run = SlurmRun(
            profile=launch.profile, job_id=job_id, log_dir=self._log_dir, nodes=self.spec.nodes,
            submitted_at=iso(datetime.now(timezone.utc)), sbatch=argv, script=script,
            login=self.login, previous_job=previous.job_id if previous else None,
        )  # fmt: skip
        await self.save(run)
        logs = [node_log(self._log_dir, launch.profile, job_id, k) for k in range(run.nodes)]
        lines = [f"submitted job {job_id} ({run.nodes} node{'s' if run.nodes != 1 else ''})"]
        lines += [f"node {rank} log: {path}" for rank, path in enumerate(logs)]
        lines.append(f"batch log: {batch_log(self._log_dir, launch.profile, job_id)}")
        return SlurmOutcome(True, tuple(lines), job_id)

    async def _left_queue(self, job_id: str, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while await self.client.in_queue(job_id):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_SECONDS)
        return True

    async def kill(self, grace: float | None = None) -> SlurmOutcome:
        run = await self.current()
        if run is None:
            return SlurmOutcome(True, ("no Slurm job is recorded for this profile",))
        return await self.cancel(run, self.spec.launch.grace_period if grace is None else grace)

    async def cancel(self, run: SlurmRun, grace: float) -> SlurmOutcome:
        """Cancel ``run``'s job and confirm it left the queue."""
        job_id = run.job_id
        if not await self.client.in_queue(job_id):
            job = await self.client.job(job_id)
            state = f" ({job.state})" if job is not None else ""
            return SlurmOutcome(True, (f"job {job_id} is not in the queue{state}",), job_id)
        started = time.monotonic()
        await self.client.cancel(job_id)
        forced = not await self._left_queue(job_id, grace)
        if forced:
            await self.client.cancel(job_id, "KILL")
        gone = not forced or await self._left_queue(job_id, KILL_SECONDS)
        took = time.monotonic() - started
        job = await self.client.job(job_id)
        if job is not None:
            code = job.exit_code.describe() if job.exit_code else None
            now = iso(datetime.now(timezone.utc))
            ended = replace(run, ended_at=now, state=job.state, reason=job.reason, exit_code=code)
            await self.save(ended)
        how = "SIGTERM, then SIGKILL after the grace period" if forced else "SIGTERM"
        state = f" ({job.state})" if job is not None else ""
        if gone:
            return SlurmOutcome(True, (f"job {job_id}: {how}; left the queue after "
                                       f"{took:.1f} s{state}",), job_id)  # fmt: skip
        return SlurmOutcome(False, (f"job {job_id}: {how}; STILL IN THE QUEUE{state}",), job_id)

    async def restart(self, force: bool = False, grace: float | None = None) -> SlurmOutcome:
        """Kill the recorded job, then resubmit its script unchanged (a new one if none)."""
        run = await self.current()
        if run is None:
            return await self.launch(force)
        killed = await self.cancel(run, self.spec.launch.grace_period if grace is None else grace)
        if not killed.ok:
            return SlurmOutcome(False, (*killed.lines, "not resubmitted: the job is still queued"))
        submitted = await self._submit(run.sbatch, run.script, run)
        return replace(submitted, lines=killed.lines + submitted.lines)
