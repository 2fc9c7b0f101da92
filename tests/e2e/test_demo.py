"""``bringup demo`` in a real tmux pane: a start reaches READY, a failure scenario shows FAILED
with its excerpt, and after ``q`` nothing the demo started is left: no process, no temp file.

Each demo runs with a private ``TMPDIR``; every file and folder it makes (the SSH server's keys,
the simulated server's log and pid file) lives there, and every process it starts carries that
path on its command line, so both are easy to check after quitting. tmux runs on a private
socket and never touches the user's own server.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tmux import QUIT_SECONDS, WAIT_SECONDS, Pane, gone, private_pane, processes_mentioning

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[Pane, Path]]:
    private = tmp_path / "tmp"
    private.mkdir()
    with private_pane("bringup-e2e", "demo") as pane:
        yield pane, private


def _run_demo(pane: Pane, private: Path, *extra: str) -> int:
    data = private.parent / "data"
    env = {"TMPDIR": str(private), "TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(data)}
    pane.start([sys.executable, "-m", "tui", "demo", *extra], env)
    return pane.pid()


def _quit_and_check_clean(pane: Pane, private: Path, pid: int, close: bool = False) -> None:
    demo_dirs = [p for p in private.iterdir() if p.name.startswith("bringup-demo-")]
    assert demo_dirs, "the demo made its folder under TMPDIR"
    assert processes_mentioning(str(demo_dirs[0])), "the simulated server runs from it"
    if close:
        pane.tmux("kill-session", "-t", pane.name)  # the terminal goes away: SIGHUP
    else:
        pane.tmux("send-keys", "-t", pane.name, "q")
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.2)
    assert gone(pid), "the demo exited after q"
    assert processes_mentioning(str(private)) == []
    assert [p.name for p in private.iterdir()] == [], "every temporary file was removed"


def test_demo_reaches_ready_and_leaves_nothing_behind(demo: tuple[Pane, Path]) -> None:
    pane, private = demo
    pid = _run_demo(pane, private)
    pane.wait_for("STARTING")
    screen = pane.wait_for("READY", "generation ok")
    assert "TP7" in screen
    assert "EAGLE3" in screen
    _quit_and_check_clean(pane, private, pid)


def test_a_failure_scenario_shows_failed_with_its_excerpt(demo: tuple[Pane, Path]) -> None:
    pane, private = demo
    pid = _run_demo(pane, private, "--scenario", "oom-kv-cache")
    screen = pane.wait_for("FAILED", "out of memory")
    assert "✖ FAILED ·" in screen
    _quit_and_check_clean(pane, private, pid)


def test_closing_the_terminal_also_cleans_up(demo: tuple[Pane, Path]) -> None:
    pane, private = demo
    pid = _run_demo(pane, private)
    pane.wait_for("STARTING", "TP7")
    _quit_and_check_clean(pane, private, pid, close=True)


def test_closing_the_terminal_while_the_demo_starts_cleans_up(demo: tuple[Pane, Path]) -> None:
    pane, private = demo
    pid = _run_demo(pane, private)
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline and not list(private.glob("bringup-demo-*")):
        time.sleep(0.05)
    pane.tmux("kill-session", "-t", pane.name)
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.2)
    assert gone(pid)
    assert processes_mentioning(str(private)) == []
    assert [p.name for p in private.iterdir()] == []


def test_q_while_ready_gives_the_prompt_back_and_leaves_nothing(demo: tuple[Pane, Path]) -> None:
    pane, private = demo
    data = private.parent / "data"
    prompt = "demo-shell$"  # the pane's capture drops the space after it
    env = {"TMPDIR": str(private), "TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(data),
           "PS1": prompt + " ", "ENV": ""}  # fmt: skip
    pane.start(["sh", "-i"], env)
    pane.wait_for(prompt)
    command = subprocess.list2cmdline([sys.executable, "-m", "tui", "demo"])
    pane.tmux("send-keys", "-t", pane.name, command, "Enter")
    pane.wait_for("READY", "generation ok")
    assert processes_mentioning(str(private)), "the simulated server runs"
    pane.tmux("send-keys", "-t", pane.name, "q")
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and pane.screen().count(prompt) < 2:
        time.sleep(0.1)
    assert pane.screen().count(prompt) >= 2, f"no prompt after q:\n{pane.screen()}"
    while time.monotonic() < deadline and _demo_processes(private):
        time.sleep(0.1)
    assert _demo_processes(private) == [], "no process of the demo is left"
    assert [p.name for p in private.iterdir()] == [], "every temporary file was removed"


def _demo_processes(private: Path) -> list[str]:
    """Processes naming the demo's TMPDIR, but tmux's own (its command line holds the pane's)."""
    return [
        line
        for line in processes_mentioning(str(private))
        if not line.split(": ", 1)[1].startswith("tmux ")
    ]
