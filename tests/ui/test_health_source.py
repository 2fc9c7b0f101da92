"""The health poll against a real HTTP server on loopback: refused, 503, 200, one generation."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tui.app.health_source import HealthSource
from tui.app.messages import HealthChanged
from tui.app.model import HealthKind
from tui.io.session import HostSession, LocalConnector


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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def session() -> AsyncIterator[HostSession]:
    host = HostSession(LocalConnector())
    await host.start()
    yield host
    await host.close()


async def _serve(fake: FakeServer, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    config = uvicorn.Config(fake.app(), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(200):
        if server.started:
            break
        await asyncio.sleep(0.02)
    return server, task


async def test_refused_then_starting_then_ready_with_one_generation(session: HostSession) -> None:
    port = _free_port()
    fake = FakeServer()
    poller = HealthSource(session, port, "sglang")
    async with httpx.AsyncClient(timeout=5) as client:
        assert (await poller._poll(client)).kind is HealthKind.REFUSED
        server, task = await _serve(fake, port)
        try:
            starting = await poller._poll(client)
            assert (starting.kind, starting.status) == (HealthKind.STARTING, 503)
            assert starting.generation_ok is None
            fake.health = 200
            ready = await poller._poll(client)
            assert (ready.kind, ready.status, ready.generation_ok) == (HealthKind.OK, 200, True)
            assert ready.latency_ms is not None
            again = await poller._poll(client)
            assert again.generation_ok is True
            assert fake.generations == 1
        finally:
            server.should_exit = True
            await task


async def test_run_posts_health_messages(session: HostSession) -> None:
    poller = HealthSource(session, _free_port(), "sglang", interval=0.01)
    posted: list[HealthChanged] = []

    def post(message: object) -> None:
        assert isinstance(message, HealthChanged)
        posted.append(message)

    task = asyncio.create_task(poller.run(post))
    for _ in range(200):
        if len(posted) >= 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert posted
    assert posted[0].reading.kind is HealthKind.REFUSED
