"""Run records (kept on the host beside the logs) and the status of a run. Pure.

A record is written when a run is launched, completed with its process identity once the process
group exists, and closed (end time, exit status, how it ended) when ``bringup`` sees it end.
Records are JSON on one line; environment variable *values* are never stored, only their names.
"""

from __future__ import annotations

import json
import signal
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from enum import Enum

from tui.engine.launch.launch_plan import NodePlan
from tui.engine.launch.launch_report import Ended, HostFacts, ProcessInfo
from tui.engine.startup.vocabulary import Verdict

RECORD_VERSION = 1


class HowEnded(str, Enum):
    """How a run ended."""

    EXITED = "exited"
    FAILED = "failed"
    STOPPED = "stopped"
    KILLED = "killed"
    VANISHED = "vanished"
    NOT_STARTED = "not_started"


class RecordError(ValueError):
    """A run record that cannot be read; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class LaunchRecord:
    """One run of a profile on one node."""

    profile: str
    run_id: str
    host: str
    node_rank: int
    nnodes: int
    command: tuple[str, ...]
    log: str
    started_at: str
    port: int | None = None
    cwd: str | None = None
    env_names: tuple[str, ...] = ()
    previous_run: str | None = None
    pid: int | None = None
    pgid: int | None = None
    proc_start: int | None = None
    boot_id: str | None = None
    ended_at: str | None = None
    exit_status: int | None = None
    how_ended: HowEnded | None = None
    version: int = RECORD_VERSION

    def to_json(self) -> str:
        """The record as one line of JSON (ASCII only, so no raw control byte can appear)."""
        data = asdict(self)
        data["command"] = list(self.command)
        data["env_names"] = list(self.env_names)
        data["how_ended"] = self.how_ended.value if self.how_ended else None
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))


def iso(moment: datetime) -> str:
    """``moment`` as ISO 8601 in UTC with seconds, e.g. ``2025-03-10T10:00:00Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_record(plan: NodePlan, now: datetime, previous_run: str | None) -> LaunchRecord:
    """The record of a run that is about to start."""
    return LaunchRecord(
        profile=plan.profile,
        run_id=plan.run_id,
        host=plan.host,
        node_rank=plan.node_rank,
        nnodes=plan.nnodes,
        command=plan.argv,
        log=plan.paths.log,
        started_at=iso(now),
        port=plan.port,
        cwd=plan.cwd,
        env_names=tuple(name for name, _ in plan.env),
        previous_run=previous_run,
    )


_TYPES: dict[str, tuple[type, ...]] = {
    "profile": (str,), "run_id": (str,), "host": (str,), "node_rank": (int,), "nnodes": (int,),
    "log": (str,), "started_at": (str,), "port": (int,), "cwd": (str,),
    "previous_run": (str,), "pid": (int,), "pgid": (int,), "proc_start": (int,),
    "boot_id": (str,), "ended_at": (str,), "exit_status": (int,), "version": (int,),
}  # fmt: skip
_REQUIRED = ("profile", "run_id", "host", "node_rank", "nnodes", "command", "log", "started_at")


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RecordError(f"{where}: expected a list of strings")
    return tuple(value)


def _field(name: str, value: object, where: str) -> object:
    if value is None:
        if name in _REQUIRED:
            raise RecordError(f"{where}: missing")
        return None
    if name in ("command", "env_names"):
        return _strings(value, where)
    if name == "how_ended":
        try:
            return HowEnded(value)
        except ValueError:
            raise RecordError(f"{where}: unknown value {value!r}") from None
    kinds = _TYPES[name]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise RecordError(f"{where}: expected {kinds[0].__name__}, got {type(value).__name__}")
    return value


def parse_record(text: str, where: str) -> LaunchRecord:
    """Read a record written by :meth:`LaunchRecord.to_json`; unknown fields are ignored."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a JSON object")
    values = {
        f.name: _field(f.name, data.get(f.name), f"{where}: {f.name}") for f in fields(LaunchRecord)
    }
    if values["version"] is None:
        values["version"] = RECORD_VERSION
    return LaunchRecord(**values)  # type: ignore[arg-type]


class RunState(str, Enum):
    """Where a run is."""

    NONE = "none"
    STARTING = "starting"
    RUNNING = "running"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A run as last probed on its host."""

    host: str
    state: RunState
    run_id: str | None = None
    record: LaunchRecord | None = None
    processes: tuple[ProcessInfo, ...] = ()
    exit_status: int | None = None
    how_ended: HowEnded | None = None

    @property
    def verdict(self) -> Verdict | None:
        """FAILED for a run that ended on its own with a non-zero status, STOPPED for other
        ended runs, None while it runs (then the log and health checks decide)."""
        if self.state is not RunState.ENDED:
            return None
        return Verdict.FAILED if self.how_ended is HowEnded.FAILED else Verdict.STOPPED

    def describe(self) -> str:
        """One line such as ``running (5 processes)`` or ``failed: exited 137 (SIGKILL)``."""
        if self.state is RunState.RUNNING and not self.processes:
            return "running"  # a scheduler's job: its processes are on its nodes
        if self.state is RunState.RUNNING:
            count = len(self.processes)
            return f"running ({count} process{'es' if count != 1 else ''})"
        if self.state is not RunState.ENDED:
            return "no run" if self.state is RunState.NONE else "starting"
        if self.how_ended is HowEnded.NOT_STARTED:
            return "never started"
        how = self.how_ended.value if self.how_ended else "ended"
        return f"{how}: {describe_status(self.exit_status)}"


def describe_status(status: int | None) -> str:
    """``exited 0``, ``exited 137 (SIGKILL)`` or ``exit status unknown``."""
    if status is None:
        return "exit status unknown"
    if status > 128:
        try:
            return f"exited {status} ({signal.Signals(status - 128).name})"
        except ValueError:
            pass
    return f"exited {status}"


def _ended_how(ended: Ended | None, record: LaunchRecord | None) -> HowEnded:
    if record is not None and record.how_ended is not None:
        return record.how_ended
    if ended is None:
        return HowEnded.VANISHED
    return HowEnded.EXITED if ended.status == 0 else HowEnded.FAILED


def run_status(host: str, facts: HostFacts, record: LaunchRecord | None) -> RunStatus:
    """Combine a probe's facts with the run's record into the run's status."""
    if facts.run_id is None:
        return RunStatus(host, RunState.NONE)
    ours = facts.ours()
    if ours:
        return RunStatus(host, RunState.RUNNING, facts.run_id, record, ours)
    if facts.identity is None and facts.ended is None and record and record.how_ended is None:
        return RunStatus(host, RunState.STARTING, facts.run_id, record)
    status = facts.ended.status if facts.ended else (record.exit_status if record else None)
    how = _ended_how(facts.ended, record)
    return RunStatus(host, RunState.ENDED, facts.run_id, record, (), status, how)


def closed(
    record: LaunchRecord, status: RunStatus, how: HowEnded | None, now: datetime
) -> LaunchRecord:
    """``record`` with its end filled in (keeps an end already recorded)."""
    if record.how_ended is not None:
        return record
    return replace(
        record,
        ended_at=iso(now),
        exit_status=status.exit_status if status.exit_status is not None else record.exit_status,
        how_ended=how or status.how_ended or HowEnded.VANISHED,
    )
