"""Running the app so that every way of leaving it (q, Ctrl-C, the terminal closing, SIGTERM)
goes through the same clean exit, and whatever was started gets stopped afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

from textual.app import App

EXIT_SIGNALS = (signal.SIGHUP, signal.SIGTERM)


@contextlib.contextmanager
def exit_on_signals(app: App[int], loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While inside, SIGHUP and SIGTERM ask ``app`` to exit instead of killing the process."""
    installed = []
    for number in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, app.exit)
            installed.append(number)
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


async def run_app(app: App[int]) -> int:
    """Run ``app`` on the current loop; return its exit code (0 when it gave none)."""
    loop = asyncio.get_running_loop()
    with exit_on_signals(app, loop):
        code = await app.run_async()
    return int(code or 0)
