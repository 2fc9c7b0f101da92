"""The health poll tells a refused port, a warming-up server and a ready one apart."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.engine_helpers import run_text
from tests.net import free_port
from tui.engine.judge.health import HealthState
from tui.engine.startup.vocabulary import Stage
from tui.io.health.health_poll import (
    HealthChanged,
    HealthOptions,
    HealthPoller,
    check_health,
    generate_one_token,
)


async def _nowhere() -> str:
    return "http://127.0.0.1:1"


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    command = [sys.executable, "-m", "tui.sim", "--port", str(port), "--time-scale", "0.002"]
    command += ["--log-file", str(tmp_path / "server.log")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield port
    process.kill()
    process.wait()


async def test_a_start_goes_from_refused_to_ready(sim: int) -> None:
    async def url() -> str:
        return f"http://127.0.0.1:{sim}"

    seen: list[HealthChanged] = []
    poller = HealthPoller(url, HealthOptions(interval=0.05))
    async for change in poller.changes():
        seen.append(change)
        if change.ready or len(seen) > 50:
            break
    states = [change.state for change in seen]
    assert states[0] is HealthState.REFUSED
    assert states[-1] is HealthState.READY
    assert seen[-1].status == 200
    assert seen[-1].latency_ms is not None
    assert seen[-1].generation_ms is not None
    assert states.index(HealthState.REFUSED) < states.index(HealthState.READY)


async def test_the_monitors_requests_are_marked_in_the_servers_log(
    sim: int, tmp_path: Path
) -> None:
    async def url() -> str:
        return f"http://127.0.0.1:{sim}"

    poller = HealthPoller(url, HealthOptions(interval=0.05))
    async for change in poller.changes():
        if change.ready:
            break
    async with poller.pool() as pool:
        for _ in range(3):
            assert (await poller.poll(pool)).ready
    text = (tmp_path / "server.log").read_text()
    assert '"GET /health?from=bringup HTTP/1.1" 200' in text
    assert '"POST /generate?from=bringup HTTP/1.1" 200' in text
    snapshot, _ = run_text(text)
    assert snapshot.ready_line_seen
    assert snapshot.last_stage is Stage.READY, "the polls and the probe are not serving"
    theirs = [line for line in text.splitlines() if '- "' in line and "from=bringup" not in line]
    assert snapshot.requests == len(theirs), "only the server's own warm-up requests count"


async def test_a_closed_port_is_refused_and_a_missing_route_is_not_ready() -> None:
    async with HealthPoller(_nowhere).pool() as pool:
        closed = await check_health(pool, f"http://127.0.0.1:{free_port()}", timeout=2)
        assert closed.state is HealthState.REFUSED
        assert closed.detail == "ConnectError"
        ok, _, why = await generate_one_token(pool, f"http://127.0.0.1:{free_port()}", "sglang", 2)
        assert not ok
        assert why == "generation failed: ConnectError"


async def test_a_lost_link_is_its_own_state() -> None:
    async def url() -> str:
        raise OSError("no route to host")

    poller = HealthPoller(url)
    async with poller.pool() as pool:
        result = await poller.poll(pool)
    assert result.state is HealthState.NO_LINK
    assert "no route" in result.detail


async def test_once_ready_the_poll_waits_its_serving_interval(sim: int, tmp_path: Path) -> None:
    async def url() -> str:
        return f"http://127.0.0.1:{sim}"

    log = tmp_path / "server.log"
    poller = HealthPoller(url, HealthOptions(interval=0.05, serving_interval=3600.0))
    changes = poller.changes()
    async for change in changes:
        if change.ready:
            break
    polls_at_ready = log.read_text().count("GET /health")
    assert polls_at_ready > 1, "the start-up was polled at the start-up pace"
    pending = asyncio.ensure_future(changes.__anext__())
    await asyncio.sleep(1.0)  # twenty start-up intervals
    assert log.read_text().count("GET /health") == polls_at_ready
    pending.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await pending
    await changes.aclose()


def test_the_poll_is_fast_again_from_the_first_result_that_is_not_ready() -> None:
    poller = HealthPoller(_nowhere, HealthOptions(interval=1.0, serving_interval=10.0))
    ready = HealthChanged(HealthState.READY, 200, 1.0, "", 5.0)
    assert poller.pause_after(ready) == 10.0
    for state in (HealthState.STARTING, HealthState.UNHEALTHY, HealthState.REFUSED):
        assert poller.pause_after(HealthChanged(state, 503, 1.0)) == 1.0
