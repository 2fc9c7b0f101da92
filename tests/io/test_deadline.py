"""The time limit keeps a cancellation that arrives as the awaited work finishes.

(``asyncio.wait_for`` on Python 3.11 fails the first test: the poll goes on after the cancel.)
"""

from __future__ import annotations

import asyncio

import pytest

from tui.io.transport.deadline import within


async def _poll_until_cancelled(answer: asyncio.Future[int], polls: list[int]) -> None:
    polls.append(await within(answer, 5.0))
    while True:
        await asyncio.sleep(0.01)
        polls.append(0)


async def test_a_cancellation_in_the_step_the_answer_came_is_kept() -> None:
    answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    polls: list[int] = []
    task = asyncio.create_task(_poll_until_cancelled(answer, polls))
    await asyncio.sleep(0)
    answer.set_result(1)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2.0)
    assert task in done
    assert task.cancelled()
    assert polls == []


async def test_the_limit_raises_timeout_and_lets_the_answer_through() -> None:
    with pytest.raises(asyncio.TimeoutError):
        await within(asyncio.sleep(1.0), 0.01)
    assert await within(asyncio.sleep(0, result=7), 1.0) == 7
    assert await within(asyncio.sleep(0, result=8), None) == 8
