"""``bringup demo`` in a real tmux pane: a start reaches READY, a failure scenario shows FAILED
with its excerpt, and after ``q`` nothing the demo started is left: no process, no temp file.

Each demo runs with a private ``TMPDIR``; every file and folder it makes (the SSH server's keys,
the simulated server's log and pid file) lives there, and every process it starts carries that
path on its command line, so both are easy to check after quitting. tmux runs on a private
socket and never touches the user's own server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

WAIT_SECONDS = 180.0
QUIT_SECONDS = 60.0


class Pane:
    """One tmux session on a private server, running one command."""

    def __init__(self, socket: str, name: str) -> None:
        self.socket = socket
        self.name = name

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )

    def start(self, argv: list[str], env: dict[str, str]) -> None:
        assignments = [f"{key}={value}" for key, value in env.items()]
        command = ["env", "-u", "COLUMNS", "-u", "LINES", *assignments, *argv]
        result = self.tmux(
            "new-session", "-d", "-s", self.name, "-x", "160", "-y", "48", "-c", str(REPO),
            subprocess.list2cmdline(command),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr

    def pid(self) -> int:
        return int(self.tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").stdout)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name).stdout

    def wait_for(self, *texts: str, timeout: float = WAIT_SECONDS) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.5)
        raise AssertionError(f"{texts} never appeared; the pane showed:\n{screen}")

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", self.name).returncode == 0


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of running processes that contain ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            cmdline = raw.replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[Pane, Path]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    private = tmp_path / "tmp"
    private.mkdir()
    pane = Pane(f"bringup-e2e-{os.getpid()}", "demo")
    yield pane, private
    pane.tmux("kill-server")


def _run_demo(pane: Pane, private: Path, *extra: str) -> int:
    data = private.parent / "data"
    env = {"TMPDIR": str(private), "TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(data)}
    pane.start([sys.executable, "-m", "tui", "demo", *extra], env)
    return pane.pid()


def _quit_and_check_clean(pane: Pane, private: Path, pid: int, close: bool = False) -> None:
    demo_dirs = [p for p in private.iterdir() if p.name.startswith("bringup-demo-")]
    assert demo_dirs, "the demo made its folder under TMPDIR"
    assert _processes_mentioning(str(demo_dirs[0])), "the simulated server runs from it"
    if close:
        pane.tmux("kill-session", "-t", pane.name)  # the terminal goes away: SIGHUP
    else:
        pane.tmux("send-keys", "-t", pane.name, "q")
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and not _gone(pid):
        time.sleep(0.2)
    assert _gone(pid), "the demo exited after q"
    assert _processes_mentioning(str(private)) == []
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
    while time.monotonic() < deadline and not _gone(pid):
        time.sleep(0.2)
    assert _gone(pid)
    assert _processes_mentioning(str(private)) == []
    assert [p.name for p in private.iterdir()] == []
