"""The asynchronous part of ``bringup wait``: follow, poll, ask the judge, report.

FAILED and STOPPED end the wait at once. READY ends it once the server has served for the
plan's ``settle`` (``--settle``, half a second by default): a log that is read after the fact
arrives in several chunks within milliseconds, and a server that shut down after its ready line
must end STOPPED, not READY. A DEGRADED spell after READY (a missed poll, a 503 during a long
prefill) neither ends nor restarts that time, and the wait still ends READY: once the judge said
READY, only a failure, a stop or the health grace running out can change the exit. Every change
of the verdict is reported (``verdict_changed``) before the wait's own last ``verdict``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import Any, Protocol, TextIO

from tui.commands.wait import Ending, WaitEnding, WaitPlan, exit_code
from tui.commands.wait_output import HealthPortChosen, JsonReport, PlainReport
from tui.config import Profile
from tui.engine.judge.degraded import ServingMemory
from tui.engine.judge.health import HealthState
from tui.engine.judge.judge import Judgement, Signals, VerdictChanged, judge
from tui.engine.judge.stall import StallTracker
from tui.engine.judge.verdict import Watched
from tui.engine.logs.log_engine import LogEngine
from tui.engine.logs.sanitize import sanitize_text
from tui.engine.servers import registry
from tui.engine.startup.log_events import EngineDetected
from tui.engine.startup.snapshot import Snapshot
from tui.engine.startup.vocabulary import Verdict
from tui.io.health.health_poll import HealthChanged, HealthOptions, HealthPoller
from tui.io.store.history_store import StartupHistory
from tui.io.store.run_store import database_file
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession, LocalConnector, SessionClosed, SshConnector
from tui.io.transport.link_events import Chunk, ConnectionEvent, ConnectionFailed, StreamMarker
from tui.io.transport.profile_target import spec_target
from tui.io.transport.session_network import SessionNetwork
from tui.io.transport.ssh import ConnectError

STALL_CHECK_SECONDS = 0.5
Decision = tuple[Ending, str]


class Report(Protocol):
    def emit(self, item: object, node: int | None = None) -> None: ...

    def verdict(self, verdict: Ending, code: int, detail: str) -> None: ...


def make_session(plan: WaitPlan) -> HostSession:
    return session_for(plan, plan.host)


def session_for(plan: WaitPlan, spec: str | None) -> HostSession:
    """A session to ``spec`` (this machine when None) with the plan's SSH settings."""
    if spec is None:
        return HostSession(LocalConnector())
    settings = Profile(
        host_key_policy=plan.host_key_policy,
        ssh_config=plan.ssh_config,
        known_hosts=plan.known_hosts,
        ssh_choices=plan.ssh_choices,
    )
    return HostSession(SshConnector(spec_target(settings, spec)))


