"""The one queue between the log stream and the engine: bounded, so reading waits for parsing.

A source awaits ``put`` for every item it read. While the queue is full that await lasts until
the engine has caught up, so the source reads no further and the SSH channel's own flow control
keeps the rest of a huge backlog on the server instead of in memory. A chunk enters the queue in
slices of at most ``slice_bytes``, so at most ``capacity`` slices (1 MiB by default) wait.

One consumer, ``run``, takes the items in arrival order, feeds each to the engine (which arms
the repaint) and yields to the event loop after each, so keys, timers and repaints run between
slices of a backlog. Stream markers and ends wait in the same queue, so a truncation applies
exactly after the bytes before it; every item keeps the node whose log it belongs to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Protocol

from tui.app.feed.stream_items import ChunkReceived, StreamItem, StreamMarked

SLICE_BYTES = 8 * 1024
CAPACITY = 128
"""Slices the queue holds before ``put`` waits."""


class LogReader(Protocol):
    """What the queue feeds (the monitor's state)."""

    def feed(self, data: bytes, node: int = 0) -> None: ...

    def mark(self, text: str, new_run: bool = False, node: int = 0) -> None: ...

    def finish(self, node: int = 0) -> None: ...


class Ingest:
    """Everything received and not yet parsed, in arrival order, at most ``capacity`` slices."""

    def __init__(
        self, reader: LogReader, slice_bytes: int = SLICE_BYTES, capacity: int = CAPACITY
    ) -> None:
        self.reader = reader
        self.slice_bytes = slice_bytes
        self._queue: asyncio.Queue[StreamItem] = asyncio.Queue(capacity)

    @property
    def waiting(self) -> int:
        """Slices and marks in the queue."""
        return self._queue.qsize()

    async def put(self, item: StreamItem) -> None:
        """Queue ``item``, waiting while the queue is full."""
        for part in self._slices(item):
            await self._queue.put(part)

    def _slices(self, item: StreamItem) -> Iterator[StreamItem]:
        if not isinstance(item, ChunkReceived):
            yield item
            return
        data, size = item.data, self.slice_bytes
        if len(data) <= size:
            if data:
                yield item
            return
        for start in range(0, len(data), size):
            yield ChunkReceived(data[start : start + size], item.node)

    def apply(self, item: StreamItem) -> None:
        """Hand one item to the reader at once, slice by slice (tests build screens this way)."""
        for part in self._slices(item):
            self._handle(part)

    def _handle(self, item: StreamItem) -> None:
        if isinstance(item, ChunkReceived):
            self.reader.feed(item.data, item.node)
        elif isinstance(item, StreamMarked):
            self.reader.mark(item.text, item.new_file, item.node)
        else:  # StreamEnded: the engine's partial last line becomes a line
            self.reader.finish(item.node)

    def drain(self) -> None:
        """Handle everything queued now (tests and shutdown)."""
        while not self._queue.empty():
            self._handle(self._queue.get_nowait())
            self._queue.task_done()

    async def settled(self) -> None:
        """Wait until every item put so far has been handled."""
        await self._queue.join()

    async def run(self) -> None:
        """The consumer: take each item as it comes, handle it, then let the app run."""
        while True:
            item = await self._queue.get()
            try:
                self._handle(item)
            finally:
                self._queue.task_done()
            await asyncio.sleep(0)  # let keys, timers and repaints run between slices
