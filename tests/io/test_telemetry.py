"""The telemetry channel over a real SSH connection and locally, with a stand-in nvidia-smi.

There is no GPU here, so ``nvidia-smi`` is the one part played by a script: it answers the
channel's real command line (``--query-gpu=... -lms N``) with rows in nvidia-smi's format, or
fails the ways nvidia-smi fails. Everything else (sshd, channels, processes) is real.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.sshd import TestServer
from tui.config import parse_config
from tui.engine.gpu.gpu_csv import NoTelemetryKind
from tui.engine.gpu.gpu_state import GpuSnapshot
from tui.io.gpu.gpu_telemetry import (
    TelemetryChannel,
    TelemetrySettings,
    busy_before_launch,
    query_apps,
    stream_argv,
)
from tui.io.transport.host_session import HostSession
from tui.io.transport.local import LocalTransport
from tui.io.transport.ssh import SshTransport, connect
from tui.io.transport.transport import Transport

FAKE_SMI = r"""
import sys, time
args = sys.argv[1:]
option = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
mode, ticks = option.get("mode", "rows"), int(option.get("ticks", "3"))
if mode == "driver":
    print("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    sys.exit(9)
if "query-compute-apps" in option:
    if mode != "idle":
        print("GPU-0001, 4242, python3 -m sglang.launch_server, 41478")
    sys.exit(0)
interval = int(args[args.index("-lms") + 1]) / 1000 if "-lms" in args else 0.0
for tick in range(ticks):
    extra = [70000 if i == 1 and mode == "busy" else 0 for i in range(8)]
    rows = [f"{i}, GPU-{i:04d}, NVIDIA H200, {tick * 5120 + extra[i]}, 143771, {tick * 40}, 123.45"
            for i in range(8)]
    sys.stdout.write("\n".join(rows) + "\n")
    sys.stdout.flush()
    if tick < ticks - 1:
        time.sleep(interval)
"""


@pytest.fixture
def fake_smi(tmp_path: Path) -> Path:
    script = tmp_path / "fake_nvidia_smi.py"
    script.write_text(FAKE_SMI)
    return script


def _settings(script: Path, *options: str, interval_ms: int = 50) -> TelemetrySettings:
    return TelemetrySettings(
        command=(sys.executable, str(script), *options),
        interval_ms=interval_ms,
        retry_first=1.0,
        retry_max=8.0,
    )


class Pauses:
    """Stands in for asyncio.sleep between restarts: records the delay, does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
async def ssh(ssh_server: TestServer) -> AsyncIterator[SshTransport]:
    transport = SshTransport(await connect(ssh_server.target()))
    yield transport
    await transport.close()


async def _until_missing(channel: TelemetryChannel, outages: int = 1) -> list[GpuSnapshot]:
    seen: list[GpuSnapshot] = []
    stream = channel.snapshots()
    async for snapshot in stream:
        seen.append(snapshot)
        if snapshot.missing is not None and sum(s.missing is not None for s in seen) >= outages:
            break
    await stream.aclose()
    return seen


async def test_stream_over_ssh_reads_every_gpu_then_restarts(
    ssh: SshTransport, fake_smi: Path
) -> None:
    pauses = Pauses()
    channel = TelemetryChannel(ssh, _settings(fake_smi), sleep=pauses)
    seen = await _until_missing(channel, outages=2)
    flowing = [s for s in seen if s.missing is None]
    assert flowing
    last = flowing[-1]
    assert [gpu.index for gpu in last.gpus] == list(range(8))
    gpu = last.gpu(5)
    assert gpu is not None
    assert gpu.sample.uuid == "GPU-0005"
    assert gpu.sample.name == "NVIDIA H200"
    assert gpu.sample.memory_total_mib == 143771.0
    assert gpu.sample.power_w == 123.45
    assert gpu.memory_mib[:3] == (0.0, 5120.0, 10240.0)
    ended = seen[-1].missing
    assert ended is not None
    assert ended.kind is NoTelemetryKind.ENDED
    assert "exit status 0" in ended.reason
    assert pauses.delays[0] == 1.0  # readings flowed, so the first pause is the shortest
    assert channel.restarts >= 1
    assert seen[-1].gpu(5) is not None  # last figures kept while the stream is down


async def test_missing_nvidia_smi_over_ssh_says_so_and_backs_off(ssh: SshTransport) -> None:
    pauses = Pauses()
    settings = TelemetrySettings(command=("nvidia-smi-not-installed-here",), retry_max=8.0)
    channel = TelemetryChannel(ssh, settings, sleep=pauses)
    seen = await _until_missing(channel, outages=3)
    missing = seen[-1].missing
    assert missing is not None
    assert missing.kind is NoTelemetryKind.NOT_INSTALLED
    assert seen[-1].gpus == ()
    assert pauses.delays == [8.0, 8.0]


async def test_driver_failure_locally_is_no_telemetry_with_the_message(fake_smi: Path) -> None:
    pauses = Pauses()
    channel = TelemetryChannel(LocalTransport(), _settings(fake_smi, "--mode=driver"), sleep=pauses)
    seen = await _until_missing(channel)
    missing = seen[-1].missing
    assert missing is not None
    assert missing.kind is NoTelemetryKind.DRIVER
    assert "couldn't communicate with the NVIDIA driver" in missing.reason


async def test_missing_executable_locally_is_not_installed() -> None:
    settings = TelemetrySettings(command=("/nonexistent/nvidia-smi",))
    channel = TelemetryChannel(LocalTransport(), settings, sleep=Pauses())
    seen = await _until_missing(channel)
    missing = seen[-1].missing
    assert missing is not None
    assert missing.kind is NoTelemetryKind.NOT_INSTALLED


async def test_silent_stream_restarts_with_doubling_pauses(fake_smi: Path) -> None:
    pauses = Pauses()
    channel = TelemetryChannel(LocalTransport(), _settings(fake_smi, "--ticks=0"), sleep=pauses)
    await _until_missing(channel, outages=6)
    assert pauses.delays == [1.0, 2.0, 4.0, 8.0, 8.0]


async def test_busy_gpus_before_launch_over_ssh(ssh: SshTransport, fake_smi: Path) -> None:
    report = await busy_before_launch(ssh, _settings(fake_smi, "--mode=busy", "--ticks=1"))
    assert report.missing is None
    (busy,) = report.busy
    assert busy.index == 1
    assert report.lines() == [
        "GPU 1: 70000 MiB used; pid 4242 python3 -m sglang.launch_server (41478 MiB)"
    ]


async def test_idle_host_has_nothing_busy_and_empty_process_list(
    ssh: SshTransport, fake_smi: Path
) -> None:
    settings = _settings(fake_smi, "--mode=idle", "--ticks=1")
    assert (await busy_before_launch(ssh, settings)).busy == ()
    listed = await query_apps(ssh, settings)
    assert (listed.apps, listed.failure) == ((), None)


async def test_busy_check_without_nvidia_smi_is_skipped_with_a_reason(ssh: SshTransport) -> None:
    report = await busy_before_launch(ssh, TelemetrySettings(command=("nvidia-smi-absent",)))
    assert report.busy == ()
    assert report.lines() == ["GPU check skipped: nvidia-smi not found on the host"]


def test_profile_command_is_split_and_every_value_stays_one_argument() -> None:
    config = parse_config(
        "[profiles.a]\nnvidia_smi = \"python -m tui.sim.nvidia_smi --state 'a b'\"\n",
        Path("config.toml"),
    )
    settings = TelemetrySettings(command=config.profile().nvidia_smi, interval_ms=250)
    argv = stream_argv(settings)
    assert argv[:5] == ["python", "-m", "tui.sim.nvidia_smi", "--state", "a b"]
    assert argv[-2:] == ["-lms", "250"]
    assert parse_config("[profiles.a]\n", Path("c.toml")).profile().nvidia_smi == ("nvidia-smi",)


async def test_channel_accepts_any_transport(fake_smi: Path) -> None:
    transport: Transport = LocalTransport()
    channel = TelemetryChannel(transport, _settings(fake_smi, "--ticks=2"), sleep=Pauses())
    seen = await _until_missing(channel)
    assert seen[-1].samples == 16


async def test_dropped_connection_reads_as_disconnected_and_resumes_with_the_session(
    ssh_server: TestServer, session: HostSession, fake_smi: Path
) -> None:
    channel = TelemetryChannel(session, _settings(fake_smi, "--ticks=100000"), sleep=Pauses())
    seen: list[GpuSnapshot] = []
    outage: GpuSnapshot | None = None
    async with contextlib.aclosing(channel.snapshots()) as snapshots:
        async for snapshot in snapshots:
            seen.append(snapshot)
            if len(seen) == 2:
                assert ssh_server.drop_connections() >= 1
            if snapshot.missing is not None and outage is None:
                outage = snapshot
            if outage is not None and snapshot.missing is None:
                break
            assert len(seen) < 500
    assert outage is not None
    assert outage.missing is not None
    assert outage.missing.kind is NoTelemetryKind.DISCONNECTED
    assert len(outage.gpus) == 8  # the last figures stay while the link is down
    assert seen[-1].missing is None  # readings flow again on the new connection
    assert channel.restarts >= 1


async def test_closed_session_ends_the_stream(session: HostSession, fake_smi: Path) -> None:
    channel = TelemetryChannel(session, _settings(fake_smi, "--ticks=1"), sleep=Pauses())
    await session.close()
    seen = [snapshot async for snapshot in channel.snapshots()]
    assert len(seen) == 1
    assert seen[0].missing is not None
    assert seen[0].missing.kind is NoTelemetryKind.DISCONNECTED


async def test_busy_check_and_process_list_through_a_session(
    session: HostSession, fake_smi: Path
) -> None:
    settings = _settings(fake_smi, "--mode=busy", "--ticks=1")
    report = await busy_before_launch(session, settings)
    assert [gpu.index for gpu in report.busy] == [1]
    listed = await TelemetryChannel(session, settings).query_apps()
    assert [app.pid for app in listed.apps] == [4242]
