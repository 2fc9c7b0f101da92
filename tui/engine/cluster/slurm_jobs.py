"""A Slurm job as ``squeue --json``, ``scontrol show job`` and ``sacct`` describe it. Pure.

Each reader turns one command's output into :class:`SlurmJob` values; none of them runs
anything. ``squeue --json`` differs between releases (22.05 gives ``job_state`` as a string,
``exit_code`` as a raw wait status and times as numbers; 23.02 and later give lists and
``{"set": .., "number": ..}`` objects): both are read. ``scontrol show job`` is the text form
every release has (``--oneliner`` or not). ``sacct --parsable2`` is read where accounting is on.
Host lists such as ``gpu[1-2,07],cpu3`` are expanded by :func:`expand_hostlist`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

PENDING_STATES = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
RUNNING_STATES = frozenset(
    {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STAGE_OUT", "SIGNALING", "RESIZING"}
)
ENDED_STATES = frozenset(
    {
        "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
        "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT",
    }
)  # fmt: skip
SACCT_FIELDS = "JobID,State,ExitCode,Reason,NodeList,Submit,Start,End,NNodes"
"""The ``--format`` that :func:`parse_sacct` reads (with ``--parsable2 --noheader``)."""


class SlurmParseError(ValueError):
    """Output that is not what the command prints."""


@dataclass(frozen=True, slots=True)
class ExitCode:
    """How a job's batch script ended: its status, or the signal that ended it."""

    status: int = 0
    signal: int = 0

    def describe(self) -> str:
        """``exit 3``, ``signal 9`` or ``exit 0``; Slurm prints the pair as ``3:0``."""
        return f"signal {self.signal}" if self.signal else f"exit {self.status}"


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One job: its state and reason, where it runs, and when it was queued, started, ended.

    Times are Unix seconds (None when unset). ``nodes`` is the expanded node list, first node
    first (empty while pending).
    """

    job_id: str
    state: str
    reason: str | None = None
    nodes: tuple[str, ...] = ()
    node_count: int | None = None
    exit_code: ExitCode | None = None
    submit_time: float | None = None
    start_time: float | None = None
    end_time: float | None = None
    name: str | None = None
    std_out: str | None = None
    std_err: str | None = None
    work_dir: str | None = None

    @property
    def pending(self) -> bool:
        return self.state in PENDING_STATES

    @property
    def running(self) -> bool:
        return self.state in RUNNING_STATES

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES or not (self.pending or self.running)


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def _split_top(text: str) -> Iterator[str]:
    """``a[1-2],b`` split at the commas outside brackets."""
    depth, start = 0, 0
    for index, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            yield text[start:index]
            start = index + 1
    yield text[start:]


def _expand_one(item: str) -> list[str]:
    open_at = item.find("[")
    if open_at < 0:
        return [item] if item else []
    close_at = item.index("]", open_at)
    prefix, body, rest = item[:open_at], item[open_at + 1 : close_at], item[close_at + 1 :]
    tails = _expand_one(rest) if rest else [""]
    names: list[str] = []
    for part in body.split(","):
        found = _RANGE.fullmatch(part)
        if found is None:
            raise SlurmParseError(f"bad host range {part!r} in {item!r}")
        first, last = found.group(1), found.group(2) or found.group(1)
        width = len(first)
        for number in range(int(first), int(last) + 1):
            names.extend(prefix + str(number).zfill(width) + tail for tail in tails)
    return names


def expand_hostlist(text: str) -> tuple[str, ...]:
    """``gpu[1-2,07],cpu3`` as ``('gpu1', 'gpu2', 'gpu07', 'cpu3')``; empty for ``(null)``."""
    text = text.strip()
    if text in ("", "(null)", "None"):
        return ()
    try:
        return tuple(name for item in _split_top(text) for name in _expand_one(item))
    except ValueError as exc:
        raise SlurmParseError(str(exc)) from None


def _number(value: object) -> float | None:
    """A time or count from either JSON generation; 0 and unset count as None."""
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value else None


def _state(value: object) -> str:
    if isinstance(value, list):
        value = value[0] if value else ""
    return str(value).upper()


def _exit_json(value: object) -> ExitCode | None:
    if isinstance(value, Mapping):
        code = _number(value.get("return_code")) or 0
        signal = value.get("signal")
        number = _number(signal.get("id")) if isinstance(signal, Mapping) else None
        return ExitCode(int(code), int(number or 0))
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return ExitCode(value >> 8, value & 0x7F) if value & 0x7F else ExitCode(value >> 8)


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, str) and value and value != "None" else None


def job_from_json(data: Mapping[str, object]) -> SlurmJob:
    """One entry of ``squeue --json``'s ``jobs``."""
    if "job_id" not in data:
        raise SlurmParseError("a job without job_id")
    count = _number(data.get("node_count"))
    return SlurmJob(
        job_id=str(data["job_id"]),
        state=_state(data.get("job_state")),
        reason=_text(data.get("state_reason")),
        nodes=expand_hostlist(str(data.get("nodes") or "")),
        node_count=int(count) if count is not None else None,
        exit_code=_exit_json(data.get("exit_code")),
        submit_time=_number(data.get("submit_time")),
        start_time=_number(data.get("start_time")),
        end_time=_number(data.get("end_time")),
        name=_text(data.get("name")),
        std_out=_text(data.get("standard_output")),
        std_err=_text(data.get("standard_error")),
        work_dir=_text(data.get("current_working_directory")),
    )


