"""The record of a Slurm run, kept on the shared filesystem beside its logs. Pure.

It names the job (``job_id``), how it was submitted (the ``sbatch`` argv and the batch script,
so a restart resubmits the same job), and, once seen, when it started and how long it queued:
the start-up time is measured from ``started_at``, and ``queued_seconds`` is kept beside it.
Files, under ``<log_dir>/.bringup/``::

    <profile>-<jobid>.slurm.json      the run's record
    <profile>-slurm-current.json      a copy of the newest run's record
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import asdict, dataclass, fields

from tui.engine.launch.launch_plan import STATE_DIR, run_stem


class SlurmRecordError(ValueError):
    """A record that cannot be read."""


@dataclass(frozen=True, slots=True)
class SlurmRun:
    """One submission of a profile."""

    profile: str
    job_id: str
    log_dir: str
    nodes: int
    submitted_at: str
    sbatch: tuple[str, ...]
    script: str
    login: str | None = None
    previous_job: str | None = None
    started_at: str | None = None
    queued_seconds: float | None = None
    ended_at: str | None = None
    state: str | None = None
    reason: str | None = None
    exit_code: str | None = None

    def to_json(self) -> str:
        data = asdict(self)
        data["sbatch"] = list(self.sbatch)
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))


def parse_slurm_run(text: str, where: str) -> SlurmRun:
    """A record written by :meth:`SlurmRun.to_json`; unknown fields are ignored."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SlurmRecordError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SlurmRecordError(f"{where}: expected a JSON object")
    names = {f.name for f in fields(SlurmRun)}
    values = {key: value for key, value in data.items() if key in names}
    sbatch = values.get("sbatch")
    if not isinstance(sbatch, list) or not all(isinstance(part, str) for part in sbatch):
        raise SlurmRecordError(f"{where}: sbatch: expected a list of strings")
    values["sbatch"] = tuple(sbatch)
    try:
        return SlurmRun(**values)
    except TypeError as exc:
        raise SlurmRecordError(f"{where}: {exc}") from None


def record_path(log_dir: str, profile: str, job_id: str) -> str:
    name = f"{run_stem(profile, 0, 1)}-{job_id}.slurm.json"
    return posixpath.join(log_dir, STATE_DIR, name)


def current_path(log_dir: str, profile: str) -> str:
    return posixpath.join(log_dir, STATE_DIR, f"{run_stem(profile, 0, 1)}-slurm-current.json")
