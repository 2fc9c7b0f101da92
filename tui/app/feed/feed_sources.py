"""Where the app's data comes from: adapters that turn a stream into posted messages.

A source is an object with ``async run(post)``: it reads until it is cancelled or the stream
ends and reports everything, failures included, as messages. It never raises into the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Protocol, TypeAlias, runtime_checkable

from textual.message import Message

from tui.app.monitor.monitor_messages import (
    ChunkReceived,
    ConnectionChanged,
    HealthPolled,
    StreamEnded,
)
from tui.app.monitor.view_model import ConnectionState, HealthReading

Post: TypeAlias = Callable[[Message], object]
Step: TypeAlias = bytes | ConnectionState | HealthReading | float | Message


class Source(Protocol):
    """A producer of log chunks and connection changes."""

    async def run(self, post: Post) -> None: ...


WAITING_LIMIT = 8 * 1024 * 1024
"""Bytes received but not yet parsed above which a source stops reading for a moment."""


class Backpressure:
    """How far parsing lags behind reading; a source awaits ``room`` after each chunk, so a
    huge backlog (a long log at connect) stays in the file instead of in memory."""

    def __init__(self, waiting: Callable[[], int], limit: int = WAITING_LIMIT) -> None:
        self.waiting = waiting
        self.limit = limit

    async def room(self) -> None:
        for _ in iter(lambda: self.waiting() > self.limit, False):
            await asyncio.sleep(0.01)


@runtime_checkable
class Throttled(Protocol):
    """A source that reads no faster than the app parses."""

    throttle: Backpressure | None


class Reconnectable(Protocol):
    """A source the user can ask to reconnect (the ``r`` key)."""

    async def reconnect(self) -> None: ...


class ScriptedSource:
    """Plays a fixed script: bytes become chunks, states and readings become messages, numbers
    are pauses in seconds. Used by tests and by screenshots, where nothing may vary."""

    def __init__(self, steps: Iterable[Step], *, end: bool = False) -> None:
        self.steps = list(steps)
        self.end = end

    async def run(self, post: Post) -> None:
        for step in self.steps:
            if isinstance(step, (int, float)):
                await asyncio.sleep(step)
            else:
                post(as_message(step))
        if self.end:
            post(StreamEnded("end of script"))


def as_message(step: bytes | ConnectionState | HealthReading | Message) -> Message:
    """The message a script step stands for."""
    if isinstance(step, bytes):
        return ChunkReceived(step)
    if isinstance(step, ConnectionState):
        return ConnectionChanged(step)
    if isinstance(step, HealthReading):
        return HealthPolled(step)
    return step
