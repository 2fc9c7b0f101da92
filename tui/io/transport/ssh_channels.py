"""TCP connections opened from the host's side of an SSH connection, for ``httpcore``.

An SSH ``direct-tcpip`` channel carries the bytes of one TCP connection the host makes for us,
without the local listening socket of a port forward: a request through a forward crosses two
more sockets in this process (the HTTP client's and the forward's). :class:`ChannelStream` is
such a channel as an ``httpcore`` network stream, so that HTTP/1.1 (keep-alive included) stays
``httpcore``'s: a connection pool given a network backend that opens channels reuses each
channel for request after request, as it would a socket.

A refused channel (nothing listens on the port there) raises ``httpcore.ConnectError``; a lost
connection raises :class:`LinkLost` from :func:`open_channel`, and ``httpcore``'s read and write
errors from the stream. A channel its far end closed while idle says so (``is_readable``, as
a closed socket would), and the pool opens a new one instead of sending on it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh
import httpcore

from tui.io.transport.deadline import within
from tui.io.transport.transport import LinkLost

_LOST = (OSError, asyncssh.Error)


class ChannelStream(httpcore.AsyncNetworkStream):
    """One ``direct-tcpip`` channel: bytes in, bytes out, end of file as ``b""``."""

    def __init__(
        self, reader: asyncssh.SSHReader[bytes], writer: asyncssh.SSHWriter[bytes]
    ) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return await within(self._reader.read(max_bytes), timeout)
        except asyncio.TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc) or "the channel sent nothing in time") from exc
        except _LOST as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            await within(self._writer.drain(), timeout)
        except asyncio.TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc) or "the channel took nothing in time") from exc
        except _LOST as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self._writer.close()

    def get_extra_info(self, info: str) -> Any:
        """``is_readable``: the far end closed the channel (a server's idle keep-alive ran out,
        the link dropped), so the pool must not send a request on it."""
        if info == "is_readable":
            return self._reader.at_eof() or self._writer.is_closing()
        return None


async def open_channel(
    conn: asyncssh.SSHClientConnection, host: str, port: int, timeout: float | None
) -> ChannelStream:
    """A channel to ``host:port`` as the far end of ``conn`` sees it."""
    try:
        reader, writer = await within(conn.open_connection(host, port, encoding=None), timeout)
    except asyncio.TimeoutError as exc:
        raise httpcore.ConnectTimeout(f"no channel to {host}:{port} in time") from exc
    except asyncssh.ChannelOpenError as exc:
        raise httpcore.ConnectError(f"{host}:{port} refused: {exc.reason}") from exc
    except _LOST as exc:
        raise LinkLost(str(exc) or type(exc).__name__) from exc
    return ChannelStream(reader, writer)
