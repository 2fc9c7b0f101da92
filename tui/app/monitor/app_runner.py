"""Running the app so that every way of leaving it (q, Ctrl-C, the terminal closing, SIGTERM)
goes through the same clean exit, and whatever was started gets stopped afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterator

from textual.app import App

EXIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM)


def _nothing() -> None:
    return None


class ExitGuard:
    """What SIGHUP and SIGTERM do. SIGTERM asks a running app to exit; before the app runs (or
    after), it cancels the main task so that every ``async with`` on the way out cleans up.
    SIGHUP means the terminal is gone: nothing can be drawn or restored any more, so the
    ``on_hangup`` clean-up runs at once and the process ends. Only the first signal counts."""

    def __init__(self, task: asyncio.Task[object] | None) -> None:
        self.task = task
        self.app: App[int] | None = None
        self.fired: int | None = None
        self.on_hangup: Callable[[], None] = _nothing

    def __call__(self, number: int) -> None:
        if self.fired is not None:
            return
        self.fired = number
        if number == signal.SIGHUP:
            self.on_hangup()
            os._exit(128 + number)
        if self.app is not None and self.app.is_running:
            self.app.exit()
        elif self.task is not None:
            self.task.cancel()


@contextlib.contextmanager
def exit_guard() -> Iterator[ExitGuard]:
    """Route SIGHUP and SIGTERM through an ``ExitGuard`` while inside (on the running loop).

    Once the clean-up inside is done, a signal that fired is delivered again with its default
    action, so the process ends the way its parent asked: a closed terminal leaves nothing
    waiting on it."""
    loop = asyncio.get_running_loop()
    guard = ExitGuard(asyncio.current_task())
    installed = []
    for number in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, guard, number)
            installed.append(number)
    try:
        yield guard
    finally:
        for number in installed:
            loop.remove_signal_handler(number)
        if guard.fired is not None:
            signal.signal(guard.fired, signal.SIG_DFL)
            os.kill(os.getpid(), guard.fired)


async def run_app(app: App[int], guard: ExitGuard | None = None) -> int:
    """Run ``app`` on the current loop; return its exit code (0 when it gave none). Without a
    ``guard`` from the caller, the signals are routed to the app only while it runs."""
    if guard is not None:
        guard.app = app
        return int(await app.run_async() or 0)
    with exit_guard() as own:
        own.app = app
        return int(await app.run_async() or 0)
