"""Loopback helpers for tests: a free port, and an ASGI app served on it in this event loop."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import uvicorn
from starlette.types import ASGIApp

STOP_GRACE_SECONDS = 2
"""How long a stopping test server waits for open connections before closing them."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, port: int | None = None) -> AsyncIterator[int]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yields the port once it listens.

    A client that keeps a connection alive (a poll) cannot hold the stop up: open connections
    get ``STOP_GRACE_SECONDS`` and are then closed.
    """
    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="error", lifespan="off",
        timeout_graceful_shutdown=STOP_GRACE_SECONDS,
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError(f"the test server on port {port} stopped before listening")
            await asyncio.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        await task
