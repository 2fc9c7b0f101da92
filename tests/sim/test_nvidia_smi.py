"""The simulated ``nvidia-smi``: real nvidia-smi's layout, memory that follows the sim."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.simserver import FAST, SimFactory

QUERY = "--query-gpu=index,name,memory.used,memory.total,utilization.gpu,power.draw"
APPS = "--query-compute-apps=pid,used_memory,gpu_uuid"
PLAIN = "--format=csv,noheader,nounits"


def _smi(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.sim.nvidia_smi", *args, "--state-file", str(state)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )


def _used(state: Path) -> list[int]:
    lines = _smi(state, QUERY, PLAIN).stdout.splitlines()
    return [int(line.split(", ")[2]) for line in lines]


def test_idle_host_has_eight_free_h200s(tmp_path: Path) -> None:
    result = _smi(tmp_path / "none.json", QUERY, PLAIN)
    assert result.returncode == 0
    rows = [line.split(", ") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == [str(i) for i in range(8)]
    assert {(row[1], row[2], row[3]) for row in rows} == {("NVIDIA H200", "0", "143771")}
    assert _smi(tmp_path / "none.json", APPS, PLAIN).stdout == ""


def test_headers_and_units_match_the_real_tool(shared: Path, tmp_path: Path) -> None:
    fixture = shared / "fixtures" / "gpu-h200"
    real_header = (fixture / "query-gpu-lms250.csv").read_text().splitlines()[0]
    fields = (
        "timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu,"
        "utilization.memory,temperature.gpu,power.draw,clocks.sm"
    )
    ours = _smi(tmp_path / "none.json", f"--query-gpu={fields}", "--format=csv").stdout
    assert ours.splitlines()[0] == real_header
    first_row = ours.splitlines()[1].split(", ")
    assert first_row[4:6] == ["0 MiB", "143771 MiB"]
    real_apps = (fixture / "compute-apps.csv").read_text().splitlines()[0]
    apps = _smi(
        tmp_path / "none.json", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"
    ).stdout
    assert apps.splitlines()[0] == real_apps


def test_memory_follows_the_simulated_start(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "4", "--time-scale", FAST, "--base-gpu-id", "2"])
    sim.wait_for("The server is fired up and ready to roll!")
    used = _used(sim.state_file)
    assert all(value > 100_000 for value in used[2:6])
    assert used[:2] == [0, 0]
    assert used[6:] == [0, 0]
    apps = [line.split(", ") for line in _smi(sim.state_file, APPS, PLAIN).stdout.splitlines()]
    assert sorted(int(row[0]) for row in apps) == sorted(sim.rank_pids())
    assert all(int(row[1]) > 100_000 for row in apps)
    assert sim.terminate() == 0
    assert _used(sim.state_file) == [0] * 8


def test_memory_is_free_after_a_crash(start_sim: SimFactory) -> None:
    sim = start_sim(["--tp", "2", "--time-scale", FAST, "--scenario", "oom-kv-cache"])
    assert sim.wait_exit() == -9
    assert _used(sim.state_file) == [0] * 8


def test_loop_prints_a_header_once_then_rows(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui.sim.nvidia_smi",
            "--query-gpu=index",
            "--format=csv",
            "-lms",
            "50",
            "--gpus",
            "2",
            "--state-file",
            str(tmp_path / "none.json"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(5)]
    proc.terminate()
    proc.wait(timeout=10)
    proc.stdout.close()
    assert lines == ["index\n", "0\n", "1\n", "0\n", "1\n"]


@pytest.mark.parametrize("args", [["--query-gpu=index,bogus"], ["--nonsense"]])
def test_bad_queries_are_refused_like_nvidia_smi(tmp_path: Path, args: list[str]) -> None:
    result = _smi(tmp_path / "none.json", *args)
    assert result.returncode == 2
    assert "nvidia-smi -h" in result.stdout
