"""``y`` (copy the failure excerpt) in a real tmux pane: OSC 52 where tmux passes it on (the
README's tmux block), tmux's paste buffer where it does not (tmux's default
``set-clipboard external``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.net import free_port
from tests.tmux import Pane, private_pane
from tests.ui.startup_log import oom_failure

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
EXCERPT = "CUDA out of memory"


@pytest.fixture
def pane() -> Iterator[Pane]:
    with private_pane("bringup-clipboard", "watch") as made:
        yield made


def _readme_tmux_block() -> str:
    text = (REPO / "README.md").read_text()
    return text.split("```tmux\n", 1)[1].split("```", 1)[0]


def _watch_failed_log(pane: Pane, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(oom_failure())
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    argv = [sys.executable, "-m", "tui", "watch", "--local", "--log", str(log)]
    pane.start([*argv, "--port", str(free_port())], env)
    pane.wait_for("FAILED")


def _buffer(pane: Pane, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = pane.tmux("show-buffer")
        if shown.returncode == 0 and shown.stdout:
            return shown.stdout
        time.sleep(0.2)
    raise AssertionError(f"no tmux buffer; the pane showed:\n{pane.screen()}")


def _told(pane: Pane, text: str, timeout: float = 30.0) -> str:
    """The pane's words (box drawing left out, lines joined) once they hold ``text``."""
    deadline = time.monotonic() + timeout
    while True:
        words = " ".join(word for word in pane.screen().split() if word.isascii())
        if text in words:
            return words
        assert time.monotonic() < deadline, f"{text!r} never shown:\n{pane.screen()}"
        time.sleep(0.2)


def test_y_under_set_clipboard_external_fills_a_tmux_buffer(pane: Pane, tmp_path: Path) -> None:
    _watch_failed_log(pane, tmp_path)
    assert pane.tmux("set-option", "-g", "set-clipboard", "external").returncode == 0
    assert pane.tmux("show-buffer").returncode != 0, "no buffer before the copy"
    pane.tmux("send-keys", "-t", pane.name, "y")
    assert EXCERPT in _buffer(pane)
    told = _told(pane, "copied to tmux buffer")
    assert "set -g set-clipboard on for the system clipboard" in told
    pane.tmux("send-keys", "-t", pane.name, "q")


def test_the_readme_tmux_block_lets_osc52_through(pane: Pane, tmp_path: Path) -> None:
    _watch_failed_log(pane, tmp_path)
    settings = tmp_path / "tmux.conf"
    settings.write_text(_readme_tmux_block())
    sourced = pane.tmux("source-file", str(settings))
    assert sourced.returncode == 0, sourced.stderr
    assert pane.tmux("show-options", "-gv", "set-clipboard").stdout.strip() == "on"
    pane.tmux("send-keys", "-t", pane.name, "y")
    assert EXCERPT in _buffer(pane), "tmux took the OSC 52 sequence into a buffer"
    assert "copied to tmux buffer" not in _told(pane, "failure excerpt copied to the clipboard")
    pane.tmux("send-keys", "-t", pane.name, "q")
