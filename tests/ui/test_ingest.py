"""The ingest queue feeds the engine in small slices, keeps markers in arrival order, and holds
a source back while the engine is behind."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from textual.message import Message

from tests.ui.fakes import FakeClock, FakeLink
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.feed.ingest import Ingest
from tui.app.feed.session_source import SessionSource, stream_item
from tui.app.feed.stream_items import ChunkReceived, StreamEnded, StreamItem, StreamMarked
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.monitor_state import MonitorState
from tui.app.monitor.view_model import Target
from tui.engine.logs.log_line import LogLine
from tui.io.transport.host_session import HostSession, LocalConnector
from tui.io.transport.link_events import Gap, MarkerKind, StreamMarker


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


class RecordingReader:
    """Records what the queue hands on, with the node."""

    def __init__(self) -> None:
        self.items: list[tuple[int, bytes | str]] = []

    def feed(self, data: bytes, node: int = 0) -> None:
        self.items.append((node, data))

    def mark(self, text: str, new_run: bool = False, node: int = 0) -> None:
        self.items.append((node, text))

    def finish(self, node: int = 0) -> None:
        self.items.append((node, "end"))


def _ingest(slice_bytes: int = 10) -> tuple[Ingest, RecordingLink]:
    link = RecordingLink()
    return Ingest(MonitorState(link, Target(), FakeClock()), slice_bytes), link


async def test_big_chunks_are_fed_in_slices_and_markers_keep_their_place() -> None:
    ingest, link = _ingest()
    await ingest.put(ChunkReceived(b"x" * 25))
    await ingest.put(StreamMarked("truncated", new_file=True))
    await ingest.put(ChunkReceived(b"y" * 5))
    await ingest.put(StreamEnded())
    assert ingest.waiting == 6
    ingest.drain()
    assert link.calls == [
        "feed 10", "feed 10", "feed 5", "new run truncated", "feed 5", "finish",
    ]  # fmt: skip
    assert ingest.waiting == 0


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
    await ingest.put(ChunkReceived(b"z" * 400))
    await asyncio.wait_for(ingest.settled(), 5)
    worker.cancel()
    counter.cancel()
    assert ingest.waiting == 0
    assert len(link.calls) == 100
    assert ticks >= 50


async def test_a_slow_consumer_holds_the_producer_back_and_every_chunk_arrives_in_order() -> None:
    reader = RecordingReader()
    ingest = Ingest(reader, slice_bytes=4, capacity=3)
    sent: list[StreamItem] = [
        ChunkReceived(b"aaaaaa", 0), ChunkReceived(b"bb", 1), StreamMarked("rotated", node=1),
        ChunkReceived(b"cccc", 0), ChunkReceived(b"dddddddd", 1), StreamEnded(node=0),
    ]  # fmt: skip
    produced = 0

    async def producer() -> None:
        nonlocal produced
        for item in sent:
            await ingest.put(item)
            produced += 1

    writer = asyncio.create_task(producer())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not writer.done(), "the producer waits while the queue is full"
    assert ingest.waiting == 3
    assert produced == 2  # "aaaaaa" (as two slices) and "bb" fill it; the marker waits

    consumer = asyncio.create_task(ingest.run())
    for _ in range(3):  # the consumer takes one item per turn: the producer moves a step at most
        before = len(reader.items)
        await asyncio.sleep(0)
        assert ingest.waiting <= 3
        assert len(reader.items) <= before + 1
    await asyncio.wait_for(writer, 5)
    await asyncio.wait_for(ingest.settled(), 5)
    consumer.cancel()
    assert reader.items == [
        (0, b"aaaa"), (0, b"aa"), (1, b"bb"), (1, "rotated"), (0, b"cccc"),
        (1, b"dddd"), (1, b"dddd"), (0, "end"),
    ]  # fmt: skip


async def test_a_tail_waits_while_the_queue_is_full_and_loses_nothing(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(b"line %06d of a long backlog\n" % n for n in range(200_000)))
    reader = RecordingReader()
    ingest = Ingest(reader, capacity=4)
    session = HostSession(LocalConnector())
    posted: list[Message] = []
    source = SessionSource(session, str(log), node=2)
    tail = asyncio.create_task(source.run(posted.append, ingest.put))
    try:
        for _ in range(50):
            await asyncio.sleep(0.01)
        assert ingest.waiting == 4, "the tail waits for room, holding what it read"
        assert reader.items == []
        consumer = asyncio.create_task(ingest.run())
        size = log.stat().st_size
        for _ in range(500):
            if sum(len(d) for _, d in reader.items if isinstance(d, bytes)) == size:
                break
            await asyncio.sleep(0.01)
        consumer.cancel()
    finally:
        tail.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await tail
        await session.close()
    data = b"".join(d for _, d in reader.items if isinstance(d, bytes))
    assert data == log.read_bytes()
    assert {node for node, _ in reader.items} == {2}


async def test_the_app_hands_its_source_the_ingest_queue() -> None:
    link = FakeLink()
    script = ScriptedSource([b"[ts TP0] one\n", ChunkReceived(b"[ts TP1] two\n")], end=True)
    app = MonitorApp(link=link, source=script, target=Target())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await asyncio.wait_for(app.ingest.settled(), 5)
        assert link.fed == [b"[ts TP0] one\n", b"[ts TP1] two\n"]
        assert app.state.log.total == 2


def test_a_gap_of_unknown_size_and_a_relinked_log_are_shown_as_markers() -> None:
    gap = stream_item(Gap(None, "bytes written after byte 10 while the link was down"))
    assert gap == StreamMarked(
        "gap",
        "an unknown number of bytes could not be read "
        "(bytes written after byte 10 while the link was down)",
    )
    relinked = stream_item(StreamMarker(MarkerKind.RELINKED, "log symlink x now points to y"))
    assert isinstance(relinked, StreamMarked)
    assert relinked.text == "relinked: log symlink x now points to y"
    assert relinked.new_file
