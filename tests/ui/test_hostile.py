"""Hostile log text reaches the screen as text: no markup is parsed, no escape is executed.

The app runs under a real pseudo-terminal; every byte it writes is captured and searched for
the sequences the log tried to inject.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import time

import pytest

from tests.conftest import REPO
from tests.ui.startup_log import hostile_bytes
from tui.app.feed.engine_link import EngineAdapter
from tui.app.feed.feed_sources import ScriptedSource
from tui.app.monitor.monitor_app import MonitorApp
from tui.app.monitor.view_model import Target
from tui.app.widgets.rank_panel import RankPanel

DEADLINE_SECONDS = 60.0
LAST_LINE = b"[2026-01-01 10:00:30 TP0] [@click=app.quit]x[/]\n"


def run_in_pty(kind: str, size: tuple[int, int] = (120, 40)) -> bytes:
    """Every byte the app writes to its terminal while showing ``kind`` log text."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.hostile_run", kind],
        stdin=slave, stdout=slave, stderr=slave, cwd=REPO, env=env, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
    return bytes(output)


@pytest.fixture(scope="module")
def captured() -> tuple[bytes, bytes]:
    return run_in_pty("benign"), run_in_pty("hostile")


@pytest.mark.parametrize(
    "injected",
    [b"\x1b]52;", b"\x1b]0;", b"\x1b]8;", b"PWNED-TITLE", b"cHduZWQ=", b"evil.example",
     b"\xc2\x9b", b"\x9b2J", b"\x00"],
)  # fmt: skip
def test_no_injected_sequence_reaches_the_terminal(
    captured: tuple[bytes, bytes], injected: bytes
) -> None:
    benign, hostile = captured
    assert hostile.count(injected) == benign.count(injected) == 0


def test_screen_clears_are_only_the_apps_own(captured: tuple[bytes, bytes]) -> None:
    benign, hostile = captured
    assert hostile.count(b"\x1b[2J") == benign.count(b"\x1b[2J")


def test_markup_lookalikes_are_drawn_literally(captured: tuple[bytes, bytes]) -> None:
    _, hostile = captured
    assert b"[@click=app.quit]x[/]" in hostile
    assert b"[/tmp/x] path in brackets" in hostile
    assert b"[rank0]: NCCL says hello" in hostile


async def test_the_last_line_panel_shows_markup_literally() -> None:
    app = MonitorApp(
        link=EngineAdapter(),
        source=ScriptedSource([hostile_bytes("TP0"), LAST_LINE]),
        target=Target("hostile", "host"),
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        app.state.touch()
        app.flush()
        await pilot.pause()
        panels = list(app.query(RankPanel))
        assert panels
        assert "[@click=app.quit]x[/]" in panels[0].render_text()
        assert app.is_running
