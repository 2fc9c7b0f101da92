"""How long launching and stopping take: each host script's round trip, then whole cycles.

A cycle is ``launch`` (plan, preflight, start, record) of a small process group followed by
``kill`` (SIGTERM honoured at once). Run over the local transport, and with ``--ssh`` also over
a throwaway SSH server on 127.0.0.1 (OpenSSH's sshd when installed). Prints medians and 90th
percentiles in milliseconds, and the number of processes on this machine (the probe reads each
one's ``/proc/PID/stat``). Usage::

    python bench/launch.py [--cycles 10] [--ssh]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tui.engine.launch.launch_plan import LaunchSpec
from tui.io.launch.launch_node import Node
from tui.io.launch.launcher import Launcher
from tui.io.transport.local import LocalTransport
from tui.io.transport.transport import Transport

COMMAND = ("sh", "-c", "sleep 600 & sleep 600; wait")


def _row(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    median = statistics.median(ordered) * 1000
    return f"  {name:<28} median {median:8.1f} ms   p90 {p90 * 1000:8.1f} ms"


async def _timed(call: Callable[[], Awaitable[object]], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def measure(label: str, transport: Transport, cycles: int, log_dir: Path) -> None:
    spec = LaunchSpec(profile="bench", command=COMMAND, log_dir=str(log_dir), grace_period=10.0)
    launcher = Launcher(spec, [Node(label, transport)])
    node = launcher.nodes[0]
    (plan,) = await launcher.plans()
    state_dir = plan.paths.state_dir
    print(f"{label}:")
    print(_row("home script", await _timed(node.home, cycles)))
    print(_row("preflight script", await _timed(lambda: node.preflight(plan), cycles)))
    print(_row("probe script", await _timed(lambda: node.probe(state_dir, plan.stem), cycles)))
    launches: list[float] = []
    kills: list[float] = []
    for _ in range(cycles):
        launches += await _timed(launcher.launch, 1)
        kills += await _timed(launcher.kill, 1)
    print(_row("launch (checks + start)", launches))
    print(_row("kill (SIGTERM honoured)", kills))


@contextlib.asynccontextmanager
async def _ssh(workdir: Path) -> AsyncIterator[Transport]:
    from tests.sshd import running_server
    from tui.io.transport.ssh import SshTransport, connect

    with running_server(workdir) as server:
        transport = SshTransport(await connect(server.target()))
        try:
            yield transport
        finally:
            await transport.close()


def _process_count() -> int:
    return sum(1 for p in Path("/proc").iterdir() if p.name.isdigit())


async def main(cycles: int, ssh: bool) -> None:
    print(f"processes on this machine: {_process_count()}")
    with tempfile.TemporaryDirectory() as folder:
        local = LocalTransport()
        await measure("local transport", local, cycles, Path(folder) / "local")
        await local.close()
        if ssh:
            async with _ssh(Path(folder) / "sshd") as transport:
                await measure("ssh transport (127.0.0.1)", transport, cycles, Path(folder) / "ssh")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=10, help="repetitions of each measurement")
    parser.add_argument("--ssh", action="store_true", help="also measure over a local SSH server")
    args = parser.parse_args()
    asyncio.run(main(args.cycles, args.ssh))
