"""Host sessions: events in order, a frozen link noticed by keep-alives, forwards that follow
reconnections, and a refusal on reconnection that stops the session (real sshd)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.io.helpers import eventually
from tests.sshd import TestServer
from tui.io.transport.host_session import (
    Backoff,
    HostSession,
    LocalConnector,
    SessionClosed,
    SshConnector,
)
from tui.io.transport.link_events import (
    Connected,
    ConnectFailureKind,
    Connecting,
    ConnectionEvent,
    ConnectionFailed,
    ConnectionLost,
    Reconnected,
)
from tui.io.transport.transport import LinkLost

QUICK = Backoff(first=0.05, most=0.3)


@pytest.fixture
def http_port() -> Iterator[int]:
    """A tiny HTTP server on 127.0.0.1 that answers 200 to anything."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
async def recorded(ssh_server: TestServer) -> AsyncIterator[tuple[HostSession, list[object]]]:
    session = HostSession(SshConnector(ssh_server.target()), backoff=QUICK)
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    await session.start()
    yield session, events  # type: ignore[misc]
    await session.close()


async def test_a_drop_gives_lost_connecting_reconnected_in_order(
    recorded: tuple[HostSession, list[ConnectionEvent]], ssh_server: TestServer
) -> None:
    session, events = recorded
    ssh_server.drop_connections()
    await eventually(lambda: any(isinstance(e, Reconnected) for e in events))
    kinds = [type(e) for e in events]
    assert kinds[:2] == [Connecting, Connected]
    assert kinds[2] is ConnectionLost
    assert kinds[-1] is Reconnected
    assert (await session.run(["echo", "back"])).stdout == b"back\n"


async def test_a_forward_follows_the_connection(
    recorded: tuple[HostSession, list[ConnectionEvent]], ssh_server: TestServer, http_port: int
) -> None:
    session, events = recorded
    async with httpx.AsyncClient() as client:
        first = await session.forward(http_port)
        assert (await client.get(first)).text == "ok"
        ssh_server.drop_connections()
        await eventually(lambda: any(isinstance(e, Reconnected) for e in events))
        second = await session.forward(http_port)
        assert (await client.get(second)).text == "ok"


async def test_a_frozen_link_is_noticed_by_keepalives(ssh_server: TestServer) -> None:
    if ssh_server.kind != "openssh":
        pytest.skip("freezing needs the per-connection process of OpenSSH's sshd")
    target = replace(ssh_server.target(), keepalive_interval=0.3, keepalive_count_max=2)
    session = HostSession(SshConnector(target), backoff=QUICK)
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    await session.start()
    frozen = ssh_server.connection_pids()
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        await eventually(lambda: any(isinstance(e, Reconnected) for e in events))
        lost = next(e for e in events if isinstance(e, ConnectionLost))
        assert "keepalive" in lost.reason.lower() or "timeout" in lost.reason.lower()
    finally:
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                os.kill(pid, signal.SIGCONT)
        await session.close()


async def test_a_changed_host_key_on_reconnection_stops_the_session(
    ssh_server: TestServer, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(ssh_server.known_hosts_line + "\n")
    session = HostSession(SshConnector(ssh_server.target(known_hosts=known)), backoff=QUICK)
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    await session.start()
    import asyncssh

    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    known.write_text(f"[127.0.0.1]:{ssh_server.port} {other}")
    ssh_server.drop_connections()
    await eventually(lambda: any(isinstance(e, ConnectionFailed) for e in events))
    failed = next(e for e in events if isinstance(e, ConnectionFailed))
    assert failed.kind is ConnectFailureKind.HOST_KEY
    with pytest.raises(SessionClosed):
        await session.run(["true"])
    await session.close()


async def test_a_run_on_a_dropped_link_raises_and_the_session_recovers(
    recorded: tuple[HostSession, list[ConnectionEvent]], ssh_server: TestServer
) -> None:
    session, events = recorded
    running = asyncio.create_task(session.run(["sleep", "30"]))
    await asyncio.sleep(0.3)
    ssh_server.drop_connections()
    with pytest.raises(LinkLost):
        await running
    await eventually(lambda: any(isinstance(e, Reconnected) for e in events))
    assert (await session.run(["echo", "again"])).stdout == b"again\n"


async def test_the_local_session_runs_commands_and_forwards_to_the_same_port() -> None:
    session = HostSession(LocalConnector())
    await session.start()
    assert (await session.run(["echo", "here"])).stdout == b"here\n"
    assert await session.forward(8000) == "http://127.0.0.1:8000"
    await session.close()
    with pytest.raises(SessionClosed):
        await session.transport()


async def test_callers_starting_one_session_together_share_one_connection(
    ssh_server: TestServer,
) -> None:
    opened = HostSession(SshConnector(ssh_server.target()))
    attempts: list[ConnectionEvent] = []
    opened.on_event(attempts.append)
    try:
        await asyncio.gather(opened.start(), opened.start(), opened.start())
        await opened.start()
        assert opened.connected
    finally:
        await opened.close()
    assert sum(isinstance(event, Connecting) for event in attempts) == 1
