"""``bringup watch`` of a two-node Slurm job in a real tmux pane, through a real sshd as the
login host: the job reaches READY with both nodes' ranks, the benchmark runs, ``K`` cancels the
job and nothing of it is left; a job cancelled outside bringup shows its own end."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.io.slurm_support import eventually, processes_of
from tests.io.test_slurm_wait import _config, _launch, login  # noqa: F401
from tests.slurm import SlurmCluster
from tests.sshd import TestServer
from tests.tmux import Pane, private_pane

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
WAIT_SECONDS = 120.0
QUICK_BENCH = (
    "\n[profiles.big.bench]\nnum_prompts = 2\ninput_len = 16\noutput_len = 8\nconcurrency = [1]\n"
)


@pytest.fixture
def pane() -> Iterator[Pane]:
    with private_pane("bringup-slurm", "watch") as made:
        yield made


def _watch(pane: Pane, config: Path, tmp_path: Path) -> None:
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    pane.start([sys.executable, "-m", "tui", "watch", "--config", str(config)], env)


def test_a_two_node_job_is_ready_benchmarked_and_killed_in_the_app(
    pane: Pane,
    slurm_cluster: SlurmCluster,
    login: TestServer,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login)
    config.write_text(config.read_text() + QUICK_BENCH)
    job_id = _launch(config, capsys)
    _watch(pane, config, tmp_path)
    screen = pane.wait_for("READY", f"job {job_id}", timeout=WAIT_SECONDS)
    assert "node 0 · gpu1 · 2 ranks" in screen, screen
    assert "node 1 · gpu2 · 2 ranks" in screen, screen
    assert "TP3" in screen
    pane.wait_for("Benchmark", "done", "tok/s", timeout=60.0)
    pane.tmux("send-keys", "-t", pane.name, "K")
    pane.wait_for("Kill the running server?", timeout=30.0)
    pane.tmux("send-keys", "-t", pane.name, "y")
    screen = pane.wait_for("STOPPED", f"job {job_id} CANCELLED", timeout=60.0)
    assert job_id not in slurm_cluster.job_ids()
    eventually(lambda: processes_of(tmp_path / "logs") == [], timeout=30.0)
    pane.tmux("send-keys", "-t", pane.name, "q")


def test_a_job_cancelled_outside_bringup_shows_its_verdict_in_the_app(
    pane: Pane,
    slurm_cluster: SlurmCluster,
    login: TestServer,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login, "--scenario", "node-hang", "--fail-rank", "1")
    job_id = _launch(config, capsys)
    _watch(pane, config, tmp_path)
    pane.wait_for("node 1 · gpu2", timeout=WAIT_SECONDS)
    cancel = threading.Timer(1.0, slurm_cluster.run, ("scancel", job_id))
    cancel.start()
    try:
        screen = pane.wait_for("JOB_CANCELLED", f"job {job_id} CANCELLED", timeout=60.0)
    finally:
        cancel.cancel()
    assert "STARTING" not in screen
    assert "last line" not in screen or "node" in screen
    eventually(lambda: processes_of(tmp_path / "logs") == [], timeout=30.0)
    pane.tmux("send-keys", "-t", pane.name, "q")
