"""The asynchronous part of ``bringup wait``: follow, poll, decide, report."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import traceback
from collections.abc import Coroutine
from typing import Any, Protocol, TextIO

from tui.commands.wait import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_READY,
    EXIT_TIMEOUT,
    EXIT_UNREACHABLE,
    WaitPlan,
)
from tui.commands.wait_output import JsonReport, PlainReport
from tui.engine.judge.stall import StallTracker
from tui.engine.logs.log_engine import LogEngine
from tui.engine.logs.sanitize import sanitize_text
from tui.engine.startup.snapshot import Snapshot
from tui.io.health.health_poll import HealthChanged, HealthOptions, HealthPoller
from tui.io.store.history_store import StartupHistory
from tui.io.store.run_store import database_file
from tui.io.transport.deadline import within
from tui.io.transport.host_keys import check_policy
from tui.io.transport.host_session import HostSession, LocalConnector, SessionClosed, SshConnector
from tui.io.transport.link_events import Chunk, ConnectionEvent, ConnectionFailed, StreamMarker
from tui.io.transport.ssh import ConnectError, SshTarget, parse_host_spec

STALL_CHECK_SECONDS = 0.5


class Report(Protocol):
    def emit(self, item: object, node: int | None = None) -> None: ...

    def verdict(self, verdict: str, code: int, detail: str) -> None: ...


def make_session(plan: WaitPlan) -> HostSession:
    return session_for(plan, plan.host)


def session_for(plan: WaitPlan, spec: str | None) -> HostSession:
    """A session to ``spec`` (this machine when None) with the plan's SSH settings."""
    if spec is None:
        return HostSession(LocalConnector())
    host, user, port = parse_host_spec(spec)
    target = SshTarget(
        host,
        user=user,
        port=port,
        config_path=plan.ssh_config,
        known_hosts=plan.known_hosts,
        host_key_policy=check_policy(plan.host_key_policy),
    )
    return HostSession(SshConnector(target))


class Watcher:
    """Feeds the log to the engine and the health poll into one decision."""

    def __init__(self, plan: WaitPlan, report: Report) -> None:
        self.plan = plan
        self.report = report
        self.engine = LogEngine(engine=plan.engine, clock=time.monotonic)
        self.snapshot: Snapshot = self.engine.snapshot
        self.health: HealthChanged | None = None
        self.started = time.monotonic()
        self.decided: asyncio.Future[tuple[str, int, str]] = (
            asyncio.get_running_loop().create_future()
        )
        self.history = StartupHistory(
            database_file(configured=plan.data_dir), profile=plan.profile,
            expected_startup=plan.expected_startup, host=plan.host or "local",
        )  # fmt: skip
        self.stalls = StallTracker(plan.stall)

    def decide(self, verdict: str, code: int, detail: str) -> None:
        if not self.decided.done():
            self.decided.set_result((verdict, code, detail))

    def connection(self, event: ConnectionEvent) -> None:
        self.report.emit(event)
        if isinstance(event, ConnectionFailed):
            self.decide("UNREACHABLE", EXIT_UNREACHABLE, event.reason)

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
        self.snapshot = self.engine.snapshot
        self.judge()

    async def poll(self, session: HostSession, port: int) -> None:
        options = HealthOptions(engine=self.plan.engine)
        async for change in HealthPoller(lambda: session.forward(port), options).changes():
            self.health = change
            self.report.emit(change)
            self.judge()

    def judge(self) -> None:
        snapshot = self.snapshot
        if snapshot.failure is not None:
            failure = snapshot.failure
            where = f" on {failure.rank}" if failure.rank else ""
            lines = failure.excerpt.strip().splitlines()
            last = lines[-1] if lines else ""
            self.decide("FAILED", EXIT_FAILED, f"{failure.kind.value}{where}: {last}")
        elif snapshot.stopped and not snapshot.ready_line_seen:
            self.decide("FAILED", EXIT_FAILED, "the server stopped before it was ready")
        elif self._ready(snapshot):
            took = time.monotonic() - self.started
            startup = snapshot.startup_seconds
            logged = f"; the log shows a {startup:.1f} s start-up" if startup is not None else ""
            self.decide("READY", EXIT_READY, f"ready after waiting {took:.1f} s{logged}")
        self.history.record(snapshot)

    async def watch_stalls(self) -> None:
        """Judge the ranks' silence on a timer: a stall is the absence of lines."""
        while True:
            await asyncio.sleep(STALL_CHECK_SECONDS)
            expected = self.history.expectations(self.snapshot)
            for stalled in self.stalls.update(self.snapshot, expected, time.monotonic()):
                self.report.emit(stalled)
                if self.plan.fail_on_stall:
                    self.decide("STALLED", EXIT_FAILED, f"{stalled.rank}: {stalled.reason}")

    def _ready(self, snapshot: Snapshot) -> bool:
        log_ready = self.plan.log is None or snapshot.ready_line_seen
        port_ready = self.plan.port is None or (self.health is not None and self.health.ready)
        return log_ready and port_ready


async def wait_for_server(plan: WaitPlan, out: TextIO | None = None) -> int:
    """Run the whole wait, printing to ``out`` (standard output); return the exit status."""
    stream = out if out is not None else sys.stdout
    report: Report = JsonReport(stream) if plan.json else PlainReport(stream)
    if plan.more_nodes:
        from tui.commands.wait_cluster import wait_for_cluster

        return await wait_for_cluster(plan, report)
    session = make_session(plan)
    watcher = Watcher(plan, report)
    session.on_event(watcher.connection)
    try:
        verdict, code, detail = await within(_watch(session, watcher), plan.timeout)
    except asyncio.TimeoutError:
        verdict, code, detail = "TIMEOUT", EXIT_TIMEOUT, _timeout_detail(watcher)
    finally:
        await session.close()
    report.verdict(verdict, code, detail)
    return code


async def _watch(session: HostSession, watcher: Watcher) -> tuple[str, int, str]:
    try:
        await session.start()
    except ConnectError as error:
        return "UNREACHABLE", EXIT_UNREACHABLE, error.message
    plan = watcher.plan
    tasks = []
    if plan.log is not None:
        tasks.append(asyncio.create_task(guarded(watcher, watcher.follow(session, plan.log))))
        tasks.append(asyncio.create_task(watcher.watch_stalls()))
    if plan.port is not None:
        tasks.append(asyncio.create_task(guarded(watcher, watcher.poll(session, plan.port))))
    return await until_decided(watcher, tasks)


async def until_decided(watcher: Watcher, tasks: list[asyncio.Task[None]]) -> tuple[str, int, str]:
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
        watcher.decide("UNREACHABLE", EXIT_UNREACHABLE, str(closed))
    except Exception as error:  # any other failure must end the wait, not leave it hanging
        print(sanitize_text(traceback.format_exc()), file=sys.stderr, end="")
        watcher.decide("ERROR", EXIT_ERROR, f"stopped by an unexpected error: {error!r}")


def _timeout_detail(watcher: Watcher) -> str:
    snapshot = watcher.snapshot
    stage = snapshot.last_stage.label if snapshot.last_stage is not None else "no stage yet"
    health = watcher.health.state.value if watcher.health is not None else "not polled"
    return f"gave up waiting; last stage: {stage}; health: {health}"
