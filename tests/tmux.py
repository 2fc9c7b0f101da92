"""The real app in a real terminal: a tmux pane on a private tmux server (never the user's own
server), and the checks that nothing a test started is left running."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

WAIT_SECONDS = 180.0
QUIT_SECONDS = 60.0


class Pane:
    """One tmux session, 160x48, on a private server, running one command."""

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


@contextlib.contextmanager
def private_pane(prefix: str, name: str) -> Iterator[Pane]:
    """A pane on a tmux server of its own, killed on the way out (skips without tmux)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    pane = Pane(f"{prefix}-{os.getpid()}", name)
    try:
        yield pane
    finally:
        pane.tmux("kill-server")


def processes_mentioning(text: str) -> list[str]:
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


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
