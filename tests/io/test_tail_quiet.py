"""A quiet log is checked less often; the first byte that arrives brings the usual pace back."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from tests.io.helpers import Collected, eventually
from tui.engine.servers.monitor_traffic import monitor_path
from tui.io.tail import tail_probe
from tui.io.tail.log_tail import LogTail, TailOptions
from tui.io.transport.local import LocalTransport

LINE = b"[2025-01-01 00:00:00 TP0] Decode batch, #running-req: 1\n"


def _counted_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one with each check of the file (the real checks still run)."""
    asks: list[int] = []
    ask = tail_probe.Prober.ask

    async def counted(self: tail_probe.Prober, *args: int) -> object:
        asks.append(1)
        return await ask(self, *args)

    monkeypatch.setattr(tail_probe.Prober, "ask", counted)
    return asks


async def test_checks_slow_down_on_a_quiet_log_and_resume_with_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asks = _counted_checks(monkeypatch)
    log = tmp_path / "server.log"
    log.write_bytes(LINE)
    options = TailOptions(probe_interval=0.05, quiet_checks=3, quiet_probe_factor=1000.0)
    got = Collected()

    async def consume() -> None:
        async for item in LogTail(str(log), options=options).follow(LocalTransport()):
            got.add(item)

    task = asyncio.create_task(consume())
    try:
        await eventually(lambda: got.current == LINE, state=got)
        await eventually(lambda: len(asks) >= 3, state=got)
        await asyncio.sleep(1.0)  # twenty intervals of the usual pace
        assert len(asks) <= 4, "a quiet log is checked at the quiet pace"
        with log.open("ab") as handle:
            handle.write(LINE)
        await eventually(lambda: got.current == LINE * 2, state=got)
        await eventually(lambda: len(asks) >= 6, state=got)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


HEALTH = f'INFO:     127.0.0.1:5 - "GET {monitor_path("/health")} HTTP/1.1" 200 OK\n'.encode()
PROBE_PREFILL = (
    b"[2025-01-01 00:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, "
    b"token usage: 0.00, #running-req: 0, #queue-req: 0\n"
)
"""What SGLang logs for a health check: ``/health`` runs a one-token generation."""


@pytest.mark.parametrize(
    "own",
    [
        pytest.param(
            f'INFO:     127.0.0.1:5 - "GET {monitor_path("/metrics")} HTTP/1.1" 200 OK\n'.encode(),
            id="scrape",
        ),
        pytest.param(HEALTH + PROBE_PREFILL, id="health-with-prefill"),
        pytest.param(PROBE_PREFILL, id="prefill-alone"),
    ],
)
async def test_the_monitors_own_lines_leave_the_log_quiet(
    own: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serving engine logs every scrape and health poll of the monitor (and SGLang the
    prefill of each health check); those lines alone do not bring the usual pace back (a line
    of the server's own does)."""
    asks = _counted_checks(monkeypatch)
    log = tmp_path / "server.log"
    log.write_bytes(LINE)
    options = TailOptions(probe_interval=0.05, quiet_checks=3, quiet_probe_factor=1000.0)
    got = Collected()

    async def consume() -> None:
        async for item in LogTail(str(log), options=options).follow(LocalTransport()):
            got.add(item)

    task = asyncio.create_task(consume())
    try:
        await eventually(lambda: len(asks) >= 3, state=got)
        for count in range(1, 6):
            with log.open("ab") as handle:
                handle.write(own)
            await eventually(lambda n=count: got.current == LINE + own * n, state=got)  # type: ignore[misc]
        await asyncio.sleep(0.5)
        assert len(asks) <= 4, "the monitor's own lines keep the quiet pace"
        with log.open("ab") as handle:
            handle.write(LINE)
        await eventually(lambda: len(asks) >= 6, state=got)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