class Watcher:
    """Feeds the log and the health poll to the judge; ends the wait on a final verdict."""

    def __init__(self, plan: WaitPlan, report: Report) -> None:
        self.plan = plan
        self.report = report
        self.engine = LogEngine(engine=plan.engine, clock=time.monotonic)
        self.snapshot: Snapshot = self.engine.snapshot
        self.health: HealthChanged | None = None
        self.started = time.monotonic()
        self.decided: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self.history = StartupHistory(
            database_file(configured=plan.data_dir), profile=plan.profile,
            expected_startup=plan.expected_startup, host=plan.host or "local",
        )  # fmt: skip
        self.stalls = StallTracker()
        self.ready_since: float | None = None
        self.start_poll: Callable[[int], None] | None = None
        """Starts the health poll on a port (set by the wait; used once the log names the
        engine when the plan's port waits for it)."""
        self.serving: ServingMemory | None = None
        self.verdict: Verdict | None = None

    def decide(self, ending: Ending, detail: str) -> None:
        if not self.decided.done():
            self.decided.set_result((ending, detail))

    def connection(self, event: ConnectionEvent) -> None:
        self.report.emit(event)
        if isinstance(event, ConnectionFailed):
            self.decide(WaitEnding.UNREACHABLE, event.reason)

    async def follow(self, session: HostSession, path: str) -> None:
        async for item in session.tail(path):
            if isinstance(item, Chunk):
                self._take(self.engine.feed(item.data).events)
                continue
            self.report.emit(item)
            if isinstance(item, StreamMarker) and item.starts_new_file:
                self._take(self.engine.mark_new_run(item.detail).events)

    def _take(self, events: tuple[object, ...]) -> None:
        for event in events:
            self.report.emit(event)
            self.noticed(event)
        self.snapshot = self.engine.snapshot
        self.judge()

    def noticed(self, event: object) -> None:
        """Start polling the detected engine's default port when the plan waits for it."""
        if not isinstance(event, EngineDetected) or not self.plan.detect_port:
            return
        start, self.start_poll = self.start_poll, None
        dialect = registry.find(event.engine)
        if start is not None and dialect is not None:
            reason = f"the default port of {dialect.name}, the engine the log shows"
            self.report.emit(HealthPortChosen(dialect.default_port, dialect.name, reason))
            start(dialect.default_port)

    def poll_chosen_port(self, spawn: Callable[[int], None]) -> None:
        """Poll the plan's port now, or once the log names the engine (``detect_port``)."""
        plan = self.plan
        if plan.port is not None:
            self.report.emit(HealthPortChosen(plan.port, plan.engine, "given"))
            spawn(plan.port)
        elif plan.detect_port:
            self.start_poll = spawn

    async def poll(self, session: HostSession, port: int) -> None:
        plan = self.plan
        options = HealthOptions(
            interval=plan.health_interval,
            serving_interval=plan.health_interval_serving,
            engine=plan.engine,
            api_key=plan.api_key,
        )

        def url() -> Awaitable[str]:
            return session.linked_api_url(port, plan.health_host)

        poller = HealthPoller(url, options, SessionNetwork(session))
        async for change in poller.changes():
            self.health = change
            self.report.emit(change)
            self.judge()

    def judge(self) -> None:
        """Ask the judge about what is known now; report new stalls; end on a final verdict
        (or on STALLED with ``--fail-on-stall``)."""
        snapshot, now = self.snapshot, time.monotonic()
        expected = self.history.expectations(snapshot)
        signals = replace(self.signals(), serving=self.serving)
        judgement = judge(snapshot, signals, expected, now, self.plan.stall)
        self.serving = judgement.serving
        if judgement.verdict is not self.verdict:
            self.report.emit(VerdictChanged(judgement.verdict, judgement.reason, self.verdict))
            self.verdict = judgement.verdict
        for stalled in self.stalls.newly_stalled(judgement.statuses):
            self.report.emit(stalled, self.node_of(stalled.rank))
        if self._ends_wait(judgement, now):
            verdict = Verdict.READY if judgement.verdict.serving else judgement.verdict
            self.decide(verdict, self._detail(judgement))
        self.history.record(snapshot)

    def _ends_wait(self, judgement: Judgement, now: float) -> bool:
        """FAILED or STOPPED; READY, or DEGRADED since, for the plan's ``settle``; STALLED with
        ``--fail-on-stall``."""
        if judgement.verdict.serving:
            held_since = now if self.ready_since is None else self.ready_since
            self.ready_since = held_since
            return now - held_since >= self.plan.settle
        self.ready_since = None
        stalled_out = judgement.verdict is Verdict.STALLED and self.plan.fail_on_stall
        return judgement.final or stalled_out

    def signals(self) -> Signals:
        """The health poll as the judge hears it; READY does without what the plan does not
        follow (no ``--log``: no ready line; no ``--port``: no ``/health``)."""
        health = self.health.state if self.health is not None else HealthState.UNKNOWN
        detail = self.health.detail if self.health is not None else ""
        polled = self.plan.port is not None or self.plan.detect_port
        watched = Watched(log=self.plan.log is not None, health=polled)
        return Signals(
            connected=True, health=health, watched=watched, health_detail=detail,
            health_grace=self.plan.health_grace,
        )  # fmt: skip

    def node_of(self, rank: str | None) -> int | None:
        """The node a rank runs on, for the report (None: the server has one host)."""
        return None

    def _detail(self, judgement: Judgement) -> str:
        if not judgement.verdict.serving:
            return judgement.reason
        took = (self.ready_since or time.monotonic()) - self.started
        polled = self.plan.port is not None or self.plan.detect_port
        ready = "ready" if polled else "ready (log only: no port checked)"
        if judgement.verdict is Verdict.DEGRADED:
            return f"{ready} after waiting {took:.1f} s; DEGRADED now: {judgement.reason}"
        return f"{ready} after waiting {took:.1f} s; {judgement.reason}"

    async def watch_stalls(self) -> None:
        """Judge again on a timer: a stall is the absence of lines, so no line triggers it (and
        a READY that held ends the wait here)."""
        while True:
            await asyncio.sleep(STALL_CHECK_SECONDS)
            self.judge()


