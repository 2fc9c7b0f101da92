"""``bringup demo --scenario accept-collapse`` in tmux: once READY the serving view shows the
engine's figures from ``/metrics``, and when the accept length collapses during a benchmark
the alarm appears on screen, naming its figure, window and threshold."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.tmux import private_pane

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def test_the_collapse_alarm_appears_in_the_app(tmp_path: Path) -> None:
    private = tmp_path / "tmp"
    private.mkdir()
    env = {"BRINGUP_DATA_DIR": str(tmp_path / "data"), "TMPDIR": str(private),
           "TERM": "tmux-256color", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # fmt: skip
    argv = [sys.executable, "-m", "tui", "demo", "--time-scale", "0.005",
            "--scenario", "accept-collapse"]  # fmt: skip
    with private_pane("bringup-serving", "serving") as pane:
        pane.start(argv, env)
        pane.wait_for("READY")
        pane.wait_for("serving", "tok/s", "accept 2.")
        pane.wait_for("Benchmark #1", "· done")
        time.sleep(1.0)
        pane.tmux("send-keys", "-t", pane.name, "b")
        screen = pane.wait_for("⚠ accept length 1.00 over the last", timeout=60)
        assert "below the floor 1.5" in screen
        pane.tmux("send-keys", "-t", pane.name, "q")
