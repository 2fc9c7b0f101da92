"""An ``httpcore`` network backend whose connections a host session opens from the host's side.

Given to ``httpcore.AsyncConnectionPool(network_backend=...)``, a URL as the host sees the server
(:meth:`HostSession.api_url`) is reached over SSH ``direct-tcpip`` channels of the session's
current connection (the local machine's own sockets for a local session), with no port forward
and no local socket in between. The pool keeps each channel alive across requests; after a
reconnect its next request opens a channel on the new connection.

A lost link is reported to the session (which reconnects) and raised as
``httpcore.ConnectError``, like a refused connection, so an HTTP caller needs only ``httpcore``'s
errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpcore

from tui.io.transport.host_session import HostSession
from tui.io.transport.transport import TransportError


class SessionNetwork(httpcore.AsyncNetworkBackend):
    """Connections through ``session``, whichever link it holds at the time."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            return await self.session.connect_tcp(host, port, timeout)
        except asyncio.TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} in time") from exc
        except TransportError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
