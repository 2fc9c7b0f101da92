"""``bringup demo`` in tmux, twice: each run reaches READY and benchmarks itself, and the
second run's comparison view shows both runs with deltas.

The two demos share one history file through ``BRINGUP_DATA_DIR``. tmux runs on a private
socket (see ``tests.tmux``), so nothing here touches the user's own tmux server.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tmux import Pane

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

QUIT_SECONDS = 60.0
SOCKET = f"bringup-bench-e2e-{os.getpid()}"


@pytest.fixture
def panes() -> Iterator[list[Pane]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    started: list[Pane] = []
    yield started
    if started:
        started[0].tmux("kill-server")


def _demo(panes: list[Pane], name: str, data_dir: Path, private: Path) -> Pane:
    """Start a demo and wait for its own benchmark to finish."""
    pane = Pane(SOCKET, name)
    panes.append(pane)
    env = {"BRINGUP_DATA_DIR": str(data_dir), "TMPDIR": str(private), "TERM": "tmux-256color"}
    pane.start([sys.executable, "-m", "tui", "demo", "--time-scale", "0.005"], env)
    pane.wait_for("READY")
    return pane


def _quit(pane: Pane) -> None:
    pane.tmux("send-keys", "-t", pane.name, "q")
    deadline = time.monotonic() + QUIT_SECONDS
    while time.monotonic() < deadline and pane.alive():
        time.sleep(0.2)
    assert not pane.alive(), f"{pane.name} did not quit:\n{pane.screen()}"


def test_two_demo_runs_benchmark_themselves_and_compare(tmp_path: Path, panes: list[Pane]) -> None:
    data_dir, private = tmp_path / "data", tmp_path / "tmp"
    private.mkdir()
    first = _demo(panes, "first", data_dir, private)
    screen = first.wait_for("Benchmark #1", "· done")
    assert "accept: client · server · log" in screen
    assert "c=1" in screen
    assert "c=4" in screen
    assert "4/0" in screen
    assert "saved with run #" in screen
    _quit(first)

    second = _demo(panes, "second", data_dir, private)
    second.wait_for("Benchmark #1", "· done")
    second.tmux("send-keys", "-t", second.name, "c")
    compare = second.wait_for("Runs of model", "2 runs", "TTFT ms @c=4")  # the table drawn too
    for row in ("start-up (s)", "accept length", "tok/s @c=1", "tok/s @c=4", "TTFT ms @c=4"):
        assert row in compare
    assert "base" in compare
    assert "%" in compare
    second.tmux("send-keys", "-t", second.name, "b")  # the newest run becomes the baseline
    second.wait_for("baseline #2")
    _quit(second)
