"""``bringup launch``, ``kill`` and ``restart`` for a Slurm profile, on the loopback cluster."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.io.slurm_support import eventually, processes_with, slurm_config
from tests.slurm import SlurmCluster
from tui.cli import main
from tui.engine.launch.launch_plan import LaunchSpec
from tui.engine.launch.slurm_script import SlurmSpec
from tui.io.slurm.slurm_client import SlurmClient
from tui.io.slurm.slurm_launcher import SlurmLauncher
from tui.io.transport.local import LocalTransport

pytestmark = pytest.mark.slow

HOSTILE = "x; touch pwned $(touch pwned2) `id` 'single' \"double\"\nsecond line $HOME"
MARKER = "bringup-argv-probe"
PROBE = [
    sys.executable, "-c", "import time; time.sleep(120)", MARKER, "{model}", "{node_rank}",
    "--dist-init-addr={dist_init_addr}",
]  # fmt: skip
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)", MARKER, "{node_rank}"]


@pytest.fixture
def slurm_env(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster


def _environ(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def _pwned(folder: Path) -> list[Path]:
    return list(folder.glob("**/pwned*")) if folder != REPO else list(folder.glob("pwned*"))


def _record(log_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (log_dir / ".bringup" / "big-slurm-current.json").read_text()
    )
    return data


async def test_hostile_values_reach_the_running_tasks_as_literal_arguments(
    slurm_env: SlurmCluster, tmp_path: Path
) -> None:
    """The configuration file refuses control characters; a spec made in code can still hold a
    newline, so the job is submitted from one."""
    launch = LaunchSpec(
        profile="big", command=tuple(PROBE), log_dir=str(tmp_path / "logs"), cwd=str(tmp_path),
        model=HOSTILE, env=(("HOSTILE", HOSTILE),), grace_period=10.0,
    )  # fmt: skip
    transport = LocalTransport()
    launcher = SlurmLauncher(SlurmSpec(launch, nodes=2), SlurmClient(transport))
    submitted = await launcher.launch()
    assert submitted.ok, submitted.lines
    tasks = await asyncio.to_thread(
        eventually, lambda: len(processes_with(MARKER)) == 2 and processes_with(MARKER)
    )
    assert isinstance(tasks, list)
    argvs = [argv[argv.index(MARKER) + 1 :] for _pid, argv in tasks]
    assert sorted(argv[1] for argv in argvs) == ["0", "1"]
    for pid, argv in tasks:
        after = argv[argv.index(MARKER) + 1 :]
        assert after[0] == HOSTILE
        assert after[2] == "--dist-init-addr=127.0.0.1:20000"
        assert f"HOSTILE={HOSTILE}".encode() in _environ(pid)
    assert not _pwned(tmp_path)
    assert not _pwned(REPO)
    killed = await launcher.kill()
    assert killed.ok, killed.lines
    assert f"job {submitted.job_id}: SIGTERM; left the queue" in killed.lines[0]
    assert str(submitted.job_id) not in slurm_env.job_ids()
    assert processes_with(MARKER) == []
    await transport.close()


def test_launch_records_the_job_restart_resubmits_it_and_kill_empties_the_queue(
    slurm_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = tmp_path / "logs"
    config = slurm_config(tmp_path / "config.toml", log_dir, SLEEPER)
    assert main(["launch", "--config", str(config)]) == 0
    first = _record(log_dir)
    out = capsys.readouterr().out
    assert f"submitted job {first['job_id']} (2 nodes)" in out
    assert f"node 1 log: {log_dir}/big-{first['job_id']}-node1.log" in out
    assert main(["launch", "--config", str(config)]) == 1
    assert "still in the queue" in capsys.readouterr().err
    assert main(["restart", "--config", str(config)]) == 0
    second = _record(log_dir)
    assert second["previous_job"] == first["job_id"]
    assert second["script"] == first["script"]
    assert str(first["job_id"]) not in slurm_env.job_ids()
    assert (log_dir / ".bringup" / f"big-{first['job_id']}.slurm.json").exists()
    assert main(["kill", "--config", str(config)]) == 0
    assert slurm_env.job_ids() == []
    assert processes_with(MARKER) == []
    ended = _record(log_dir)
    assert ended["state"] == "CANCELLED"
    assert main(["kill", "--config", str(config)]) == 0
    assert "is not in the queue (CANCELLED)" in capsys.readouterr().out
