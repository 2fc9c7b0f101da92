"""tmux's paste buffer, for text that OSC 52 cannot bring to the clipboard.

Inside tmux an application's OSC 52 sequence reaches a clipboard only under
``set -g set-clipboard on``; under tmux's default, ``external``, tmux drops it. There the text
goes into a tmux buffer instead, with ``tmux load-buffer -``: the text on standard input, never
on a command line. ``tmux`` finds the server of the pane through ``$TMUX``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from tui.engine.logs.sanitize import printable
from tui.io.transport.deadline import within

TMUX_SECONDS = 5.0
"""How long one tmux command may take before the copy is given up."""


class TmuxError(Exception):
    """tmux could not be run or refused the command; the message says why."""


def inside_tmux(env: Mapping[str, str] | None = None) -> bool:
    """Whether this process runs in a tmux pane (``$TMUX`` is set)."""
    env = os.environ if env is None else env
    return bool(env.get("TMUX"))


async def _tmux(*args: str, stdin: bytes | None = None) -> str:
    try:
        process = await asyncio.create_subprocess_exec(
            "tmux",
            *args,
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise TmuxError(f"cannot run tmux: {exc.strerror or exc}") from None
    try:
        out, err = await within(process.communicate(stdin), TMUX_SECONDS)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise TmuxError(f"tmux {args[0]} did not answer in {TMUX_SECONDS:g} s") from None
    if process.returncode != 0:
        reason = printable(err.decode("utf-8", "replace").strip(), 200) or "failed"
        raise TmuxError(f"tmux {args[0]}: {reason}")
    return out.decode("utf-8", "replace")


async def osc52_passes_tmux() -> bool:
    """Whether tmux passes an application's OSC 52 on (``set-clipboard`` is ``on``)."""
    return (await _tmux("show-options", "-gv", "set-clipboard")).strip() == "on"


async def load_tmux_buffer(text: str) -> None:
    """Put ``text`` into a new tmux paste buffer (``prefix ]`` pastes it)."""
    await _tmux("load-buffer", "-", stdin=text.encode("utf-8"))
