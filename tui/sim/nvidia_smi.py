"""A stand-in ``nvidia-smi`` for the simulated GPU host: ``python -m tui.sim.nvidia_smi``.

It answers the query forms bringup uses, in nvidia-smi's own output format, with the memory and
utilisation the simulated server writes to its state file (see :mod:`tui.sim.gpustate`), so the
GPU figures follow the simulated start-up: memory climbs while weights load, jumps at the KV
cache, creeps during graph capture; utilisation rises while requests are served. GPUs without
a live simulated server read as idle.

Supported: ``--query-gpu=...``, ``--query-compute-apps=...``, ``--format=csv[,noheader]
[,nounits]``, ``-lms N`` / ``-l N`` (repeat until stopped), ``-L``. ``--gpus N`` sets how many
GPUs the host has (default 8) and ``--state-file PATH`` where the server's state is read
(default: as the simulator's ``--state-file``). Anything else is refused as nvidia-smi does.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tui.sim.gpustate import GpuSlot, read_state, state_path
from tui.sim.sim_model import GPU_NAME, GPU_TOTAL_MIB

IDLE_WATTS = 78.0
BUSY_WATTS = 690.0


@dataclass(frozen=True, slots=True)
class SimGpu:
    """One simulated GPU at one instant."""

    index: int
    used_mib: int
    util: int
    pid: int

    @property
    def uuid(self) -> str:
        return f"GPU-5e1a{self.index:04x}-0000-4000-8000-{self.index:012x}"


# Each column: (header name, unit, value). Unknown columns are refused like nvidia-smi does.
Column = tuple[str, str, Callable[[SimGpu], str]]
GPU_FIELDS: dict[str, Column] = {
    "timestamp": ("timestamp", "", lambda g: _now()),
    "index": ("index", "", lambda g: str(g.index)),
    "uuid": ("uuid", "", lambda g: g.uuid),
    "name": ("name", "", lambda g: GPU_NAME),
    "pci.bus_id": ("pci.bus_id", "", lambda g: f"00000000:{0x18 + g.index:02X}:00.0"),
    "memory.used": ("memory.used", "MiB", lambda g: str(g.used_mib)),
    "memory.total": ("memory.total", "MiB", lambda g: str(GPU_TOTAL_MIB)),
    "memory.free": ("memory.free", "MiB", lambda g: str(GPU_TOTAL_MIB - g.used_mib)),
    "utilization.gpu": ("utilization.gpu", "%", lambda g: str(g.util)),
    "utilization.memory": ("utilization.memory", "%", lambda g: str(g.util // 4)),
    "temperature.gpu": ("temperature.gpu", "", lambda g: str(35 + g.util // 4)),
    "power.draw": ("power.draw", "W", lambda g: f"{_watts(g):.2f}"),
    "power.limit": ("power.limit", "W", lambda g: "700.00"),
    "clocks.sm": ("clocks.current.sm", "MHz", lambda g: "1980" if g.util else "345"),
    "mig.mode.current": ("mig.mode.current", "", lambda g: "Disabled"),
}
APP_FIELDS: dict[str, Column] = {
    "pid": ("pid", "", lambda g: str(g.pid)),
    "process_name": ("process_name", "", lambda g: _process_name(g.pid)),
    "used_memory": ("used_gpu_memory", "MiB", lambda g: str(g.used_mib)),
    "gpu_uuid": ("gpu_uuid", "", lambda g: g.uuid),
    "gpu_bus_id": ("gpu_bus_id", "", lambda g: f"00000000:{0x18 + g.index:02X}:00.0"),
    "gpu_name": ("gpu_name", "", lambda g: GPU_NAME),
}


def _now() -> str:
    return datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def _watts(gpu: SimGpu) -> float:
    return IDLE_WATTS + (BUSY_WATTS - IDLE_WATTS) * gpu.util / 100 + (40.0 if gpu.used_mib else 0.0)


def _process_name(pid: int) -> str:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except (OSError, UnicodeDecodeError):
        return "python3"
    return Path(argv0).name or "python3"


def gpus(count: int, slots: Sequence[GpuSlot]) -> list[SimGpu]:
    """Every GPU of the host; those a live simulated server uses carry its figures."""
    used = {slot.index: slot for slot in slots}
    result = []
    for index in range(count):
        slot = used.get(index)
        result.append(
            SimGpu(index, slot.used_mib, slot.util, slot.pid) if slot else SimGpu(index, 0, 0, 0)
        )
    return result


def render(
    fields: dict[str, Column],
    wanted: Sequence[str],
    rows: Sequence[SimGpu],
    header: bool,
    units: bool,
) -> str:
    """Rows in nvidia-smi's CSV: ``", "`` between values, units and a header unless told not."""
    columns = [fields[name] for name in wanted]
    lines = []
    if header:
        lines.append(", ".join(f"{h} [{u}]" if u else h for h, u, _ in columns))
    for row in rows:
        cells = (value(row) + (f" {unit}" if units and unit else "") for _, unit, value in columns)
        lines.append(", ".join(cells))
    return "".join(line + "\n" for line in lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nvidia-smi", add_help=True)
    parser.add_argument("--query-gpu")
    parser.add_argument("--query-compute-apps")
    parser.add_argument("--format", default="csv")
    parser.add_argument("-lms", "--loop-ms", type=int)
    parser.add_argument("-l", "--loop", type=int)
    parser.add_argument("-L", "--list-gpus", action="store_true")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--state-file")
    return parser


def _refuse(message: str) -> int:
    print(message)
    print("Please run 'nvidia-smi -h' for help.")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit:
        return _refuse("Invalid combination of input arguments.")
    path = state_path(args.state_file)
    count = max(0, args.gpus)
    if args.list_gpus:
        for gpu in gpus(count, []):
            print(f"GPU {gpu.index}: {GPU_NAME} (UUID: {gpu.uuid})")
        return 0
    query, fields = (
        (args.query_gpu, GPU_FIELDS) if args.query_gpu else (args.query_compute_apps, APP_FIELDS)
    )
    if not query:
        return _refuse("Invalid combination of input arguments.")
    wanted = [part.strip() for part in query.split(",") if part.strip()]
    unknown = next((name for name in wanted if name not in fields), None)
    if unknown is not None:
        return _refuse(f'Field "{unknown}" is not a valid field to query.')
    options = args.format.split(",")
    header, units = "noheader" not in options, "nounits" not in options
    interval = args.loop_ms / 1000 if args.loop_ms else float(args.loop or 0)
    return _serve(path, count, fields, wanted, header, units, interval, args.query_gpu is None)


def _serve(
    path: Path,
    count: int,
    fields: dict[str, Column],
    wanted: list[str],
    header: bool,
    units: bool,
    interval: float,
    apps: bool,
) -> int:
    while True:
        rows = gpus(count, read_state(path))
        if apps:
            rows = [gpu for gpu in rows if gpu.pid and gpu.used_mib]
        try:
            sys.stdout.write(render(fields, wanted, rows, header, units))
            sys.stdout.flush()
        except BrokenPipeError:
            return 0
        if interval <= 0:
            return 0
        header = False
        time.sleep(interval)


if __name__ == "__main__":
    raise SystemExit(main())
