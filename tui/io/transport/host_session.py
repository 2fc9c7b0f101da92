"""A host session: one connection, kept alive and re-established, shared by everything.

:class:`HostSession` is what the UI and ``bringup wait`` use. It owns the connection to one host
(SSH, or the local machine) and a supervisor that reconnects with exponential backoff and
jitter whenever the link drops. Every state change is an event (:class:`Connecting`,
:class:`Connected`, :class:`ConnectionLost`, :class:`Reconnected`, :class:`ConnectionFailed`),
delivered to subscribers and callbacks. On top of the connection it offers:

- :meth:`HostSession.tail`: a log tail that survives reconnects (resumes at its offset);
- :meth:`HostSession.forward`: the local URL of a port on the host;
- :meth:`HostSession.connect_tcp`: a TCP connection made from the host's side (for HTTP clients
  given :class:`~tui.io.transport.session_network.SessionNetwork`);
- :meth:`HostSession.run`: a command run to completion.

A refused host key or refused authentication is final: the session stops and reports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import httpcore

from tui.io.tail.log_tail import LogTail, TailOptions
from tui.io.transport.deadline import within
from tui.io.transport.link_events import (
    Connected,
    ConnectFailureKind,
    Connecting,
    ConnectionEvent,
    ConnectionFailed,
    ConnectionLost,
    Reconnected,
    TailItem,
)
from tui.io.transport.local import LocalTransport
from tui.io.transport.ssh import ConnectError, SshTarget, SshTransport, connect
from tui.io.transport.transport import CommandResult, LinkLost, Transport, TransportError


class SessionClosed(TransportError):
    """The session was closed, or stopped for good after a refusal."""


class ApiNotPlaced(TransportError):
    """The server's host is not known yet (its scheduler's job has not been placed)."""


class Connector(Protocol):
    """Makes a connection; the returned awaitable ends (with a reason) when it is lost."""

    @property
    def label(self) -> str: ...

    async def connect(self) -> tuple[Transport, Awaitable[str]]: ...


class SshConnector:
    """Connects to an :class:`SshTarget`. Questions on the terminal (``prompts``) are asked at
    the first connection only; keys unlocked by a typed passphrase are kept for reconnecting."""

    def __init__(self, target: SshTarget) -> None:
        self.target = target

    @property
    def label(self) -> str:
        return self.target.label

    async def connect(self) -> tuple[Transport, Awaitable[str]]:
        try:
            link = await connect(self.target)
        finally:
            self.target = replace(self.target, prompts=False)
        if link.unlocked:
            self.target = replace(self.target, client_keys=link.unlocked)
        return SshTransport(link), link.wait_lost()


async def login_before_screen(sessions: Sequence[HostSession]) -> None:
    """Connect every session that may ask on the terminal (a passphrase, MFA answers, an
    unknown host key) while no screen owns it; raises the first :class:`ConnectError`."""
    for session in sessions:
        connector = session.connector
        if isinstance(connector, SshConnector) and connector.target.prompts:
            await session.start()


class LocalConnector:
    """The local machine: connecting always works and the link never drops."""

    @property
    def label(self) -> str:
        return "local"

    async def connect(self) -> tuple[Transport, Awaitable[str]]:
        transport = LocalTransport()
        return transport, transport.wait_closed()


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays between reconnection attempts: doubling from ``first`` up to ``most``, jittered."""

    first: float = 0.5
    most: float = 30.0
    jitter: float = 0.5

    def delay(self, attempt: int) -> float:
        base = min(self.most, self.first * 2.0 ** max(0, attempt - 1))
        return base * (1.0 - self.jitter * random.random())


Listener = Callable[[ConnectionEvent], None]


