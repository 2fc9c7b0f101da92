"""Monitor-side CPU cost of the GPU telemetry channel.

Runs the real channel (stream, parser, live model, one snapshot per chunk) against a stand-in
``nvidia-smi`` that prints ``--gpus`` rows every ``--interval-ms``, either as a local process or
over SSH to an embedded server running in a separate process (so only the monitor's side, SSH
client included, is measured). Prints the CPU time this process spent per wall second.

    python -m bench.telemetry --via ssh --seconds 60
    python -m bench.telemetry --via local --gpus 8 --interval-ms 500
    python -m bench.telemetry --command "python -m tui.sim.nvidia_smi"

The target is below 0.5 % of one core for 8 GPUs at 500 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import sys
import time
from collections.abc import AsyncIterator

from bench.fixtures import embedded_ssh_target
from tui.io.gpu.gpu_telemetry import TelemetryChannel, TelemetrySettings
from tui.io.transport.local import LocalTransport
from tui.io.transport.ssh import SshTransport, connect
from tui.io.transport.transport import Transport

EMITTER = """
import sys, time
args = sys.argv[1:]
gpus = int(args[0])
interval = int(args[args.index("-lms") + 1]) / 1000
tick = 0
while True:
    rows = [f"{i}, GPU-{i:08x}-0000-0000-0000-000000000000, NVIDIA H200, "
            f"{(tick * 997 + i) % 140000}, 143771, {tick % 101}, {100 + tick % 600}.25"
            for i in range(gpus)]
    sys.stdout.write("\\n".join(rows) + "\\n")
    sys.stdout.flush()
    tick += 1
    time.sleep(interval)
"""


@contextlib.asynccontextmanager
async def _transport(via: str) -> AsyncIterator[Transport]:
    if via == "local":
        local = LocalTransport()
        try:
            yield local
        finally:
            await local.close()
        return
    async with embedded_ssh_target() as target:
        remote = SshTransport(await connect(target))
        try:
            yield remote
        finally:
            await remote.close()


async def _consume(channel: TelemetryChannel, counts: dict[str, int]) -> None:
    async with contextlib.aclosing(channel.snapshots()) as snapshots:
        async for snapshot in snapshots:
            counts["snapshots"] += 1
            counts["samples"] = snapshot.samples


async def measure(
    via: str, command: list[str], interval_ms: int, seconds: float
) -> dict[str, float]:
    settings = TelemetrySettings(command=tuple(command), interval_ms=interval_ms)
    counts = {"snapshots": 0, "samples": 0}
    async with _transport(via) as transport:
        task = asyncio.create_task(_consume(TelemetryChannel(transport, settings), counts))
        await asyncio.sleep(2.0)  # connection set-up and the first readings are not measured
        cpu0, wall0, samples0 = time.process_time(), time.monotonic(), counts["samples"]
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        samples = counts["samples"] - samples0
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_percent_of_core": 100.0 * cpu / wall,
        "samples": samples,
        "us_per_sample": 1e6 * cpu / samples if samples else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=("local", "ssh"), default="ssh")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--interval-ms", type=int, default=500)
    parser.add_argument("--command", help="an nvidia-smi command line to run instead")
    args = parser.parse_args()
    command = (
        shlex.split(args.command)
        if args.command
        else [sys.executable, "-c", EMITTER, str(args.gpus)]
    )
    figures = asyncio.run(measure(args.via, command, args.interval_ms, args.seconds))
    print(
        f"telemetry via {args.via}: {args.gpus} GPUs every {args.interval_ms} ms for "
        f"{figures['wall_s']:.1f} s: {figures['samples']:.0f} samples, "
        f"CPU {figures['cpu_s'] * 1000:.1f} ms = {figures['cpu_percent_of_core']:.3f} % of one "
        f"core ({figures['us_per_sample']:.0f} us per GPU sample)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
