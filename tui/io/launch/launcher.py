"""Launch, stop and restart a profile's server on every node, safely.

A launch plans one command per node, checks every node first (port, previous run, GPUs, model
path) and refuses with reasons unless forced, then starts each node's command under
``setsid nohup`` in its own process group with its output in a new log file, and records the run
on the host. When a node fails to start, the nodes already started are stopped again, so no
half-started multi-node server is left holding GPUs. A stop signals only the recorded process
groups (see :mod:`tui.io.launch.launch_kill`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TypeVar

from tui.engine.launch.launch_plan import (
    LaunchSpec,
    NodePlan,
    PlanError,
    expand_home,
    plan_node,
    run_stem,
)
from tui.engine.launch.launch_preflight import Preflight, Refusal, RefusalKind, evaluate
from tui.engine.launch.launch_record import (
    HowEnded,
    LaunchRecord,
    RunStatus,
    iso,
    new_record,
    run_status,
)
from tui.engine.launch.launch_report import HostFacts, Identity
from tui.io.launch.launch_kill import (
    KillOutcome,
    NodeKill,
    Progress,
    Stopper,
    close_ended,
    read_record,
)
from tui.io.launch.launch_node import Node, NodeError
from tui.io.transport.ssh import ConnectError
from tui.io.transport.transport import TransportError

T = TypeVar("T")
_ATTEMPTS = 5


class ReadOnlyError(Exception):
    """Launch, kill and restart are switched off for this profile."""


LAUNCH_FAILURES = (ConnectError, NodeError, PlanError, ReadOnlyError, TransportError, OSError)
"""What a launch, kill, restart or status probe can fail with; callers report each one."""


@dataclass(frozen=True, slots=True)
class StartedNode:
    """A node whose command is running: its plan and its process group."""

    plan: NodePlan
    identity: Identity


@dataclass(frozen=True, slots=True)
class LaunchResult:
    """What a launch did: the checks, the nodes started, the errors, any roll-back."""

    preflights: tuple[Preflight, ...] = ()
    started: tuple[StartedNode, ...] = ()
    errors: tuple[str, ...] = ()
    rolled_back: tuple[NodeKill, ...] = ()
    forced: bool = False

    @property
    def refusals(self) -> tuple[Refusal, ...]:
        return tuple(r for p in self.preflights for r in p.refusals)

    @property
    def ok(self) -> bool:
        return bool(self.started) and not self.errors and not self.rolled_back


@dataclass(frozen=True, slots=True)
class RestartResult:
    """The stop of the previous run and the launch of the new one."""

    killed: tuple[NodeKill, ...]
    launched: LaunchResult


async def _not_started(node: Node, plan: NodePlan, record: LaunchRecord) -> None:
    """Close the record of a run whose command never started (best effort)."""
    ended = replace(
        record, how_ended=HowEnded.NOT_STARTED, ended_at=iso(datetime.now(timezone.utc))
    )
    with contextlib.suppress(NodeError):
        await node.write(plan.paths.record, ended.to_json())


async def _each(items: Sequence[T], call: Callable[[T], Awaitable[object]]) -> list[object]:
    return list(await asyncio.gather(*(call(item) for item in items), return_exceptions=True))


class Launcher:
    """Launches, stops and restarts one profile on its nodes (node 0 first)."""

    def __init__(self, spec: LaunchSpec, nodes: Sequence[Node], *, read_only: bool = False):
        if len(nodes) != len(spec.hosts):
            raise ValueError(f"{len(spec.hosts)} hosts but {len(nodes)} connections")
        self.spec = spec
        self.nodes = tuple(nodes)
        self.read_only = read_only
        self._homes: list[str] | None = None

    def _writable(self, action: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"profile {self.spec.profile!r} is read-only: {action} is off")

    async def homes(self) -> list[str]:
        """Each node's home folder (asked once)."""
        if self._homes is None:
            facts = await asyncio.gather(*(node.home() for node in self.nodes))
            self._homes = [f.home or "/" for f in facts]
        return self._homes

    async def _state_dirs(self) -> list[tuple[str, str]]:
        homes = await self.homes()
        log_dir = self.spec.log_dir
        count = len(self.nodes)
        return [
            (expand_home(log_dir, home) + "/.bringup", run_stem(self.spec.profile, rank, count))
            for rank, home in enumerate(homes)
        ]

    async def plans(self, now: datetime | None = None) -> tuple[NodePlan, ...]:
        """The plan of a launch starting ``now`` on every node."""
        moment = now or datetime.now(timezone.utc)
        homes = await self.homes()
        return tuple(plan_node(self.spec, rank, home, moment) for rank, home in enumerate(homes))

    async def preflight(self, plans: Sequence[NodePlan]) -> tuple[Preflight, ...]:
        """Check every node; a node that cannot be asked is a refusal. A previous run seen
        ended whose record is still open (its leader's pid went to another process, say) has
        its record closed on the way."""
        results = await _each(range(len(plans)), lambda k: self._facts(k, plans[k]))
        checked: list[Preflight] = []
        for plan, facts in zip(plans, results, strict=True):
            if isinstance(facts, HostFacts):
                checked.append(evaluate(plan, facts))
            else:
                refusal = Refusal(RefusalKind.HOST_FAILED, plan.host, str(facts))
                checked.append(Preflight(plan.host, (refusal,)))
        return tuple(checked)

    async def _facts(self, rank: int, plan: NodePlan) -> HostFacts:
        node = self.nodes[rank]
        facts = await node.preflight(plan)
        status = run_status(node.host, facts, read_record(facts, node.host))
        with contextlib.suppress(NodeError):
            await close_ended(node, plan.paths.state_dir, status)
        return facts

    async def status(self) -> tuple[RunStatus, ...]:
        """The newest run on every node (a node that cannot be asked raises ``NodeError``)."""
        dirs = await self._state_dirs()
        statuses: list[RunStatus] = []
        for node, (state_dir, stem) in zip(self.nodes, dirs, strict=True):
            facts = await node.probe(state_dir, stem)
            statuses.append(run_status(node.host, facts, read_record(facts, node.host)))
        return tuple(statuses)

    async def launch(self, force: bool = False, now: datetime | None = None) -> LaunchResult:
        """Check, then start every node; refuse (or, when forced, go on) if a check fails."""
        self._writable("launch")
        moment = now or datetime.now(timezone.utc)
        plans = await self.plans(moment)
        checks = await self.preflight(plans)
        refusals = [r for c in checks for r in c.refusals]
        if refusals and (not force or not all(r.kind.forceable for r in refusals)):
            return LaunchResult(checks, forced=force)
        outcomes = await _each(
            range(len(plans)), lambda k: self._start(k, moment, checks[k].previous_run)
        )
        started = [o for o in outcomes if isinstance(o, StartedNode)]
        errors = [str(o) for o in outcomes if isinstance(o, BaseException)]
        if not errors:
            return LaunchResult(checks, tuple(started), forced=force)
        rolled = await self._roll_back(started)
        return LaunchResult(checks, tuple(started), tuple(errors), rolled, force)

    async def _start(self, rank: int, moment: datetime, previous: str | None) -> StartedNode:
        node, home = self.nodes[rank], (await self.homes())[rank]
        for attempt in range(_ATTEMPTS):
            plan = plan_node(self.spec, rank, home, moment, attempt)
            record = new_record(plan, datetime.now(timezone.utc), previous)
            facts = await node.start(plan, record.to_json())
            if facts.taken:
                continue
            if facts.errors or facts.identity is None:
                problem = "; ".join(facts.errors) or "the command did not report its process"
                await _not_started(node, plan, record)
                raise NodeError(f"{node.host}: launch failed: {problem}")
            ident = facts.identity
            done = replace(
                record, pid=ident.pid, pgid=ident.pid, proc_start=ident.start, boot_id=ident.boot
            )
            await node.write(plan.paths.record, done.to_json())
            return StartedNode(plan, ident)
        raise NodeError(f"{node.host}: launch failed: the run files of {moment} already exist")

    async def _roll_back(self, started: Sequence[StartedNode]) -> tuple[NodeKill, ...]:
        wait = self.spec.grace_period
        stoppers = [
            Stopper(
                self.nodes[s.plan.node_rank], s.plan.paths.state_dir, s.plan.stem, s.plan.port, wait
            )
            for s in started
        ]
        return tuple(await asyncio.gather(*(s.stop() for s in stoppers)))

    async def kill(
        self, grace: float | None = None, progress: Progress | None = None
    ) -> tuple[NodeKill, ...]:
        """Stop the newest run on every node at once; one report per node."""
        self._writable("kill")
        dirs = await self._state_dirs()
        wait = self.spec.grace_period if grace is None else grace
        stoppers = [
            Stopper(node, state_dir, stem, self.spec.port, wait, progress)
            for node, (state_dir, stem) in zip(self.nodes, dirs, strict=True)
        ]
        results = await _each(stoppers, lambda s: s.stop())
        return tuple(
            r if isinstance(r, NodeKill) else NodeKill(s.node.host, KillOutcome.REFUSED, str(r))
            for s, r in zip(stoppers, results, strict=True)
        )

    async def restart(
        self, force: bool = False, grace: float | None = None, progress: Progress | None = None
    ) -> RestartResult:
        """Stop the newest run (its record is kept), then launch a new one."""
        self._writable("restart")
        killed = await self.kill(grace, progress)
        if not all(k.ok for k in killed):
            return RestartResult(killed, LaunchResult(errors=("the previous run is still alive",)))
        return RestartResult(killed, await self.launch(force))
