"""The whole telemetry pipeline against the simulated GPU host.

A simulated SGLang server starts (fast-forwarded) and writes its GPUs' memory as it goes; the
simulator's stand-in ``nvidia-smi`` reports it; the channel reads it over a real SSH connection.
GPU memory must rise shard by shard during weight loading and jump at the KV cache, matching the
``avail mem`` figures the server's own log prints at each stage.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.net import free_port
from tests.sshd import TestServer
from tui.engine.gpu.gpu_csv import parse_compute_apps, parse_query_gpu
from tui.engine.gpu.gpu_state import GpuSnapshot
from tui.engine.startup.snapshot import RankState
from tui.io.gpu.gpu_telemetry import (
    LIVE_COLUMNS,
    TelemetryChannel,
    TelemetrySettings,
    busy_before_launch,
    stream_argv,
)
from tui.io.transport.ssh import SshTransport, connect
from tui.sim.sim_model import GPU_TOTAL_MIB

READY = "The server is fired up"
WAIT = 60.0


@dataclass
class SimHost:
    log: Path
    state: Path
    settings: TelemetrySettings


def _smi(state: Path, gpus: int = 4) -> tuple[str, ...]:
    return (
        sys.executable,
        "-m",
        "tui.sim.nvidia_smi",
        "--state-file",
        str(state),
        "--gpus",
        str(gpus),
    )


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimHost]:
    log, state = tmp_path / "server.log", tmp_path / "gpus.json"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui.sim",
            "--tp-size",
            "2",
            "--time-scale",
            "0.01",
            "--port",
            str(free_port()),
            "--log-file",
            str(log),
            "--state-file",
            str(state),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield SimHost(log, state, TelemetrySettings(command=_smi(state), interval_ms=100))
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
async def ssh(ssh_server: TestServer) -> AsyncIterator[SshTransport]:
    transport = SshTransport(await connect(ssh_server.target()))
    yield transport
    await transport.close()


def test_stand_in_answers_in_nvidia_smis_formats(tmp_path: Path) -> None:
    state = tmp_path / "none.json"
    argv = stream_argv(TelemetrySettings(command=_smi(state, gpus=2)))
    once = [arg for arg in argv if arg not in ("-lms", "500")]
    plain = subprocess.run(once, capture_output=True, check=True).stdout
    batch = parse_query_gpu(plain, LIVE_COLUMNS)
    assert [(s.index, s.memory_used_mib, s.memory_total_mib) for s in batch.samples] == [
        (0, 0.0, float(GPU_TOTAL_MIB)),
        (1, 0.0, float(GPU_TOTAL_MIB)),
    ]
    query = "--query-gpu=timestamp,index,memory.used,utilization.gpu,power.draw,clocks.sm"
    full = subprocess.run(
        [*_smi(state, 1), query, "--format=csv"], capture_output=True, check=True, text=True
    ).stdout
    header = full.splitlines()[0]
    assert header == (
        "timestamp, index, memory.used [MiB], utilization.gpu [%], "
        "power.draw [W], clocks.current.sm [MHz]"
    )
    (sample,) = parse_query_gpu(full).samples
    assert (sample.memory_used_mib, sample.util_pct, sample.sm_clock_mhz) == (0.0, 0.0, 345.0)
    apps = subprocess.run(
        [*_smi(state), "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    assert apps == "pid, process_name, used_gpu_memory [MiB]\n"
    assert parse_compute_apps(apps).apps == ()


def test_stand_in_refuses_unknown_fields_like_nvidia_smi(tmp_path: Path) -> None:
    result = subprocess.run(
        [*_smi(tmp_path / "s.json"), "--query-gpu=index,bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert 'Field "bogus" is not a valid field to query.' in result.stdout


def _logged(log: Path, text: str) -> bool:
    return log.exists() and text in log.read_text()


async def _until_logged(log: Path, text: str) -> None:
    """Wait until the server's log holds ``text`` (the caller bounds the wait)."""
    while True:
        if _logged(log, text):
            return
        await asyncio.sleep(0.1)


async def _follow(channel: TelemetryChannel, log: Path) -> list[GpuSnapshot]:
    """Snapshots from the start of the server until a few readings after its ready line."""
    seen: list[GpuSnapshot] = []
    more = asyncio.Event()

    async def consume() -> None:
        async with contextlib.aclosing(channel.snapshots()) as snapshots:
            async for snapshot in snapshots:
                seen.append(snapshot)
                more.set()

    async def settled() -> None:
        await _until_logged(log, READY)
        for _ in range(5):
            more.clear()
            await more.wait()

    task = asyncio.create_task(consume())
    try:
        await asyncio.wait_for(settled(), WAIT)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return seen


def _avail(log: str, message: str) -> float:
    """The ``avail mem`` of TP0's first line starting with ``message``."""
    pattern = rf"TP0\] {re.escape(message)}.*?avail mem=([\d.]+) GB"
    match = re.search(pattern, log)
    assert match is not None, message
    return float(match.group(1))


def _level(avail_gb: float) -> float:
    """GPU memory used (MiB) when the log says ``avail_gb`` is free."""
    return GPU_TOTAL_MIB - avail_gb * 1024


@pytest.mark.slow
async def test_gpu_memory_follows_the_simulated_start_over_ssh(
    ssh: SshTransport, sim: SimHost
) -> None:
    seen = await _follow(TelemetryChannel(ssh, sim.settings), sim.log)
    log = sim.log.read_text()
    final = seen[-1]
    assert final.missing is None
    assert [gpu.index for gpu in final.gpus] == [0, 1, 2, 3]
    history = final.gpus[0].memory_mib
    assert list(history) == sorted(history)  # start-up only ever adds memory
    begin = _level(_avail(log, "Load weight begin"))
    pool = _level(_avail(log, "Memory pool end"))
    captured = _level(_avail(log, "Capture target decode CUDA graph end"))
    loading = {value for value in history if begin < value < pool}
    assert len(loading) >= 3  # weights arrive shard by shard
    assert any(abs(value - pool) < 2 for value in history)  # the KV cache jump
    assert abs(history[-1] - captured) < 2  # graphs add a little more
    assert final.gpus[1].memory_mib[-1] == history[-1]
    assert final.gpus[2].sample.memory_used_mib == 0.0  # GPUs the server does not use
    free_gib = (final.gpus[0].free_mib or 0.0) / 1024
    rank = RankState(tag="TP0", avail_gb=_avail(log, "Capture target decode CUDA graph end"))
    assert rank.avail_gb is not None
    assert abs(free_gib - rank.avail_gb) < 0.01  # the log and the GPU agree
    report = await busy_before_launch(ssh, sim.settings)  # as a second launch would see it
    assert [gpu.index for gpu in report.busy] == [0, 1]
    assert all(len(gpu.apps) == 1 for gpu in report.busy)
    assert report.lines()[0].startswith(f"GPU 0: {history[-1]:.0f} MiB used; pid ")
