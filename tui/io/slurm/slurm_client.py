"""Slurm's client commands (``sbatch``, ``squeue``, ``scontrol``, ``sacct``, ``scancel``) run
on the login host, or on this machine, through anything that runs an argv.

A job is looked up with ``squeue --json`` where the installed Slurm has it, else with
``scontrol show job``; a job that has left the controller's memory is looked up in ``sacct``
when accounting is on. Nothing is parsed here: the readers are in
:mod:`tui.engine.cluster.slurm_jobs`.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui.engine.cluster.slurm_jobs import (
    SACCT_FIELDS,
    SlurmJob,
    SlurmParseError,
    parse_sacct,
    parse_scontrol_job,
    parse_scontrol_node_addr,
    parse_squeue_json,
    parse_submitted,
)
from tui.io.launch.launch_node import Runner
from tui.io.transport.transport import CommandResult

COMMAND_SECONDS = 30.0


class SlurmError(Exception):
    """A Slurm command failed; the message has its standard error."""


def _said(result: CommandResult) -> str:
    text = (result.stderr or result.stdout).decode(errors="replace").strip()
    return text[:500] or f"exit status {result.status}"


class SlurmClient:
    """The client commands on one host."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self._json: bool | None = None

    async def _run(self, argv: Sequence[str], stdin: bytes = b"") -> CommandResult:
        return await self.runner.run(argv, stdin=stdin, timeout=COMMAND_SECONDS)

    async def submit(self, argv: Sequence[str], script: str) -> str:
        """Submit ``script`` with ``argv`` (``sbatch --parsable ...``); the job id."""
        result = await self._run(argv, script.encode())
        if not result.ok:
            raise SlurmError(f"sbatch failed: {_said(result)}")
        try:
            return parse_submitted(result.stdout.decode(errors="replace"))
        except SlurmParseError as exc:
            raise SlurmError(str(exc)) from None

    async def job(self, job_id: str) -> SlurmJob | None:
        """The job as Slurm knows it now; None when no command knows it any more."""
        if self._json is not False:
            result = await self._run(["squeue", "--json", "--states=all", f"--jobs={job_id}"])
            jobs = self._squeue(result)
            if jobs is not None:
                return next((job for job in jobs if job.job_id == job_id), None) or (
                    await self._sacct(job_id)
                )
        result = await self._run(["scontrol", "show", "job", "--oneliner", job_id])
        if result.ok:
            try:
                return parse_scontrol_job(result.stdout.decode(errors="replace"))
            except SlurmParseError:
                pass
        return await self._sacct(job_id)

    def _squeue(self, result: CommandResult) -> tuple[SlurmJob, ...] | None:
        """The jobs, or None when this Slurm has no ``--json`` (or the job is unknown)."""
        if not result.ok:
            said = _said(result)
            if "Invalid job id" in said:
                return ()
            self._json = False
            return None
        try:
            jobs = parse_squeue_json(result.stdout.decode(errors="replace"))
        except SlurmParseError:
            self._json = False
            return None
        self._json = True
        return jobs

    async def _sacct(self, job_id: str) -> SlurmJob | None:
        argv = ["sacct", "--parsable2", "--noheader", f"--format={SACCT_FIELDS}", "-j", job_id]
        result = await self._run(argv)
        if not result.ok:
            return None
        return parse_sacct(result.stdout.decode(errors="replace"), job_id)

    async def node_addr(self, node: str) -> str | None:
        """The address a node is reached at (its ``NodeAddr``)."""
        result = await self._run(["scontrol", "show", "node", "--oneliner", node])
        if not result.ok:
            return None
        return parse_scontrol_node_addr(result.stdout.decode(errors="replace"))

    async def in_queue(self, job_id: str) -> bool:
        """Whether the job is still pending, running or completing."""
        result = await self._run(["squeue", "--noheader", "--format=%i", f"--jobs={job_id}"])
        return result.ok and job_id in result.stdout.decode(errors="replace").split()

    async def cancel(self, job_id: str, signal: str | None = None) -> None:
        """``scancel`` the job; with ``signal``, only send it (to the batch shell and steps)."""
        argv = ["scancel", *([f"--signal={signal}", "--full"] if signal else []), job_id]
        result = await self._run(argv)
        if not result.ok:
            raise SlurmError(f"scancel failed: {_said(result)}")

    async def write(self, path: str, text: str) -> None:
        """Replace ``path`` (its folder made first) with ``text``, through ``sh``."""
        script = 'mkdir -p -- "${1%/*}" && cat > "$1.tmp" && mv -f -- "$1.tmp" "$1"'
        result = await self._run(["sh", "-c", script, "sh", path], text.encode())
        if not result.ok:
            raise SlurmError(f"could not write {path}: {_said(result)}")

    async def make_dir(self, path: str) -> None:
        result = await self._run(["mkdir", "-p", "--", path])
        if not result.ok:
            raise SlurmError(f"could not make {path}: {_said(result)}")

    async def read(self, path: str) -> str | None:
        result = await self._run(["cat", "--", path])
        return result.stdout.decode(errors="replace") if result.ok else None

    async def home(self) -> str:
        result = await self._run(["sh", "-c", 'printf %s "$HOME"'])
        return result.stdout.decode(errors="replace") or "/"
