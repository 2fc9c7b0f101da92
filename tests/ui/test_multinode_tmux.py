"""``bringup watch`` of a two-host profile in a real tmux pane: both nodes over SSH, one view.

Two simulated nodes write their logs on this machine; a real sshd on loopback serves them under
two host aliases, so the app opens one connection per host exactly as with two machines.
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
from tests.io.test_multinode_wait import alias_config
from tests.sshd import TestServer, free_port, start_server

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
WAIT_SECONDS = 120.0


class Pane:
    """One tmux session, 160x48, on a private tmux server (never the user's own)."""

    def __init__(self, socket: str, name: str) -> None:
        self.socket = socket
        self.name = name

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = ["tmux", "-L", self.socket, *args]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    def start(self, argv: list[str], env: dict[str, str]) -> None:
        assignments = [f"{key}={value}" for key, value in env.items()]
        command = ["env", "-u", "COLUMNS", "-u", "LINES", *assignments, *argv]
        result = self.tmux(
            "new-session", "-d", "-s", self.name, "-x", "160", "-y", "48", "-c", str(REPO),
            subprocess.list2cmdline(command),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr

    def wait_for(self, *texts: str) -> str:
        deadline = time.monotonic() + WAIT_SECONDS
        screen = ""
        while time.monotonic() < deadline:
            screen = self.tmux("capture-pane", "-p", "-t", self.name).stdout
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.5)
        raise AssertionError(f"{texts} never appeared; the pane showed:\n{screen}")


@pytest.fixture
def pane() -> Iterator[Pane]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    made = Pane(f"bringup-multinode-{os.getpid()}", "watch")
    yield made
    made.tmux("kill-server")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TestServer]:
    started = start_server(tmp_path / "sshd")
    yield started
    started.stop()


def start_node(node: int, nodes: int, port: int, log: Path, tmp: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "tui.sim", "--tp", str(8 * nodes), "--nnodes", str(nodes),
        "--node-rank", str(node), "--port", str(port), "--time-scale", "0.02",
        "--log-file", str(log), "--state-file", str(tmp / f"gpu{node}.json"),
    ]  # fmt: skip
    return subprocess.Popen(command, stderr=subprocess.DEVNULL)


@pytest.fixture
def sims(tmp_path: Path) -> Iterator[list[Path]]:
    port = free_port()
    logs = [tmp_path / f"node{k}.log" for k in range(2)]
    processes = [start_node(k, 2, port + k, log, tmp_path) for k, log in enumerate(logs)]
    (tmp_path / "port").write_text(str(port))
    yield logs
    for process in processes:
        process.kill()
        process.wait()


def test_a_two_host_profile_is_one_server_on_screen(
    pane: Pane, server: TestServer, sims: list[Path], tmp_path: Path
) -> None:
    ssh_config = alias_config(server, ["node0", "node1"], tmp_path / "ssh_config")
    port = (tmp_path / "port").read_text()
    config = tmp_path / "config.toml"
    config.write_text(
        "[profiles.big]\n"
        'hosts = ["node0", "node1"]\n'
        f"logs = [{', '.join(repr(str(log)) for log in sims)}]\n"
        f"port = {port}\n"
        f'ssh_config = "{ssh_config}"\n'
    )
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    pane.start([sys.executable, "-m", "tui", "watch", "big", "--config", str(config)], env)
    screen = pane.wait_for("READY", "ready: serves the API", "ready: dummy /health")
    assert "health and benchmarks: node 0 only" in screen
    assert "node 0 · node0 · 8 ranks" in screen
    assert "node 1 · node1 · 8 ranks" in screen
    assert "TP15" in screen
    pane.tmux("send-keys", "-t", pane.name, "q")
