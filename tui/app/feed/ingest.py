"""The queue between the log stream and the engine, drained in small slices.

Handlers only append what arrived; one async worker feeds the engine at most ``slice_bytes`` at
a time and yields to the event loop between slices, so a backlog of a hundred thousand lines
arriving at once never freezes the screen: keys, timers and repaints run in between. Stream
markers wait in the same queue, so a truncation applies exactly after the bytes before it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from tui.app.monitor.monitor_state import MonitorState

SLICE_BYTES = 8 * 1024


@dataclass(frozen=True, slots=True)
class _Data:
    node: int
    data: bytes


@dataclass(frozen=True, slots=True)
class _Mark:
    text: str
    new_run: bool
    node: int = 0


@dataclass(frozen=True, slots=True)
class _End:
    """The stream ended: the engine's partial last line becomes a line."""

    node: int = 0


Item = _Data | _Mark | _End


class Ingest:
    """Everything received and not yet parsed, in arrival order."""

    def __init__(self, state: MonitorState, slice_bytes: int = SLICE_BYTES) -> None:
        self.state = state
        self.slice_bytes = slice_bytes
        self.backlog = 0
        self._items: deque[Item] = deque()
        self._wakeup = asyncio.Event()

    def push(self, data: bytes, node: int = 0) -> None:
        if data:
            self._items.append(_Data(node, data))
            self.backlog += len(data)
            self._wakeup.set()

    def push_mark(self, text: str, new_run: bool, node: int = 0) -> None:
        self._items.append(_Mark(text, new_run, node))
        self._wakeup.set()

    def push_end(self, node: int = 0) -> None:
        self._items.append(_End(node))
        self._wakeup.set()

    def step(self) -> bool:
        """Handle one slice or one marker; True while more is waiting."""
        if not self._items:
            return False
        item = self._items.popleft()
        if isinstance(item, _Data):
            data = item.data
            if len(data) > self.slice_bytes:
                self._items.appendleft(_Data(item.node, data[self.slice_bytes :]))
                data = data[: self.slice_bytes]
            self.backlog -= len(data)
            self.state.feed(data, item.node)
        elif isinstance(item, _Mark):
            self.state.mark(item.text, item.new_run, item.node)
        else:
            self.state.finish(item.node)
        return bool(self._items)

    def drain(self) -> None:
        """Handle everything now (tests and shutdown)."""
        while self.step():
            pass

    async def run(self) -> None:
        """The worker: wait for data, then feed it slice by slice, yielding in between."""
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            for _ in iter(self.step, False):
                await asyncio.sleep(0)  # let keys, timers and repaints run between slices
