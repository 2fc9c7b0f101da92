"""Where the app's data comes from: adapters that turn a stream into queued log items and
posted messages.

A feed source is an object with ``async run(post, put)``: it reads until it is cancelled or the
stream ends. Every log item (chunk, marker, end) it awaits into the ingest queue through ``put``,
so it reads no faster than the engine parses; what it learns about the link it posts to the app
as a message. It never raises into the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeAlias

from textual.message import Message

from tui.app.feed.stream_items import ChunkReceived, StreamEnded, StreamItem, StreamMarked
from tui.app.monitor.monitor_messages import ConnectionChanged, HealthPolled
from tui.app.monitor.view_model import ConnectionState, HealthReading

Post: TypeAlias = Callable[[Message], object]
"""Hands the app a message about the link or the server (connection, health)."""
Put: TypeAlias = Callable[[StreamItem], Awaitable[None]]
"""Queues a log item for the engine; the await lasts while the queue is full."""
Step: TypeAlias = bytes | StreamItem | ConnectionState | HealthReading | float | Message


class FeedSource(Protocol):
    """A producer of log items and connection changes."""

    async def run(self, post: Post, put: Put) -> None: ...


class ReadingSource(Protocol):
    """A producer of messages only (the health poll)."""

    async def run(self, post: Post) -> None: ...


class Reconnectable(Protocol):
    """A source the user can ask to reconnect (the ``r`` key)."""

    async def reconnect(self) -> None: ...


class ScriptedSource:
    """Plays a fixed script: bytes become chunks, states and readings become messages, numbers
    are pauses in seconds. Used by tests and by screenshots, where nothing may vary."""

    def __init__(self, steps: Iterable[Step], *, end: bool = False) -> None:
        self.steps = list(steps)
        self.end = end

    async def run(self, post: Post, put: Put) -> None:
        for step in self.steps:
            if isinstance(step, (int, float)):
                await asyncio.sleep(step)
            elif isinstance(step, bytes):
                await put(ChunkReceived(step))
            elif isinstance(step, ChunkReceived | StreamMarked | StreamEnded):
                await put(step)
            else:
                post(as_message(step))
        if self.end:
            await put(StreamEnded("end of script"))


def as_message(step: ConnectionState | HealthReading | Message) -> Message:
    """The message a script step stands for."""
    if isinstance(step, ConnectionState):
        return ConnectionChanged(step)
    if isinstance(step, HealthReading):
        return HealthPolled(step)
    return step