class HostSession:
    """One host: its connection, the reconnect loop and the channels built on it."""

    def __init__(
        self, connector: Connector, *, backoff: Backoff | None = None, first_attempts: int = 1
    ) -> None:
        self.connector = connector
        self.backoff = backoff or Backoff()
        self.first_attempts = max(1, first_attempts)
        self.failure: ConnectError | None = None
        self._transport: Transport | None = None
        self._lost: asyncio.Future[str] | None = None
        self._chores: set[asyncio.Task[None]] = set()
        self._ready = asyncio.Event()
        self._closed = False
        self._supervisor: asyncio.Task[None] | None = None
        self._starting: asyncio.Future[None] | None = None
        self._queues: list[asyncio.Queue[ConnectionEvent | None]] = []
        self._listeners: list[Listener] = []
        self._api_host = "127.0.0.1"
        self._api_placed = asyncio.Event()
        self._api_placed.set()

    def hold_api(self) -> None:
        """Make forwards without a ``remote_host`` raise :class:`ApiNotPlaced` until
        :meth:`place_api`: the server's host is not known yet (a Slurm job still queued)."""
        self._api_placed.clear()

    def place_api(self, host: str) -> None:
        """Forwards without a ``remote_host`` reach ``host`` as this host sees it (a Slurm job's
        node 0, through its login host) from now on."""
        self._api_host = host
        self._api_placed.set()

    @property
    def api_host(self) -> str:
        """Where the host reaches the server's port: 127.0.0.1, or the placed node 0."""
        return self._api_host

    @property
    def label(self) -> str:
        return self.connector.label

    @property
    def connected(self) -> bool:
        return self._ready.is_set() and self._transport is not None

    @property
    def closed(self) -> bool:
        return self._closed

    def on_event(self, listener: Listener) -> None:
        """Call ``listener`` with every connection event from now on."""
        self._listeners.append(listener)

    async def events(self) -> AsyncIterator[ConnectionEvent]:
        """Connection events from now on, until the session closes."""
        queue: asyncio.Queue[ConnectionEvent | None] = asyncio.Queue()
        self._queues.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._queues.remove(queue)

    def _emit(self, event: ConnectionEvent) -> None:
        for queue in self._queues:
            queue.put_nowait(event)
        for listener in self._listeners:
            listener(event)

    async def start(self) -> None:
        """Make the first connection (raises :class:`ConnectError`), then keep it up. Callers
        at the same time (the nodes of one host) share one attempt; once up, it returns at
        once; after a failure, the next call tries again."""
        if self._supervisor is not None and not self._supervisor.done():
            return
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._first_connection())
        await self._starting

    async def _first_connection(self) -> None:
        for attempt in range(1, self.first_attempts + 1):
            self._emit(Connecting(self.label, attempt))
            try:
                await self._attach()
                break
            except ConnectError as exc:
                if exc.kind is not ConnectFailureKind.UNREACHABLE or attempt == self.first_attempts:
                    self._fail(exc)
                    raise
                await asyncio.sleep(self.backoff.delay(attempt))
        self._emit(Connected(self.label))
        self._supervisor = asyncio.create_task(self._supervise())

    async def _attach(self) -> None:
        transport, lost = await self.connector.connect()
        self._transport, self._lost = transport, asyncio.ensure_future(lost)
        self._ready.set()

    def _fail(self, exc: ConnectError) -> None:
        self.failure = exc
        self._emit(ConnectionFailed(self.label, exc.kind, exc.message, exc.hint))
        self._ready.set()

    async def _supervise(self) -> None:
        while not self._closed and self._lost is not None:
            reason = await self._lost
            if self.closed:
                return
            await self._detach()
            self._emit(ConnectionLost(self.label, reason))
            if not await self._reconnect(time.monotonic()):
                return

    async def _detach(self) -> None:
        self._ready.clear()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.close()

    async def _reconnect(self, lost_at: float) -> bool:
        attempt = 0
        while not self._closed:
            attempt += 1
            self._emit(Connecting(self.label, attempt))
            try:
                await self._attach()
            except ConnectError as exc:
                if exc.kind is not ConnectFailureKind.UNREACHABLE:
                    self._fail(exc)
                    return False
                self._emit(ConnectionLost(self.label, exc.message))
                await asyncio.sleep(self.backoff.delay(attempt))
                continue
            self._emit(Reconnected(self.label, time.monotonic() - lost_at))
            return True
        return False

    async def transport(self) -> Transport:
        """The current transport, waiting for a reconnection if the link is down."""
        while True:
            if self._closed or self.failure is not None:
                raise SessionClosed(self.failure.message if self.failure else "session closed")
            await self._ready.wait()
            if self._transport is not None:
                return self._transport

    def link_failed(self, transport: Transport) -> None:
        """Report that ``transport`` failed under a caller; the supervisor reconnects."""
        if transport is self._transport:
            self._ready.clear()
            self._transport = None
            chore = asyncio.get_running_loop().create_task(transport.close())
            self._chores.add(chore)
            chore.add_done_callback(self._chores.discard)

    async def run(
        self, argv: Sequence[str], *, stdin: bytes = b"", timeout: float | None = None
    ) -> CommandResult:
        """Run a command on the host (waits for the link; raises ``LinkLost`` if it drops)."""
        transport = await self.transport()
        try:
            return await transport.run(argv, stdin=stdin, timeout=timeout)
        except LinkLost:
            self.link_failed(transport)
            raise

    async def forward(self, remote_port: int, remote_host: str | None = None) -> str:
        """``http://127.0.0.1:PORT`` reaching ``remote_host:remote_port`` on the host (by
        default the host's own 127.0.0.1, or where :meth:`place_api` said the server is;
        :class:`ApiNotPlaced` while :meth:`hold_api` holds it).

        The local port changes when the connection is re-established; ask again after a
        :class:`Reconnected` event (it is cheap: one forward per connection and port).
        """
        remote_host = self._placed(remote_host)
        transport = await self.transport()
        try:
            port = await transport.forward(remote_host, remote_port)
        except LinkLost:
            self.link_failed(transport)
            raise
        host = remote_host if isinstance(transport, LocalTransport) else "127.0.0.1"
        return f"http://{host}:{port}"

    def api_url(self, remote_port: int, remote_host: str | None = None) -> str:
        """``http://HOST:PORT`` as the host sees the server (for :meth:`connect_tcp`, which
        needs no forward); :class:`ApiNotPlaced` as for :meth:`forward`."""
        host = self._placed(remote_host)
        return f"http://[{host}]:{remote_port}" if ":" in host else f"http://{host}:{remote_port}"

    async def linked_api_url(self, remote_port: int, remote_host: str | None = None) -> str:
        """:meth:`api_url` once the link is up (waits for it), so that a link that is down
        reads as no link to an HTTP caller, not as a refused port."""
        url = self.api_url(remote_port, remote_host)
        await self.transport()
        return url

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        """A TCP connection to ``host:port`` made from the host's side (an SSH channel, no
        local socket); waits for the link, and reports it failed if opening finds it gone."""
        transport = await within(self.transport(), timeout)
        try:
            return await transport.connect_tcp(host, port, timeout)
        except LinkLost:
            self.link_failed(transport)
            raise

    def _placed(self, remote_host: str | None) -> str:
        if remote_host is not None:
            return remote_host
        if not self._api_placed.is_set():
            raise ApiNotPlaced("the server's host is not known yet (its job is queued)")
        return self._api_host

    async def tail(
        self, path: str, start_offset: int = 0, options: TailOptions | None = None
    ) -> AsyncGenerator[TailItem, None]:
        """Follow a log file across reconnects (see :class:`LogTail`)."""
        async with contextlib.aclosing(self.follow(LogTail(path, start_offset, options))) as items:
            async for item in items:
                yield item

    async def follow(self, log_tail: LogTail) -> AsyncGenerator[TailItem, None]:
        """Drive ``log_tail`` on whatever transport is current, for as long as the session lives
        (closing it closes the tail's stream at once)."""
        while True:
            transport = await self.transport()
            try:
                async with contextlib.aclosing(log_tail.follow(transport)) as items:
                    async for item in items:
                        yield item
            except LinkLost:
                self.link_failed(transport)

    async def close(self) -> None:
        """Close the connection and stop reconnecting."""
        self._closed = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        if self._lost is not None:
            self._lost.cancel()
        await self._detach()
        self._ready.set()
        for queue in self._queues:
            queue.put_nowait(None)
