"""Stopping a run on one node: SIGTERM to its process group, the grace period, then SIGKILL.

Only the process group recorded for the run is ever signalled, and only after the host script
has checked that the group's leader is still the process the run started (same boot, same start
time), so a reused pid is never hit. Nothing is matched by name.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from enum import Enum

from tui.engine.launch.launch_record import (
    HowEnded,
    LaunchRecord,
    RecordError,
    RunState,
    RunStatus,
    closed,
    parse_record,
    run_status,
)
from tui.engine.launch.launch_report import HostFacts, Identity, ProcessInfo
from tui.io.launch.launch_node import Node

POLL_INTERVAL = 0.25
"""Longest wait between checks of what is left of a group (the first checks come sooner)."""

FIRST_POLL = 0.05

KILL_WAIT = 10.0
"""Seconds to wait for the group to disappear after SIGKILL."""

Progress = Callable[[str], None]


class KillOutcome(str, Enum):
    """What a kill did on one node."""

    NO_RUN = "no_run"
    ALREADY_ENDED = "already_ended"
    STOPPED = "stopped"
    KILLED = "killed"
    SURVIVED = "survived"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class NodeKill:
    """The report of a kill on one node."""

    host: str
    outcome: KillOutcome
    message: str
    run_id: str | None = None
    status: RunStatus | None = None
    after_grace: tuple[ProcessInfo, ...] = ()
    remaining: tuple[ProcessInfo, ...] = ()
    port_released: bool | None = None
    gpu_released: bool | None = None

    @property
    def ok(self) -> bool:
        """True when nothing of the run is left running on this node."""
        return self.outcome not in (KillOutcome.SURVIVED, KillOutcome.REFUSED)


def read_record(facts: HostFacts, host: str) -> LaunchRecord | None:
    """The record a probe returned, or None when it had none or it is unreadable."""
    if facts.record_text is None:
        return None
    try:
        return parse_record(facts.record_text, f"{host}: run record {facts.run_id}")
    except RecordError:
        return None


def ended_message(host: str, status: RunStatus, facts: HostFacts) -> str:
    """What a kill says of a run that had already ended (and why it is seen as ended)."""
    reused = ""
    if facts.leader_reused and facts.identity is not None:
        reused = (
            f"; its process id {facts.identity.pid} now belongs to another process "
            "(its start time differs), which was left alone"
        )
    return f"{host}: run {status.run_id} already {status.describe()}{reused}; nothing left to stop"


async def close_ended(node: Node, state_dir: str, status: RunStatus) -> RunStatus:
    """Write the end of an ended run into its record when it is not there yet."""
    record = status.record
    if status.state is not RunState.ENDED or record is None or record.how_ended is not None:
        return status
    final = closed(record, status, None, datetime.now(timezone.utc))
    await node.write(f"{state_dir}/{record.run_id}.json", final.to_json())
    return replace(status, record=final, exit_status=final.exit_status, how_ended=final.how_ended)


@dataclass(frozen=True, slots=True)
class Stopper:
    """Stops the newest run of ``stem`` on ``node`` whose files are under ``state_dir``."""

    node: Node
    state_dir: str
    stem: str
    port: int | None
    grace: float
    progress: Progress | None = None

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(f"{self.node.host}: {text}")

    async def _wait_gone(self, run_id: str, seconds: float) -> tuple[ProcessInfo, ...]:
        deadline = time.monotonic() + seconds
        pause = FIRST_POLL
        while True:
            left = (await self.node.probe(self.state_dir, self.stem, run_id)).ours()
            if not left or time.monotonic() >= deadline:
                return left
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_INTERVAL)

    async def close_record(self, status: RunStatus, how: HowEnded | None) -> RunStatus:
        """Write the end into the run's record (when not already there); the updated status."""
        record = status.record
        if record is None or record.how_ended is not None:
            return status
        final = closed(record, status, how, datetime.now(timezone.utc))
        path = f"{self.state_dir}/{record.run_id}.json"
        await self.node.write(path, final.to_json())
        return replace(
            status, record=final, exit_status=final.exit_status, how_ended=final.how_ended
        )

    async def stop(self) -> NodeKill:
        """Stop the run; report what was left after the grace period and what was released."""
        facts = await self.node.probe(self.state_dir, self.stem)
        status = run_status(self.node.host, facts, read_record(facts, self.node.host))
        if status.state is RunState.NONE:
            return NodeKill(
                self.node.host, KillOutcome.NO_RUN, f"{self.node.host}: no run recorded"
            )
        if status.state is RunState.STARTING:
            message = f"{self.node.host}: run {status.run_id} has not reported its process yet"
            return NodeKill(self.node.host, KillOutcome.REFUSED, message, status.run_id, status)
        if status.state is not RunState.RUNNING or facts.identity is None:
            status = await self.close_record(status, None)
            port, gpu = await self._released(set())
            message = ended_message(self.node.host, status, facts)
            return NodeKill(
                self.node.host,
                KillOutcome.ALREADY_ENDED,
                message,
                status.run_id,
                status,
                port_released=port,
                gpu_released=gpu,
            )
        return await self._signal(facts.identity, status)

    async def _send(self, identity: Identity, name: str) -> str | None:
        sent = await self.node.signal(identity, name)
        return sent.refused

    async def _signal(self, identity: Identity, status: RunStatus) -> NodeKill:
        host, run_id = self.node.host, status.run_id or ""
        self._say(f"sending SIGTERM to process group {identity.pid}, {status.describe()}")
        refused = await self._send(identity, "TERM")
        if refused is not None:
            return NodeKill(host, KillOutcome.REFUSED, f"{host}: refused: {refused}", run_id)
        after_grace = await self._wait_gone(run_id, self.grace)
        remaining = after_grace
        how = HowEnded.STOPPED
        if after_grace:
            count = len(after_grace)
            self._say(f"{count} still alive after {self.grace:g} s; sending SIGKILL")
            refused = await self._send(identity, "KILL")
            if refused is not None:
                return NodeKill(host, KillOutcome.REFUSED, f"{host}: refused: {refused}", run_id)
            remaining = await self._wait_gone(run_id, KILL_WAIT)
            how = HowEnded.KILLED
        return await self._report(identity, status, how, after_grace, remaining)

    async def _released(self, pids: set[int]) -> tuple[bool | None, bool | None]:
        for _attempt in range(3):
            state = await self.node.state(self.port, None)
            port = (
                None
                if self.port is None or state.listen_source in (None, "none")
                else (not state.listeners)
            )
            gpu = (
                None
                if state.gpu_source != "nvidia-smi"
                else (not any(app.pid in pids for app in state.gpu_apps))
            )
            if port is not False and gpu is not False:
                break
            await asyncio.sleep(POLL_INTERVAL * 2)
        return port, gpu

    async def _report(
        self,
        identity: Identity,
        before: RunStatus,
        how: HowEnded,
        after_grace: tuple[ProcessInfo, ...],
        remaining: tuple[ProcessInfo, ...],
    ) -> NodeKill:
        host = self.node.host
        pids = {p.pid for p in (*before.processes, *after_grace, *remaining)}
        port, gpu = await self._released(pids)
        facts = await self.node.probe(self.state_dir, self.stem, before.run_id)
        status = run_status(host, facts, before.record)
        if status.state is RunState.ENDED and status.exit_status is None and how is HowEnded.KILLED:
            status = RunStatus(host, status.state, status.run_id, status.record, (), 137, how)
        if remaining:
            names = ", ".join(f"{p.pid} ({p.name})" for p in remaining[:8])
            message = f"{host}: {len(remaining)} processes survived SIGKILL: {names}"
            return NodeKill(
                host,
                KillOutcome.SURVIVED,
                message,
                before.run_id,
                status,
                after_grace,
                remaining,
                port,
                gpu,
            )
        status = await self.close_record(status, how)
        outcome = KillOutcome.KILLED if how is HowEnded.KILLED else KillOutcome.STOPPED
        message = f"{host}: run {before.run_id} {status.describe()}"
        return NodeKill(host, outcome, message, before.run_id, status, after_grace, (), port, gpu)
