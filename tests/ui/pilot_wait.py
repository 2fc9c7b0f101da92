"""Waiting in a pilot test: pause the app until what the test waits for has happened."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

TIMEOUT = 90.0
"""How long a wait may take before the test fails: a bound for a busy machine, never a figure
the test checks."""


async def until(
    pilot: Pilot[Any],
    condition: Callable[[], bool],
    what: str = "the condition",
    *,
    timeout: float = TIMEOUT,
) -> None:
    """Pause ``pilot``'s app until ``condition()`` holds; fail naming ``what`` after
    ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"never happened: {what}"
        await pilot.pause(0.02)
