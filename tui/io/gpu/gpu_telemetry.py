"""GPU telemetry from a host, over the connection the host already has.

One long-lived ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits -lms N`` runs as a
stream on the host's transport (the same SSH connection that tails the log; no new connection
and no handshake per reading). Its output is parsed chunk by chunk into snapshots. When the
stream ends it is started again after a pause that doubles up to a limit (and resets once
readings flow again). It reads every ``interval_ms`` (500 ms) while the server starts and every
``serving_interval_ms`` (2 s) once it serves (:meth:`TelemetryChannel.pace`, after which the
reader starts the stream again at the new rate); while it is down, the snapshot says why
("nvidia-smi not found on the host", "not connected to the host" ...) and keeps the last
figures, marked stale.

The process list (``--query-compute-apps``) is asked for on demand, and
:func:`busy_before_launch` names the GPUs already holding memory or processes before a launch.
Every command is an argument list; the transport quotes it for the remote shell.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tui.engine.gpu.gpu_csv import QueryGpuStream, parse_compute_apps, parse_query_gpu
from tui.engine.gpu.gpu_state import BUSY_MIB, BusyGpu, GpuSnapshot, GpuTelemetry, busy_gpus
from tui.engine.gpu.gpu_values import (
    AppList,
    GpuSample,
    NoTelemetry,
    NoTelemetryKind,
    classify_failure,
)
from tui.io.transport.transport import (
    CommandResult,
    CommandStream,
    LinkLost,
    Transport,
    TransportError,
)

LIVE_COLUMNS = (
    "index", "uuid", "name", "memory.used", "memory.total", "utilization.gpu", "power.draw",
)  # fmt: skip
APP_COLUMNS = ("gpu_uuid", "pid", "process_name", "used_memory")
_LASTING = frozenset({
    NoTelemetryKind.NOT_INSTALLED, NoTelemetryKind.NO_DEVICES, NoTelemetryKind.DRIVER,
    NoTelemetryKind.PERMISSION, NoTelemetryKind.UNSUPPORTED,
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """How telemetry is read from a host."""

    command: tuple[str, ...] = ("nvidia-smi",)
    """The ``nvidia-smi`` to run, as an argument list (a profile may name a simulated one)."""
    interval_ms: int = 500
    """Milliseconds between readings of the live stream while the server starts."""
    serving_interval_ms: int = 2000
    """Milliseconds between readings once the server serves (the user may ask for more)."""
    retry_first: float = 1.0
    """Seconds before the first restart of an ended stream; doubled on each failed restart."""
    retry_max: float = 30.0
    """Longest pause between restarts (also used at once when nvidia-smi cannot work)."""
    query_timeout: float = 15.0
    """Seconds a one-off query (process list, preflight) may take."""


def stream_argv(settings: TelemetrySettings, serving: bool = False) -> list[str]:
    """The live stream's command line (at the serving rate once ``serving``)."""
    interval = settings.serving_interval_ms if serving else settings.interval_ms
    return [
        *settings.command,
        f"--query-gpu={','.join(LIVE_COLUMNS)}",
        "--format=csv,noheader,nounits",
        "-lms",
        str(interval),
    ]


def once_argv(settings: TelemetrySettings) -> list[str]:
    """One reading of every GPU (the same columns as the stream)."""
    return [
        *settings.command,
        f"--query-gpu={','.join(LIVE_COLUMNS)}",
        "--format=csv,noheader,nounits",
    ]


def apps_argv(settings: TelemetrySettings) -> list[str]:
    """The process list's command line."""
    return [
        *settings.command,
        f"--query-compute-apps={','.join(APP_COLUMNS)}",
        "--format=csv,noheader,nounits",
    ]


