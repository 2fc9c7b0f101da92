"""Helpers for streaming tests: a log writer process and a collector of tail items."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from tui.io.transport.link_events import Chunk, Gap, MarkerKind, StreamMarker, TailItem

WRITER = r"""
import os, sys, time
path, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
written, start, pad = 0, time.monotonic(), "x" * 60
while (now := time.monotonic()) < start + seconds:
    due = int((now - start) * rate)
    if due > written:
        lines = (f"[2025-01-01 00:00:00 TP{i % 8}] line {i} {pad}\n" for i in range(written, due))
        os.write(fd, "".join(lines).encode())
        written = due
    time.sleep(0.005)
print(written)
"""


def start_writer(path: Path, lines_per_second: float, seconds: float) -> subprocess.Popen[str]:
    """Append numbered lines to ``path`` at a steady rate from a separate process."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(lines_per_second), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Collected:
    """Everything a tail yielded: bytes per file generation, markers and gaps in order."""

    segments: list[bytearray] = field(default_factory=lambda: [bytearray()])
    markers: list[StreamMarker] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    offsets_ok: bool = True
    order: list[str] = field(default_factory=list)
    """``bytes``, ``gap`` and marker kinds in the order they came (runs of bytes as one)."""

    def __repr__(self) -> str:
        sizes = [len(s) for s in self.segments]
        return f"Collected(sizes={sizes}, markers={self.markers}, gaps={self.gaps})"

    def add(self, item: TailItem) -> None:
        name = "bytes" if isinstance(item, Chunk) else "gap" if isinstance(item, Gap) else item.kind
        if not self.order or name != "bytes" or self.order[-1] != "bytes":
            self.order.append(name)
        if isinstance(item, Chunk):
            if item.offset != len(self.segments[-1]):
                self.offsets_ok = False
            self.segments[-1] += item.data
        elif isinstance(item, StreamMarker):
            self.markers.append(item)
            if item.starts_new_file:
                self.segments.append(bytearray())
        else:
            self.gaps.append(item)

    @property
    def kinds(self) -> list[MarkerKind]:
        return [m.kind for m in self.markers]

    @property
    def current(self) -> bytes:
        return bytes(self.segments[-1])


@contextlib.asynccontextmanager
async def collecting(items: AsyncIterator[TailItem]) -> AsyncIterator[Collected]:
    """Consume ``items`` in the background while the block runs."""
    collected = Collected()

    async def consume() -> None:
        async for item in items:
            collected.add(item)

    task = asyncio.create_task(consume())
    try:
        yield collected
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def eventually(
    condition: Callable[[], bool], timeout: float = 30.0, state: object = None
) -> None:
    """Wait until ``condition()`` holds; fail (without asserting any timing) if it never does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s; state: {state!r}")
        await asyncio.sleep(0.02)
