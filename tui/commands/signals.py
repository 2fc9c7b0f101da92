"""SIGINT and SIGTERM for the headless commands: the documented status, no traceback.

SIGTERM is turned into the SIGINT a Ctrl-C sends, so both take the same way out: asyncio's own
handler cancels the running command (its ``finally`` blocks close connections and forwards),
``KeyboardInterrupt`` reaches ``tui.cli``, and the status says which signal it was. The
monitor (``watch``, ``demo``) handles its own signals and is left alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from tui.commands.exit_codes import ExitStatus

HEADLESS = frozenset(
    {"init", "replay", "history", "bench", "stats", "runs", "launch", "kill", "restart", "wait"}
)
"""The commands without a screen, whose signals ``tui.cli`` turns into an exit status."""

_received: list[int] = []


def _forward_term(number: int, frame: FrameType | None) -> None:
    _received.append(number)
    os.kill(os.getpid(), signal.SIGINT)


@contextlib.contextmanager
def terminate_as_interrupt(enabled: bool) -> Iterator[None]:
    """While inside, SIGTERM ends the command as SIGINT does (when ``enabled``)."""
    _received.clear()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _forward_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def ended_by_signal() -> int:
    """The status of a command a signal ended: 143 for SIGTERM, 130 for SIGINT."""
    if signal.SIGTERM in _received:
        return ExitStatus.TERMINATED
    return ExitStatus.INTERRUPTED
