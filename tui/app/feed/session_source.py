"""The production source: a log followed through a ``HostSession``, with its connection events.

The session reconnects by itself and the tail resumes at its byte offset; this adapter only
turns what they report into the app's messages.
"""

from __future__ import annotations

import contextlib

from tui.app.feed.feed_sources import Post, Put
from tui.app.feed.stream_items import ChunkReceived, StreamItem, StreamMarked
from tui.app.monitor.monitor_messages import ConnectionChanged
from tui.app.monitor.view_model import ConnectionState
from tui.io.transport.host_session import HostSession, SessionClosed
from tui.io.transport.link_events import (
    Chunk,
    Connected,
    Connecting,
    ConnectionEvent,
    ConnectionLost,
    Reconnected,
    StreamMarker,
    TailItem,
)
from tui.io.transport.ssh import ConnectError


def connection_message(event: ConnectionEvent) -> ConnectionChanged:
    """What the header shows for a session's connection event."""
    if isinstance(event, Connecting):
        if event.attempt > 1:
            return ConnectionChanged(ConnectionState.RECONNECTING, f"attempt {event.attempt}")
        return ConnectionChanged(ConnectionState.CONNECTING)
    if isinstance(event, Connected):
        return ConnectionChanged(ConnectionState.CONNECTED)
    if isinstance(event, Reconnected):
        return ConnectionChanged(
            ConnectionState.CONNECTED, f"reconnected after {event.gap_seconds:.0f} s"
        )
    if isinstance(event, ConnectionLost):
        return ConnectionChanged(ConnectionState.LOST, event.reason)
    detail = f"{event.reason}. {event.hint}" if event.hint else event.reason
    return ConnectionChanged(ConnectionState.REFUSED, detail)


def stream_item(item: TailItem, node: int = 0) -> StreamItem:
    """The ingest item for one item of node ``node``'s log tail."""
    if isinstance(item, Chunk):
        return ChunkReceived(item.data, node)
    if isinstance(item, StreamMarker):
        return StreamMarked(item.kind.value, item.detail, item.starts_new_file, node)
    lost = "an unknown number of" if item.size is None else str(item.size)
    return StreamMarked("gap", f"{lost} bytes could not be read ({item.reason})", node=node)


class SessionSource:
    """Tails one log file through a ``HostSession`` and relays its connection events; the tail
    reads on only once the ingest queue took the last item, so a slow engine holds the SSH
    channel back through its flow control. Items carry ``node``."""

    def __init__(self, session: HostSession, path: str, node: int = 0) -> None:
        self.session = session
        self.path = path
        self.node = node
        self._post: Post | None = None
        session.on_event(self._relay)

    def _relay(self, event: ConnectionEvent) -> None:
        if self._post is not None:
            self._post(connection_message(event))

    async def run(self, post: Post, put: Put) -> None:
        self._post = post
        try:
            if self.session.connected:
                post(ConnectionChanged(ConnectionState.CONNECTED))
            else:
                await self.session.start()
            # Closed at once when cancelled while waiting for room: the tail's remote reader
            # stops now, not whenever the abandoned generator is collected.
            async with contextlib.aclosing(self.session.tail(self.path)) as items:
                async for item in items:
                    await put(stream_item(item, self.node))
        except ConnectError:
            return  # already reported through the session's ConnectionFailed event
        except SessionClosed as closed:
            post(ConnectionChanged(ConnectionState.CLOSED, str(closed)))

    async def reconnect(self) -> None:
        """Drop the current link; the session's supervisor connects again."""
        if self.session.connected:
            self.session.link_failed(await self.session.transport())