async def wait_for_server(plan: WaitPlan, out: TextIO | None = None) -> int:
    """Run the whole wait, printing to ``out`` (standard output); return the exit status."""
    stream = out if out is not None else sys.stdout
    report: Report = JsonReport(stream) if plan.json else PlainReport(stream)
    if plan.slurm is not None:
        from tui.commands.wait_slurm import wait_for_slurm

        return await wait_for_slurm(plan, plan.slurm, report)
    if plan.more_nodes:
        from tui.commands.wait_cluster import wait_for_cluster

        return await wait_for_cluster(plan, report)
    session = make_session(plan)
    watcher = Watcher(plan, report)
    session.on_event(watcher.connection)
    try:
        ending, detail = await within(_watch(session, watcher), plan.timeout)
    except asyncio.TimeoutError:
        ending, detail = WaitEnding.TIMEOUT, _timeout_detail(watcher)
    finally:
        await session.close()
    code = exit_code(ending)
    report.verdict(ending, code, detail)
    return code


async def _watch(session: HostSession, watcher: Watcher) -> Decision:
    try:
        await session.start()
    except ConnectError as error:
        return WaitEnding.UNREACHABLE, error.message
    plan = watcher.plan
    tasks = [asyncio.create_task(watcher.watch_stalls())]
    if plan.log is not None:
        tasks.append(asyncio.create_task(guarded(watcher, watcher.follow(session, plan.log))))

    def spawn(port: int) -> None:
        tasks.append(asyncio.create_task(guarded(watcher, watcher.poll(session, port))))

    watcher.poll_chosen_port(spawn)
    return await until_decided(watcher, tasks)


async def until_decided(watcher: Watcher, tasks: list[asyncio.Task[None]]) -> Decision:
    """The verdict, once a task (or a stall) decided it; every task is cancelled then."""
    try:
        return await watcher.decided
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def guarded(watcher: Watcher, work: Coroutine[Any, Any, None]) -> None:
    try:
        await work
    except SessionClosed as closed:
        watcher.decide(WaitEnding.UNREACHABLE, str(closed))
    except BrokenPipeError:
        # Standard output was closed (``| head``): the verdict's line ends the command quietly.
        watcher.decide(WaitEnding.ERROR, "standard output was closed")
    except Exception as error:  # any other failure must end the wait, not leave it hanging
        print(sanitize_text(traceback.format_exc()), file=sys.stderr, end="")
        watcher.decide(WaitEnding.ERROR, f"stopped by an unexpected error: {error!r}")


def _timeout_detail(watcher: Watcher) -> str:
    snapshot = watcher.snapshot
    stage = snapshot.last_stage.label if snapshot.last_stage is not None else "no stage yet"
    health = watcher.health.state.value if watcher.health is not None else "not polled"
    return f"gave up waiting; last stage: {stage}; health: {health}"