def parse_squeue_json(text: str) -> tuple[SlurmJob, ...]:
    """Every job in the output of ``squeue --json``."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SlurmParseError(f"squeue --json: not JSON ({exc})") from None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, list):
        raise SlurmParseError("squeue --json: no 'jobs' list")
    return tuple(job_from_json(job) for job in jobs if isinstance(job, dict))


def _fields(text: str) -> dict[str, str]:
    """``Key=value`` words of ``scontrol show`` output (one line or several)."""
    found: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep and key and key not in found:
            found[key] = value
    return found


def _clock(text: str | None) -> float | None:
    """``2025-03-10T10:00:00`` (Slurm's local time) as Unix seconds; None for ``Unknown``."""
    if not text or text in ("Unknown", "None", "N/A"):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _exit_pair(text: str | None) -> ExitCode | None:
    """``3:0`` (status:signal)."""
    if not text:
        return None
    status, _, signal = text.partition(":")
    if not status.isdigit() or not (signal or "0").isdigit():
        return None
    return ExitCode(int(status), int(signal or 0))


def _path(text: str | None) -> str | None:
    return text if text and text not in ("(null)", "/dev/null") else None


def parse_scontrol_job(text: str) -> SlurmJob:
    """``scontrol show job [--oneliner] ID``; ``SlurmParseError`` when no job is in it."""
    found = _fields(text)
    if "JobId" not in found or "JobState" not in found:
        raise SlurmParseError("scontrol show job: no JobId and JobState")
    count = found.get("NumNodes", "").split("-")[0]
    return SlurmJob(
        job_id=found["JobId"],
        state=found["JobState"].upper(),
        reason=_text(found.get("Reason")),
        nodes=expand_hostlist(found.get("NodeList", "")),
        node_count=int(count) if count.isdigit() else None,
        exit_code=_exit_pair(found.get("ExitCode")),
        submit_time=_clock(found.get("SubmitTime")),
        start_time=_clock(found.get("StartTime")) if found.get("JobState") != "PENDING" else None,
        end_time=_clock(found.get("EndTime")) if found["JobState"] in ENDED_STATES else None,
        name=_text(found.get("JobName")),
        std_out=_path(found.get("StdOut")),
        std_err=_path(found.get("StdErr")),
        work_dir=_path(found.get("WorkDir")),
    )


def parse_scontrol_node_addr(text: str) -> str | None:
    """``NodeAddr`` of ``scontrol show node NAME`` (the address the node is reached at)."""
    return _text(_fields(text).get("NodeAddr"))


def parse_sacct(text: str, job_id: str) -> SlurmJob | None:
    """The job's own line (not its steps) of ``sacct --parsable2 --noheader`` with
    ``--format=`` :data:`SACCT_FIELDS`; None when it is not listed."""
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 9 or parts[0] != job_id:
            continue
        state = parts[1].split()[0].upper() if parts[1] else "UNKNOWN"
        return SlurmJob(
            job_id=job_id,
            state=state,
            reason=_text(parts[3]),
            nodes=expand_hostlist(parts[4] if parts[4] != "None assigned" else ""),
            node_count=int(parts[8]) if parts[8].isdigit() else None,
            exit_code=_exit_pair(parts[2]),
            submit_time=_clock(parts[5]),
            start_time=_clock(parts[6]),
            end_time=_clock(parts[7]),
        )
    return None


def parse_submitted(text: str) -> str:
    """The job id printed by ``sbatch --parsable`` (``ID`` or ``ID;cluster``)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    job_id = first.split(";")[0]
    if not job_id.isdigit():
        raise SlurmParseError(f"sbatch printed no job id: {text.strip()[:200]!r}")
    return job_id


def utc(seconds: float) -> str:
    """Unix seconds as ``2025-03-10T10:00:00Z``."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
