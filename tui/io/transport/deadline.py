"""A time limit on one awaitable that never loses a cancellation.

Before Python 3.12, ``asyncio.wait_for`` returns the awaited result and drops the cancellation
when its caller is cancelled in the same loop step as the awaited task finishes (CPython issue
86296): a polling loop cancelled at that moment goes on polling for ever. ``asyncio.timeout``
(3.11) and ``async_timeout`` (its backport for 3.10) cancel through the caller's own task and
count cancellations, so one from outside always arrives.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from typing import TypeVar

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:
    from async_timeout import timeout  # type: ignore[import-not-found, no-redef, unused-ignore]

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """Await ``awaitable``; ``asyncio.TimeoutError`` after ``seconds`` (None waits for ever)."""
    async with timeout(seconds):
        return await awaitable
