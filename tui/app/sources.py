"""Where the app's data comes from: adapters that turn a stream into posted messages.

A source is an object with ``async run(post)``: it reads until it is cancelled or the stream
ends and reports everything, failures included, as messages. It never raises into the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Protocol, TypeAlias

from textual.message import Message

from tui.app.messages import ChunkReceived, ConnectionChanged, HealthChanged, StreamEnded
from tui.app.model import ConnectionState, HealthReading

Post: TypeAlias = Callable[[Message], object]
Step: TypeAlias = bytes | ConnectionState | HealthReading | float | Message


class Source(Protocol):
    """A producer of log chunks and connection changes."""

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
        return HealthChanged(step)
    return step

