"""``bringup wait`` on a two-node Slurm job: through the loopback sshd as the login host, the
queue, both nodes' logs, node 0's health, and each way a job can end."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.io.slurm_support import processes_of, sim_command, slurm_config
from tests.net import free_port
from tests.slurm import SlurmCluster
from tests.sshd import SERVER_KIND, TestServer, start_openssh
from tui.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def login(
    slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestServer]:
    """An OpenSSH sshd whose sessions find the loopback cluster (``SLURM_CONF``)."""
    if SERVER_KIND != "openssh":
        pytest.skip("the login host is a real OpenSSH sshd, which is not installed here")
    server = start_openssh(
        tmp_path_factory.mktemp("login"), "login", {"SLURM_CONF": str(slurm_cluster.conf)}
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def local_slurm(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster


def _config(tmp_path: Path, login: TestServer, *sim: str, slurm: str = "", nodes: int = 2) -> Path:
    extra = f'ssh_config = "{login.ssh_config}"\nknown_hosts = "{login.known_hosts}"\n'
    extra += 'expected_startup = "6s"\n'
    port = free_port()
    return slurm_config(
        tmp_path / "config.toml", tmp_path / "logs", sim_command(port, *sim), nodes=nodes,
        port=port, slurm=slurm, extra=extra, login="login",
    )  # fmt: skip


def _wait(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["wait", "--json", *argv])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    return code, records


def _named(records: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [r for r in records if r["event"] == name]


def _launch(config: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["launch", "--config", str(config)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    return out.split("submitted job ")[1].split()[0]


def test_a_two_node_job_reaches_ready_and_kill_leaves_nothing(
    slurm_cluster: SlurmCluster,
    login: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login)
    job_id = _launch(config, capsys)
    code, records = _wait(capsys, "--config", str(config), "--timeout", "90s")
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("READY", 0), verdict
    jobs = _named(records, "job_changed")
    assert jobs[-1]["phase"] == "running"
    assert jobs[-1]["nodes"] == ["gpu1", "gpu2"]
    assert jobs[-1]["node0_addr"] == "127.0.0.1"
    stages = {(r.get("node"), r["rank"]) for r in _named(records, "stage_entered")}
    assert {node for node, _rank in stages} == {0, 1}
    assert any(r["event"] == "health_changed" and r["state"] == "ready" for r in records)
    record = json.loads((tmp_path / "logs" / ".bringup" / f"big-{job_id}.slurm.json").read_text())
    assert record["started_at"].endswith("Z")
    assert record["queued_seconds"] >= 0
    attached, again = _wait(capsys, "--slurm-job", job_id, "--login", "login", "--ssh-config",
                            str(login.ssh_config), "--timeout", "60s", "--port",
                            str(json.loads(json.dumps(_port(config)))))  # fmt: skip
    assert (again[-1]["verdict"], attached) == ("READY", 0), again[-1]
    assert main(["kill", "--config", str(config)]) == 0
    assert f"job {job_id}: SIGTERM; left the queue" in capsys.readouterr().out
    assert job_id not in slurm_cluster.job_ids()
    assert processes_of(tmp_path / "logs") == []


def _port(config: Path) -> int:
    line = next(line for line in config.read_text().splitlines() if line.startswith("port = "))
    return int(line.split("=")[1])


def test_a_job_asking_for_more_nodes_than_exist_waits_pending_with_its_reason(
    slurm_cluster: SlurmCluster,
    login: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login, nodes=3)
    job_id = _launch(config, capsys)
    code, records = _wait(capsys, "--config", str(config), "--timeout", "4s")
    assert (records[-1]["verdict"], code) == ("PENDING", 6), records[-1]
    assert records[-1]["detail"].startswith(f"job {job_id} still PENDING (")
    pending = _named(records, "job_changed")
    assert pending[0]["phase"] == "queued"
    assert pending[0]["reason"] in ("PartitionNodeLimit", "PartitionConfig", "Resources")
    assert main(["kill", "--config", str(config)]) == 0
    assert job_id not in slurm_cluster.job_ids()


def test_a_job_cancelled_outside_bringup_is_its_own_verdict(
    slurm_cluster: SlurmCluster,
    login: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login, "--scenario", "node-hang", "--fail-rank", "1")
    job_id = _launch(config, capsys)
    cancel = threading.Timer(4.0, slurm_cluster.run, ("scancel", job_id))
    cancel.start()
    try:
        code, records = _wait(capsys, "--config", str(config), "--timeout", "60s")
    finally:
        cancel.cancel()
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("JOB_CANCELLED", 1), _named(records, "job_changed")
    assert verdict["detail"].startswith(f"job {job_id} CANCELLED")
    assert "last line of node" in verdict["detail"]
    assert processes_of(tmp_path / "logs") == []


def test_a_rank_that_hangs_on_one_node_is_stalled(
    slurm_cluster: SlurmCluster,
    login: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login, "--scenario", "node-hang", "--fail-rank", "1")
    job_id = _launch(config, capsys)
    code, records = _wait(capsys, "--config", str(config), "--timeout", "60s", "--fail-on-stall",
                          "--stall-factor", "1", "--stall-floor", "2s")  # fmt: skip
    assert (records[-1]["verdict"], code) == ("STALLED", 1), records[-1]
    assert "weight loading" in records[-1]["detail"]
    assert main(["kill", "--config", str(config)]) == 0
    assert job_id not in slurm_cluster.job_ids()


def test_a_job_that_hits_its_time_limit_is_a_timeout_verdict(
    slurm_cluster: SlurmCluster,
    login: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, login, "--scenario", "node-hang", "--fail-rank", "1",
                     slurm='time = "1"\n')  # fmt: skip
    job_id = _launch(config, capsys)
    code, records = _wait(capsys, "--config", str(config), "--timeout", "150s")
    verdict = records[-1]
    assert (verdict["verdict"], code) == ("JOB_TIMEOUT", 1), verdict
    assert verdict["detail"].startswith(f"job {job_id} TIMEOUT")
    assert job_id not in slurm_cluster.job_ids()
