"""A growing log streamed over a real SSH server arrives byte for byte, across dropped links.

The default run is sized to take a few seconds; ``BRINGUP_STREAM_SECONDS`` lengthens the
100,000 lines/s run (``bench/stream.py`` measures speed; these tests check only content).
"""

from __future__ import annotations

import asyncio
import os
import random
import tracemalloc
from pathlib import Path

from tests.io.helpers import collecting, eventually, sha256, start_writer
from tests.sshd import TestServer
from tui.io.tail.log_tail import TailOptions
from tui.io.transport.host_session import HostSession
from tui.io.transport.link_events import ConnectionEvent, ConnectionLost, MarkerKind, Reconnected

SECONDS = float(os.environ.get("BRINGUP_STREAM_SECONDS", "2"))
FAST = TailOptions(probe_interval=0.3, wait_interval=0.1)


async def test_a_log_written_at_100k_lines_per_second_arrives_intact(
    session: HostSession, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.touch()
    writer = start_writer(log, 100_000, SECONDS)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        await asyncio.to_thread(writer.wait)
        size = log.stat().st_size
        await eventually(lambda: len(got.current) >= size, timeout=60 + SECONDS * 10)
    assert sha256(got.current) == sha256(log.read_bytes())
    assert got.offsets_ok
    assert got.markers == []
    assert int(writer.stdout.read() if writer.stdout else 0) >= 100_000 * SECONDS * 0.5


async def test_twenty_dropped_connections_lose_and_repeat_nothing(
    session: HostSession, ssh_server: TestServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    log.touch()
    events: list[ConnectionEvent] = []
    session.on_event(events.append)
    writer = start_writer(log, 20_000, 60)
    rng = random.Random(1234)
    async with collecting(session.tail(str(log), options=FAST)) as got:
        for drop in range(20):
            await asyncio.sleep(rng.uniform(0.02, 0.25))
            await eventually(lambda: session.connected and ssh_server.has_connections())
            assert ssh_server.drop_connections() >= 1, f"drop {drop} found no connection"
        await eventually(lambda: sum(isinstance(e, Reconnected) for e in events) >= 20, 120)
        writer.terminate()
        await asyncio.to_thread(writer.wait)
        size = log.stat().st_size
        await eventually(lambda: len(got.current) >= size, 120, state=got)
    assert sha256(got.current) == sha256(log.read_bytes())
    assert got.offsets_ok
    assert set(got.kinds) <= {MarkerKind.RESUMED}
    assert sum(isinstance(e, ConnectionLost) for e in events) >= 20


async def test_a_slow_reader_keeps_memory_bounded(session: HostSession) -> None:
    total = 48 * 1024 * 1024
    transport = await session.transport()
    stream = await transport.open_stream(["head", "-c", str(total), "/dev/zero"])
    tracemalloc.start()
    received = 0
    try:
        while chunk := await stream.read():
            received += len(chunk)
            await asyncio.sleep(0.002)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        await stream.close()
    assert received == total
    assert peak < 16 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB while reading slowly"
