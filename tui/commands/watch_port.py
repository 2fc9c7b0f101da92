"""The health port ``bringup watch`` polls when none is given: the engine's default.

A named engine (``--engine``, the profile's) gives its dialect's ``default_port``; with
``auto`` the first 64 KiB of the log are read once (over the host's connection, or here) and
the engine they show decides (SGLang 30000, vLLM 8000). A log that is not there yet, or names
no engine, leaves the default engine's port.
"""

from __future__ import annotations

import asyncio
import contextlib

from tui.engine.logs.log_engine import LogEngine
from tui.engine.servers import registry
from tui.io.transport.deadline import within
from tui.io.transport.host_session import HostSession, SessionClosed
from tui.io.transport.ssh import ConnectError
from tui.io.transport.transport import LinkLost

HEAD_BYTES = 65536
SNIFF_SECONDS = 15.0


def detected_engine(head: bytes) -> str | None:
    """The engine the start of a log shows, or None."""
    engine = LogEngine(engine=registry.AUTO).feed(head).snapshot.server.engine
    return engine if registry.find(engine) is not None else None


async def log_engine(session: HostSession, path: str) -> str | None:
    """The engine named by the start of the log at ``path``; None when it cannot be read."""
    with contextlib.suppress(ConnectError, SessionClosed, LinkLost, OSError, asyncio.TimeoutError):
        await within(session.start(), SNIFF_SECONDS)
        result = await session.run(
            ["head", "-c", str(HEAD_BYTES), "--", path], timeout=SNIFF_SECONDS
        )
        return detected_engine(result.stdout) if result.ok else None
    return None


async def default_port(
    session: HostSession, path: str, engine: str, *, close: bool = True
) -> tuple[int, str]:
    """The port to poll and the engine it is the default of (``session`` is closed after,
    unless ``close`` is false: the monitor goes on with it)."""
    try:
        named = registry.find(engine)
        seen = named.name if named is not None else await log_engine(session, path)
    finally:
        if close:
            await session.close()
    dialect = registry.or_default(seen)
    return dialect.default_port, dialect.name
