"""The health poll against a real HTTP server on loopback: refused, 503, 200, one generation."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.net import free_port, serving
from tui.app.feed.health_source import HealthSource
from tui.app.monitor.monitor_messages import HealthPolled
from tui.app.monitor.view_model import HealthReading
from tui.engine.judge.health import HealthState
from tui.io.transport.host_session import HostSession


class FakeServer:
    """An SGLang-shaped HTTP surface whose /health answer the test sets."""

    def __init__(self) -> None:
        self.health = 503
        self.generations = 0

    def app(self) -> Starlette:
        async def model_info(_: Request) -> Response:
            return JSONResponse({"model_path": "m"})

        async def health(_: Request) -> Response:
            return Response(status_code=self.health)

        async def generate(_: Request) -> Response:
            self.generations += 1
            return JSONResponse({"text": "!", "meta_info": {}})

        return Starlette(routes=[
            Route("/model_info", model_info),
            Route("/health", health),
            Route("/generate", generate, methods=["POST"]),
        ])  # fmt: skip


async def _wait_for(
    posted: list[HealthPolled], wanted: Callable[[HealthReading], bool]
) -> HealthReading:
    for _ in range(500):
        if posted and wanted(posted[-1].reading):
            return posted[-1].reading
        await asyncio.sleep(0.01)
    raise AssertionError(f"never saw the wanted reading; last: {posted[-1:]}")


async def test_refused_then_starting_then_ready_with_one_generation(session: HostSession) -> None:
    port = free_port()
    fake = FakeServer()
    posted: list[HealthPolled] = []

    def post(message: object) -> None:
        assert isinstance(message, HealthPolled)
        posted.append(message)

    poll = asyncio.create_task(HealthSource(session, port, "sglang", interval=0.02).run(post))
    try:
        await _wait_for(posted, lambda r: r.state is HealthState.REFUSED)
        async with serving(fake.app(), port):
            starting = await _wait_for(posted, lambda r: r.state is HealthState.STARTING)
            assert (starting.status, starting.generation_ok) == (503, None)
            fake.health = 200
            ready = await _wait_for(posted, lambda r: r.generation_ok is True)
            assert (ready.state, ready.status) == (HealthState.READY, 200)
            assert ready.latency_ms is not None
            await asyncio.sleep(0.1)
            assert fake.generations == 1
    finally:
        poll.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poll