def ended_reason(status: int | None, stderr: str, seen: NoTelemetry | None) -> NoTelemetry:
    """Why a command gave no (more) telemetry, from its stderr, what it printed, its status."""
    found = classify_failure(stderr) if stderr.strip() else None
    if found is not None:
        return found
    if seen is not None:
        return seen
    if status == 127:
        return NoTelemetry(NoTelemetryKind.NOT_INSTALLED)
    detail = stderr.strip().splitlines()[-1][:160] if stderr.strip() else ""
    status_text = f"exit status {status}" if status is not None else "no exit status"
    return NoTelemetry(NoTelemetryKind.ENDED, f"{status_text}{': ' + detail if detail else ''}")


@runtime_checkable
class TransportSource(Protocol):
    """Where the host's current connection comes from; a ``HostSession`` is one.

    ``transport()`` waits while the link is being re-established; ``link_failed()`` tells the
    owner that a transport it handed out has failed.
    """

    async def transport(self) -> Transport: ...

    def link_failed(self, transport: Transport) -> None: ...


class _OneTransport:
    """A fixed transport as a :class:`TransportSource` (no reconnection)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    async def transport(self) -> Transport:
        return self._transport

    def link_failed(self, transport: Transport) -> None:
        return None


class TelemetryChannel:
    """The live telemetry of one host, on its session's connection (or a given transport).

    Iterate :meth:`snapshots` from a worker, inside ``contextlib.aclosing`` (or call its
    ``aclose``) so that stopping the iteration also stops the remote ``nvidia-smi``. With a
    session, the stream follows reconnections by itself.
    """

    def __init__(
        self,
        source: TransportSource | Transport,
        settings: TelemetrySettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._source = source if isinstance(source, TransportSource) else _OneTransport(source)
        self.settings = settings or TelemetrySettings()
        self.model = GpuTelemetry(clock)
        self._sleep = sleep
        self._finished = False
        self.restarts = 0
        self.serving = False
        """Whether the stream reads at the serving rate; see :meth:`pace`."""

    def pace(self, serving: bool) -> bool:
        """Read at the serving rate from the next stream on; True when the rate changed (the
        caller then stops its iteration of :meth:`snapshots` and starts a new one, which keeps
        the readings so far)."""
        changed = serving != self.serving and (
            self.settings.serving_interval_ms != self.settings.interval_ms
        )
        self.serving = serving
        return changed

    async def snapshots(self) -> AsyncGenerator[GpuSnapshot, None]:
        """A snapshot per chunk of readings and one per outage; restarts the stream until the
        session closes."""
        delay = self.settings.retry_first
        while not self._finished:
            flowed = False
            async for snapshot in self._one_stream():
                flowed = flowed or snapshot.missing is None
                yield snapshot
            missing = self.model.snapshot().missing
            if flowed:
                delay = self.settings.retry_first
            elif missing is not None and missing.kind in _LASTING:
                delay = self.settings.retry_max
            if not self._finished:
                await self._sleep(delay)
                delay = min(delay * 2, self.settings.retry_max)
                self.restarts += 1

    async def _one_stream(self) -> AsyncGenerator[GpuSnapshot, None]:
        try:
            transport = await self._source.transport()
        except TransportError as exc:  # the session closed, or was refused for good
            self._finished = True
            self.model.lost(NoTelemetry(NoTelemetryKind.DISCONNECTED, str(exc)))
            yield self.model.snapshot()
            return
        stream = await self._open(transport)
        if stream is None:
            yield self.model.snapshot()
            return
        seen: NoTelemetry | None = None
        lost: NoTelemetry | None = None
        try:
            async for snapshot in self._read(stream):
                seen = snapshot.missing or seen
                yield snapshot
        except LinkLost as exc:
            self._source.link_failed(transport)
            lost = NoTelemetry(NoTelemetryKind.DISCONNECTED, str(exc))
        finally:
            status = await stream.close()  # also when the consumer stops iterating
        self.model.lost(lost or ended_reason(status, stream.stderr_text(), seen))
        yield self.model.snapshot()

    async def _open(self, transport: Transport) -> CommandStream | None:
        try:
            return await transport.open_stream(stream_argv(self.settings, self.serving))
        except LinkLost as exc:
            # A local transport reports a missing executable this way: not a link failure.
            found = classify_failure(str(exc))
            if found is None:
                self._source.link_failed(transport)
            self.model.lost(found or NoTelemetry(NoTelemetryKind.DISCONNECTED, str(exc)))
            return None

    async def _read(self, stream: CommandStream) -> AsyncGenerator[GpuSnapshot, None]:
        parser = QueryGpuStream(LIVE_COLUMNS)
        while chunk := await stream.read():
            batch = parser.feed(chunk)
            if batch.samples or batch.failure or batch.problems:
                self.model.apply(batch)
                yield self.model.snapshot()
        last = parser.close()
        if last.samples or last.failure or last.problems:
            self.model.apply(last)
            yield self.model.snapshot()

    async def query_apps(self) -> AppList:
        """The processes holding GPU memory now (empty with ``failure`` when unknown)."""
        try:
            transport = await self._source.transport()
        except TransportError as exc:
            return AppList(failure=NoTelemetry(NoTelemetryKind.DISCONNECTED, str(exc)))
        return await query_apps(transport, self.settings)


class CommandRunner(Protocol):
    """Anything that runs a command to completion: a transport or a ``HostSession``."""

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult: ...


async def _run(runner: CommandRunner, argv: Sequence[str], timeout: float) -> CommandResult:
    try:
        return await runner.run(argv, timeout=timeout)
    except TransportError as exc:
        return CommandResult(-1, b"", f"{type(exc).__name__}: {exc}".encode())


def _failure(result: CommandResult, seen: NoTelemetry | None) -> NoTelemetry | None:
    if result.ok:
        return seen
    return ended_reason(result.status, result.stderr.decode("utf-8", "replace"), seen)


async def query_apps(runner: CommandRunner, settings: TelemetrySettings) -> AppList:
    """``--query-compute-apps`` once, parsed; a failure says why there is no list."""
    result = await _run(runner, apps_argv(settings), settings.query_timeout)
    listed = parse_compute_apps(result.stdout, APP_COLUMNS)
    return AppList(listed.apps, listed.problems, _failure(result, listed.failure))


async def query_gpus(
    runner: CommandRunner, settings: TelemetrySettings
) -> tuple[tuple[GpuSample, ...], NoTelemetry | None]:
    """One reading of every GPU, or why there is none."""
    result = await _run(runner, once_argv(settings), settings.query_timeout)
    batch = parse_query_gpu(result.stdout, LIVE_COLUMNS)
    failure = _failure(result, batch.failure)
    if failure is None and not batch.samples:
        failure = NoTelemetry(NoTelemetryKind.NO_DEVICES)
    return batch.samples, failure


@dataclass(frozen=True, slots=True)
class BusyReport:
    """GPUs already in use before a launch, or why that could not be checked."""

    busy: tuple[BusyGpu, ...] = ()
    missing: NoTelemetry | None = None

    def lines(self) -> list[str]:
        """Sentences for a confirmation dialog or the launcher's refusal."""
        if self.missing is not None:
            return [f"GPU check skipped: {self.missing.reason}"]
        return [gpu.describe() for gpu in self.busy]


async def busy_before_launch(
    runner: CommandRunner,
    settings: TelemetrySettings | None = None,
    min_used_mib: float = BUSY_MIB,
) -> BusyReport:
    """GPUs holding more than ``min_used_mib`` or any process, from one GPU reading and the
    process list (both asked at once on the same connection)."""
    chosen = settings or TelemetrySettings()
    (gpus, missing), apps = await asyncio.gather(
        query_gpus(runner, chosen), query_apps(runner, chosen)
    )
    if missing is not None:
        return BusyReport(missing=missing)
    return BusyReport(busy_gpus(gpus, apps.apps, min_used_mib), apps.failure)


@dataclass(frozen=True, slots=True)
class GpuFeed:
    """The GPU reader of one host and the nodes of the server that run on it."""

    nodes: tuple[int, ...]
    channel: TelemetryChannel
