"""The ingest queue feeds the engine in small slices and keeps markers in arrival order."""

from __future__ import annotations

import asyncio

from tests.ui.fakes import FakeClock, FakeLink
from tui.app.feed.feed_sources import Backpressure, ScriptedSource
from tui.app.feed.ingest import Ingest
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_messages import ChunkReceived
from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.view_model import Target
from tui.engine.logs.log_line import LogLine


class RecordingLink(FakeLink):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def feed(self, data: bytes) -> list[LogLine]:
        self.calls.append(f"feed {len(data)}")
        return super().feed(data)

    def new_run(self, reason: str) -> list[LogLine]:
        self.calls.append(f"new run {reason}")
        return []

    def finish(self) -> list[LogLine]:
        self.calls.append("finish")
        return []


def _ingest(slice_bytes: int = 10) -> tuple[Ingest, RecordingLink]:
    link = RecordingLink()
    return Ingest(MonitorState(link, Target(), FakeClock()), slice_bytes), link


def test_big_chunks_are_fed_in_slices_and_markers_keep_their_place() -> None:
    ingest, link = _ingest()
    ingest.push(b"x" * 25)
    ingest.push_mark("truncated", new_run=True)
    ingest.push(b"y" * 5)
    ingest.push_end()
    assert ingest.backlog == 30
    ingest.drain()
    assert link.calls == [
        "feed 10", "feed 10", "feed 5", "new run truncated", "feed 5", "finish",
    ]  # fmt: skip
    assert ingest.backlog == 0


async def test_the_worker_yields_between_slices() -> None:
    ingest, link = _ingest(slice_bytes=4)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    worker = asyncio.create_task(ingest.run())
    counter = asyncio.create_task(ticker())
    ingest.push(b"z" * 400)
    for _ in range(1000):
        if ingest.backlog == 0:
            break
        await asyncio.sleep(0)
    worker.cancel()
    counter.cancel()
    assert ingest.backlog == 0
    assert len(link.calls) == 100
    assert ticks >= 50


async def test_backpressure_waits_until_parsing_catches_up() -> None:
    waiting = [10_000]
    pressure = Backpressure(lambda: waiting[0], limit=1_000)

    async def parse() -> None:
        while waiting[0] > 0:
            await asyncio.sleep(0.001)
            waiting[0] -= 1_000

    parser = asyncio.create_task(parse())
    await pressure.room()
    assert waiting[0] <= 1_000
    await parser


def test_the_app_counts_bytes_posted_but_not_parsed() -> None:
    app = MonitorApp(link=FakeLink(), source=ScriptedSource([]), target=Target())
    app._posted(ChunkReceived(b"x" * 100))
    assert app.waiting_bytes() == 100
