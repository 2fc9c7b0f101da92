"""``bringup demo --scenario accept-collapse`` in tmux: once READY the serving view shows the
engine's figures from ``/metrics``, and when the accept length collapses during a benchmark
the alarm appears on screen within two scrape intervals of the change (the simulator logs when
it changed, on the Unix clock), naming its figure, window and threshold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tmux import Pane, private_pane
from tui.config import ServingConfig
from tui.sim.stats import COLLAPSE_LINE

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

INTERVAL_S = ServingConfig().interval
"""The scrape interval the demo's monitor uses."""
POLL_S = 0.1
"""How often the screen is read while the alarm is awaited (the bound allows one read's gap)."""


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
        time.sleep(12.0)  # the demo's accept length collapses 15 s after its first request
        pane.tmux("send-keys", "-t", pane.name, "b")
        screen, seen = _first_seen(pane, "⚠ accept length")
        collapsed = _collapsed_at(private)
        assert 0 < seen - collapsed <= 2 * INTERVAL_S + POLL_S, (seen - collapsed, screen)
        screen = pane.wait_for("⚠ accept length 1.", "below the floor 1.5", timeout=60)
        assert "over the last " in screen
        pane.wait_for("Benchmark #2", "· done")
        pane.tmux("send-keys", "-t", pane.name, "c")
        compare = pane.wait_for("Runs of model", "accept /metrics")
        assert "accept /metrics" in compare
        pane.tmux("send-keys", "-t", pane.name, "escape")
        pane.tmux("send-keys", "-t", pane.name, "q")
    runs = subprocess.run(
        [sys.executable, "-m", "tui", "runs", "--json"], env={**os.environ, **env},
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    levels = _levels(json.loads(runs.stdout))
    means = [level["metrics_accept_length_mean"] for level in levels if "metrics_scrapes" in level]
    assert means, runs.stdout[:2000]
    # The first benchmark ran before the collapse (the demo's --accept-len 2.5), the second after.
    assert max(means) == pytest.approx(2.5, rel=0.1)
    assert min(means) == pytest.approx(1.0, rel=0.05)


def _first_seen(pane: Pane, text: str, timeout: float = 60.0) -> tuple[str, float]:
    """The screen that first shows ``text``, and the Unix time by which it showed it (the end
    of the read that saw it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = pane.screen()
        if text in screen:
            return screen, time.time()
        time.sleep(POLL_S)
    raise AssertionError(f"{text!r} never appeared; the pane showed:\n{screen}")


def _collapsed_at(folder: Path) -> float:
    """When the demo's simulator says the accept length collapsed, from its server log."""
    for log in folder.glob("bringup-demo-*/server.log"):
        for line in log.read_text(errors="replace").splitlines():
            if COLLAPSE_LINE in line:
                return float(line.rsplit(" at ", 1)[1])
    raise AssertionError("the simulator never logged the collapse")


def _levels(exported: object) -> list[dict[str, Any]]:
    """Every benchmark level in ``bringup runs --json``, wherever it is nested."""
    found: list[dict[str, Any]] = []
    if isinstance(exported, dict):
        if "max_concurrency" in exported:
            found.append(exported)
        for value in exported.values():
            found.extend(_levels(value))
    elif isinstance(exported, list):
        for item in exported:
            found.extend(_levels(item))
    return found
