"""``bringup watch`` of a two-host profile in a real tmux pane: both nodes over SSH, one view.

Two simulated nodes write their logs on this machine; a real sshd on loopback serves them under
two host aliases, so the app opens one connection per host exactly as with two machines, and
reads each host's GPUs (the simulator's ``nvidia-smi``) on that host's connection.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.io.test_multinode_wait import alias_config
from tests.net import free_port
from tests.sshd import TestServer
from tests.tmux import Pane, private_pane

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
WAIT_SECONDS = 120.0


@pytest.fixture
def pane() -> Iterator[Pane]:
    with private_pane("bringup-multinode", "watch") as made:
        yield made


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
    pane: Pane, ssh_server: TestServer, sims: list[Path], tmp_path: Path
) -> None:
    ssh_config = alias_config(ssh_server, ["node0", "node1"], tmp_path / "ssh_config")
    port = (tmp_path / "port").read_text()
    config = tmp_path / "config.toml"
    state = tmp_path / "gpu0.json"
    nvidia_smi = [sys.executable, "-m", "tui.sim.nvidia_smi", "--state-file", str(state)]
    config.write_text(
        "[profiles.big]\n"
        'hosts = ["node0", "node1"]\n'
        f"logs = [{', '.join(repr(str(log)) for log in sims)}]\n"
        f"port = {port}\n"
        f'ssh_config = "{ssh_config}"\n'
        f"nvidia_smi = [{', '.join(repr(word) for word in nvidia_smi)}]\n"
    )
    env = {"TERM": "tmux-256color", "BRINGUP_DATA_DIR": str(tmp_path / "data")}
    pane.start([sys.executable, "-m", "tui", "watch", "big", "--config", str(config)], env)
    screen = pane.wait_for(
        "READY", "ready: serves the API", "ready: dummy /health", timeout=WAIT_SECONDS
    )
    assert "health and benchmarks: node 0 only" in screen
    assert "node 0 · node0 · 8 ranks" in screen
    assert "node 1 · node1 · 8 ranks" in screen
    assert "TP15" in screen
    # Each host's simulated nvidia-smi, read over that host's own connection: eight GPUs each.
    pane.wait_for("16 GPUs", timeout=30.0)
    pane.tmux("send-keys", "-t", pane.name, "q")
